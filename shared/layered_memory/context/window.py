"""Who may see what in a context: the three places that decide it.

- ``session_window``: the session's last messages as the asking user sees them;
- ``session_after``: the turns that follow a recalled message in its session (its neighbours);
- ``visible_scope``: what the recalled blocks search (every message the user may see: own and member chats').

Everything else in the context package reads messages only through these (and the session summary,
user data and tiers of the asking user), so a change of the visibility rule lands here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..models import Message

if TYPE_CHECKING:
    from ..chats import ChatRegistry
    from ..index import Scope

_REPLIES = ("assistant", "tool")


def session_window(chats: ChatRegistry, tenant: str, user_id: str, session_key: str, limit: int) -> list[Message]:
    """The last ``limit`` messages of the session as ``user_id`` sees it (``ChatRegistry.window``): their
    own, and every message of the session in the chats they are a member of, whoever wrote it (the other
    members', the bot's replies). A user who is not a member of the session's chat sees only their own."""
    return chats.window(tenant, user_id, session_key, limit)


def session_after(chats: ChatRegistry, tenant: str, view: Scope, hit: Message | Any, limit: int) -> list[Message]:
    """Up to ``limit`` messages that follow ``hit`` (a recalled message: its ``session_key`` and ``seq``)
    in its session as ``view``'s user sees the session (``session_window``'s rule), oldest first: in a
    group chat the next turn is whoever wrote it."""
    seq = int(getattr(hit, "seq", 0) or 0)
    session = str(getattr(hit, "session_key", "") or "")
    if view.bound_user is None:
        return []
    return chats.after(tenant, view.bound_user, session, seq, limit, member=view.chats or ())


def visible_scope(chats: ChatRegistry, scope: Scope, user_id: str) -> Scope:
    """What ``user_id`` may see in ``scope``'s tenant: their own messages and those of their member chats
    (the recalled blocks search all of them at once; the session a hit belongs to decides its block)."""
    return chats.user_view(scope, user_id)


def without_leading_replies(window: Sequence[Message]) -> list[Message]:
    """The window opened by a user turn: a cut window that starts with the bot's reply (or a tool result)
    is refused by providers that want the user first (Anthropic, Gemini); those leading replies go.
    The newest message always stays."""
    start = 0
    while start < len(window) - 1 and window[start].role in _REPLIES:
        start += 1
    return list(window[start:])


__all__ = ["session_after", "session_window", "visible_scope", "without_leading_replies"]
