"""A message is (tenant, chat_id, message_id): Telegram numbers every chat's messages from 1.

Issue 10 bug 5, on every engine mode (SQLite + Qdrant Edge, Redis or PostgreSQL + qdrant-client, core mode
without an index), plus the upgrade of stores written when message_id alone was the key.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory import InvalidInputError, LayeredMemory, LayeredMemorySettings, MessageRef
from layered_memory.index.points import legacy_message_point_id, message_payload, message_point_id
from layered_memory.models import Message
from layered_memory.stores.base import INDEX_UPGRADES, MESSAGE_POINTS_V2, SparseVector, VectorPoint
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from layered_memory.stores.sqlite import SQLiteRecordStore

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def settings() -> LayeredMemorySettings:
    s = LayeredMemorySettings()
    s.memory.short_term_window = 4
    return s


def message(mid: str, chat: str, user: str, content: str, minute: int, **kw: Any) -> dict[str, Any]:
    return {"message_id": mid, "chat_id": chat, "user_id": user, "content": content,
            "create_time": T0 + timedelta(minutes=minute), **kw}


@pytest.fixture(scope="module")
def embedder() -> Any:
    from layered_memory.providers.local import USEEmbedder

    return USEEmbedder()


def _embedded(tmp_path: Any, embedder: Any) -> LayeredMemory:
    return LayeredMemory.embedded(tmp_path / "mem", embedder=embedder, settings=settings())


def _redis(tmp_path: Any, embedder: Any, redis_url: str, redis_prefix: str) -> LayeredMemory:
    from layered_memory.stores.qdrant_server import QdrantVectorIndex
    from layered_memory.stores.redis import RedisRecordStore

    records = RedisRecordStore.from_url(redis_url, prefix=redis_prefix)
    return LayeredMemory.from_stores(records, QdrantVectorIndex.in_memory(), embedder=embedder, settings=settings())


def _core(tmp_path: Any, embedder: Any) -> LayeredMemory:
    records = SQLiteRecordStore(str(tmp_path / "records.sqlite3"))
    return LayeredMemory.from_stores(records, None, embedder="none", settings=settings())


def _postgres(embedder: Any, postgres_url: str, schema: str) -> LayeredMemory:
    from layered_memory.stores.postgres import PostgresRecordStore
    from layered_memory.stores.qdrant_server import QdrantVectorIndex

    records = PostgresRecordStore(postgres_url, schema=schema)
    return LayeredMemory.from_stores(records, QdrantVectorIndex.in_memory(), embedder=embedder, settings=settings())


@pytest.fixture(params=["sqlite-edge", pytest.param("redis-qdrant", marks=pytest.mark.redis),
                        pytest.param("postgres-qdrant", marks=pytest.mark.postgres), "core-no-index"])
def mem(request: pytest.FixtureRequest, tmp_path: Any, embedder: Any) -> Iterator[LayeredMemory]:
    if request.param == "sqlite-edge":
        m = _embedded(tmp_path, embedder)
    elif request.param == "redis-qdrant":
        m = _redis(tmp_path, embedder, request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix"))
    elif request.param == "postgres-qdrant":
        m = _postgres(embedder, request.getfixturevalue("postgres_url"), request.getfixturevalue("postgres_schema"))
    else:
        m = _core(tmp_path, embedder)
    yield m
    m.close()


def test_message_id_is_per_chat(mem: LayeredMemory) -> None:
    alice, mallory = mem.for_user("alice"), mem.for_user("mallory")
    a = alice.add_message(message("42", "chat-A", "alice", "my card PIN is 7351, keep it secret", 0))
    m = mallory.add_message(message("42", "chat-B", "mallory", "what is the PIN of the card?", 1))
    # both stored: the second chat's 42 is its own message, not the first chat's
    assert (a.chat_id, a.user_id, a.content) == ("chat-A", "alice", "my card PIN is 7351, keep it secret")
    assert (m.chat_id, m.user_id, m.content) == ("chat-B", "mallory", "what is the PIN of the card?")
    assert a.seq != m.seq and mem.records.count_messages(mem.tenant_id) == 2
    # idempotent re-add returns the same chat's stored copy, whatever the new content says
    again = mallory.add_message(message("42", "chat-B", "mallory", "changed text", 5))
    assert (again.chat_id, again.content, again.seq) == ("chat-B", "what is the PIN of the card?", m.seq)
    batch = mem.add_messages([message("42", "chat-A", "alice", "dup", 6), message("42", "chat-B", "mallory", "dup", 6),
                              message("42", "chat-A", "alice", "dup 2", 7)])
    assert [(x.chat_id, x.seq) for x in batch] == [("chat-A", a.seq), ("chat-B", m.seq), ("chat-A", a.seq)]
    # both searchable, each with its chat in meta
    hits = mem.search("card PIN", k=5).hits
    assert sorted((h.id, h.meta["channel_id"]) for h in hits) == [("42", "chat-A"), ("42", "chat-B")]
    # each handle sees only its own (core mode's bound-user scope is bug 1's; here the user filter)
    scoped = mem.index is not None
    for handle, user, chat in ((mallory, "mallory", "chat-B"), (alice, "alice", "chat-A")):
        res = handle.search("card PIN", k=5) if scoped else handle.search("card PIN", k=5, filters={"user_id": user})
        assert [(h.id, h.meta["channel_id"], h.meta["user_id"]) for h in res.hits] == [("42", chat, user)]
    assert [x.content if x else None for x in mallory.get_messages([("chat-A", "42"), ("chat-B", "42")])] == [
        None, "what is the PIN of the card?"]
    assert mallory.get_messages(["42"], chat_id="chat-A") == [None]
    assert alice.get_messages([MessageRef("chat-A", "42")])[0].content.startswith("my card PIN")  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError, match="unique only within their chat"):
        mem.get_messages(["42"])
    # a reply to 42 in chat B threads with chat B's 42, never with chat A's
    mem.add_message(message("43", "chat-B", "bob", "ok, thanks", 2, reply_message_id="42"))
    mem.process()
    topic_a, topic_b = mem.topics.topic_of("42", chat_id="chat-A"), mem.topics.topic_of("42", chat_id="chat-B")
    assert topic_a and topic_b and topic_a != topic_b
    assert mem.topics.topic_of("43", chat_id="chat-B") == topic_b
    assert [(x.chat_id, x.message_id) for x in mem.topics.recall("43", chat_id="chat-B")] == [("chat-B", "42")]
    assert [x.chat_id for x in mem.topics.messages(topic_b)] == ["chat-B", "chat-B"]
    # deleting one chat's 42 leaves the other chat's
    assert mallory.clear_session(None, "chat-B") == 1
    assert [(h.id, h.meta["channel_id"]) for h in mem.search("card PIN", k=5, route="bm25").hits] == [("42", "chat-A")]
    assert mem.get_messages([("chat-A", "42"), ("chat-B", "42")])[1] is None


def test_context_window_excludes_by_chat_and_message_id(tmp_path: Any, embedder: Any) -> None:
    """The window hides its own messages from "Relevant memory", not another chat's same id."""
    mem = _embedded(tmp_path, embedder)
    mem.add_messages([message(f"m{i}", "s1", "u1", f"filler about the weather number {i}", i) for i in range(1, 6)])
    mem.add_message(message("m5", "s2", "u1", "my passport number is 12345", 10))  # same id, other chat and session
    ctx = mem.get_context_for_user("u1", "s1", query="what is my passport number?")
    assert [c.message_id for c in ctx if c.kind == "window"] == ["m2", "m3", "m4", "m5"]
    assert all(c.chat_id == "s1" for c in ctx if c.kind == "window")
    assert any("passport number is 12345" in c.content for c in ctx if c.kind == "conversation_memory")
    mem.close()


# -- upgrading a store written when message_id alone was the key --------------------------------------
OLD_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (1);
CREATE TABLE messages (
    tenant TEXT NOT NULL, message_id TEXT NOT NULL, seq INTEGER NOT NULL, user_id TEXT NOT NULL,
    session_key TEXT NOT NULL, chat_id TEXT NOT NULL, create_time TEXT NOT NULL, json TEXT NOT NULL,
    indexed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (tenant, message_id)
) WITHOUT ROWID;
CREATE INDEX messages_session ON messages (tenant, user_id, session_key, seq);
CREATE INDEX messages_seq ON messages (tenant, seq);
CREATE INDEX messages_chat ON messages (tenant, chat_id, seq);
CREATE INDEX messages_pending ON messages (tenant, indexed, seq);
CREATE TABLE tenant_seq (tenant TEXT PRIMARY KEY, last_seq INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE docs (
    tenant TEXT NOT NULL, collection TEXT NOT NULL, key TEXT NOT NULL, json TEXT NOT NULL,
    PRIMARY KEY (tenant, collection, key)
) WITHOUT ROWID;
"""

OLD_MESSAGES = [
    Message.build(message("1", "chat-A", "alice", "the deploy of the payments service failed", 0, tenant="default")),
    Message.build(message("2", "chat-A", "bob", "roll back the payments deploy", 1, tenant="default")),
    Message.build(message("3", "chat-B", "carol", "Я еду в отпуск в Казань", 2, tenant="default")),
    Message.build(message("1", "chat-C", "dave", "other tenant's first message", 0, tenant="acme")),
]


def write_old_sqlite(path: str, messages: list[Message] = OLD_MESSAGES) -> None:
    """A file as schema version 1 wrote it (raw SQL, no layered-memory code), every message indexed."""
    conn = sqlite3.connect(path)
    conn.executescript(OLD_SCHEMA)
    seqs: dict[str, int] = {}
    for m in messages:
        seq = seqs[m.tenant] = seqs.get(m.tenant, 0) + 1
        conn.execute(
            "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1)",
            (m.tenant, m.message_id, seq, m.user_id, m.session_key, m.chat_id, m.create_time.isoformat(),
             m.model_dump_json(exclude={"seq"})),
        )
    conn.executemany("INSERT INTO tenant_seq VALUES (?, ?)", list(seqs.items()))
    conn.execute("INSERT INTO docs VALUES ('default', 'sessions', 'alice|chat-A', ?)",
                 (json.dumps({"user_id": "alice", "session_key": "chat-A"}),))
    conn.commit()
    conn.close()


def test_sqlite_schema_1_file_opens_and_keeps_its_messages(tmp_path: Any) -> None:
    path = str(tmp_path / "records.sqlite3")
    write_old_sqlite(path)
    store = SQLiteRecordStore(path)
    store.setup()
    store.setup()  # idempotent
    got = store.get_messages("default", [("chat-A", "1"), ("chat-A", "2"), ("chat-B", "3"), ("chat-C", "1")])
    assert [(m.content, m.seq) if m else None for m in got] == [
        ("the deploy of the payments service failed", 1), ("roll back the payments deploy", 2),
        ("Я еду в отпуск в Казань", 3), None]
    assert store.get_messages("acme", [("chat-C", "1")])[0].user_id == "dave"  # type: ignore[union-attr]
    assert store.list_docs("default", "sessions") == [("alice|chat-A", {"user_id": "alice", "session_key": "chat-A"})]
    # every message is queued again (its point moves to a per-chat id), with the upgrade marker
    assert store.pending_index("default") == [("chat-A", "1"), ("chat-A", "2"), ("chat-B", "3")]
    assert store.get_docs("acme", INDEX_UPGRADES, [MESSAGE_POINTS_V2]) == [{"schema": 2}]
    # the new identity holds: the same id in another chat is another message; seq continues
    new = Message.build(message("1", "chat-B", "erin", "a new chat's first message", 9))
    assert store.put_messages("default", [new]) == [True] and new.seq == 4
    assert store._conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == 2
    store.close()


class CountingEmbedder:
    """Counts the texts it embeds (wraps a real embedder)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim, self.documents = inner, inner.name, inner.dim, 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def _old_points(index: Any, embedder: Any, messages: list[Message]) -> None:
    """Points as schema 1 indexed them: ids by message_id alone."""
    from layered_memory.index.points import MESSAGES
    from layered_memory.retrieval.analyzer import Analyzer

    name = settings().qdrant.collection_prefix + MESSAGES
    index.ensure_collection(name, dense_dim=embedder.dim, embedder=embedder.name)
    vectors = embedder.embed_documents([m.content for m in messages])
    index.upsert(name, [
        VectorPoint(id=legacy_message_point_id(m.tenant, m.message_id), payload={**message_payload(m, Analyzer().detect_lang(m.content)), "seq": i + 1},
                    dense=v, sparse=SparseVector([1], [1.0]))
        for i, (m, v) in enumerate(zip(messages, vectors))
    ])


@pytest.mark.parametrize("backend", ["qdrant-edge", "qdrant-client"])
def test_schema_1_store_moves_points_without_embedding_again(tmp_path: Any, embedder: Any, backend: str) -> None:
    from qdrant_client import QdrantClient

    from layered_memory.stores.qdrant_server import QdrantVectorIndex

    old = [m for m in OLD_MESSAGES if m.tenant == "default"]
    path = str(tmp_path / "records.sqlite3")
    write_old_sqlite(path, old)

    def open_index() -> Any:
        return QdrantEdgeVectorIndex(str(tmp_path / "vectors")) if backend == "qdrant-edge" else QdrantVectorIndex(QdrantClient(path=str(tmp_path / "qdrant")))

    index = open_index()
    _old_points(index, embedder, old)
    counting = CountingEmbedder(embedder)
    mem = LayeredMemory.from_stores(SQLiteRecordStore(path), index, embedder=counting, settings=settings())
    assert mem.flush(120)  # the open handed the upgrade to the index writer
    assert counting.documents == 0  # vectors moved, not recomputed
    hits, _ = index.scroll(mem._core.indexer.collection, limit=100)
    assert sorted(h.id for h in hits) == sorted(message_point_id("default", m.ref) for m in old)
    assert mem.records.pending_index("default") == []
    assert mem.records.get_docs("default", INDEX_UPGRADES, [MESSAGE_POINTS_V2]) == [None]
    assert sorted(h.id for h in mem.search("payments deploy", route="dense", k=2).hits) == ["1", "2"]
    assert mem.search("Казань", route="bm25").hits[0].meta["channel_id"] == "chat-B"
    mem.add_message(message("1", "chat-B", "erin", "the payments deploy works in chat B too", 9))
    assert sorted((h.id, h.meta["channel_id"]) for h in mem.search("payments deploy", k=5, route="bm25").hits) == [
        ("1", "chat-A"), ("1", "chat-B"), ("2", "chat-A")]
    mem.close()
    reopened = LayeredMemory.from_stores(SQLiteRecordStore(path), open_index(), embedder=counting, settings=settings())
    assert counting.documents == 2  # only erin's new message was ever embedded: its text, and its text after the turn before it
    assert reopened.records.count_messages("default") == 4 and reopened.index.count(reopened._core.indexer.collection) == 4  # type: ignore[union-attr]
    reopened.close()


@pytest.mark.redis
def test_redis_layout_1_keys_open_and_keep_their_messages(redis_url: str, redis_prefix: str) -> None:
    import redis

    from layered_memory.stores.redis import RedisRecordStore

    client = redis.Redis.from_url(redis_url)
    # keys as layout 1 wrote them: the hash field and ZSET members are message_id alone
    for tenant in ("default", "acme"):
        base = f"{{{redis_prefix}:{tenant}}}:"
        rows = [m for m in OLD_MESSAGES if m.tenant == tenant]
        for seq, m in enumerate(rows, 1):
            client.hset(base + "m", m.message_id, f"{seq}:{m.model_dump_json(exclude={'seq'})}")
            for key in ("all", f"s:{m.user_id}|{m.session_key}", f"u:{m.user_id}", f"c:{m.chat_id}"):
                client.zadd(base + key, {m.message_id: seq})
        client.set(base + "seq", len(rows))
        client.zadd(base + "pend", {rows[-1].message_id: len(rows)})
        client.sadd(f"{redis_prefix}:tenants", tenant)
    client.set(f"{redis_prefix}:schema", 1)
    store = RedisRecordStore.from_url(redis_url, prefix=redis_prefix)
    store.setup()
    store.setup()
    assert int(client.get(f"{redis_prefix}:schema")) == 2  # type: ignore[arg-type]
    got = store.get_messages("default", [("chat-A", "1"), ("chat-A", "2"), ("chat-B", "3"), ("chat-C", "1")])
    assert [(m.content, m.seq) if m else None for m in got] == [
        ("the deploy of the payments service failed", 1), ("roll back the payments deploy", 2),
        ("Я еду в отпуск в Казань", 3), None]
    assert [m.message_id for m in store.window("default", user_id="alice", session_key="chat-A", limit=5)] == ["1"]
    assert [m.message_id for m in store.scan_messages("default", chat_id="chat-A")] == ["1", "2"]
    assert store.count_messages("default", user_id="bob") == 1
    assert store.pending_index("default") == [("chat-A", "1"), ("chat-A", "2"), ("chat-B", "3")]
    assert store.get_docs("default", INDEX_UPGRADES, [MESSAGE_POINTS_V2]) == [{"schema": 2}]
    new = Message.build(message("1", "chat-B", "erin", "a new chat's first message", 9))
    assert store.put_messages("default", [new]) == [True] and new.seq == 4
    assert store.delete_messages("default", user_id="alice") == [("chat-A", "1")]
    assert store.get_messages("acme", [("chat-C", "1")])[0].user_id == "dave"  # type: ignore[union-attr]
    store.close()
    client.close()


def test_engine_get_messages_validates_its_input(tmp_path: Any) -> None:
    mem = _core(tmp_path, None)
    mem.add_message(message("m1", "c1", "u1", "hello", 0))
    assert mem.get_messages(["m1"], chat_id="c1")[0].content == "hello"  # type: ignore[union-attr]
    for bad, kwargs in ((["m1"], {}), ("m1", {}), ([("c1",)], {}), ("m1", {"chat_id": "c1"}), (["m 1"], {"chat_id": "c1"}),
                        (["m1"], {"chat_id": "bad chat"})):
        with pytest.raises(InvalidInputError):
            mem.get_messages(bad, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="chat_id"):
        mem.topics.recall("m1")
    mem.close()

