"""The background index writer (issue 12): the add returns with the BM25 point written, the writer
embeds from the record store's outbox, retries failing batches without blocking the others, and a
process killed with a batch in flight loses nothing. No timed assertions: waits are for progress
(``flush()`` or a pending count), each bounded only as a guard against a hang."""

from __future__ import annotations

import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from writer_faults import FlakyEmbedder, kill_mid_batch

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.errors import InvalidInputError
from layered_memory.testing import HashEmbedder

GUARD = 120.0  # seconds: only against a hang, never a measured bound


class GatedEmbedder(HashEmbedder):
    """HashEmbedder whose ``embed_documents`` waits for ``gate`` (the writer's batch stays in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def embed_documents(self, texts: Any) -> list[list[float]]:
        self.entered.set()
        assert self.gate.wait(GUARD), "the test never opened the gate"
        return super().embed_documents(texts)


def _msg(i: int, text: str, chat: str = "c1", user: str = "u1") -> dict[str, Any]:
    return {"message_id": f"m{i}", "chat_id": chat, "user_id": user, "content": text}


def _wait(cond: Any, what: str) -> None:
    deadline = time.monotonic() + GUARD
    while not cond():
        assert time.monotonic() < deadline, f"no progress: {what}"
        time.sleep(0.02)


def _settings(**writer: Any) -> LayeredMemorySettings:
    return LayeredMemorySettings(writer={"retry_min_seconds": 0.01, "retry_max_seconds": 0.05, **writer})


def test_add_returns_before_the_dense_vector_and_keyword_search_sees_it(tmp_path: Path) -> None:
    emb = GatedEmbedder()
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings())
    try:
        for i in range(6):
            mem.add_message(_msg(i, f"turn {i} about the kubernetes rollout number {i}"))
        assert emb.entered.wait(GUARD)  # the writer holds a batch in flight, the adds returned
        st = mem.status()
        assert st["mode"] == "background" and st["pending"]["messages"] == 6
        found = mem.search("kubernetes rollout", route="bm25", k=10)
        assert sorted(h.meta["message_id"] for h in found.hits) == [f"m{i}" for i in range(6)]
        for h in found.hits:  # during the lag a hit is a whole BM25 point: payload and text complete
            assert h.text.startswith("turn ") and h.meta["user_id"] == "u1" and h.meta["channel_id"] == "c1"
        assert mem.search("kubernetes rollout", route="dense", k=10).hits == []  # no half point: no dense yet
        hybrid = mem.search("kubernetes rollout", k=10)
        assert {h.meta["message_id"] for h in hybrid.hits} == {f"m{i}" for i in range(6)}
        emb.gate.set()
        assert mem.flush(GUARD)
        assert mem.status()["pending"]["messages"] == 0
        dense = mem.search("kubernetes rollout", route="dense", k=10)
        assert {h.meta["message_id"] for h in dense.hits} == {f"m{i}" for i in range(6)}
        assert mem.doctor()["ok"]
    finally:
        emb.gate.set()
        mem.close()


def test_sync_mode_indexes_inline(tmp_path: Path) -> None:
    emb = HashEmbedder()
    settings = LayeredMemorySettings(index_mode="sync")
    with LayeredMemory.embedded(tmp_path, embedder=emb, settings=settings) as mem:
        mem.add_message(_msg(1, "the green tea shop"))
        assert mem.status()["pending"]["messages"] == 0  # before any flush
        assert [h.meta["message_id"] for h in mem.search("green tea", route="dense", k=1).hits] == ["m1"]
        assert mem.flush() is True


def test_a_failing_batch_is_retried_and_others_proceed(tmp_path: Path) -> None:
    emb = FlakyEmbedder("poison", failures=1)
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings(batch_size=4))
    try:
        mem.add_messages([_msg(i, f"ordinary message {i}") for i in range(3)] + [_msg(3, "the poison pill")])
        mem.add_messages([_msg(i, f"later message {i}") for i in range(4, 12)])
        assert mem.flush(GUARD)
        st = mem.status()
        assert emb.raised == 1 and st["errors"] >= 1 and "embedder rejected" in st["last_error"]
        assert st["pending"]["messages"] == 0 and st["failing"] == 0
        dense = mem.search("poison pill", route="dense", k=12)
        assert {h.meta["message_id"] for h in dense.hits} == {f"m{i}" for i in range(12)}
    finally:
        mem.close()


def test_a_record_that_always_fails_blocks_nothing_and_shows_in_status(tmp_path: Path) -> None:
    emb = FlakyEmbedder("poison", failures=-1)
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings(batch_size=4, close_timeout=0))
    try:
        # In a chat of its own: the indexed text of the next turn carries the previous one (and its poison).
        mem.add_messages([_msg(0, "the poison pill", chat="c0")] + [_msg(i, f"ordinary message {i}") for i in range(1, 10)])
        mem.add_messages([_msg(i, f"later message {i}") for i in range(10, 14)])
        _wait(lambda: mem.status()["pending"]["messages"] == 1, "the writer should index every message but the poisoned one")
        st = mem.status()
        assert st["failing"] == 1 and "embedder rejected a batch of 1" in st["last_error"]  # isolated by halving
        assert mem.flush(timeout=0.2) is False
        dense = mem.search("message", route="dense", k=20)
        assert {h.meta["message_id"] for h in dense.hits} == {f"m{i}" for i in range(1, 14)}
        assert [h.meta["message_id"] for h in mem.search("poison", route="bm25").hits] == ["m0"]  # keyword search has it
    finally:
        mem.close()
    # The next open with a working embedder indexes it: the outbox kept it.
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder()) as mem:
        assert mem.flush(GUARD) and mem.status()["pending"]["messages"] == 0
        assert "m0" in {h.meta["message_id"] for h in mem.search("poison pill", route="dense", k=3).hits}


def test_a_message_deleted_while_embedded_gets_no_point_back(tmp_path: Path) -> None:
    emb = GatedEmbedder()
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings())
    try:
        mem.add_messages([_msg(i, f"secret plan number {i}", chat="c1") for i in range(3)])
        assert emb.entered.wait(GUARD)
        assert mem.clear_session("u1", "c1") == 3
        emb.gate.set()
        assert mem.flush(GUARD)
        assert mem.search("secret plan", route="bm25").hits == []
        assert mem.index.count("lm_messages") == 0
        assert mem.doctor()["ok"]
    finally:
        emb.gate.set()
        mem.close()


def test_flush_refused_under_the_write_lock_and_status_on_a_bound_handle(tmp_path: Path) -> None:
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder()) as mem:
        with mem._core.write_lock, pytest.raises(InvalidInputError, match="write lock"):
            mem.flush()
        with pytest.raises(InvalidInputError, match="bound to a user"):
            mem.for_user("u1").status()
        assert mem.for_user("u1").flush() is True


def test_status_errors_stay_in_their_tenant(tmp_path: Path) -> None:
    emb = FlakyEmbedder("poison", failures=1)
    with LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings()) as mem:
        mem.tenant("a").add_message(_msg(1, "poison for tenant a"))
        mem.tenant("b").add_message(_msg(1, "plain text for tenant b"))
        assert mem.flush(GUARD)
        assert "embedder rejected" in mem.tenant("a").status()["last_error"]
        assert mem.tenant("b").status()["last_error"] is None


_CHILD = textwrap.dedent("""
    import sys, threading
    from layered_memory import LayeredMemory
    from layered_memory.testing import HashEmbedder

    class Stuck(HashEmbedder):
        def embed_documents(self, texts):
            print("in-flight", flush=True)
            threading.Event().wait()  # the batch never finishes: the parent kills the process here

    mem = LayeredMemory.embedded(sys.argv[1], embedder=Stuck())
    for i in range(40):
        mem.add_message(message_id=f"m{i}", chat_id="c1", user_id="u1", content=f"crash test message {i} about tea")
    print("stored", flush=True)
    threading.Event().wait()
""")


def test_killed_with_a_batch_in_flight_loses_nothing(tmp_path: Path) -> None:
    kill_mid_batch(_CHILD, tmp_path, guard=GUARD)
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder()) as mem:
        assert mem.records.count_messages("default") == 40
        assert mem.flush(GUARD)  # the reopen handed the pending outbox to the writer
        st = mem.status()
        assert st["pending"]["messages"] == 0
        dense = mem.search("crash test message about tea", route="dense", k=50)
        assert {h.meta["message_id"] for h in dense.hits} == {f"m{i}" for i in range(40)}
        assert mem.doctor()["ok"]


def test_the_writer_builds_hnsw_past_the_threshold(tmp_path: Path) -> None:
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(), settings=_settings(optimize_threshold=40)) as mem:
        mem.add_messages([_msg(i, f"message {i} about topic {i % 7}") for i in range(30)])
        assert mem.flush(GUARD)
        h = mem.status()["hnsw"]["lm_messages"]
        assert h["points"] == 30 and h["builds"] == 0  # below the threshold: exact search is fine
        mem.add_messages([_msg(i, f"message {i} about topic {i % 7}") for i in range(30, 80)])
        assert mem.flush(GUARD)
        _wait(lambda: mem.status()["hnsw"]["lm_messages"]["builds"] >= 1, "the writer should build HNSW past 40 points")
        h = mem.status()["hnsw"]["lm_messages"]
        assert h["state"] == "built" and h["points_since_build"] < 40
        assert {x.meta["message_id"] for x in mem.search("topic 3", route="dense", k=80).hits} >= {"m3", "m10", "m73"}
        agent = mem.agents.create("u1", "coder")
        agent.add_interactions([{"text": f"ran pytest suite {i}"} for i in range(45)])
        name = agent.info.collection
        _wait(lambda: mem.status()["hnsw"].get(name, {}).get("builds", 0) >= 1, "agent collections are watched too")


def test_adds_during_an_hnsw_build_skip_the_inline_point_and_the_writer_writes_it(tmp_path: Path) -> None:
    emb = GatedEmbedder()
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings())
    try:
        with mem._core.background.optimizing:  # what the writer holds while Qdrant Edge builds HNSW (its write lock is taken)
            mem.add_message(_msg(1, "added while the index was being built"))
        assert emb.entered.wait(GUARD)
        assert mem.search("being built", route="bm25").hits == []  # skipped inline: no half point either
        emb.gate.set()
        assert mem.flush(GUARD)
        assert [h.meta["message_id"] for h in mem.search("being built", route="bm25").hits] == ["m1"]
        assert [h.meta["message_id"] for h in mem.search("being built", route="dense", k=1).hits] == ["m1"]
    finally:
        emb.gate.set()
        mem.close()


def test_aflush_and_the_status_command(tmp_path: Path) -> None:
    import asyncio
    import json

    from click.testing import CliRunner

    from layered_memory.cli import main

    async def scenario() -> dict[str, Any]:
        mem = LayeredMemory.embedded(tmp_path / "store", embedder=HashEmbedder(dim=64))
        await mem.aadd_messages([_msg(i, f"async message {i}") for i in range(5)])
        assert await mem.aflush(GUARD)
        st = await mem.astatus()
        await mem.aclose()
        return st

    st = asyncio.run(scenario())
    assert st["pending"]["messages"] == 0 and st["writer"]["records"] >= 5
    (tmp_path / "chat.jsonl").write_text("\n".join(json.dumps(_msg(i, f"line {i}")) for i in range(3)), encoding="utf-8")
    runner = CliRunner()
    base = ["--path", str(tmp_path / "cli"), "--embedder", "none"]
    out = runner.invoke(main, [*base, "ingest", str(tmp_path / "chat.jsonl")], catch_exceptions=False)
    assert out.exit_code == 0 and "ingested 3 messages" in out.output
    out = runner.invoke(main, [*base, "status", "--json"], catch_exceptions=False)
    report = json.loads(out.output)
    assert out.exit_code == 0 and report["pending"] == {"messages": 0, "items": 0, "agents": 0, "topic_summaries": 0}
    assert report["hnsw"]["lm_messages"]["points"] == 3
    out = runner.invoke(main, [*base, "status"], catch_exceptions=False)
    assert "pending messages 0" in out.output and "lm_messages: points 3" in out.output


def test_the_dense_vector_embeds_the_text_bm25_indexed_even_after_a_restart(tmp_path: Path) -> None:
    """The writer embeds "Speaker: text" into the dense vector and "previous turn + Speaker: text", as
    the BM25 point has it, into the context vector, also for batches that are not the chat's tail and
    for messages left pending by an earlier process."""
    from layered_memory.index.points import message_point_id
    from layered_memory.models import MessageRef

    emb = GatedEmbedder()
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings(batch_size=4, close_timeout=0))
    for i in range(12):
        mem.add_message(_msg(i, f"turn number {i} of the session"))
    emb.gate.set()
    assert mem.flush(GUARD)
    for i in range(12, 20):  # left pending: the next process embeds them without the write path's memory
        mem._core.background.writer.close()
        mem.add_message(_msg(i, f"turn number {i} of the session"))
    mem.close()
    plain = HashEmbedder()
    with LayeredMemory.embedded(tmp_path, embedder=plain, settings=_settings(batch_size=3)) as mem:
        assert mem.flush(GUARD)
        ix = mem._core.indexer
        stored = mem.get_session_messages("u1", "c1")
        for prev, m in zip([None, *stored[:-1]], stored):
            point = mem.index.retrieve("lm_messages", [message_point_id("default", MessageRef("c1", m.message_id))], with_vectors=True)[0]
            own, ctx = ix.indexed_texts(m, prev)
            assert point.dense == pytest.approx(plain.embed_documents([own])[0], abs=1e-6), m.message_id
            assert (point.context is None) == (prev is None) and ctx is not None or prev is None
            if prev is not None:
                assert point.context == pytest.approx(plain.embed_documents([ctx])[0], abs=1e-6), m.message_id
                assert point.payload["prev"] == prev.message_id


def test_process_does_not_hang_on_a_record_the_embedder_keeps_refusing(tmp_path: Path) -> None:
    emb = FlakyEmbedder("poison", failures=-1)
    with LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings(close_timeout=0)) as mem:
        mem.add_messages([_msg(1, "fine message"), _msg(2, "the poison pill", chat="c2")])
        done = mem.process()
        assert done["indexed"] >= 0 and mem.status()["pending"]["messages"] == 1 and mem.status()["failing"] == 1
