"""The recent-message cache of seed 001, 2.5.2 on Redis, shared by every process using one Redis.

Layout, per tenant and Redis Cluster-safe (one hash tag per tenant):
``{prefix:tenant}:rc:m:<chat_id>|<message_id>`` (STRING, message JSON, ``EX ttl``) and
``{prefix:tenant}:rc:c:<chat_id>`` (ZSET of message ids scored by create time, ``EXPIRE ttl``, trimmed
to the newest ``size`` with ``ZREMRANGEBYRANK 0 -(size+1)``). One pipeline per batch.

``RedisRecordStore.recent_cache(size=..., ttl=...)`` builds it on the store's own client and prefix;
the cache only speeds reads up, the RecordStore stays the source of truth.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..models import Message, MessageRef

__all__ = ["RecordStoreRecent", "RedisRecentCache"]


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

    def discard(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        if not refs:
            return
        t = self._t(tenant)
        pipe = self.client.pipeline(transaction=False)
        for chat_id, mid in refs:
            pipe.delete(f"{t}m:{chat_id}|{mid}")
            pipe.zrem(f"{t}c:{chat_id}", mid)
        pipe.execute()

    def clear(self, tenant: str) -> None:
        keys = list(self.client.scan_iter(match=f"{self._t(tenant)}*", count=1000))
        for i in range(0, len(keys), 500):
            self.client.delete(*keys[i : i + 500])


class RecordStoreRecent:
    """The recent-message cache of a Redis *record store*: reads from the store itself, writes nothing.

    When Redis is the record store, the seed's cache would be a second copy of the same messages in the
    same Redis; the store's per-chat ZSET and message hash answer ``recent`` and ``get`` with the same
    round trips, and ``push`` (one pipeline per add) is not needed. Updates (a topic_id set by threading)
    are in the store already. Order: a chat's newest messages by seq, returned by create time.
    """

    def __init__(self, store: Any) -> None:
        self.store = store

    def push(self, tenant: str, messages: Sequence[Message]) -> None:
        return None  # the record write was the push

    def recent(self, tenant: str, chat_id: str, limit: int) -> list[Message]:
        if limit <= 0:
            return []
        return sorted(self.store.chat_tail(tenant, chat_id, limit), key=lambda m: (m.create_time, m.seq or 0))

    def get(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        return self.store.get_messages(tenant, refs) if refs else []

    def discard(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        return None  # the store's own delete removed them

    def clear(self, tenant: str) -> None:
        return None  # the store's own deletes remove the messages
