"""Helpers shared by the topic and knowledge tests (imported, not a conftest: keeps tests/conftest.py small)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

T0 = datetime(2024, 5, 1, 10, 0, tzinfo=timezone.utc)


def feed(mem: Any, chat_id: str, script: Sequence[tuple], *, start: datetime = T0, step: timedelta = timedelta(minutes=1)) -> list[str]:
    """Write (message_id, user_id, content[, reply_to[, minutes offset]]) rows; returns the ids."""
    rows = []
    for i, row in enumerate(script):
        mid, user, content = row[:3]
        reply = row[3] if len(row) > 3 else None
        when = start + (timedelta(minutes=row[4]) if len(row) > 4 else step * i)
        rows.append({"message_id": mid, "chat_id": chat_id, "user_id": user, "user_name": user.title(), "content": content,
                     "reply_message_id": reply, "create_time": when})
    mem.add_messages(rows)  # one embedding batch
    return [r["message_id"] for r in rows]


def groups(mem: Any, ids: Sequence[str], chat: str = "c1") -> list[int]:
    """Topic of each message as a small int in order of first appearance (comparable across runs)."""
    seen: dict[str, int] = {}
    out = []
    for mid in ids:
        t = mem.topics.topic_of(mid, chat_id=chat)
        assert t is not None, f"{mid} was not threaded"
        out.append(seen.setdefault(t, len(seen)))
    return out
