"""``mem.edit_message`` / ``mem.delete_message`` (issue 24, "Edits"), on every record store: SQLite + Qdrant Edge,
Redis, a Redis Cluster and PostgreSQL with Redis beside it (each with a Qdrant index), and SQLite without a
vector index. A re-add keeps the stored copy; an edit re-indexes (BM25 and the dense vector of the new text,
the next turn's point too); a delete removes the record, its point, its cached copy and the session when it
was the last message; a bound handle changes only its own messages; bad input writes nothing."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory import InvalidInputError, LayeredMemory, LayeredMemorySettings, NotFoundError
from layered_memory.index.points import message_point_id
from layered_memory.testing import HashEmbedder

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
BACKENDS = ("embedded", "core", "redis", "cluster", "postgres")
TURNS = [
    ("u1", "user", "the payments pod fails with zebrafault after the deploy"),
    ("u1", "assistant", "check the kubectl logs of the payments pod"),
    ("u1", "user", "the logs say out of memory"),
    ("u1", "assistant", "raise the memory limit to 512Mi"),
]


def settings() -> LayeredMemorySettings:
    s = LayeredMemorySettings(index_mode="sync")
    s.memory.short_term_window = 2
    s.memory.summary_threshold_messages = 3
    return s


def build(request: pytest.FixtureRequest, backend: str, tmp_path: Any) -> LayeredMemory:
    from layered_memory.stores.qdrant_server import QdrantVectorIndex

    if backend == "embedded":
        return LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(), settings=settings())
    if backend == "core":
        from layered_memory.stores.sqlite import SQLiteRecordStore

        records: Any = SQLiteRecordStore(str(tmp_path / "records.sqlite3"))
        records.setup()
        return LayeredMemory.from_stores(records, None, embedder=None, settings=settings())
    if backend == "postgres":  # seed 001's layout: the records in PostgreSQL, Redis beside it as the recent cache
        from layered_memory.stores.postgres import PostgresRecordStore

        records = PostgresRecordStore(request.getfixturevalue("postgres_url"), schema=request.getfixturevalue("postgres_schema"),
                                      cache_url=request.getfixturevalue("redis_url"), cache_prefix=request.getfixturevalue("redis_prefix"))
        records.setup()
    else:
        from server_stores import server_records

        records = server_records(request, backend)
    return LayeredMemory.from_stores(records, QdrantVectorIndex.in_memory(), embedder=HashEmbedder(), settings=settings())


def marks(backend: str) -> list[Any]:
    return {"redis": [pytest.mark.redis], "cluster": [pytest.mark.redis],
            "postgres": [pytest.mark.postgres, pytest.mark.redis]}.get(backend, [])


@pytest.fixture(params=[pytest.param(b, marks=marks(b)) for b in BACKENDS])
def mem(request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    m = build(request, request.param, tmp_path)
    m.add_messages([{"message_id": f"m{i}", "chat_id": "s1", "user_id": u, "role": role, "content": text,
                     "create_time": T0 + timedelta(minutes=i)} for i, (u, role, text) in enumerate(TURNS)])
    m.add_message(message_id="x1", chat_id="s2", user_id="u2", content="mallory talks about zebrafault too",
                  create_time=T0)
    yield m
    m.close()


def bm25(mem: LayeredMemory, text: str, **filters: Any) -> list[str]:
    return [h.id for h in mem.search(text, route="bm25", filters=filters or None, k=20).hits]


def test_a_re_add_returns_the_stored_copy_and_an_edit_changes_it(mem: LayeredMemory) -> None:
    again = mem.add_message(message_id="m0", chat_id="s1", user_id="u1", content="a different text entirely")
    assert again.content == TURNS[0][2] and again.seq == 1  # idempotent: the retry never overwrites
    edited = mem.edit_message("s1", "m0", content="the payments pod fails with OOMKilled after the deploy",
                              edit_time="2024-05-01T10:00:00Z")
    assert edited.seq == 1 and edited.create_time == T0 and edited.user_id == "u1"
    assert edited.metadata["edited_at"] == "2024-05-01T10:00:00Z"
    stored = mem.get_messages([("s1", "m0")])[0]
    assert stored is not None and stored.content == edited.content
    assert [m.message_id for m in mem.get_session_messages("u1", "s1")] == ["m0", "m1", "m2", "m3"]  # same place
    assert mem.add_message(message_id="m0", chat_id="s1", user_id="u1", content="old").content == edited.content
    assert mem.doctor()["ok"]


def test_an_edit_re_indexes_the_message_and_the_next_turn(mem: LayeredMemory) -> None:
    with_next = ["m0", "m1"] if mem.index is not None else ["m0"]  # m1's point carries m0 as its previous turn
    assert bm25(mem, "zebrafault", user_id="u1") == with_next
    mem.edit_message("s1", "m0", content="the payments pod fails with OOMKilled after the deploy")
    assert bm25(mem, "zebrafault", user_id="u1") == []  # neither the message nor the next turn keeps the old text
    assert bm25(mem, "OOMKilled")[:2] == with_next
    if mem.index is not None:  # both dense vectors follow the new text (sync mode: written by the edit itself)
        ix = mem._core.indexer
        m0, m1 = mem.get_messages([("s1", "m0"), ("s1", "m1")])
        for msg, previous in ((m0, None), (m1, m0)):
            point = mem.index.retrieve(ix.collection, [message_point_id("default", msg.ref)], with_vectors=True)[0]
            own, ctx = ix.indexed_texts(msg, previous)  # the own text; the context: the turn before, then the own text
            assert point.payload["text"] == msg.content
            assert max(abs(a - b) for a, b in zip(point.dense, mem.embedder.embed_documents([own])[0])) < 1e-4
            if ctx is None:
                assert point.context is None
            else:
                assert max(abs(a - b) for a, b in zip(point.context, mem.embedder.embed_documents([ctx])[0])) < 1e-4
    assert mem.doctor()["ok"]


def test_a_delete_removes_the_message_everywhere(mem: LayeredMemory) -> None:
    assert "m0" in {m.message_id for m in mem.topics.recall("m2", chat_id="s1")}  # read through the recent cache
    assert mem.delete_message("s1", "m0") is True
    assert mem.get_messages([("s1", "m0")]) == [None]
    assert [m.message_id for m in mem.get_session_messages("u1", "s1")] == ["m1", "m2", "m3"]
    assert "m0" not in {m.message_id for m in mem.topics.recall("m2", chat_id="s1")}  # not even from the recent cache
    assert mem.topics.cache is None or mem.topics.cache.get("default", [("s1", "m0")]) == [None]
    assert bm25(mem, "zebrafault") == ["x1"]  # m0's point and m1's copy of it as previous turn are gone
    window = [c.message_id for c in mem.get_context_for_user("u1", "s1", include_vector=False) if c.kind == "window"]
    assert "m0" not in window
    assert mem.delete_message("s1", "m0") is False  # idempotent
    assert mem.doctor()["ok"]
    assert mem.add_message(message_id="m0", chat_id="s1", user_id="u1", content="stored again").seq == 6  # a new message


def test_deleting_a_sessions_last_message_drops_the_session(mem: LayeredMemory) -> None:
    assert mem.list_sessions("u2") == ["s2"]
    assert mem.delete_message("s2", "x1")
    assert mem.list_sessions("u2") == [] and mem.get_session_messages("u2", "s2") == []
    assert mem.doctor()["ok"]


def test_a_bound_handle_changes_only_its_own_messages(mem: LayeredMemory) -> None:
    mallory = mem.for_user("u2")
    before = mem.get_session_messages("u1", "s1")
    with pytest.raises(InvalidInputError, match=r"another user's message; a handle bound to user 'u2' may edit only"):
        mallory.edit_message("s1", "m0", content="overwritten")
    with pytest.raises(InvalidInputError, match="may delete only its own"):
        mallory.delete_message("s1", "m0")
    with pytest.raises(InvalidInputError, match="another user's"):
        asyncio.run(mallory.adelete_message("s1", "m1"))
    assert mem.get_session_messages("u1", "s1") == before
    assert bm25(mem, "zebrafault", user_id="u1")[0] == "m0"
    other = mem.tenant("beta")  # another tenant: the message is not stored there
    with pytest.raises(NotFoundError, match="tenant 'beta'"):
        other.edit_message("s1", "m0", content="x")
    assert other.delete_message("s1", "m0") is False
    assert mem.get_session_messages("u1", "s1") == before
    own = mallory.edit_message("s2", "x1", content="mallory's own edited text")
    assert own.content == "mallory's own edited text" and mallory.delete_message("s2", "x1")


def test_bad_input_writes_nothing(mem: LayeredMemory) -> None:
    before = mem.get_session_messages("u1", "s1")
    limit = mem.settings.memory.max_content_chars
    with pytest.raises(InvalidInputError, match=rf"content=.*over max_content_chars={limit}; split the message"):
        mem.edit_message("s1", "m0", content="y" * (limit + 1))
    with pytest.raises(InvalidInputError, match="content=''"):
        mem.edit_message("s1", "m0", content="")
    with pytest.raises(InvalidInputError, match="an edit needs the new content"):
        mem.edit_message("s1", "m0")
    with pytest.raises(InvalidInputError, match="metadata"):
        mem.edit_message("s1", "m0", metadata={"when": object()})
    with pytest.raises(InvalidInputError, match="chat_id"):
        mem.delete_message("s 1", "m0")
    with pytest.raises(NotFoundError, match="message_id='nope'"):
        mem.edit_message("s1", "nope", content="x")
    assert mem.get_session_messages("u1", "s1") == before
    assert mem.doctor()["ok"] and mem.doctor()["outbox"] == 0


def test_an_edit_that_changes_nothing_writes_nothing(mem: LayeredMemory) -> None:
    first = mem.edit_message("s1", "m2", content="the logs say OOM")
    again = mem.edit_message("s1", "m2", content="the logs say OOM", edit_time="2030-01-01T00:00:00Z")
    assert again == first  # the repeated event keeps the first edit's time
    meta = mem.edit_message("s1", "m2", metadata={"channel": "tg"})
    assert meta.content == "the logs say OOM" and meta.metadata["channel"] == "tg"
    assert bm25(mem, "OOM", channel="tg") == ["m2"]  # the payload follows a metadata edit


def test_async_twins(mem: LayeredMemory) -> None:
    async def go() -> tuple[Any, bool]:
        edited = await mem.aedit_message("s1", "m3", content="raise the memory limit to 1Gi")
        return edited, await mem.adelete_message("s1", "m2")

    edited, deleted = asyncio.run(go())
    assert edited.content.endswith("1Gi") and deleted
    assert [m.content for m in mem.get_session_messages("u1", "s1")][-1].endswith("1Gi")
    assert mem.doctor()["ok"]
