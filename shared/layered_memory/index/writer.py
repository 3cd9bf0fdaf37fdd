"""The background index writer: one thread per engine that indexes what is pending, in batches.

    writer = IndexWriter(drain)          # drain() indexes one batch, returns how many records (0: none left)
    writer.notify()                      # after a durable write: wake the thread (started lazily)
    writer.flush(timeout=5.0)            # wait until everything written before the call is indexed
    writer.status()                      # batches, records, retries, last error, whether it is idle
    writer.close()

What is pending lives in the RecordStore (the record store is the log), so the writer holds no work of
its own: a crash loses nothing, and a failing batch stays pending. When ``drain`` raises, the
writer records the error, waits (exponential backoff, capped) and calls it again; ``drain`` may pick
another batch then, so one poisoned batch does not stop the others. The writer never takes the
engine's write lock while ``drain`` embeds: ``drain`` locks only around its own store writes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)


class RetryLater(Exception):
    """Raised by ``drain`` when only work waiting for its retry time is left: the writer backs off
    quietly (the failure itself was reported where it happened)."""


@dataclass(slots=True)
class WriterStatus:
    running: bool
    idle: bool  # nothing requested that is not drained yet
    batches: int
    records: int
    retries: int
    failing: int = 0  # consecutive failed attempts (0: the last attempt succeeded)
    last_error: str | None = None
    last_error_at: float | None = None  # time.time()
    last_batch_at: float | None = None
    extra: dict[str, object] = field(default_factory=dict)


class IndexWriter:
    """Drains ``drain`` in a daemon thread whenever notified, until it returns 0."""

    def __init__(
        self,
        drain: Callable[[], int],
        *,
        name: str = "layered-memory-index-writer",
        backoff: tuple[float, float] = (0.05, 5.0),
    ) -> None:
        self._drain = drain
        self._name = name
        self._backoff = backoff
        self._cond = threading.Condition()
        self._requested = 0  # notify() count
        self._completed = 0  # the highest request count fully drained
        self._thread: threading.Thread | None = None
        self._closed = False
        self._batches = self._records = self._retries = self._failing = 0
        self._last_error: str | None = None
        self._last_error_at: float | None = None
        self._last_batch_at: float | None = None

    # -- producers ----------------------------------------------------------------------------------
    def notify(self) -> None:
        """New work is pending: wake the writer (starting it on first use)."""
        with self._cond:
            if self._closed:
                return
            self._requested += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything notified before this call is drained. Returns False on timeout.
        A writer never started (nothing notified) is flushed at once."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._requested
            while self._completed < target:
                if self._closed and (self._thread is None or not self._thread.is_alive()):
                    return False
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left if left is not None else 0.5)
            return True

    def status(self) -> WriterStatus:
        with self._cond:
            return WriterStatus(
                running=self._thread is not None and self._thread.is_alive(), idle=self._completed >= self._requested,
                batches=self._batches, records=self._records, retries=self._retries, failing=self._failing,
                last_error=self._last_error,
                last_error_at=self._last_error_at, last_batch_at=self._last_batch_at,
            )

    def close(self, timeout: float | None = 10.0) -> None:
        """Stop the thread after the batch in flight (what is left stays pending for the next open)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    # -- the thread ---------------------------------------------------------------------------------
    def _run(self) -> None:
        delay = 0.0
        while True:
            with self._cond:
                while not self._closed and self._completed >= self._requested and delay == 0.0:
                    self._cond.wait()
                if self._closed:
                    return
                if delay:
                    self._cond.wait(delay)  # backoff after a failure; close() cuts it short
                    if self._closed:
                        return
                target = self._requested
            try:
                n = self._drain()
            except Exception as exc:  # the batch stays pending: retry after a pause
                with self._cond:
                    self._retries += 1
                    self._failing += 1
                    self._last_error = f"{type(exc).__name__}: {exc}"
                    self._last_error_at = time.time()
                lo, hi = self._backoff
                delay = min(hi, max(lo, delay * 2 if delay else lo))
                log = logger.debug if isinstance(exc, RetryLater) else logger.warning
                log("index writer: %s; retrying in %.2f s (the batch stays pending)", self._last_error, delay)
                continue
            delay = 0.0
            with self._cond:
                self._failing = 0
                if n:
                    self._batches += 1
                    self._records += n
                    self._last_batch_at = time.time()
                else:  # nothing is pending: every request up to `target` is done
                    self._completed = max(self._completed, target)
                    self._cond.notify_all()


__all__ = ["IndexWriter", "RetryLater", "WriterStatus"]
