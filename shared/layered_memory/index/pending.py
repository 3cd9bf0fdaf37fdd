"""What is pending for the index: records written whose points the background writer has still to build.

Every kind the writer indexes is one ``PendingSource``: what is pending, and how to index a batch of
it. Messages are pending by a flag on their record (``index.indexer.PendingMessages``); the kinds
stored as documents (items, agent interactions, topic summaries) by pending markers, here, drained by
``PendingRecords``:

    keys = mark(records, tenant, "items", [["items", dkey]])   # before the record write (same lock)
    ...write the record, then its BM25-only point (keyword search sees it when the call returns)...
    background.notify(tenant, keys, source="items")            # after the write lock is released

A marker is a document ``<kind>|<time_ns>|<nonce>`` of the collection ``index_pending`` holding the
record's ``ref`` (the kind's own key); keys sort by the time of the write, so the writer takes the
oldest first. It is written before the record, so a crash anywhere after leaves the marker, and
draining one is idempotent: ``PendingRecords.index`` reads the record as it is now (gone or not indexed:
the point is deleted), embeds outside the engine's write lock, then under it reads the record again
and upserts the whole point only when the indexed text did not change meanwhile (a newer write has
its own marker). Points are upserted whole: a search sees the BM25-only point or the full one.

Not to be confused with the delete intents (``index.intents``): deletes and edits the index has not
confirmed yet, finished by the kind that wrote them.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..providers.base import Embedder
from ..retrieval.analyzer import Analyzer
from ..retrieval.bm25 import BM25Encoder
from ..stores.base import RecordStore, SparseVector, VectorIndex, VectorPoint
from .collection import Entry

PENDING = "index_pending"  # the record store collection of the pending markers
_NONCE = itertools.count()
_PID = os.getpid() % 100_000


class PendingSource(Protocol):
    """One kind's records pending for the index: what is pending, and how to index a batch of it (the
    background writer drains every source it was given, ``BackgroundIndexer.add_source``)."""

    name: str

    def count(self, tenant: str) -> int: ...

    def pending(self, tenant: str, limit: int) -> Sequence[Hashable]:
        """Pending keys, oldest first."""

    def index(self, tenant: str, keys: Sequence[Hashable]) -> int:
        """Index the records of ``keys`` and clear them from what is pending; returns how many were indexed."""


@dataclass(slots=True)
class Target:
    """Where one record's point goes: its collection, id and entry (None: the record is gone or not
    indexed, so the point must not exist)."""

    collection: str
    point_id: str
    entry: Entry | None


# targets(tenant, refs) -> one Target per ref, None where nothing is to be done (e.g. its agent was deleted)
Targets = Callable[[str, Sequence[Any]], list[Target | None]]


def mark(records: RecordStore, tenant: str, kind: str, refs: Sequence[Any]) -> list[str]:
    """Write one pending marker per ref (durable, one write); returns their keys for ``notify``."""
    if not refs:
        return []
    now = time.time_ns()
    docs = {f"{kind}|{now:020d}|{_PID:05d}{next(_NONCE):012d}": {"ref": ref} for ref in refs}
    records.put_docs(tenant, PENDING, docs)
    return list(docs)


def pending_refs(records: RecordStore, tenant: str, kind: str) -> list[Any]:
    """Every ref with a pending marker of ``kind`` (the doctor tells lag from drift with them)."""
    out: list[Any] = []
    after = ""
    while True:
        rows = records.list_docs(tenant, PENDING, prefix=kind + "|", after=after, limit=1000)
        out.extend(d.get("ref") for _, d in rows)
        if len(rows) < 1000:
            return out
        after = rows[-1][0]


def write_sparse(index: VectorIndex, targets: Sequence[Target], analyzer: Analyzer, encoder: BM25Encoder, optimizing: Any) -> None:
    """The write path's BM25-only points of freshly marked records (keyword search sees them at once).
    Skipped while the writer builds an HNSW index (Qdrant Edge holds its write lock for the whole build):
    the writer writes the full points from the markers then."""
    if not targets or not optimizing.acquire(blocking=False):
        return
    try:
        by: dict[str, list[VectorPoint]] = {}
        for t in targets:
            if t.entry is not None:
                by.setdefault(t.collection, []).append(sparse_point(t, analyzer, encoder))
        for name, points in by.items():
            index.upsert(name, points)
    finally:
        optimizing.release()


def sparse_point(t: Target, analyzer: Analyzer, encoder: BM25Encoder, dense: list[float] | None = None) -> VectorPoint:
    e = t.entry
    assert e is not None
    terms = e.terms if e.terms is not None else analyzer.terms(e.text)
    return VectorPoint(id=t.point_id, payload=e.payload, dense=dense, sparse=encoder.document(terms) if terms else SparseVector([], []))


class PendingRecords:
    """A ``PendingSource`` over the pending markers of one kind (see the module docstring)."""

    def __init__(
        self, name: str, targets: Targets, *, records: RecordStore, index: VectorIndex, embedder: Embedder | None,
        analyzer: Analyzer, encoder: BM25Encoder, lock: Any,
    ) -> None:
        self.name = name
        self.targets = targets
        self.records, self.vindex, self.embedder = records, index, embedder
        self.analyzer, self.encoder, self.lock = analyzer, encoder, lock

    def count(self, tenant: str) -> int:
        return self.records.count_docs(tenant, PENDING, prefix=self.name + "|")

    def pending(self, tenant: str, limit: int) -> list[Hashable]:
        return [k for k, _ in self.records.list_docs(tenant, PENDING, prefix=self.name + "|", limit=limit)]

    def index(self, tenant: str, keys: Sequence[Hashable]) -> int:
        records = self.records
        markers = records.get_docs(tenant, PENDING, [str(k) for k in keys])
        live = [(str(k), m["ref"]) for k, m in zip(keys, markers) if m is not None]
        refs = [r for _, r in live]
        first = self.targets(tenant, refs) if refs else []
        todo = list({(t.collection, t.point_id): t for t in first if t is not None and t.entry is not None and t.entry.dense is None}.values())
        vectors = self.embedder.embed_documents([t.entry.text for t in todo]) if todo and self.embedder is not None else []  # type: ignore[union-attr]
        embedded = {(t.collection, t.point_id): (t.entry.text, v) for t, v in zip(todo, vectors)}  # type: ignore[union-attr]
        done = 0
        keep: list[str] = []  # markers whose record changed while embedded: the next round takes them again
        with self.lock:
            upserts: dict[str, dict[str, VectorPoint]] = {}  # a record marked twice in one batch is written once
            deletes: dict[str, list[str]] = {}
            for (key, _), t in zip(live, self.targets(tenant, refs) if refs else []):
                if t is None:
                    continue
                if t.entry is None:
                    deletes.setdefault(t.collection, []).append(t.point_id)
                    continue
                dense = t.entry.dense
                if dense is None and self.embedder is not None:
                    got = embedded.get((t.collection, t.point_id))
                    if got is None or got[0] != t.entry.text:  # written (again) while the batch was embedded
                        keep.append(key)
                        continue
                    dense = got[1]
                upserts.setdefault(t.collection, {})[t.point_id] = sparse_point(t, self.analyzer, self.encoder, dense)
            for name, points in upserts.items():
                self.vindex.upsert(name, list(points.values()))
                done += len(points)
            for name, ids in deletes.items():
                if self.vindex.has_collection(name):
                    self.vindex.delete(name, ids=ids)
            kept = set(keep)
            records.delete_docs(tenant, PENDING, [str(k) for k in keys if str(k) not in kept])
        return done


__all__ = ["PENDING", "PendingRecords", "PendingSource", "Target", "mark", "pending_refs", "sparse_point", "write_sparse"]
