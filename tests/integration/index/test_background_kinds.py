"""The background index writer for the kinds besides messages (issue 12): items, agent interactions and
topic summaries get their BM25 point when the call returns and their dense vector from the writer,
which drains durable pending markers. A failing batch is retried, a killed process loses nothing, a
search during the lag never sees half a point, and the doctor tells the lag from drift. No timed
assertions: waits are ``flush()`` or a bounded guard against a hang."""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from writer_faults import FlakyEmbedder, kill_mid_batch

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.index.points import point_id
from layered_memory.items import KIND, doc_key
from layered_memory.testing import HashEmbedder
from server_stores import SERVER_KINDS, server_records

GUARD = 120.0  # seconds: only against a hang, never a measured bound
KINDS = ("items", "agents", "topic_summaries")


class ArmedEmbedder(HashEmbedder):
    """HashEmbedder whose ``embed_documents`` in the index writer's thread waits for ``gate`` once ``armed``
    is set (its batch stays in flight; the summary evaluator embeds in the caller's thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed, self.gate, self.entered = threading.Event(), threading.Event(), threading.Event()

    def embed_documents(self, texts: Any) -> list[list[float]]:
        if self.armed.is_set() and threading.current_thread().name == "layered-memory-index-writer":
            self.entered.set()
            assert self.gate.wait(GUARD), "the test never opened the gate"
        return super().embed_documents(texts)


def _settings(**writer: Any) -> LayeredMemorySettings:
    return LayeredMemorySettings(writer={"retry_min_seconds": 0.01, "retry_max_seconds": 0.05, **writer})


def _messages(n: int, chat: str = "c1") -> list[dict[str, Any]]:
    return [{"message_id": f"m{i}", "chat_id": chat, "user_id": "u1", "content": f"we planned the zebra migration step {i}"}
            for i in range(n)]


def _point(mem: LayeredMemory, collection: str, pid: str) -> Any:
    found = mem.index.retrieve(collection, [pid], with_vectors=True)
    assert len(found) == 1, f"no point {pid} in {collection}"
    return found[0]


def _write_each_kind(mem: LayeredMemory) -> dict[str, tuple[str, str]]:
    """One record of each kind; returns kind -> (collection, point id)."""
    mem.items.put(("notes", "u1"), "k1", {"text": "zebra crossing next to the office"})
    agent = mem.agents.get("u1", "coder")
    it = agent.add_interaction("fixed the zebra stripes rendering bug", task_id="t1")
    topic = mem.topics.list("c1")[0].topic_id
    assert mem.topics.summarize(topic) is not None
    return {
        "items": ("lm_items", point_id("default", "item", "notes.u1.|k1")),
        "agents": (agent.collection, agent.scope.point_id(it.interaction_id)),
        "topic_summaries": ("lm_messages", point_id("default", "topic_summary", topic)),
    }


def _prepare(mem: LayeredMemory) -> None:
    mem.add_messages(_messages(6))
    mem.agents.create("u1", "coder")
    assert mem.flush(GUARD)
    mem.process()  # threads the messages into a topic
    assert mem.flush(GUARD)


def _lag_scenario(mem: LayeredMemory, emb: ArmedEmbedder) -> None:
    try:
        _prepare(mem)
        emb.armed.set()
        points = _write_each_kind(mem)
        assert emb.entered.wait(GUARD)  # a batch is in flight, every call returned
        st = mem.status()
        assert st["mode"] == "background" and all(st["pending"][k] == 1 for k in KINDS), st["pending"]
        for kind, (coll, pid) in points.items():  # during the lag: a whole BM25 point, no dense vector yet
            p = _point(mem, coll, pid)
            assert p.dense is None and p.payload["tenant"].startswith("default"), kind
        assert p.payload["title"] and p.payload["text"]  # the summary's payload is complete
        agent = mem.agents.get("u1", "coder")
        assert [h.text for h in agent.search("zebra stripes", route="bm25", k=5).hits] == ["fixed the zebra stripes rendering bug"]
        assert agent.search("zebra stripes", route="dense", k=5).hits == []  # never a point without its vector
        assert [i.key for i in mem.items.search(("notes",), query="zebra crossing")] == ["k1"]
        assert mem.topics.search_summaries("zebra migration")
        report = mem.doctor()  # the lag is reported as pending, not as drift
        assert report["ok"], report
        assert all(report[k]["pending"] >= 1 and report[k]["missing"] == 0 for k in KINDS), report
        emb.armed.clear()
        emb.gate.set()
        assert mem.flush(GUARD)
        st = mem.status()
        assert all(st["pending"][k] == 0 for k in KINDS), st["pending"]
        for kind, (coll, pid) in points.items():
            assert _point(mem, coll, pid).dense is not None, kind
        assert [h.text for h in agent.search("zebra stripes", route="dense", k=1).hits] == ["fixed the zebra stripes rendering bug"]
        assert mem.doctor()["ok"]
    finally:
        emb.gate.set()
        mem.close()


def test_each_kind_returns_with_its_bm25_point_and_the_writer_adds_the_vector(tmp_path: Path) -> None:
    emb = ArmedEmbedder()
    _lag_scenario(LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings()), emb)


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_each_kind_on_the_server_record_stores(request: pytest.FixtureRequest, tmp_path: Path, kind: str) -> None:
    from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex

    emb = ArmedEmbedder()
    records = server_records(request, kind)
    _lag_scenario(LayeredMemory.from_stores(records, QdrantEdgeVectorIndex(tmp_path), embedder=emb, settings=_settings()), emb)


def test_sync_mode_writes_every_kind_inline(tmp_path: Path) -> None:
    settings = LayeredMemorySettings(index_mode="sync")
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(), settings=settings) as mem:
        mem.add_messages(_messages(6))
        mem.agents.create("u1", "coder")
        mem.process()
        points = _write_each_kind(mem)
        assert all(mem.status()["pending"].get(k, 0) == 0 for k in KINDS)  # before any flush
        for kind, (coll, pid) in points.items():
            assert _point(mem, coll, pid).dense is not None, kind


def test_a_failing_batch_of_each_kind_is_retried_and_shows_in_status(tmp_path: Path) -> None:
    emb = FlakyEmbedder("poison", failures=3)
    with LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings(batch_size=2)) as mem:
        agent = mem.agents.create("u1", "coder")
        mem.items.put(("notes",), "bad", {"text": "the poison pill note"})
        for i in range(5):
            mem.items.put(("notes",), f"k{i}", {"text": f"ordinary note {i}"})
        agent.add_interactions([{"text": "a poison tool call"}] + [{"text": f"ordinary call {i}"} for i in range(5)])
        assert mem.flush(GUARD)
        st = mem.status()
        assert emb.raised == 3 and st["errors"] >= 1 and "embedder rejected" in st["last_error"]
        assert all(st["pending"][k] == 0 for k in KINDS) and st["failing"] == 0
        found = mem.index.scroll("lm_items", limit=100, with_vectors=True)[0]
        assert len(found) == 6 and all(p.dense is not None for p in found)
        assert len(agent.search("poison ordinary", route="dense", k=10).hits) == 6


def test_an_item_deleted_or_rewritten_while_embedded_is_indexed_as_stored(tmp_path: Path) -> None:
    emb = ArmedEmbedder()
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings())
    try:
        emb.armed.set()
        mem.items.put(("notes",), "gone", {"text": "secret plan to delete"})
        mem.items.put(("notes",), "moved", {"text": "first version"})
        assert emb.entered.wait(GUARD)
        assert mem.items.delete(("notes",), "gone")
        mem.items.put(("notes",), "moved", {"text": "second version about giraffes"})
        emb.armed.clear()
        emb.gate.set()
        assert mem.flush(GUARD)
        points = {p.payload["item_key"]: p for p in mem.index.scroll("lm_items", limit=10, with_vectors=True)[0]}
        assert set(points) == {"notes.|moved"}  # no point came back for the deleted one
        assert points["notes.|moved"].dense == pytest.approx(HashEmbedder().embed_documents(["second version about giraffes"])[0], abs=1e-6)
        assert mem.doctor()["ok"]
    finally:
        emb.gate.set()
        mem.close()


_CHILD = textwrap.dedent("""
    import sys, threading
    from layered_memory import LayeredMemory
    from layered_memory.testing import HashEmbedder

    class Stuck(HashEmbedder):
        armed = False
        def embed_documents(self, texts):
            if self.armed and threading.current_thread().name == "layered-memory-index-writer":
                print("in-flight", flush=True)
                threading.Event().wait()  # the batch never finishes: the parent kills the process here
            return super().embed_documents(texts)

    emb = Stuck()
    mem = LayeredMemory.embedded(sys.argv[1], embedder=emb)
    mem.add_messages([{"message_id": f"m{i}", "chat_id": "c1", "user_id": "u1", "content": f"crash test {i} about tea"} for i in range(6)])
    agent = mem.agents.create("u1", "coder")
    mem.flush()
    mem.process()
    mem.flush()
    emb.armed = True
    for i in range(20):
        mem.items.put(("notes",), f"k{i}", {"text": f"crash note {i} about tea"})
    agent.add_interactions([{"text": f"crash call {i} about tea"} for i in range(20)])
    mem.topics.summarize(mem.topics.list("c1")[0].topic_id)
    print("stored", flush=True)
    threading.Event().wait()
""")


def test_killed_with_a_batch_in_flight_loses_no_kind(tmp_path: Path) -> None:
    kill_mid_batch(_CHILD, tmp_path, guard=GUARD)
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder()) as mem:
        assert mem.flush(GUARD)  # the reopen handed all pending work to the writer
        st = mem.status()
        assert st["pending_total"] == 0, st["pending"]
        items = mem.index.scroll("lm_items", limit=100, with_vectors=True)[0]
        assert len(items) == 20 and all(p.dense is not None for p in items)
        agent = mem.agents.get("u1", "coder")
        assert {h.text for h in agent.search("crash call about tea", route="dense", k=50).hits} == {f"crash call {i} about tea" for i in range(20)}
        topic = mem.topics.list("c1")[0].topic_id
        assert _point(mem, "lm_messages", point_id("default", "topic_summary", topic)).dense is not None
        assert mem.doctor()["ok"]


def test_an_item_put_with_index_mode_sync_is_whole_when_put_returns(tmp_path: Path) -> None:
    """``items.put(..., index_mode="sync")`` (what the LangGraph store adapter uses: its stores embed in
    put) embeds before returning even while the writer is held mid-batch; a bad mode is refused."""
    emb = ArmedEmbedder()
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=_settings())
    try:
        mem.items.put(("notes",), "warm", {"text": "warm up the writer"})
        mem.flush()
        emb.armed.set()
        mem.items.put(("notes",), "held", {"text": "waits for the writer"})  # the writer's batch blocks on the gate
        assert emb.entered.wait(GUARD)
        mem.items.put(("notes",), "now", {"text": "embedded before returning"}, index_mode="sync")
        col = mem.items.collection
        (now,) = mem.index.retrieve(col, [point_id(mem.tenant_id, KIND, doc_key(("notes",), "now"))], with_vectors=True)
        assert now.dense is not None
        assert mem.status()["pending"]["items"] == 1  # only the held one waits
        with pytest.raises(ValueError, match="index_mode"):
            mem.items.put(("notes",), "bad", {"text": "x"}, index_mode="later")
    finally:
        emb.gate.set()
        mem.close()
