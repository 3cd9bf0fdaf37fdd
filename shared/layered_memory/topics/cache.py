"""The recent-message cache of seed 001, 2.5.2: the last N messages per chat, with a TTL.

Two implementations of one small protocol (:class:`~layered_memory.stores.base.RecentCache`):

* :class:`~layered_memory.stores.redis_cache.RedisRecentCache`, the seed's ZSET + TTL layout, shared by
  every process using a Redis RecordStore: the store hands it out (``records.recent_cache(...)``);
* :class:`InProcessRecentCache` does the same in a dict, for the embedded mode (a RecordStore whose
  ``recent_cache`` is None).

The cache only speeds reads up; the RecordStore stays the source of truth (a miss reads it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence

from ..models import Message, MessageRef
from ..stores.base import RecentCache
from ..stores.redis_cache import RedisRecentCache

logger = logging.getLogger(__name__)

__all__ = ["RecentCache", "InProcessRecentCache", "RedisRecentCache"]


class InProcessRecentCache:
    """Dict-backed cache: ``size`` messages per chat, entries expire after ``ttl`` seconds."""

    def __init__(self, size: int = 100, ttl: float = 86_400.0) -> None:
        self.size = size
        self.ttl = ttl
        self._chats: dict[tuple[str, str], OrderedDict[str, float]] = {}
        self._msgs: dict[tuple[str, str, str], tuple[Message, float]] = {}  # (tenant, chat, message_id)
        self._lock = threading.Lock()

    def push(self, tenant: str, messages: Sequence[Message]) -> None:
        now = time.monotonic()
        with self._lock:
            for m in messages:
                self._msgs[(tenant, m.chat_id, m.message_id)] = (m, now + self.ttl)
                chat = self._chats.setdefault((tenant, m.chat_id), OrderedDict())
                chat[m.message_id] = m.create_time.timestamp()
                if len(chat) > self.size:
                    for mid, _ in sorted(chat.items(), key=lambda kv: kv[1])[: len(chat) - self.size]:
                        del chat[mid]
                        self._msgs.pop((tenant, m.chat_id, mid), None)

    def _alive(self, tenant: str, chat_id: str, mid: str, now: float) -> Message | None:
        entry = self._msgs.get((tenant, chat_id, mid))
        if entry is None or entry[1] < now:
            return None
        return entry[0]

    def recent(self, tenant: str, chat_id: str, limit: int) -> list[Message]:
        now = time.monotonic()
        with self._lock:
            chat = self._chats.get((tenant, chat_id)) or {}
            ids = [mid for mid, _ in sorted(chat.items(), key=lambda kv: kv[1])][-limit:] if limit > 0 else []
            return [m for m in (self._alive(tenant, chat_id, i, now) for i in ids) if m is not None]

    def get(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        now = time.monotonic()
        with self._lock:
            return [self._alive(tenant, str(r[0]), str(r[1]), now) for r in refs]

    def discard(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        with self._lock:
            for chat_id, mid in refs:
                self._msgs.pop((tenant, chat_id, mid), None)
                chat = self._chats.get((tenant, chat_id))
                if chat is not None:
                    chat.pop(mid, None)

    def clear(self, tenant: str) -> None:
        with self._lock:
            for key in [k for k in self._chats if k[0] == tenant]:
                del self._chats[key]
            for key in [k for k in self._msgs if k[0] == tenant]:
                del self._msgs[key]
