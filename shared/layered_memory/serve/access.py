"""Who the viewer and the API may show, in one place: the users of a key, a user's chats, a chat's messages
and topics.

Today a user's chats are the sessions the user wrote in (``list_sessions``) and a chat's messages are the
user's own (``get_session_messages``; the bot's replies are stored under the user's id, or named by
``memory.bot_user_ids``). When chats learn their members, these functions switch to the membership
listing and nothing else in ``serve`` changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..sessions import SESSIONS

if TYPE_CHECKING:
    from ..engine import LayeredMemory
    from ..models import Message, Topic

MAX_USERS = 10_000


def users(h: LayeredMemory, *, limit: int = MAX_USERS) -> list[str]:
    """The users a handle may look at: its bound user, or every user with a session in the tenant (sorted)."""
    if h.bound_user is not None:
        return [h.bound_user]
    out: set[str] = set()
    after = ""
    while len(out) < limit:
        rows = h.records.list_docs(h.tenant_id, SESSIONS, after=after, limit=1000)
        out.update(d["user_id"] for _, d in rows)
        if len(rows) < 1000:
            break
        after = rows[-1][0]
    return sorted(out)[:limit]


def chats(u: LayeredMemory) -> list[str]:
    """The chats of the user ``u`` is bound to (``u = mem.for_user(user)``)."""
    return u.list_sessions(None)


def chat_messages(u: LayeredMemory, chat_id: str, *, limit: int) -> list[Message]:
    """The latest ``limit`` messages of a chat the user may read, oldest first."""
    return u.get_session_messages(None, chat_id, limit=limit)


def chat_topics(u: LayeredMemory, chat_id: str) -> list[Topic]:
    """The chat's topics the user may see (a topic lists the users whose messages it holds), oldest first."""
    return u.topics.list(chat_id)


def topic_messages(u: LayeredMemory, topic_id: str, *, limit: int) -> list[Message]:
    """The topic's messages the user may read (their own; the topic may thread several users' messages)."""
    return [m for m in u.topics.messages(topic_id, limit=limit) if u.bound_user in (None, m.user_id)]


def readable(u: LayeredMemory, refs: list[tuple[str, str]]) -> dict[tuple[str, str], Any]:
    """The stored messages among ``refs`` (chat_id, message_id) the user may read."""
    refs = list(dict.fromkeys(refs))
    found = u.get_messages(refs) if refs else []
    return {r: m for r, m in zip(refs, found) if m is not None}


__all__ = ["chat_messages", "chat_topics", "chats", "readable", "topic_messages", "users"]
