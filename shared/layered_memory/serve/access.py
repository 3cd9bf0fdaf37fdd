"""Who the viewer and the API may show, in one place: the users of a key, a user's chats, a chat's messages
and topics. Every answer is the engine's own rule (chat membership, ``layered_memory.chats``): a user
sees their own messages and every message of the chats they are a member of; a non-member sees
nothing of a chat.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..chats import USER_CHATS
from ..sessions import SESSIONS

if TYPE_CHECKING:
    from ..engine import LayeredMemory
    from ..models import Message, Topic

MAX_USERS = 10_000


def users(h: LayeredMemory, *, limit: int = MAX_USERS) -> list[str]:
    """The users a handle may look at: its bound user, or every user of the tenant (who wrote in a session
    or is a member of a chat), sorted."""
    if h.bound_user is not None:
        return [h.bound_user]
    out: set[str] = set()
    for collection in (SESSIONS, USER_CHATS):  # keys "user|session" and "user|chat"
        after = ""
        while len(out) < limit:
            rows = h.records.list_docs(h.tenant_id, collection, after=after, limit=1000)
            out.update(d["user_id"] for _, d in rows)
            if len(rows) < 1000:
                break
            after = rows[-1][0]
    return sorted(out)[:limit]


def chats(u: LayeredMemory) -> list[str]:
    """The chats of the user ``u`` is bound to (``u = mem.for_user(user)``): the chats the user is a member
    of, and the sessions the user wrote in (a session key is its chat's id unless the bot set another)."""
    return sorted(set(u.chats.list()) | set(u.list_sessions(None)))


def chat_messages(u: LayeredMemory, chat_id: str, *, limit: int) -> list[Message]:
    """The latest ``limit`` messages of a chat the user may read, oldest first."""
    return u.get_session_messages(None, chat_id, limit=limit)


def chat_topics(u: LayeredMemory, chat_id: str) -> list[Topic]:
    """The chat's topics the user may see, oldest first."""
    return u.topics.list(chat_id)


def topic_messages(u: LayeredMemory, topic_id: str, *, limit: int) -> list[Message]:
    """The topic's messages the user may read."""
    msgs = u.topics.messages(topic_id, limit=limit)
    seen = readable(u, [(m.chat_id, m.message_id) for m in msgs])
    return [m for m in msgs if (m.chat_id, m.message_id) in seen]


def readable(u: LayeredMemory, refs: list[tuple[str, str]]) -> dict[tuple[str, str], Any]:
    """The stored messages among ``refs`` (chat_id, message_id) the user may read."""
    refs = list(dict.fromkeys(refs))
    found = u.get_messages(refs) if refs else []
    return {r: m for r, m in zip(refs, found) if m is not None}


__all__ = ["chat_messages", "chat_topics", "chats", "readable", "topic_messages", "users"]
