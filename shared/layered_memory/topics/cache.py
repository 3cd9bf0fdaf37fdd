"""The recent-message cache of seed 001, 2.5.2: the last N messages per chat, with a TTL.

Two implementations of one small protocol:

* :class:`RedisRecentCache` keeps the seed's layout, per tenant and Redis Cluster-safe (one hash tag
  per tenant): ``{prefix:tenant}:rc:m:<chat_id>|<message_id>`` (STRING, message JSON, ``EX ttl``) and
  ``{prefix:tenant}:rc:c:<chat_id>`` (ZSET of message ids scored by create time, ``EXPIRE ttl``,
  trimmed to the newest ``size`` with ``ZREMRANGEBYRANK 0 -(size+1)``). One pipeline per batch.
* :class:`InProcessRecentCache` does the same in a dict, for the embedded mode.

The cache only speeds reads up; the RecordStore stays the source of truth (a miss reads it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..models import Message, MessageRef

logger = logging.getLogger(__name__)

__all__ = ["RecentCache", "InProcessRecentCache", "RedisRecentCache"]


@runtime_checkable
class RecentCache(Protocol):
    """Recent messages per (tenant, chat)."""

    def push(self, tenant: str, messages: Sequence[Message]) -> None:
        """Add or refresh messages (a message already cached is overwritten, e.g. with its topic_id)."""

    def recent(self, tenant: str, chat_id: str, limit: int) -> list[Message]:
        """The chat's newest ``limit`` cached messages, oldest first."""

    def get(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        """Cached messages by (chat_id, message_id), None where not cached."""

    def clear(self, tenant: str) -> None: ...


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

    def clear(self, tenant: str) -> None:
        with self._lock:
            for key in [k for k in self._chats if k[0] == tenant]:
                del self._chats[key]
            for key in [k for k in self._msgs if k[0] == tenant]:
                del self._msgs[key]


class RedisRecentCache:
    """The seed's ZSET + TTL cache on Redis (redis-py client, sync)."""

    def __init__(self, client: Any, *, prefix: str = "lm", size: int = 100, ttl: int = 86_400) -> None:
        self.client = client
        self.prefix = prefix
        self.size = size
        self.ttl = int(ttl)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> RedisRecentCache:
        import redis

        return cls(redis.Redis.from_url(url), **kwargs)

    def _t(self, tenant: str) -> str:
        return f"{{{self.prefix}:{tenant}}}:rc:"

    def push(self, tenant: str, messages: Sequence[Message]) -> None:
        if not messages:
            return
        t = self._t(tenant)
        pipe = self.client.pipeline(transaction=False)
        chats = set()
        for m in messages:
            pipe.set(f"{t}m:{m.chat_id}|{m.message_id}", m.model_dump_json(), ex=self.ttl)
            pipe.zadd(f"{t}c:{m.chat_id}", {m.message_id: m.create_time.timestamp()})
            chats.add(m.chat_id)
        for chat in chats:
            pipe.expire(f"{t}c:{chat}", self.ttl)
            pipe.zremrangebyrank(f"{t}c:{chat}", 0, -(self.size + 1))
        pipe.execute()

    def _load(self, raws: Sequence[Any]) -> list[Message | None]:
        return [Message.model_validate_json(r) if r else None for r in raws]

    def recent(self, tenant: str, chat_id: str, limit: int) -> list[Message]:
        if limit <= 0:
            return []
        t = self._t(tenant)
        ids = [i.decode() if isinstance(i, bytes) else i for i in self.client.zrange(f"{t}c:{chat_id}", -limit, -1)]
        if not ids:
            return []
        return [m for m in self._load(self.client.mget([f"{t}m:{chat_id}|{i}" for i in ids])) if m is not None]

    def get(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        if not refs:
            return []
        t = self._t(tenant)
        return self._load(self.client.mget([f"{t}m:{r[0]}|{r[1]}" for r in refs]))

    def clear(self, tenant: str) -> None:
        keys = list(self.client.scan_iter(match=f"{self._t(tenant)}*", count=1000))
        for i in range(0, len(keys), 500):
            self.client.delete(*keys[i : i + 500])
