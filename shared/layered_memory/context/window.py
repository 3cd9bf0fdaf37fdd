"""Who may see what in a context: the three places that decide it.

- ``session_window``: the session's last messages as the asking user sees them;
- ``session_after``: the turns that follow a recalled message in its session (its neighbours);
- ``visible_filters``: the search filters of the recalled blocks (every message the user may see).

Everything else in the context package reads messages only through these (and the session summary,
user data and tiers of the asking user), so a change of the visibility rule lands here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..models import Message

_REPLIES = ("assistant", "tool")


def session_window(records: Any, tenant: str, user_id: str, session_key: str, limit: int, bots: Sequence[str]) -> list[Message]:
    """The last ``limit`` messages of the session as ``user_id`` saw it: their own messages plus the replies
    the bot stored under its own ids (``bots``; ``memory.bot_user_ids``). The bot's replies belong to the
    session, so a user who wrote in it sees them; a user who never wrote in the session sees none of them
    (the same rule as topics: participants see what was said in the chat). Other users' messages stay theirs."""
    own = records.window(tenant, user_id=user_id, session_key=session_key, limit=limit)
    if not own or not bots:
        return own
    merged = list(own)
    for bot in dict.fromkeys(bots):
        if bot != user_id:
            merged += records.window(tenant, user_id=bot, session_key=session_key, limit=limit)
    merged.sort(key=lambda m: (m.seq or 0, m.create_time))  # insertion order, as each window is
    return merged[-limit:]


def session_after(records: Any, tenant: str, user_id: str, hit: Message | Any, limit: int, bots: Sequence[str]) -> list[Message]:
    """Up to ``limit`` messages that follow ``hit`` (a recalled message: its ``session_key`` and ``seq``)
    in its session, as ``user_id`` sees the session (``session_window``'s rule), oldest first."""
    seq = int(getattr(hit, "seq", 0) or 0)
    session = getattr(hit, "session_key", "")
    out = records.scan_messages(tenant, user_id=user_id, session_key=session, after_seq=seq, limit=limit)
    for bot in dict.fromkeys(bots):
        if bot != user_id:
            out += records.scan_messages(tenant, user_id=bot, session_key=session, after_seq=seq, limit=limit)
    out.sort(key=lambda m: (m.seq or 0, m.create_time))
    return out[:limit]


def visible_filters(user_id: str) -> dict[str, Any]:
    """Search filters for every message ``user_id`` may see (the recalled blocks search all of them
    at once; the session a hit belongs to decides its block)."""
    return {"user_id": user_id}


def without_leading_replies(window: Sequence[Message]) -> list[Message]:
    """The window opened by a user turn: a cut window that starts with the bot's reply (or a tool result)
    is refused by providers that want the user first (Anthropic, Gemini); those leading replies go.
    The newest message always stays."""
    start = 0
    while start < len(window) - 1 and window[start].role in _REPLIES:
        start += 1
    return list(window[start:])


__all__ = ["session_after", "session_window", "visible_filters", "without_leading_replies"]
