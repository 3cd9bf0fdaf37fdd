"""``VectorIndex`` on Qdrant Edge (``qdrant-edge-py``): the real Qdrant engine in-process.

One ``EdgeShard`` per collection in ``root_dir/<name>/``, opened lazily and cached until ``close()``. Requests are
written as ``qdrant_client.models`` (the project's one request language) and translated by
``to_edge_filter`` (``qdrant_edge_filter.py``); nothing else in the package imports ``qdrant_edge``.

Rules this backend keeps (see ``notes/qdrant-embedded.md``):

- Writes are serialized with one lock; queries run without it (Edge tolerates a concurrent writer).
- ``optimize()`` (the HNSW build) is never called implicitly: it blocks for seconds to minutes. Without it the
  segments are searched exactly, which is fast enough up to ~100k points per collection, and filtered queries
  are exact and fast at any size. Call ``optimize(name)`` from maintenance code when the host is idle.
- Only one opener per directory (the WAL lock): a second one gets ``BackendUnavailable`` naming the directory.
- Flags are int 0/1: Edge 0.9 never matches ``MatchValue(bool)``; ``as_filter`` rejects bool matches up front.
- Payload indexes are created once a collection holds ``index_at_points`` points (1,000 by default), at open,
  at the upsert that crosses it, or at ``optimize()``. Each index creation syncs the shard to disk (0.1-0.2 s
  each on an ordinary disk, 14 indexes: 1.5-3 s), so creating them up front made every new store slow to
  open; below the threshold a filtered query scans the payloads exactly (about 1 ms per 1,000 points).
- ``holds_kind`` knows without a query which ``kind`` values a collection ever held (a context asks for topic
  summaries and entities in every store, most of which have none). The one-opener rule makes it exact: the
  kinds come from the ``kind`` index's facet once the collection is indexed, then from every write, before
  the write (a superset at any moment: a delete leaves its kind in the set).

Example::

    index = QdrantEdgeVectorIndex("/var/lib/mem/vectors")
    index.ensure_collection("messages", dense_dim=384)
    hits = index.query("messages", dense=q, sparse=s, filter=models.Filter(must=[...]), limit=10)
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import qdrant_edge as qe
from .._lazy import qdrant_models as models

from ..errors import (
    BackendError,
    BackendUnavailable,
    InvalidInputError,
    LayeredMemoryError,
    NotFoundError,
)
from . import qdrant_common as qc
from .base import MANUAL_OPTIMIZE, IndexHit, IndexQuery, SparseVector, VectorPoint
from .qdrant_edge_filter import edge_index_schema, to_edge_filter

logger = logging.getLogger(__name__)

BACKEND = "qdrant-edge"
MARKER_FILE = "layered_memory.json"
UPSERT_BATCH = 512
KIND = "kind"
FACET_LIMIT = 1000  # more kinds than this: the set is not kept
INDEX_AT_POINTS = 1000


def _vector_params(name: str, dim: int) -> Any:
    """``mean``: a dot product; ``sentences``: a cosine multivector compared by MaxSim, never in an HNSW graph (it is
    read for a list's candidates only, by a has-id query); the others: cosine."""
    if name == qc.SENTENCES:
        return qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine, hnsw_config=qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000),
                                   multivector_config=qe.MultiVectorConfig(comparator=qe.MultiVectorComparator.MaxSim))
    return qe.EdgeVectorParams(size=dim, distance=qe.Distance.Dot if name == qc.MEAN else qe.Distance.Cosine)


def _vector(p: VectorPoint, schema: qc.CollectionSchema) -> dict[str, Any]:
    vec: dict[str, Any] = qc.dense_vectors(p, schema)
    if p.sparse is not None:
        vec[qc.SPARSE] = qe.SparseVector(list(p.sparse.indices), [float(x) for x in p.sparse.values])
    return vec


def _hit(p: Any, with_dense: bool = False) -> IndexHit:
    return IndexHit(
        id=str(p.id),
        score=float(getattr(p, "score", 0.0) or 0.0),
        payload=dict(p.payload or {}),
        dense=qc.dense_of(p.vector) if with_dense else None,
        context=qc.dense_of(p.vector, qc.CONTEXT) if with_dense else None,
        sentences=qc.sentences_of(p.vector) if with_dense else None,
    )


# -- the backend -------------------------------------------------------------------------------------------


class _Collection:
    __slots__ = ("shard", "schema", "path", "indexed", "points_seen", "warned", "kinds")

    def __init__(self, shard: qe.EdgeShard, schema: qc.CollectionSchema, path: Path) -> None:
        self.shard = shard
        self.schema = schema
        self.path = path
        self.indexed = False  # every payload index exists
        self.points_seen = 0  # points at open plus points upserted since (overwrites count twice: an upper bound)
        self.warned: set[str] = set()  # context vectors dropped (a collection from before schema 2): said once
        self.kinds: set[str] | None = None  # every ``kind`` value written (a superset); None: not known

    def learn_kinds(self) -> None:
        """The ``kind`` values the collection holds, from its ``kind`` index (None without one)."""
        try:
            hits = list(self.shard.facet(qe.FacetRequest(KIND, limit=FACET_LIMIT)))
        except Exception:  # no index on kind yet (a small collection): not known, every query runs
            self.kinds = None
            return
        self.kinds = None if len(hits) >= FACET_LIMIT else {h.value for h in hits}

    def note_kinds(self, payloads: Iterable[Mapping[str, Any]]) -> None:
        """Add the ``kind`` of each payload about to be written (a list adds each element)."""
        if self.kinds is None:
            return
        for payload in payloads:
            kind = payload.get(KIND)
            values = kind if isinstance(kind, (list, tuple)) else (kind,)
            if not all(isinstance(v, (str, type(None))) for v in values):
                self.kinds = None  # not a keyword the kind index (and its facet) holds: stop guessing
                return
            self.kinds.update(v for v in values if v is not None)


class QdrantEdgeVectorIndex:
    """``VectorIndex`` over Qdrant Edge shards under ``root_dir`` (one directory per collection).

    Args:
        root_dir: directory holding one sub-directory per collection; created if missing.
        index_at_points: create the payload indexes once a collection holds this many points (0: at creation).
    """

    backend = BACKEND
    capabilities = frozenset({MANUAL_OPTIMIZE})  # optimize() builds HNSW; nothing else does

    def __init__(self, root_dir: str | os.PathLike[str], *, index_at_points: int = INDEX_AT_POINTS) -> None:
        if index_at_points < 0:
            raise InvalidInputError("index_at_points", index_at_points, "must be >= 0", "use 0 to index at creation")
        self.index_at_points = index_at_points
        self.root = Path(root_dir)
        self.root.mkdir(parents=True, exist_ok=True)
        self._open: dict[str, _Collection] = {}
        self._lock = threading.RLock()  # opens, closes and every write

    def __enter__(self) -> QdrantEdgeVectorIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"QdrantEdgeVectorIndex({str(self.root)!r})"

    # -- lifecycle ---------------------------------------------------------------------------------------
    def _path(self, name: str) -> Path:
        return self.root / qc.check_collection_name(name)

    def has_collection(self, name: str) -> bool:
        return name in self._open or (self._path(name) / "edge_config.json").exists()

    def ensure_collection(
        self, name: str, *, dense_dim: int | None, embedder: str | None = None, bm25: Mapping[str, Any] | None = None,
    ) -> None:
        """Create ``root_dir/<name>`` with the schema and payload indexes, or open it and check its schema.
        ``bm25`` is recorded at creation only (``set_bm25`` records it later).

        Raises:
            SchemaMismatch: the existing collection has another dense size (or embedder, when both are named).
            BackendUnavailable: another process (or another opener in this one) holds the directory.
        """
        if dense_dim is not None and dense_dim < 1:
            raise InvalidInputError("dense_dim", dense_dim, "must be a positive size or None", "pass the embedder's dim")
        with self._lock:
            if self.has_collection(name):
                col = self._collection(name)
                qc.check_schema(name, col.schema, dense_dim=dense_dim, embedder=embedder, backend=BACKEND)
                if embedder is not None and col.schema.embedder is None:
                    col.schema = dataclasses.replace(col.schema, embedder=embedder)
                    self._write_marker(col.path, col.schema)
                return
            path = self._path(name)
            dense = dense_dim is not None
            schema = qc.CollectionSchema(dense_dim=dense_dim, embedder=embedder, context=dense, mean=dense, sentences=dense, bm25=bm25)
            config = qe.EdgeConfig(
                vectors={v: _vector_params(v, dense_dim) for v in qc.DENSE_VECTORS} if dense_dim is not None else None,
                sparse_vectors={qc.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            )
            path.mkdir(parents=True, exist_ok=True)
            with _edge_errors("ensure_collection", path):
                shard = qe.EdgeShard.create(str(path), config)
            col = _Collection(shard, schema, path)
            self._open[name] = col
            self._write_marker(path, schema)
            self._index_if_due(col)
            logger.debug("created edge collection %s at %s (dense_dim=%s)", name, path, dense_dim)

    def _collection(self, name: str) -> _Collection:
        col = self._open.get(name)
        if col is not None:
            return col
        with self._lock:
            col = self._open.get(name)
            if col is not None:
                return col
            path = self._path(name)
            if not (path / "edge_config.json").exists():
                raise NotFoundError(
                    f"collection {name!r} does not exist under {self.root}; call ensure_collection({name!r}, dense_dim=...)"
                )
            t0 = time.perf_counter()
            with _edge_errors("open", path):
                shard = qe.EdgeShard.load(str(path))
            col = _Collection(shard, self._read_marker(path), path)
            self._open[name] = col
            self._index_if_due(col)
            logger.debug("opened edge collection %s in %.3fs", name, time.perf_counter() - t0)
            return col

    def _index_if_due(self, col: _Collection, *, force: bool = False) -> None:
        """Create the missing payload indexes when the collection is big enough for them to pay (or ``force``).
        Checks what exists first, so opening an indexed collection creates nothing. Call with the lock held."""
        with _edge_errors("create_payload_index", col.path):
            info = col.shard.info()
            col.points_seen = max(col.points_seen, int(info.points_count))
            have = set(info.payload_schema)
            missing = [(f, k) for f, k in qc.payload_index_kinds() if f not in have]
            if not missing:
                col.indexed = True
                col.learn_kinds()
                return
            if not force and col.points_seen < self.index_at_points:
                return
            t0 = time.perf_counter()
            for field_name, kind in missing:
                col.shard.update(qe.UpdateOperation.create_field_index(field_name, edge_index_schema(kind)))
            col.indexed = True
            col.learn_kinds()
        logger.info("created %d payload indexes on %s (%d points) in %.2fs",
                    len(missing), col.path.name, col.points_seen, time.perf_counter() - t0)

    def set_bm25(self, name: str, bm25: Mapping[str, Any]) -> None:
        """Record what every point's sparse vector is now written with (after a re-index of all of them)."""
        with self._lock:
            col = self._collection(name)
            col.schema = dataclasses.replace(col.schema, bm25=dict(bm25))
            self._write_marker(col.path, col.schema)

    @staticmethod
    def _write_marker(path: Path, schema: qc.CollectionSchema) -> None:
        tmp = path / (MARKER_FILE + ".tmp")
        tmp.write_text(json.dumps(schema.to_json()))
        os.replace(tmp, path / MARKER_FILE)

    @staticmethod
    def _read_marker(path: Path) -> qc.CollectionSchema:
        """The marker's embedder and version; the vectors (size, whether ``context`` exists) from Edge's own
        config file, which is the truth (a shard made by other tools has no marker)."""
        config = json.loads((path / "edge_config.json").read_text())
        vectors = config.get("vectors") or {}
        dense = vectors.get(qc.DENSE)
        dim = int(dense["size"]) if dense else None
        marker = path / MARKER_FILE
        stored = qc.CollectionSchema.from_json(json.loads(marker.read_text())) if marker.exists() else qc.CollectionSchema(dim, version=1)
        return qc.CollectionSchema(dim, stored.embedder, stored.version, qc.CONTEXT in vectors, qc.MEAN in vectors, qc.SENTENCES in vectors,
                                   stored.bm25)

    def drop_collection(self, name: str) -> None:
        with self._lock:
            path = self._path(name)
            col = self._open.pop(name, None)
            if col is not None:
                with _edge_errors("drop_collection", path):
                    col.shard.close()
            if path.exists():
                shutil.rmtree(path)
                logger.debug("dropped edge collection %s", name)

    def close(self) -> None:
        with self._lock:
            while self._open:
                name, col = self._open.popitem()
                with _edge_errors("close", col.path):
                    col.shard.close()

    def flush(self, name: str) -> None:
        col = self._collection(name)
        with self._lock, _edge_errors("flush", col.path):
            col.shard.flush()

    def optimize(self, name: str) -> bool:
        """Merge segments and build HNSW. Blocking and slow (~11 s at 10k points, minutes at 100k on 2 cores):
        maintenance only, never on the request path. Returns True when anything was optimized."""
        col = self._collection(name)
        t0 = time.perf_counter()
        with self._lock, _edge_errors("optimize", col.path):
            self._index_if_due(col, force=True)
            changed = col.shard.optimize()
        logger.info("optimized edge collection %s in %.1fs (changed=%s)", name, time.perf_counter() - t0, changed)
        return bool(changed)

    def info(self, name: str) -> dict[str, Any]:
        """``points``, ``segments``, ``indexed_vectors``, ``payload_indexes`` ({field: type}) and ``schema``."""
        col = self._collection(name)
        with _edge_errors("info", col.path):
            i = col.shard.info()
            indexes = {k: str(v.data_type).rsplit(".", 1)[-1].lower() for k, v in i.payload_schema.items()}
            return {
                "points": i.points_count, "segments": i.segments_count, "indexed_vectors": i.indexed_vectors_count,
                "payload_indexes": indexes, "schema": col.schema.to_json(),
            }

    def size_bytes(self, name: str) -> int:
        """Bytes allocated on disk by the collection directory (sparse preallocated WAL files count as written)."""
        total = 0
        for dirpath, _dirs, files in os.walk(self._path(name)):
            for f in files:
                try:
                    total += os.stat(os.path.join(dirpath, f)).st_blocks * 512
                except FileNotFoundError:  # a segment swapped out by a concurrent write
                    continue
        return total

    # -- writes ------------------------------------------------------------------------------------------
    def upsert(self, name: str, points: Sequence[VectorPoint]) -> None:
        col = self._collection(name)
        ids = qc.check_points(points, col.schema.dense_dim, name=name)
        qc.dropped_context(points, col.schema, name, col.warned)
        with self._lock, _edge_errors("upsert", col.path):
            col.note_kinds(p.payload for p in points)  # before the write: a query never misses a kind being written
            for start in range(0, len(points), UPSERT_BATCH):
                batch = [
                    qe.Point(pid, _vector(p, col.schema), dict(p.payload))
                    for pid, p in zip(ids[start : start + UPSERT_BATCH], points[start : start + UPSERT_BATCH])
                ]
                col.shard.update(qe.UpdateOperation.upsert_points(batch))
            col.points_seen += len(points)
            if not col.indexed and col.points_seen >= self.index_at_points:
                self._index_if_due(col)
        logger.debug("upserted %d points into %s", len(points), name)

    def delete(self, name: str, *, ids: Sequence[str] | None = None, filter: Any = None) -> None:
        """Delete by ids, by filter, or by both (the points among ``ids`` that match ``filter``)."""
        col = self._collection(name)
        f = qc.as_filter(filter)
        if ids is None and f is None:
            raise InvalidInputError("ids/filter", None, "delete needs ids or a filter", "use drop_collection to delete all")
        canon = [qc.check_point_id(i, "ids") for i in ids] if ids is not None else None
        with self._lock, _edge_errors("delete", col.path):
            if f is None:
                if canon:
                    col.shard.update(qe.UpdateOperation.delete_points(canon))
            else:
                if canon is not None:
                    if not canon:
                        return
                    f = models.Filter(must=[models.HasIdCondition(has_id=canon), f])
                col.shard.update(qe.UpdateOperation.delete_points_by_filter(to_edge_filter(f)))

    def set_payload(self, name: str, ids: Sequence[str], payload: Mapping[str, Any]) -> None:
        """Merge ``payload`` keys into the payload of each point in ``ids`` (missing ids are ignored)."""
        col = self._collection(name)
        canon = [qc.check_point_id(i, "ids") for i in ids]
        qc.check_payload(payload, field="payload")
        if not canon:
            return
        with self._lock, _edge_errors("set_payload", col.path):
            # By filter, not by ids: Edge raises "No point with id" for a missing id; a filter skips it.
            has_ids = qe.Filter(must=[qe.HasIdCondition(set(canon))])
            col.note_kinds([payload])
            col.shard.update(qe.UpdateOperation.set_payload_by_filter(has_ids, dict(payload)))

    # -- reads -------------------------------------------------------------------------------------------
    def holds_kind(self, name: str, kind: Any) -> bool:
        """False when no point of ``kind`` was ever written (the one-opener rule makes the set exact: see the
        module docstring); True when one was, or while the collection is too small to have a ``kind`` index."""
        kinds = self._collection(name).kinds
        return kinds is None or not isinstance(kind, str) or kind in kinds

    def count(self, name: str, filter: Any = None) -> int:
        col = self._collection(name)
        f = to_edge_filter(qc.as_filter(filter))
        with _edge_errors("count", col.path):
            return int(col.shard.count(qe.CountRequest(exact=True, filter=f)))

    def plan_query(
        self,
        name: str,
        *,
        dense: Sequence[float] | None = None,
        sparse: SparseVector | None = None,
        filter: Any = None,
        limit: int = 10,
        prefetch_limit: int = 100,
        rrf_k: int = qc.DEFAULT_RRF_K,
        weights: tuple[float, float] | None = None,
        filter_in_prefetch: bool = False,
        payload: bool | Sequence[str] = True,
        using: str = qc.DENSE,
    ) -> qe.QueryRequest:
        """Build (not run) the Edge request for ``query``. ``filter_in_prefetch`` repeats the filter in each
        prefetch instead of the top level (same results; kept for the conformance test); ``using`` names the
        dense vector ``dense`` is matched against; ``filter`` may be one already translated (``qdrant_edge.Filter``)."""
        col = self._collection(name)
        qc.check_using(using)
        qc.check_query_args(dense, sparse, limit, prefetch_limit, rrf_k, weights)
        qc.check_dense(dense, col.schema.dense_dim, name=name, field="dense")
        qc.check_sparse(sparse, field="sparse")
        f = filter if isinstance(filter, qe.Filter) else to_edge_filter(qc.as_filter(filter))
        with_payload = payload if isinstance(payload, bool) else [str(k) for k in payload]
        nearest = []
        if dense is not None:
            nearest.append(qe.Query.Nearest(qc.query_vector(dense, using), using=using))
        if sparse is not None:
            sv = qe.SparseVector(list(sparse.indices), [float(x) for x in sparse.values])
            nearest.append(qe.Query.Nearest(sv, using=qc.SPARSE))
        if len(nearest) == 1:
            return qe.QueryRequest(limit=limit, query=nearest[0], filter=f, with_payload=with_payload, with_vector=False)
        inner = f if filter_in_prefetch else None
        prefetches = [qe.Prefetch(limit=prefetch_limit, query=q, filter=inner) for q in nearest]
        fusion = qe.Fusion.Rrf(k=rrf_k, weights=[float(w) for w in weights] if weights is not None else None)
        return qe.QueryRequest(
            limit=limit,
            prefetches=prefetches,
            query=fusion,
            filter=None if filter_in_prefetch else f,
            with_payload=with_payload,
            with_vector=False,
        )

    def run_query(self, name: str, request: qe.QueryRequest) -> list[IndexHit]:
        col = self._collection(name)
        with _edge_errors("query", col.path):
            return [_hit(p) for p in col.shard.query(request)]

    def query(self, name: str, request: IndexQuery | None = None, /, **keywords: Any) -> list[IndexHit]:
        """Dense only, sparse only, or both fused by weighted RRF inside the engine; the filter applies inside
        the prefetches, so a tenant filter never lets another tenant's point into the candidate lists."""
        return self.query_batch(name, [IndexQuery.of(request, keywords)])[0]

    def _plan(self, name: str, q: IndexQuery, translated: dict[int, qe.Filter]) -> qe.QueryRequest:
        """The Edge request of ``q``; ``translated`` holds the filters of this batch already translated, by the
        id of the filter object (the requests of a search share one filter: translating it, window ids and all,
        is most of a plan's cost; the batch's requests keep those objects alive)."""
        flt: Any = q.filter
        if flt is not None:
            if id(flt) not in translated:
                translated[id(flt)] = to_edge_filter(qc.as_filter(flt))
            flt = translated[id(flt)]
        return self.plan_query(
            name, dense=q.dense, sparse=q.sparse, filter=flt, limit=q.limit,
            prefetch_limit=q.prefetch_limit, rrf_k=q.rrf_k, weights=q.weights, payload=q.payload, using=q.using,
        )

    def query_batch(self, name: str, requests: Sequence[IndexQuery]) -> list[list[IndexHit]]:
        """Several queries planned as one Edge batch (one pass over the segments), results in order. A query of
        a vector the collection lacks (``context`` before schema 2, ``mean`` before schema 3) finds nothing."""
        col = self._collection(name)
        translated: dict[int, qe.Filter] = {}
        plans = [self._plan(name, q, translated) for q in requests]  # validates every request first
        live = [i for i, q in enumerate(requests) if q.dense is None or qc.has_vector(col.schema, q.using)]
        plans = [plans[i] for i in live]
        out: list[list[IndexHit]] = [[] for _ in requests]
        if plans:
            with _edge_errors("query", col.path):
                got = col.shard.query_batch(qe.QueryBatchRequest(plans)) if len(plans) > 1 else [col.shard.query(plans[0])]
            for i, points in zip(live, got):
                out[i] = [_hit(p) for p in points]
        return out

    def query_sides(self, name: str, dense: IndexQuery, sparse: IndexQuery) -> tuple[list[IndexHit], list[IndexHit]]:
        """Both single-side queries planned as one Edge batch (one pass over the segments)."""
        got = self.query_batch(name, [dense, sparse])
        return got[0], got[1]

    def scroll(
        self, name: str, *, filter: Any = None, limit: int = 256, offset: Any = None, with_vectors: bool = False
    ) -> tuple[list[IndexHit], Any]:
        """A page in point-id order and the id to pass as ``offset`` for the next page (None at the end)."""
        col = self._collection(name)
        f = to_edge_filter(qc.as_filter(filter))
        start = qc.check_point_id(offset, "offset") if offset is not None else None
        request = qe.ScrollRequest(
            offset=start, limit=limit, filter=f, with_payload=True, with_vector=self._vector_names(col) if with_vectors else False
        )
        with _edge_errors("scroll", col.path):
            records, nxt = col.shard.scroll(request)
        return [_hit(r, with_dense=with_vectors) for r in records], (str(nxt) if nxt is not None else None)

    @staticmethod
    def _vector_names(col: _Collection) -> list[str] | bool:
        return qc.read_vectors(col.schema)

    def retrieve(self, name: str, ids: Sequence[str], *, with_vectors: bool = False) -> list[IndexHit]:
        col = self._collection(name)
        canon = [qc.check_point_id(i, "ids") for i in ids]
        with _edge_errors("retrieve", col.path):
            # Edge 0.9: with_payload / with_vector are required positionally despite the stub.
            records = col.shard.retrieve(canon, True, self._vector_names(col) if with_vectors else False)
        return [_hit(r, with_dense=with_vectors) for r in records]


@contextmanager
def _edge_errors(op: str, path: Path) -> Iterator[None]:
    """Translate qdrant_edge exceptions (plain ``Exception`` with a message) at this seam only."""
    try:
        yield
    except LayeredMemoryError:
        raise
    except Exception as exc:  # qdrant_edge raises bare Exception / ValueError
        msg = str(exc)
        if "WouldBlock" in msg:
            raise BackendUnavailable(
                f"Qdrant Edge directory {path} is already open by another opener (another process, or another "
                f"QdrantEdgeVectorIndex/EdgeShard in this process): its WAL lock is held. The embedded store is one "
                f"process at a time: stop the other process (a running bot, a CLI command, another web worker) or "
                f"close the other LayeredMemory, or give this one its own directory; for several processes use the "
                f"server backends (--redis-url / LAYERED_MEMORY_REDIS__URL, with --qdrant-url for vectors)",
                backend=BACKEND,
                op=op,
            ) from exc
        raise BackendError(f"Qdrant Edge {op} on {path} failed: {msg}", backend=BACKEND, op=op) from exc
