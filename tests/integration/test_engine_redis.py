"""The same engine on the production backends: Redis (a real redis-server started by the suite)
and the qdrant-client code path (through its local mode), plus Redis-only core mode."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone

import pytest

from server_stores import SERVER_KINDS, server_records

from layered_memory import BackendUnavailable, LayeredMemory, LayeredMemorySettings
from layered_memory.retrieval.bm25 import TERMS_VERSION
from layered_memory.stores.qdrant_server import QdrantVectorIndex

pytestmark = pytest.mark.redis
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
TEXTS = [
    "I am moving our backend to Kubernetes next week",
    "Start with a staging namespace",
    "Our payments pod fails with CrashLoopBackOff",
    "Check kubectl logs --previous",
    "Я еду в отпуск в Казань в июне",
    "我下个月要去上海出差，帮我订高铁票",
]


def msg(i, text, user="u1", session="s1"):
    return {"message_id": f"m{i}", "chat_id": session, "user_id": user, "role": "user" if i % 2 else "assistant",
            "content": text, "create_time": T0 + timedelta(minutes=i)}


def settings():
    s = LayeredMemorySettings()
    s.memory.short_term_window = 2
    s.memory.summary_threshold_messages = 4
    return s


@pytest.fixture(params=SERVER_KINDS)
def redis_mem(request):
    """The engine on each server record store (Redis, a Redis Cluster, PostgreSQL) with the qdrant-client path."""
    from layered_memory.providers.local import USEEmbedder

    records = server_records(request, request.param)
    mem = LayeredMemory.from_stores(records, QdrantVectorIndex.in_memory(), embedder=USEEmbedder(), settings=settings())
    yield mem
    mem.close()


def test_redis_and_qdrant_client_path(redis_mem):
    redis_mem.add_messages([msg(i, t) for i, t in enumerate(TEXTS, 1)])
    assert redis_mem.add_message(msg(1, TEXTS[0])).seq == 1  # idempotent
    res = redis_mem.search("payments pod crash", k=3)
    assert res.route_used == "hybrid" and res.hits[0].id == "m3"
    assert redis_mem.search("高铁票", route="bm25").hits[0].id == "m6"
    ctx = redis_mem.get_context_for_user("u1", "s1")
    assert [m.kind for m in ctx][:1] == ["summary"] and [m.message_id for m in ctx if m.kind == "window"] == ["m5", "m6"]
    other = redis_mem.tenant("other")
    assert other.search("payments pod crash").hits == []


def test_the_bm25_marker_on_server_stores(redis_mem):
    """Vectors of an older marker are reported until every tenant holding points in the collection is re-indexed
    (the re-indexed tenants are noted in each record store)."""
    for tenant in ("default", "other"):
        redis_mem.tenant(tenant).add_messages([msg(i, t) for i, t in enumerate(TEXTS, 1)])
    assert redis_mem.flush(60) and redis_mem.doctor()["bm25"] == {}
    redis_mem.index.set_bm25("lm_messages", {"terms": 0})
    assert f"terms 0 -> {TERMS_VERSION}" in redis_mem.doctor()["bm25"]["lm_messages"]
    redis_mem.reindex()
    assert list(redis_mem.doctor()["bm25"]) == ["lm_messages"]  # the other tenant's points are still old
    redis_mem.tenant("other").reindex()
    assert redis_mem.doctor()["bm25"] == {} and redis_mem.index.info("lm_messages")["schema"]["bm25"]["terms"] == TERMS_VERSION
    assert redis_mem.search("payments pod crash", k=1).hits[0].id == "m3"


def test_redis_only_core_mode_searches_with_bm25(redis_url, redis_prefix):
    mem = LayeredMemory.from_urls(redis_url=redis_url, embedder="none", settings=settings().model_copy(
        update={"redis": settings().redis.model_copy(update={"prefix": redis_prefix})}))
    mem.add_messages([msg(i, t) for i, t in enumerate(TEXTS, 1)])
    mem.add_message(msg(9, "payments pod of another user", user="u2"))
    res = mem.search("payments pod", filters={"user_id": "u1"})
    assert res.route_used == "bm25" and [h.id for h in res.hits] == ["m3"]
    assert "Relevant memory" not in str(mem.get_context_for_user("u1", "s1"))
    mem.close()


def test_redis_down_is_one_clear_error_without_hanging():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    with pytest.raises(BackendUnavailable, match=f"127.0.0.1:{port}"):
        LayeredMemory.from_urls(redis_url=f"redis://127.0.0.1:{port}/0", embedder="none")
    assert time.perf_counter() - t0 < 5


def _scripted(prompt: str) -> str:
    """A chat model answering each tier from its prompt's words (titles, summaries, entities, profiles)."""
    import json

    head = prompt.lstrip()
    if head.startswith("Extract the important entities"):
        return json.dumps({"entities": [{"entity_name": "Kazan", "entity_type": "LOCATION", "description": "a city"}] if "Kazan" in prompt else []})
    if head.startswith("Extract the relations"):
        return json.dumps({"relations": []})
    if head.startswith("Build a profile"):
        return json.dumps({"profile_text": "moved recently", "preferences": [], "traits": []})
    if head.startswith("Rate how well"):
        return "8"
    if head.startswith(("Summarize", "Merge", "You maintain")):
        return "Summary: " + " ".join(w for w in ("Kazan", "canary42") if w in prompt)
    return "Kazan move"


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_clear_session_takes_its_messages_out_of_topics_facts_and_the_groups_summary(request, kind):
    s = settings()
    s.topics.summary_every_messages = 3
    mem = LayeredMemory.from_stores(server_records(request, kind), QdrantVectorIndex.in_memory(), embedder="none", settings=s,
                                    chat_model=_scripted)
    texts = ["I moved to Kazan canary42", "Kazan is lovely", "the Kazan flat is big", "Kazan has a kremlin",
             "Kazan winters are cold", "Kazan summers are hot"]
    mem.add_messages([{**msg(i, t, user="u1" if i <= 4 else "u2", session="g"), "reply_message_id": f"m{i - 1}" if i > 1 else None}
                      for i, t in enumerate(texts, 1)])
    mem.process()
    topic = mem.topics.topic_of("m1", chat_id="g")
    assert topic and mem.topics.topic_of("m6", chat_id="g") == topic and "canary42" in (mem.get_summary("u2", "g") or "")
    assert mem.clear_session("u1", "g") == 4
    doc = mem.topics.store.get([topic])[0]
    assert doc["message_count"] == 2 and doc["user_ids"] == ["u2"] and doc["summary_stale"]
    assert {w["message_id"] for w in mem.knowledge.search_entities("Kazan")[0]["metadata"]["stale"]} >= {"m1"}
    assert "canary42" not in mem.get_context_for_user("u2", "g", query="Kazan").text
    mem.process()
    assert "canary42" not in (mem.get_summary("u2", "g") or "") and "canary42" not in mem.topics.summary(topic).content
    assert mem.doctor()["ok"]
    mem.close()
