"""Short-term recall (seed 001, 2.4): the reply chain, the topic's messages, then the chat's latest
messages to fill up, merged chronologically and capped at ``max_messages`` (the newest kept).

Reads go to the recent-message cache first and to the RecordStore on a miss.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from ..models import Message, MessageRef
from ..stores.base import RecordStore
from .cache import RecentCache
from .store import TopicStore

logger = logging.getLogger(__name__)

TOPIC_MESSAGES = 20


class MessageReader:
    """Messages by ref (chat_id, message_id), by topic, and the chat's latest, through the cache."""

    def __init__(self, records: RecordStore, tenant: str, cache: RecentCache | None) -> None:
        self.records = records
        self.tenant = tenant
        self.cache = cache

    def get(self, refs: Sequence[MessageRef]) -> list[Message | None]:
        if not refs:
            return []
        out: list[Message | None] = self.cache.get(self.tenant, refs) if self.cache is not None else [None] * len(refs)
        missing = [r for r, m in zip(refs, out) if m is None]
        if missing:
            found = {m.ref: m for m in self.records.get_messages(self.tenant, missing) if m is not None}
            out = [m if m is not None else found.get(MessageRef(*r)) for r, m in zip(refs, out)]
        return out

    def latest(self, chat_id: str, limit: int, *, before_seq: int | None = None) -> list[Message]:
        """The chat's newest ``limit`` messages (cache, else a bounded backwards scan), oldest first."""
        if limit <= 0:
            return []
        if self.cache is not None:
            msgs = self.cache.recent(self.tenant, chat_id, limit)
            if len(msgs) >= limit or (msgs and before_seq is None):
                return msgs
        if before_seq is None:
            return []
        for span in (limit * 20, limit * 200, before_seq):
            after = max(0, before_seq - span)
            page = self.records.scan_messages(self.tenant, chat_id=chat_id, after_seq=after, limit=span + 1)
            msgs = [m for m in page if (m.seq or 0) <= before_seq]
            if len(msgs) >= limit or after == 0:
                return msgs[-limit:]
        return []


def reply_chain(get: Callable[[Sequence[MessageRef]], list[Message | None]], ref: MessageRef, max_depth: int = 5) -> list[Message]:
    """Follow ``reply_message_id`` (within the chat) from ``ref`` up to ``max_depth`` messages; oldest first."""
    out: list[Message] = []
    current: MessageRef | None = MessageRef(*ref)
    seen: set[MessageRef] = set()
    while current and len(out) < max_depth and current not in seen:
        seen.add(current)
        msg = get([current])[0]
        if msg is None:
            break
        out.append(msg)
        current = msg.reply_ref
    out.sort(key=lambda m: (m.create_time, m.seq or 0))
    return out


def topic_messages(reader: MessageReader, store: TopicStore, topic_id: str, limit: int = TOPIC_MESSAGES) -> list[Message]:
    topic = store.get([topic_id])[0]
    if topic is None:
        return []
    rows = store.members(topic_id)[-limit:]
    return [m for m in reader.get(store.member_refs(topic, rows)) if m is not None]


def short_term(
    reader: MessageReader, store: TopicStore, message: Message, *, max_messages: int = 20, max_depth: int = 5,
    topic_id: str | None = None, visible: Callable[[Message], bool] | None = None,
) -> list[Message]:
    """Seed 2.4.3: reply chain + topic messages + time-window fill, chronological, capped."""
    found: dict[MessageRef, Message] = {}
    if message.reply_ref is not None:
        for m in reply_chain(reader.get, message.reply_ref, max_depth):
            found[m.ref] = m
    topic_id = topic_id or message.topic_id
    if topic_id:
        for m in topic_messages(reader, store, topic_id, TOPIC_MESSAGES):
            found[m.ref] = m
    if len(found) < max_messages:
        for m in reader.latest(message.chat_id, max_messages - len(found) + 1, before_seq=message.seq):
            found.setdefault(m.ref, m)
    found.pop(message.ref, None)
    out = [m for m in found.values() if visible is None or visible(m)]
    out.sort(key=lambda m: (m.create_time, m.seq or 0))
    return out[-max_messages:]
