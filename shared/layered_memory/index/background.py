"""The background indexing of one engine: its pending sources, the writer thread that drains them, retries,
index lag, and the automatic HNSW build of embedded collections.

    bg = BackgroundIndexer(settings.writer, index)
    bg.add_source(PendingMessages(indexer, core.write_lock))  # one pending source per record kind
    bg.watch("lm_messages")                                 # collections whose HNSW the writer keeps up
    bg.notify("acme", refs, source="messages")              # after a durable write (that source has them)
    bg.flush(timeout=5.0)                                   # wait until they are indexed
    bg.status("acme")                                       # pending, lag, errors, HNSW per collection

What is pending lives in the record store (the record store is the log): the writer holds no work of its
own, so a crash loses nothing. A batch that fails stays pending; its keys wait (doubling from
``retry_min_seconds`` up to ``retry_max_seconds``) while the writer goes on with the others, and a
retried batch is halved at each failure, so one record the embedder cannot take ends alone and
blocks nothing. The writer thread runs ``drain``; embedding happens outside the engine's write lock
(each source locks only around its own store writes).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from ..config import IndexWriterSettings
from ..stores.base import MANUAL_OPTIMIZE, VectorIndex
from .pending import PendingSource
from .writer import IndexWriter, RetryLater

logger = logging.getLogger(__name__)

LAG_SAMPLES = 20_000


@dataclass(slots=True)
class _Failure:
    attempts: int
    until: float  # time.monotonic() of the next try
    error: str
    batch: int  # the size of the batch that failed: a retry takes half of it


@dataclass(slots=True)
class _Hnsw:
    points_at_optimize: int | None = None  # points when the last optimize ran in this process
    optimizing_since: float | None = None
    last_seconds: float | None = None
    last_at: float | None = None  # time.time()
    builds: int = 0


class BackgroundIndexer:
    """The pending sources of one engine and the single writer thread that drains them."""

    def __init__(self, settings: IndexWriterSettings, index: VectorIndex | None) -> None:
        self.settings = settings
        self.index = index
        self.sources: list[PendingSource] = []
        self._mutex = threading.Lock()
        self._dirty: dict[tuple[str, str], int] = {}  # (tenant, source) -> generation of its latest notify
        self._enqueued: dict[tuple[str, str, Hashable], float] = {}  # (tenant, source, key) -> monotonic time of the write
        self._failures: dict[tuple[str, str, Hashable], _Failure] = {}
        self._lags: deque[float] = deque(maxlen=LAG_SAMPLES)  # seconds from the write to the full point
        self._hnsw: dict[str, _Hnsw] = {}
        self._opened = time.monotonic()
        # Held while an optimize runs: the Edge write lock is held for its whole duration, so the write
        # path's inline BM25 upsert skips (the writer indexes those messages) instead of blocking.
        self.optimizing = threading.Lock()
        self._since_check = 0
        self._last_error: dict[str, tuple[str, float]] = {}  # tenant -> (error, time.time()): errors stay in their tenant
        self._errors: dict[str, int] = {}
        self.writer = IndexWriter(self.drain, backoff=(settings.retry_min_seconds, settings.retry_max_seconds))

    # -- set up -------------------------------------------------------------------------------------
    def add_source(self, source: PendingSource) -> None:
        self.sources.append(source)

    def watch(self, collection: str) -> None:
        """Keep this collection's HNSW index up (embedded backends only; see ``IndexWriterSettings``)."""
        with self._mutex:
            self._hnsw.setdefault(collection, _Hnsw())

    # -- producers ----------------------------------------------------------------------------------
    def notify(self, tenant: str, keys: Sequence[Hashable] = (), source: str | None = None) -> None:
        """The ``source`` of ``tenant`` has new pending keys (already durable): wake the writer for it.
        Without a source (a repair, an open, ``sync_index``) every source of the tenant is looked at."""
        now = time.monotonic()
        names = [source] if source is not None else [s.name for s in self.sources]
        with self._mutex:
            for name in names:
                self._dirty[(tenant, name)] = self._dirty.get((tenant, name), 0) + 1
            for k in keys:
                self._enqueued.setdefault((tenant, source, k), now)
        self.writer.notify()

    def index_now(self, tenant: str, source: str, keys: Sequence[Hashable]) -> int:
        """Read-your-writes: index these keys of ``source`` now, in the calling thread, beside the writer
        (the source's ``index_now``: the same points the writer would write). Returns how many were indexed;
        0 when the source cannot or the call failed (the keys stay pending for the writer)."""
        src = next((s for s in self.sources if s.name == source), None)
        now = getattr(src, "index_now", None)
        if now is None or not keys:
            return 0
        try:
            n = int(now(tenant, keys))
        except Exception as exc:  # the writer retries them; a request never fails for it
            logger.warning("indexing %d %s of tenant %s on the request path failed (%s); the writer keeps them",
                           len(keys), source, tenant, type(exc).__name__)
            return 0
        now_t = time.monotonic()
        with self._mutex:
            for k in keys:
                t = self._enqueued.pop((tenant, source, k), None)
                if t is not None:
                    self._lags.append(now_t - t)
        return n

    def check_optimize(self) -> None:
        """Wake the writer to check the watched collections' HNSW (e.g. after writes no source tracks)."""
        self.writer.notify()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every key notified before the call is indexed. False on timeout."""
        return self.writer.flush(timeout)

    def settle(self, timeout: float | None = None, *, failures: int = 3) -> bool:
        """Wait until nothing is pending, or until only batches that failed ``failures`` retries in a
        row are left (they stay pending; ``status()`` names the error), or ``timeout``. Returns
        whether it drained. For maintenance calls that must not hang on a broken embedder."""
        deadline = None if timeout is None else time.monotonic() + timeout
        drained = self.writer.status().idle
        while not drained and (deadline is None or time.monotonic() < deadline):
            drained = self.writer.flush(0.2)
            if not drained and self.writer.status().failing >= failures:
                break
        return drained

    def close(self, drain_timeout: float | None) -> bool:
        """Drain up to ``drain_timeout`` seconds (see ``settle``), then stop the thread after the batch in
        flight. Returns whether everything pending was indexed; what is left is indexed by the next open."""
        drained = self.settle(drain_timeout, failures=1)
        self.writer.close()
        return drained

    # -- the writer thread --------------------------------------------------------------------------
    def drain(self) -> int:
        """Index one batch per (tenant, source) with pending keys; 0 when none is left. Raises
        ``RetryLater`` when only failed batches wait (the writer backs off, then calls again)."""
        with self._mutex:
            dirty = dict(self._dirty)
        done = 0
        waiting = False
        sources = {s.name: s for s in self.sources}
        for (tenant, name), gen in dirty.items():  # only the sources notified: no read of the others
            source = sources.get(name)
            keys, retry = self._next_batch(tenant, source) if source is not None else ([], False)
            if keys:
                n = self._index(tenant, source, keys)  # type: ignore[arg-type]
                done += max(n, 0)
                waiting = waiting or n < 0 or retry
            elif retry:
                waiting = True
            else:
                with self._mutex:
                    if self._dirty.get((tenant, name)) == gen:
                        del self._dirty[(tenant, name)]
        self._since_check += done
        if done == 0 or self._since_check >= 50 * self.settings.batch_size:  # info() costs ~13 us per collection
            self._since_check = 0
            self._maybe_optimize()
        if done == 0 and waiting:
            raise RetryLater(f"{len(self._failures)} records wait for a retry")
        return done

    def _next_batch(self, tenant: str, source: PendingSource) -> tuple[list[Hashable], bool]:
        """The next keys to index: fresh ones in a full batch; retried ones in a batch halved per failure.
        The flag says whether failed keys still wait for their time."""
        size = self.settings.batch_size
        with self._mutex:
            failed = {k[2]: f for k, f in self._failures.items() if k[0] == tenant and k[1] == source.name}
        keys = list(source.pending(tenant, size + len(failed)))
        now = time.monotonic()
        fresh = [k for k in keys if k not in failed]
        if fresh:
            return fresh[:size], bool(failed)
        # Longest-waiting first: a record that fails at every try must not starve the others whose batch it shared.
        ready = sorted((k for k in keys if failed[k].until <= now), key=lambda k: failed[k].until)
        if not ready:
            return [], bool(set(keys) & failed.keys())
        return ready[: max(1, min(size, failed[ready[0]].batch // 2))], True

    def _index(self, tenant: str, source: PendingSource, keys: Sequence[Hashable]) -> int:
        """Index one batch; -1 when it failed (its keys wait for their retry, the others go on)."""
        try:
            n = source.index(tenant, keys)
        except Exception as exc:
            error = f"{source.name}: {type(exc).__name__}: {exc}"
            now = time.monotonic()
            s = self.settings
            with self._mutex:
                for k in keys:
                    old = self._failures.get((tenant, source.name, k))
                    attempts = (old.attempts if old else 0) + 1
                    wait = min(s.retry_max_seconds, s.retry_min_seconds * 2 ** min(attempts - 1, 30))
                    self._failures[(tenant, source.name, k)] = _Failure(attempts, now + wait, error, len(keys))
                self._last_error[tenant] = (error, time.time())
                self._errors[tenant] = self._errors.get(tenant, 0) + 1
            logger.warning("index writer: %d %s of tenant %s failed (%s); retried later, they stay pending", len(keys), source.name, tenant, error)
            return -1
        now = time.monotonic()
        with self._mutex:
            for k in keys:
                self._failures.pop((tenant, source.name, k), None)
                t = self._enqueued.pop((tenant, source.name, k), None)
                self._lags.append(now - (t if t is not None else self._opened))
        return max(n, 1) if keys else 0  # progress even when every record was gone (nothing of it is pending any more)

    # -- HNSW ---------------------------------------------------------------------------------------
    def _maybe_optimize(self) -> None:
        """Build the HNSW index of each watched collection whose part written since the last build
        passed the threshold (the first check in a process builds any collection over it)."""
        index, threshold = self.index, self.settings.optimize_threshold
        if index is None or not threshold or MANUAL_OPTIMIZE not in index.capabilities:
            return
        with self._mutex:
            names = sorted(self._hnsw)
        for name in names:
            try:
                if not index.has_collection(name):
                    continue
                points = int(index.info(name)["points"])
            except Exception as exc:  # a collection dropped meanwhile, a closed index: the next check retries
                logger.debug("hnsw check of %s skipped (%s)", name, exc)
                continue
            state = self._hnsw[name]
            if points - (state.points_at_optimize or 0) < threshold:
                continue
            self.optimize(name, points)

    def optimize(self, name: str, points: int | None = None) -> bool:
        """Build (or extend) the HNSW index of ``name`` now, in the calling thread (the write path skips
        its inline BM25 upsert meanwhile). Returns whether anything changed."""
        assert self.index is not None
        with self._mutex:
            state = self._hnsw.setdefault(name, _Hnsw())
        t0 = time.perf_counter()
        with self.optimizing:
            state.optimizing_since = time.time()
            try:
                changed = self.index.optimize(name)
            finally:
                state.optimizing_since = None
        state.last_seconds = round(time.perf_counter() - t0, 3)
        state.last_at = time.time()
        state.builds += 1
        state.points_at_optimize = points if points is not None else int(self.index.info(name)["points"])
        logger.info("index writer: HNSW of %s over %d points: %.1f s (changed=%s)", name, state.points_at_optimize, state.last_seconds, changed)
        return bool(changed)

    # -- status -------------------------------------------------------------------------------------
    def status(self, tenant: str) -> dict[str, Any]:
        """Pending per source (this tenant), index lag, retries and errors, HNSW per watched collection."""
        w = self.writer.status()
        now = time.monotonic()
        with self._mutex:
            enq = [t for (tn, _, _), t in self._enqueued.items() if tn == tenant]
            lags = sorted(self._lags)
            failing = sum(1 for k in self._failures if k[0] == tenant)
            error, error_at = self._last_error.get(tenant, (None, None))
            errors = self._errors.get(tenant, 0)
            hnsw = {n: (s.points_at_optimize, s.optimizing_since, s.last_seconds, s.last_at, s.builds) for n, s in self._hnsw.items()}
        pending = {s.name: s.count(tenant) for s in self.sources}
        lag_now = round(now - min(enq), 3) if enq else (round(now - self._opened, 3) if any(pending.values()) else 0.0)
        return {
            "pending": pending,
            "pending_total": sum(pending.values()),
            "lag_seconds": lag_now,  # age of the oldest write not yet indexed
            "lag_p50_seconds": _pct(lags, 50), "lag_p95_seconds": _pct(lags, 95),  # over the last writes indexed
            "failing": failing,  # records of this tenant whose batch failed and waits for a retry
            "last_error": error,  # this tenant's latest failure, also once resolved (see failing)
            "last_error_at": error_at,
            "errors": errors,
            "writer": {"running": w.running, "idle": w.idle, "batches": w.batches, "records": w.records},
            "hnsw": {name: self._hnsw_state(name, *v) for name, v in sorted(hnsw.items())},
        }

    def _hnsw_state(self, name: str, at: int | None, since: float | None, seconds: float | None, last: float | None, builds: int) -> dict[str, Any]:
        index = self.index
        out: dict[str, Any] = {"points": None, "state": "none"}
        if index is None or not index.has_collection(name):
            return out
        try:
            points = int(index.info(name)["points"])
        except Exception as exc:
            return {**out, "error": f"{type(exc).__name__}: {exc}"}
        out["points"] = points
        if MANUAL_OPTIMIZE not in index.capabilities:
            out["state"] = "managed by the server"
            return out
        threshold = self.settings.optimize_threshold
        unindexed = points - (at or 0) if at is not None else None
        out.update({
            # builds are tracked per process: a fresh process (the CLI) cannot tell an earlier build from none
            "state": "building" if since else ("built" if at is not None else "unknown (no build since this process started)"),
            "points_since_build": unindexed, "threshold": threshold or None, "builds": builds,
            "last_build_seconds": seconds, "last_build_at": last,
        })
        return out


def _pct(sorted_values: list[float], p: float) -> float | None:
    if not sorted_values:
        return None
    return round(sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))], 4)


__all__ = ["BackgroundIndexer", "RetryLater"]
