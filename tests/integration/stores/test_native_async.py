"""Native async on the server backends (issue 15): ``aadd_message(s)``, ``asearch`` and
``aget_context_for_user`` run the engine's code on the event loop with the stores' async clients
(redis.asyncio, psycopg's AsyncConnectionPool, AsyncQdrantClient), and return exactly what the sync
calls return on the same data.

Backends: a real redis-server, a three-master Redis Cluster and a throwaway PostgreSQL cluster (all
started by the suite), each with the qdrant-client code path through its local mode in RAM
(``AsyncQdrantClient`` over the same collections), plus Redis core mode (no vector index)."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.providers.base import Embedder
from layered_memory.stores.base import NativeAsync
from layered_memory.stores.native import in_native
from layered_memory.stores.qdrant_server import QdrantVectorIndex
from layered_memory.stores.redis import RedisRecordStore
from layered_memory.stores.sqlite import SQLiteRecordStore
from layered_memory.testing import HashEmbedder

pytestmark = pytest.mark.redis
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
TOPICS = ["kubernetes staging namespace", "payments pod CrashLoopBackOff", "green tea in Kazan", "train tickets to Shanghai",
          "postgres vacuum settings", "docker compose volumes"]
USERS, SESSIONS = ("u1", "u2", "u3"), ("s1", "s2", "s3")
BACKENDS = ("redis", "cluster", "postgres", "redis-core")


def watched(cls: type) -> type:
    """``cls`` recording, per window read (``window``: a user's messages, ``chat_window``: a chat's), its thread
    and whether it ran natively (never changing what it does)."""

    class Watched(cls):  # type: ignore[misc, valid-type]
        calls: list[tuple[int, bool]] = []

        def window(self, *args: Any, **kwargs: Any) -> Any:
            self.calls.append((threading.get_ident(), in_native()))
            return super().window(*args, **kwargs)

        def chat_window(self, *args: Any, **kwargs: Any) -> Any:
            self.calls.append((threading.get_ident(), in_native()))
            return super().chat_window(*args, **kwargs)

    return Watched


def settings() -> LayeredMemorySettings:
    s = LayeredMemorySettings()
    s.memory.short_term_window = 3
    s.memory.summary_threshold_messages = 4
    s.memory.relevant_memory_k = 4
    s.memory.conversation_memory_k = 4
    return s


@pytest.fixture(params=BACKENDS)
def mem(request: pytest.FixtureRequest) -> Any:
    backend = request.param
    if backend == "postgres":
        from layered_memory.stores.postgres import PostgresRecordStore

        url, schema = request.getfixturevalue("postgres_url"), request.getfixturevalue("postgres_schema")
        records: Any = watched(PostgresRecordStore).from_url(url, schema=schema)
    elif backend == "cluster":
        records = watched(RedisRecordStore).from_url(request.getfixturevalue("redis_cluster_url"), prefix=request.getfixturevalue("redis_cluster_prefix"))
    else:
        records = watched(RedisRecordStore).from_url(request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix"))
    index = None if backend == "redis-core" else QdrantVectorIndex.in_memory()
    m = LayeredMemory.from_stores(records, index, embedder=HashEmbedder(64), settings=settings())
    yield m
    m.close()


def conversation(tenant_user: str, n: int = 36) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        user, session = USERS[i % 3], SESSIONS[(i // 3) % 3]
        if user != tenant_user and tenant_user != "*":
            continue
        out.append({"message_id": f"m{i}", "chat_id": f"chat-{session}", "user_id": user, "session_key": session,
                    "role": "user" if i % 2 == 0 else "assistant", "create_time": T0 + timedelta(minutes=i),
                    "content": f"{TOPICS[i % len(TOPICS)]} note {i} for {user}"})
    return out


def hits(result: Any) -> list[tuple[Any, ...]]:
    """Scores to 6 decimals: two sync calls on the same data differ in the 9th (the second stage's float sums)."""
    return [(h.id, round(h.score, 6), h.text, h.snippet, sorted(h.meta.items())) for h in result.hits]


def test_native_async_returns_what_sync_returns(mem: LayeredMemory) -> None:
    mem.add_messages(conversation("*"))
    mem.set_user_data("u1", {"city": "Kazan", "likes": ["tea"]})
    mem.flush()
    queries = [("tea in Kazan", {}, "hybrid"), ("payments pod", {"user_id": "u2"}, "hybrid"), ("docker", {}, "bm25"),
               (["kubernetes", "postgres vacuum"], {"session_key": "s2"}, "hybrid")]
    if mem.index is not None:
        queries.append(("green tea", {"role": "user"}, "dense"))

    async def native() -> tuple[list[Any], list[Any]]:
        found = [await mem.asearch(q, filters=f, k=8, route=r) for q, f, r in queries]
        contexts = [await mem.aget_context_for_user(u, s, query=q) for u in USERS for s in SESSIONS for q in (None, "tea")]
        return found, contexts

    found, contexts = asyncio.run(native())
    for (q, f, r), got in zip(queries, found):
        want = mem.search(q, filters=f, k=8, route=r)
        assert (got.route_used, got.total_found, got.queries) == (want.route_used, want.total_found, want.queries), q
        assert hits(got) == hits(want), q
        assert got.hits, f"{q!r} found nothing: the comparison would be vacuous"
    want_contexts = [mem.get_context_for_user(u, s, query=q) for u in USERS for s in SESSIONS for q in (None, "tea")]
    assert [[c.model_dump() for c in ctx] for ctx in contexts] == [[c.model_dump() for c in ctx] for ctx in want_contexts]
    assert any(c.kind in ("memory", "conversation_memory") for ctx in contexts for c in ctx) or mem.index is None


def test_native_path_runs_on_the_loop_thread(mem: LayeredMemory) -> None:
    """The hot paths' store calls run natively in the loop's own thread (no worker thread per call)."""
    assert isinstance(mem.records, NativeAsync) and mem.records.native_async()
    assert isinstance(mem.embedder, Embedder) and (mem.embedder.name, mem.embedder.dim) == (HashEmbedder(64).name, 64)
    mem.add_messages(conversation("u1"))
    calls = type(mem.records).calls  # type: ignore[attr-defined]
    calls.clear()

    async def main() -> int:
        await asyncio.gather(*[mem.aget_context_for_user("u1", s, query="tea") for s in SESSIONS for _ in range(5)])
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert calls and all(c == (loop_thread, True) for c in calls), calls[:5]


def test_native_adds_store_what_sync_adds_store(mem: LayeredMemory) -> None:
    """The same batch through add_messages (tenant a) and aadd_messages (tenant b): the same stored messages
    and contexts; 60 concurrent aadd_message calls are all stored once, with distinct seqs."""
    a, b = mem.tenant("a"), mem.tenant("b")
    batch = conversation("*", 24)
    stored_a = a.add_messages(batch)

    async def native() -> list[Any]:
        stored = await b.aadd_messages(batch)
        again = await b.aadd_message(batch[0])  # idempotent: the stored copy
        assert again.model_dump() == stored[0].model_dump()
        await asyncio.gather(*[b.aadd_message(message_id=f"x{i}", chat_id="chat-x", user_id="u9", session_key="sx",
                                              content=f"concurrent note {i}", create_time=T0 + timedelta(seconds=i)) for i in range(60)])
        return stored

    stored_b = asyncio.run(native())
    strip = lambda m: m.model_dump(exclude={"tenant"})  # noqa: E731
    assert [strip(m) for m in stored_a] == [strip(m) for m in stored_b]
    mem.flush()
    for u in USERS:
        assert [c.model_dump() for c in a.get_context_for_user(u, "s1", query="tea")] == \
               [c.model_dump() for c in b.get_context_for_user(u, "s1", query="tea")]
    xs = b.get_session_messages("u9", "sx")
    assert sorted(m.message_id for m in xs) == sorted(f"x{i}" for i in range(60))
    assert len({m.seq for m in b.get_session_messages("u9", "sx")}) == 60


def test_embedded_backends_keep_the_worker_thread(tmp_path: Any) -> None:
    records = watched(SQLiteRecordStore)(str(tmp_path / "r.sqlite3"))
    assert not records.native_async() if isinstance(records, NativeAsync) else True
    with LayeredMemory.from_stores(records, None, embedder=HashEmbedder(64)) as m:
        m.add_messages(conversation("u1"))
        type(records).calls.clear()

        async def main() -> int:
            await m.aget_context_for_user("u1", "s1", query="tea")
            return threading.get_ident()

        loop_thread = asyncio.run(main())
        assert type(records).calls and all(t != loop_thread and not native for t, native in type(records).calls)


def test_native_faults_are_the_stores_errors(redis_server: Any, postgres_server: Any) -> None:
    """A server that goes away under the native path raises the store's BackendUnavailable (naming it),
    as the sync path does, and the next call after it comes back works (the async pool recovers)."""
    from layered_memory import BackendUnavailable
    from layered_memory.stores.postgres import PostgresRecordStore

    for records, server in ((RedisRecordStore.from_url(redis_server.url, prefix="f", connect_timeout=1), redis_server),
                            (PostgresRecordStore(postgres_server.url, connect_timeout=1), postgres_server)):
        with LayeredMemory.from_stores(records, None, embedder=None) as m:
            m.add_messages(conversation("u1"))

            async def main() -> None:
                assert [c.content for c in await m.aget_context_for_user("u1", "s1")]
                server.stop()
                with pytest.raises(BackendUnavailable, match="127.0.0.1"):
                    await m.aget_context_for_user("u1", "s1")
                with pytest.raises(BackendUnavailable):
                    await m.aadd_message(message_id="late", chat_id="chat-s1", user_id="u1", session_key="s1", content="late")

            asyncio.run(main())
            if server is redis_server:
                continue  # the Redis fixture cannot restart on the same port; PostgreSQL can
            server.start()
            assert asyncio.run(m.aget_context_for_user("u1", "s1"))


class SlowReranker:
    """A rerank model that takes a while (a cross-encoder, a rerank API) and records the thread it ran on."""

    name = "slow"

    def __init__(self) -> None:
        self.threads: list[int] = []

    def rerank(self, query: str, documents: Any) -> list[float]:
        self.threads.append(threading.get_ident())
        time.sleep(0.2)
        return [float("tea" in d) for d in documents]


@pytest.mark.parametrize("backend", ["redis", "postgres"])
def test_a_rerank_model_runs_off_the_loop_and_answers_as_sync(request: pytest.FixtureRequest, backend: str) -> None:
    """On the native path the search runs on the loop; the rerank model (blocking work) runs in a worker thread,
    so the loop's other tasks go on meanwhile, and asearch returns what search returns."""
    if backend == "postgres":
        from layered_memory.stores.postgres import PostgresRecordStore

        records: Any = PostgresRecordStore.from_url(request.getfixturevalue("postgres_url"), schema=request.getfixturevalue("postgres_schema"))
    else:
        records = RedisRecordStore.from_url(request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix"))
    model = SlowReranker()
    with LayeredMemory.from_stores(records, QdrantVectorIndex.in_memory(), embedder=HashEmbedder(64), settings=settings(),
                                   rerank_model=model) as m:
        m.add_messages(conversation("*"))
        m.flush()
        want = m.search("green tea in Kazan", k=4)

        async def main() -> tuple[Any, int, int]:
            ticks = 0

            async def tick() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            ticker = asyncio.create_task(tick())
            got = await m.asearch("green tea in Kazan", k=4)
            ticker.cancel()
            return got, ticks, threading.get_ident()

        got, ticks, loop_thread = asyncio.run(main())
    assert hits(got) == hits(want) and got.hits[0].meta["rerank_score"] == 1.0
    assert model.threads[-1] != loop_thread
    assert ticks >= 5  # the loop ran other tasks during the model's 0.2 s
