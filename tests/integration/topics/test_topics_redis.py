"""The seed's Redis recent-message cache (ZSET + TTL) on a real redis-server, and the engine wiring it
up by itself on a Redis RecordStore."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest
import redis
from server_stores import SERVER_KINDS, server_records

from layered_memory.engine import LayeredMemory
from layered_memory.models import Message
from layered_memory.stores.redis_cache import RecordStoreRecent
from layered_memory.topics.cache import RedisRecentCache

pytestmark = pytest.mark.redis
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def msg(i: int, chat: str = "c1") -> Message:
    return Message(message_id=f"m{i}", chat_id=chat, user_id="u", content=f"message {i}", create_time=T0 + timedelta(minutes=i))


def test_redis_recent_cache(redis_url):
    client = redis.Redis.from_url(redis_url)
    prefix = f"t{uuid.uuid4().hex[:8]}"
    cache = RedisRecentCache(client, prefix=prefix, size=3, ttl=100)
    cache.push("ten", [msg(i) for i in range(5)])
    assert [m.message_id for m in cache.recent("ten", "c1", 10)] == ["m2", "m3", "m4"]
    assert [m.message_id for m in cache.recent("ten", "c1", 2)] == ["m3", "m4"]
    zkey = f"{{{prefix}:ten}}:rc:c:c1"
    assert client.zcard(zkey) == 3 and 0 < client.ttl(zkey) <= 100
    assert 0 < client.ttl(f"{{{prefix}:ten}}:rc:m:c1|m4") <= 100
    assert cache.get("ten", [("c1", "m4"), ("c1", "nope")])[0].content == "message 4"
    cache.push("ten", [msg(4, chat="c2").model_copy(update={"content": "chat 2's own m4"})])  # ids repeat across chats
    assert [m.content for m in cache.get("ten", [("c1", "m4"), ("c2", "m4")])] == ["message 4", "chat 2's own m4"]
    assert cache.recent("other", "c1", 5) == []
    cache.push("ten", [msg(4).model_copy(update={"topic_id": "t-1"})])  # refreshed in place
    assert cache.get("ten", [("c1", "m4")])[0].topic_id == "t-1"
    cache.clear("ten")
    assert client.exists(zkey) == 0


def test_engine_on_redis_uses_the_redis_cache(redis_url):
    from layered_memory.config import LayeredMemorySettings

    settings = LayeredMemorySettings(redis={"url": redis_url, "prefix": f"t{uuid.uuid4().hex[:8]}"})
    mem = LayeredMemory.from_urls(redis_url=redis_url, embedder="none", settings=settings)
    try:
        assert isinstance(mem.topics.cache, RecordStoreRecent)  # Redis is the record store: the store is the cache
        mem.add_messages([{"message_id": f"m{i}", "chat_id": "c1", "user_id": "u", "content": f"hiking trail lake {i}",
                           "create_time": T0 + timedelta(minutes=i)} for i in range(3)])
        mem.process()
        recent = mem.topics.recent("c1", 5)
        assert [m.message_id for m in recent] == ["m0", "m1", "m2"]
        assert len({m.topic_id for m in recent}) == 1 and recent[0].topic_id is not None
        assert not list(mem.records.client.scan_iter(match=f"{{{settings.redis.prefix}:*}}:rc:*"))  # no second copy
        res = mem.topics.topic_search("hiking lake")  # core mode: no vector index, BM25 over the store
        assert res.topics == [] or res.topics[0].message_count == 3
    finally:
        mem.close()


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_topics_on_every_server_record_store(request, kind):
    """Threading from the log above the cursor, recall and the doctor on Redis, a cluster and PostgreSQL."""
    mem = LayeredMemory.from_stores(server_records(request, kind), None, embedder="none")
    try:
        mem.add_messages([{"message_id": f"m{i}", "chat_id": "c1", "user_id": "u", "content": f"hiking trail lake {i}",
                           "create_time": T0 + timedelta(minutes=i)} for i in range(4)])
        assert mem.topics.pending() == 4
        assert mem.process()["threaded"] == 4 and mem.topics.pending() == 0
        mem.add_message(message_id="m9", chat_id="c1", user_id="u", content="hiking trail lake again",
                        create_time=T0 + timedelta(minutes=9))
        assert mem.topics.pending() == 1  # only the message written after the last run
        mem.process()
        topic = mem.topics.topic_of("m9", chat_id="c1")
        assert topic is not None and topic == mem.topics.topic_of("m0", chat_id="c1")
        assert [m.message_id for m in mem.topics.recent("c1", 3)] == ["m2", "m3", "m9"]
        assert mem.doctor()["topics"]["unthreaded"] == 0
    finally:
        mem.close()
