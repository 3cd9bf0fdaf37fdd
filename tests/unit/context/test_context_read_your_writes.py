"""Read your writes (issue 28): a context built right after ``add_message`` equals the one built after
``flush()``, although the background writer has not embedded the new messages yet: the asker's queued
messages are indexed on the request path, through the writer's own code (``BackgroundIndexer.index_now``)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.providers.local import USEEmbedder

T0 = datetime(2024, 6, 1, 8, 0, tzinfo=timezone.utc)
WRITER = "layered-memory-index-writer"
LINES = [
    "We finally adopted a beagle puppy from the shelter on Saturday!", "The trains were late again this morning.",
    "I started violin lessons every Tuesday evening.", "My sister had a baby girl, they named her Mila.",
    "We are moving to Lisbon in the autumn for the new job.", "I ran my first half marathon last weekend.",
    "Coffee is the only thing keeping me going.", "The new bakery on our street has amazing bread.",
    "I switched to a vegetarian diet for a month.", "We spent the holidays hiking in Patagonia.",
]
QUERY = "what kind of dog did we get?"


class GatedWriter:
    """The shared embedder, but the index writer's thread waits at ``gate`` before each batch: its queue
    stays full while the test reads (the request path embeds unhindered, and does not wait for the
    writer's batch in flight)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.gate = threading.Event()

    def embed_documents(self, texts: Any) -> list[list[float]]:
        if threading.current_thread().name == WRITER:
            self.gate.wait(60)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def use():
    return USEEmbedder()


def write_twenty(mem: LayeredMemory, start: int) -> None:
    for i in range(20):
        mem.add_message({"message_id": f"m{start + i}", "chat_id": "c1", "user_id": "u1", "user_name": "Ann",
                         "content": f"{LINES[i % len(LINES)]} (#{start + i})", "create_time": T0 + timedelta(minutes=start + i)})


def context(mem: LayeredMemory) -> list[tuple[str, str]]:
    return [(m.kind, m.content) for m in mem.get_context_for_user("u1", "c1", query=QUERY)]


@pytest.mark.parametrize("read_your_writes", [64, 0])
def test_context_right_after_writes_equals_the_one_after_flush(tmp_path, use, read_your_writes):
    emb = GatedWriter(use)
    s = LayeredMemorySettings()
    s.context.read_your_writes = read_your_writes
    mem = LayeredMemory.embedded(tmp_path, embedder=emb, settings=s)
    try:
        assert mem.settings.index_mode == "background"
        write_twenty(mem, 0)
        t0 = time.perf_counter()
        before = context(mem)  # the writer is held at its gate: none of the 20 has its dense vector from it
        assert time.perf_counter() - t0 < 30  # never waits for the gate (60 s): a guard against a hang, not a timing
        emb.gate.set()
        assert mem.flush(60)
        after = context(mem)
        assert "beagle" in "".join(c for _, c in after)  # found by meaning ("dog"): the dense side
        if read_your_writes:
            assert before == after
        else:  # the setting turned off: the context misses what only the dense side finds
            assert before != after
    finally:
        emb.gate.set()
        mem.close()


def test_writes_of_other_users_are_left_to_the_writer(tmp_path, use):
    emb = GatedWriter(use)
    mem = LayeredMemory.embedded(tmp_path, embedder=emb)
    try:
        mem.add_message({"message_id": "x1", "chat_id": "c9", "user_id": "u2", "content": "Bob adopted a corgi puppy"})
        write_twenty(mem, 0)
        context(mem)
        assert mem.records.count_pending("default") == 1  # only u2's message still waits for the writer
    finally:
        emb.gate.set()
        mem.close()
