"""An edit racing the background index writer (issue 24, "Edits"): the edit's re-index goes through the
writer's normal path (BM25 point at once, the dense vector from the writer), and a writer batch that read
the old text must not win. Two races, each forced at its exact point inside the writer's batch:

* the edit lands while the batch embeds the old text (between its first read and its upsert);
* the edit lands between the batch's upsert and its ``mark_indexed`` (which would clear the edit's
  pending flag and leave the new text without a dense vector).

Afterwards the point holds the new text's BM25 terms and dense vector, nothing is pending, and the doctor
finds no stale point. No timed assertions: waits are for progress, bounded only as a guard."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.index.points import message_point_id
from layered_memory.testing import HashEmbedder

GUARD = 120.0
OLD, NEW = "the deploy broke the zebrafault pod", "the deploy broke the payments pod"


class EditingEmbedder(HashEmbedder):
    """Runs ``hook`` (once) when the writer embeds a batch holding ``OLD``: the edit lands mid-batch."""

    def __init__(self) -> None:
        super().__init__()
        self.hook: Any = None

    def embed_documents(self, texts: Any) -> list[list[float]]:
        if self.hook is not None and any(OLD in t for t in texts):
            hook, self.hook = self.hook, None
            hook()
        return super().embed_documents(texts)


def _settled(mem: LayeredMemory) -> None:
    deadline = time.monotonic() + GUARD
    while mem.records.count_pending("default") or not mem.flush(GUARD):
        assert time.monotonic() < deadline, "the writer made no progress"
        time.sleep(0.02)


def _assert_new_text_indexed(mem: LayeredMemory) -> None:
    ix = mem._core.indexer
    m0, m1 = mem.get_messages([("c1", "m0"), ("c1", "m1")])
    assert m0 is not None and m0.content == NEW
    for msg, previous in ((m0, None), (m1, m0)):
        point = mem.index.retrieve(ix.collection, [message_point_id("default", msg.ref)], with_vectors=True)[0]  # type: ignore[union-attr]
        own, ctx = ix.indexed_texts(msg, previous)  # the own text; the context (the turn before, then the own text)
        want = mem.embedder.embed_documents([own] + ([ctx] if ctx is not None else []))  # type: ignore[union-attr]
        assert point.dense is not None, f"{msg.message_id}: the edit's point never got its dense vector"
        assert max(abs(a - b) for a, b in zip(point.dense, want[0])) < 1e-4, f"{msg.message_id}: the dense vector is of the old text"
        if ctx is not None:
            assert point.context is not None, f"{msg.message_id}: the point never got its context vector"
            assert max(abs(a - b) for a, b in zip(point.context, want[1])) < 1e-4, f"{msg.message_id}: the context is of the old text"
    assert [h.id for h in mem.search("zebrafault", route="bm25").hits] == []
    report = mem.doctor()
    assert report["ok"] and report["messages"]["stale"] == 0, report


def _mem(tmp_path: Path, emb: HashEmbedder) -> LayeredMemory:
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=LayeredMemorySettings(index_mode="background"))
    return mem


def test_an_edit_while_the_writer_embeds_the_old_text(tmp_path: Path) -> None:
    emb = EditingEmbedder()
    mem = _mem(tmp_path, emb)
    done = threading.Event()

    def edit() -> None:  # in the writer's thread, between its first read and its upsert
        mem.edit_message("c1", "m0", content=NEW)
        done.set()

    emb.hook = edit
    mem.add_messages([{"message_id": "m0", "chat_id": "c1", "user_id": "u1", "content": OLD},
                      {"message_id": "m1", "chat_id": "c1", "user_id": "u1", "content": "roll it back", "role": "assistant"}])
    assert done.wait(GUARD)
    _settled(mem)
    _assert_new_text_indexed(mem)
    mem.close()


def test_an_edit_between_the_writers_upsert_and_its_mark_indexed(tmp_path: Path) -> None:
    emb = HashEmbedder()
    mem = _mem(tmp_path, emb)
    original = mem.records.mark_indexed
    done = threading.Event()

    def mark_indexed(tenant: str, refs: Any) -> None:
        if not done.is_set() and ("c1", "m0") in [tuple(r) for r in refs] and threading.current_thread().name != "MainThread":
            mem.edit_message("c1", "m0", content=NEW)  # the writer upserted the old text and has not marked it yet
            done.set()
        original(tenant, refs)

    mem.records.mark_indexed = mark_indexed  # type: ignore[method-assign]
    mem.add_messages([{"message_id": "m0", "chat_id": "c1", "user_id": "u1", "content": OLD},
                      {"message_id": "m1", "chat_id": "c1", "user_id": "u1", "content": "roll it back", "role": "assistant"}])
    assert done.wait(GUARD)
    _settled(mem)
    _assert_new_text_indexed(mem)
    mem.close()


def test_the_doctor_finds_and_repairs_a_point_of_an_older_text(tmp_path: Path) -> None:
    """The safety net for a race no process can see (another process's writer): a point whose payload hash
    is not the stored text's is ``stale`` drift, and ``doctor(repair=True)`` indexes the message again."""
    mem = LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(), settings=LayeredMemorySettings(index_mode="sync"))
    mem.add_message(message_id="m0", chat_id="c1", user_id="u1", content=OLD)
    old_point = mem.index.retrieve(mem._core.indexer.collection, [message_point_id("default", ("c1", "m0"))], with_vectors=True)[0]  # type: ignore[union-attr]
    mem.edit_message("c1", "m0", content=NEW)
    from layered_memory.vectors import VectorPoint

    mem.index.upsert(mem._core.indexer.collection, [VectorPoint(id=old_point.id, payload=old_point.payload, dense=old_point.dense,  # type: ignore[union-attr]
                                                                sparse=mem._core.indexer.points(mem.get_messages([("c1", "m0")])[0:1])[0].sparse)])  # type: ignore[list-item]
    report = mem.doctor()
    assert not report["ok"] and report["messages"]["stale"] == 1
    mem.doctor(repair=True)
    assert mem.doctor()["ok"]
    point = mem.index.retrieve(mem._core.indexer.collection, [old_point.id])[0]  # type: ignore[union-attr]
    assert point.payload["text"] == NEW
    mem.close()
