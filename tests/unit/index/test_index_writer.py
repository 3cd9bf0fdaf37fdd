"""The background index writer (index/writer.py) with a real thread and an in-memory pending source."""

from __future__ import annotations

import threading

from layered_memory.index.writer import IndexWriter


class FakePending:
    """A list of pending records drained in batches; can fail on chosen attempts or block."""

    def __init__(self, batch: int = 3) -> None:
        self.pending: list[int] = []
        self.done: list[int] = []
        self.batch = batch
        self.fail_next = 0
        self.gate = threading.Event()
        self.gate.set()
        self.lock = threading.Lock()

    def add(self, *items: int) -> None:
        with self.lock:
            self.pending.extend(items)

    def drain(self) -> int:
        self.gate.wait()
        with self.lock:
            if self.fail_next:
                self.fail_next -= 1
                raise TimeoutError("embedder timed out")
            take, self.pending = self.pending[: self.batch], self.pending[self.batch:]
            self.done.extend(take)
            return len(take)


def test_flush_waits_for_everything_written_before_it():
    box = FakePending()
    writer = IndexWriter(box.drain)
    assert writer.flush(timeout=1) is True  # nothing notified: flushed at once
    for i in range(10):
        box.add(i)
        writer.notify()
    assert writer.flush(timeout=10) is True
    assert box.done == list(range(10)) and box.pending == []
    st = writer.status()
    assert st.running and st.idle and st.records == 10 and st.batches >= 4 and st.retries == 0
    writer.close()
    assert not writer.status().running


def test_a_failing_batch_is_retried_with_backoff_and_the_error_is_visible():
    box = FakePending()
    box.fail_next = 3
    writer = IndexWriter(box.drain, backoff=(0.01, 0.05))
    box.add(1, 2, 3, 4)
    writer.notify()
    assert writer.flush(timeout=10) is True
    st = writer.status()
    assert box.done == [1, 2, 3, 4] and st.retries == 3 and st.failing == 0
    assert st.last_error == "TimeoutError: embedder timed out" and st.last_error_at is not None
    writer.close()


def test_flush_times_out_while_a_batch_is_in_flight_and_close_leaves_the_rest_pending():
    box = FakePending(batch=1)
    box.gate.clear()  # the embedder hangs
    writer = IndexWriter(box.drain)
    box.add(1, 2)
    writer.notify()
    assert writer.flush(timeout=0.2) is False
    assert not writer.status().idle
    box.gate.set()
    assert writer.flush(timeout=10) is True
    box.gate.clear()
    box.add(3)
    writer.notify()
    closer = threading.Thread(target=writer.close, kwargs={"timeout": 10})
    closer.start()
    box.gate.set()
    closer.join(10)
    assert not writer.status().running
    writer.notify()  # after close: ignored, never restarts the thread
    assert not writer.status().running
    assert box.done[:2] == [1, 2]


class _PendingSource:
    """An in-memory pending source that counts how often the writer reads it."""

    def __init__(self, name: str) -> None:
        self.name, self.keys, self.reads = name, {}, 0

    def count(self, tenant: str) -> int:
        return len(self.keys.get(tenant, []))

    def pending(self, tenant: str, limit: int) -> list[str]:
        self.reads += 1
        return self.keys.get(tenant, [])[:limit]

    def index(self, tenant: str, keys) -> int:  # noqa: ANN001
        left = self.keys.get(tenant, [])
        self.keys[tenant] = [k for k in left if k not in set(keys)]
        return len(keys)


def test_a_notify_reads_only_the_pending_source_it_names_and_a_bare_one_reads_them_all() -> None:
    from layered_memory.config import IndexWriterSettings
    from layered_memory.index.background import BackgroundIndexer

    bg = BackgroundIndexer(IndexWriterSettings(), None)
    messages, items = _PendingSource("messages"), _PendingSource("items")
    bg.add_source(messages)
    bg.add_source(items)
    try:
        messages.keys["t"] = ["m1", "m2"]
        bg.notify("t", ["m1", "m2"], source="messages")
        assert bg.flush(30)
        assert messages.keys["t"] == [] and messages.reads >= 1 and items.reads == 0  # the items outbox was never read
        items.keys["t"] = ["i1"]  # left by a crash: a bare notify (an open, a repair) looks at every outbox
        bg.notify("t")
        assert bg.flush(30)
        assert items.keys["t"] == [] and items.reads >= 1
    finally:
        bg.close(5)
