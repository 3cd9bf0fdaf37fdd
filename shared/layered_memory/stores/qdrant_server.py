"""``VectorIndex`` on a Qdrant server or cluster through ``qdrant-client`` (same schema as ``qdrant_edge.py``).

``QdrantVectorIndex.in_memory()`` wraps ``QdrantClient(":memory:")`` (qdrant-client local mode): a functional
test double of the server path with the same request models. It searches by brute force in Python (0.3-8 s per
filtered or hybrid query at 10k-100k points), so it is never a production store; use Qdrant Edge embedded.

Example::

    index = QdrantVectorIndex.from_url("http://localhost:6333", api_key=None, timeout=10)
    index.ensure_collection("messages", dense_dim=384, embedder="bge-small-en-v1.5")
    hits = index.query("messages", dense=q, sparse=s, filter=tenant_filter, limit=10)
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import httpx
from qdrant_client import AsyncQdrantClient, QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from ..errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    ConfigurationError,
    InvalidInputError,
    LayeredMemoryError,
    NotFoundError,
)
from . import qdrant_common as qc
from .base import IndexHit, IndexQuery, SparseVector, VectorPoint
from .native import Dispatch, PerLoop

logger = logging.getLogger(__name__)

BACKEND = "qdrant"
UPSERT_BATCH = 256



def _vector_params(name: str, dim: int) -> Any:
    """``mean``: a dot product; ``sentences``: a cosine multivector compared by MaxSim, never in an HNSW graph (it is
    read for a list's candidates only, by a has-id query); the others: cosine."""
    if name == qc.SENTENCES:
        return models.VectorParams(size=dim, distance=models.Distance.COSINE, hnsw_config=models.HnswConfigDiff(m=0),
                                   multivector_config=models.MultiVectorConfig(comparator=models.MultiVectorComparator.MAX_SIM))
    return models.VectorParams(size=dim, distance=models.Distance.DOT if name == qc.MEAN else models.Distance.COSINE)

class QdrantVectorIndex:
    """``VectorIndex`` over a ready ``QdrantClient`` (server, cluster, or local mode).

    Args:
        client: the client to use; ``close()`` closes it.
        location: shown in error messages (the URL); derived from the client when omitted.
    """

    backend = BACKEND
    capabilities: frozenset[str] = frozenset()  # the server optimizes by itself

    def __init__(self, client: QdrantClient, *, location: str | None = None) -> None:
        self.location = location or _describe(client)
        self._schemas: dict[str, qc.CollectionSchema] = {}
        self._warned: set[str] = set()  # collections whose dropped context vectors were reported
        # Local mode (":memory:" / path) is not thread-safe (concurrent upsert and query broke numpy
        # shapes in a test): serialize it. A server client is safe and stays unlocked.
        local = type(getattr(client, "_client", None)).__name__ == "QdrantLocal"
        self._lock: Any = threading.RLock() if local else nullcontext()
        # The client itself; under run_native its AsyncQdrantClient twin (stores.native), one per event loop.
        self._native = not (local and client._client.persistent)
        self.client = Dispatch(client, PerLoop(lambda: _async_twin(client), None if local else _aclose))

    def native_async(self) -> bool:
        """A server client runs natively (AsyncQdrantClient); so does local mode in RAM (an async local
        client over the same collections, for tests); local mode on disk does not (its SQLite is per thread)."""
        return self._native

    @classmethod
    def from_url(cls, url: str, api_key: str | None = None, timeout: int = 10) -> QdrantVectorIndex:
        """Connect to a Qdrant server. Nothing is sent until the first call (the client's version check at
        construction is off: it would block and warn on an unreachable URL instead of raising)."""
        url = qc.check_url(url)
        try:
            client = QdrantClient(url=url, api_key=api_key, timeout=timeout, check_compatibility=False)
        except ValueError as exc:  # what qdrant-client cannot parse beyond the scheme
            raise ConfigurationError(f"qdrant url {url!r} is not valid ({exc}); e.g. http://localhost:6333") from None
        return cls(client, location=url)

    @classmethod
    def in_memory(cls) -> QdrantVectorIndex:
        """qdrant-client local mode in RAM: the test double of the server path."""
        return cls(QdrantClient(":memory:"), location=":memory:")

    def __enter__(self) -> QdrantVectorIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"QdrantVectorIndex({self.location!r})"

    def close(self) -> None:
        self.client.close_native()
        with self._errors("close"):
            self.client.close()

    # -- lifecycle ---------------------------------------------------------------------------------------
    def has_collection(self, name: str) -> bool:
        qc.check_collection_name(name)
        with self._errors("has_collection", name):
            return bool(self.client.collection_exists(name))

    def ensure_collection(
        self, name: str, *, dense_dim: int | None, embedder: str | None = None, bm25: Mapping[str, Any] | None = None,
    ) -> None:
        """Create the collection with its payload indexes, or check an existing one's dense size and embedder.
        ``bm25`` is recorded at creation only (``set_bm25`` records it later).

        Raises:
            SchemaMismatch: the existing collection has another dense size (or embedder, when both are named).
            BackendUnavailable / BackendTimeout: the server at ``location`` cannot be reached in time.
        """
        if dense_dim is not None and dense_dim < 1:
            raise InvalidInputError("dense_dim", dense_dim, "must be a positive size or None", "pass the embedder's dim")
        if self.has_collection(name):
            stored = self._read_schema(name)
            qc.check_schema(name, stored, dense_dim=dense_dim, embedder=embedder, backend=BACKEND)
            if embedder is not None and stored.embedder is None:
                stored = dataclasses.replace(stored, embedder=embedder)
                with self._errors("ensure_collection", name):
                    self.client.update_collection(name, metadata={qc.MARKER_KEY: stored.to_json()})
            self._ensure_indexes(name)
            self._schemas[name] = stored
            return
        vectors = {v: _vector_params(v, dense_dim) for v in qc.DENSE_VECTORS} if dense_dim is not None else {}
        dense = dense_dim is not None
        wanted = qc.CollectionSchema(dense_dim=dense_dim, embedder=embedder, context=dense, mean=dense, sentences=dense, bm25=bm25)
        with self._errors("ensure_collection", name):
            self.client.create_collection(
                name,
                vectors_config=vectors,
                sparse_vectors_config={qc.SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                metadata={qc.MARKER_KEY: wanted.to_json()},
            )
        self._ensure_indexes(name)
        self._schemas[name] = wanted
        logger.debug("created collection %s on %s (dense_dim=%s)", name, self.location, dense_dim)

    def set_bm25(self, name: str, bm25: Mapping[str, Any]) -> None:
        """Record what every point's sparse vector is now written with (after a re-index of all of them)."""
        schema = dataclasses.replace(self._schema(name), bm25=dict(bm25))
        with self._errors("set_bm25", name):
            self.client.update_collection(name, metadata={qc.MARKER_KEY: schema.to_json()})
        self._schemas[name] = schema

    def _read_schema(self, name: str) -> qc.CollectionSchema:
        with self._errors("get_collection", name):
            info = self.client.get_collection(name)
        meta = (info.config.metadata or {}).get(qc.MARKER_KEY)
        vectors = info.config.params.vectors
        dense = vectors.get(qc.DENSE) if isinstance(vectors, Mapping) else None
        actual_dim = int(dense.size) if dense is not None else None
        context = isinstance(vectors, Mapping) and qc.CONTEXT in vectors
        mean = isinstance(vectors, Mapping) and qc.MEAN in vectors
        sentences = isinstance(vectors, Mapping) and qc.SENTENCES in vectors
        if meta is not None:
            schema = qc.CollectionSchema.from_json(meta)
            # The collection's own config is the truth for the vectors; the marker adds the embedder.
            return qc.CollectionSchema(dense_dim=actual_dim, embedder=schema.embedder, version=schema.version, context=context, mean=mean,
                                       sentences=sentences, bm25=schema.bm25)
        return qc.CollectionSchema(dense_dim=actual_dim, version=1, context=context, mean=mean, sentences=sentences)

    def _schema(self, name: str) -> qc.CollectionSchema:
        schema = self._schemas.get(name)
        if schema is None:
            if not self.has_collection(name):
                raise NotFoundError(
                    f"collection {name!r} does not exist on {self.location}; call ensure_collection({name!r}, dense_dim=...)"
                )
            schema = self._schemas[name] = self._read_schema(name)
        return schema

    def _ensure_indexes(self, name: str) -> None:
        with self._errors("create_payload_index", name):
            have = set(self.client.get_collection(name).payload_schema or {})
            with warnings.catch_warnings():
                # local mode: "Payload indexes have no effect in the local Qdrant" (expected for the test double)
                warnings.filterwarnings("ignore", message=".*[Pp]ayload index.*")
                for field_name, kind in qc.payload_index_kinds():
                    if field_name not in have:
                        self.client.create_payload_index(
                            name, field_name=field_name, field_schema=qc.client_index_schema(kind), wait=True
                        )

    def drop_collection(self, name: str) -> None:
        qc.check_collection_name(name)
        self._schemas.pop(name, None)
        with self._errors("drop_collection", name):
            if self.client.collection_exists(name):
                self.client.delete_collection(name)

    def info(self, name: str) -> dict[str, Any]:
        """``points``, ``segments``, ``indexed_vectors``, ``payload_indexes`` ({field: type}) and ``schema``
        (local mode keeps no payload indexes: they are no-ops there)."""
        schema = self._schema(name)
        with self._errors("info", name):
            i = self.client.get_collection(name)
        indexes = {k: str(getattr(v.data_type, "value", v.data_type)) for k, v in (i.payload_schema or {}).items()}
        return {
            "points": i.points_count, "segments": i.segments_count, "indexed_vectors": i.indexed_vectors_count,
            "payload_indexes": indexes, "schema": schema.to_json(),
        }

    def size_bytes(self, name: str) -> int:
        """An estimate: Qdrant's API does not report a collection's disk usage, so this is
        ``points x (4 x dense_dim + 256)`` (vectors plus a typical payload and sparse vector)."""
        schema = self._schema(name)
        return self.count(name) * (4 * (schema.dense_dim or 0) + 256)

    # -- writes ------------------------------------------------------------------------------------------
    def upsert(self, name: str, points: Sequence[VectorPoint]) -> None:
        schema = self._schema(name)
        ids = qc.check_points(points, schema.dense_dim, name=name)
        qc.dropped_context(points, schema, name, self._warned)
        structs = [models.PointStruct(id=pid, vector=_vector(p, schema), payload=dict(p.payload)) for pid, p in zip(ids, points)]
        with self._errors("upsert", name):
            for start in range(0, len(structs), UPSERT_BATCH):
                self.client.upsert(name, points=structs[start : start + UPSERT_BATCH], wait=True)
        logger.debug("upserted %d points into %s", len(points), name)

    def delete(self, name: str, *, ids: Sequence[str] | None = None, filter: Any = None) -> None:
        """Delete by ids, by filter, or by both (the points among ``ids`` that match ``filter``)."""
        self._schema(name)
        f = qc.as_filter(filter)
        if ids is None and f is None:
            raise InvalidInputError("ids/filter", None, "delete needs ids or a filter", "use drop_collection to delete all")
        canon = [qc.check_point_id(i, "ids") for i in ids] if ids is not None else None
        if canon is not None and not canon:
            return
        if f is None:
            selector: Any = models.PointIdsList(points=canon)
        elif canon is None:
            selector = models.FilterSelector(filter=f)
        else:
            selector = models.FilterSelector(filter=models.Filter(must=[models.HasIdCondition(has_id=canon), f]))
        with self._errors("delete", name):
            self.client.delete(name, points_selector=selector, wait=True)

    def holds_kind(self, name: str, kind: Any) -> bool:
        """Always True: other processes write to a server collection, so only a query can tell."""
        return True

    def set_payload(self, name: str, ids: Sequence[str], payload: Mapping[str, Any]) -> None:
        """Merge ``payload`` keys into the payload of each point in ``ids`` (missing ids are ignored)."""
        self._schema(name)
        canon = [qc.check_point_id(i, "ids") for i in ids]
        qc.check_payload(payload, field="payload")
        if not canon:
            return
        selector = models.FilterSelector(filter=models.Filter(must=[models.HasIdCondition(has_id=canon)]))
        with self._errors("set_payload", name):
            self.client.set_payload(name, payload=dict(payload), points=selector, wait=True)

    # -- reads -------------------------------------------------------------------------------------------
    def count(self, name: str, filter: Any = None) -> int:
        f = qc.as_filter(filter)
        with self._errors("count", name):
            return int(self.client.count(name, count_filter=f, exact=True).count)

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
        payload: bool | Sequence[str] = True,
        using: str = qc.DENSE,
    ) -> dict[str, Any]:
        """Build (not run) the ``query_points`` keyword arguments for ``query``; ``using`` names the dense vector."""
        schema = self._schema(name)
        qc.check_using(using)
        qc.check_query_args(dense, sparse, limit, prefetch_limit, rrf_k, weights)
        qc.check_dense(dense, schema.dense_dim, name=name, field="dense")
        qc.check_sparse(sparse, field="sparse")
        f = qc.as_filter(filter)
        legs: list[tuple[Any, str]] = []
        if dense is not None:
            legs.append((qc.query_vector(dense, using), using))
        if sparse is not None:
            sv = models.SparseVector(indices=list(sparse.indices), values=[float(x) for x in sparse.values])
            legs.append((sv, qc.SPARSE))
        with_payload = payload if isinstance(payload, bool) else [str(k) for k in payload]
        base = {"collection_name": name, "query_filter": f, "limit": limit, "with_payload": with_payload, "with_vectors": False}
        if len(legs) == 1:
            return {**base, "query": legs[0][0], "using": legs[0][1]}
        prefetch = [models.Prefetch(query=q, using=using, limit=prefetch_limit) for q, using in legs]
        rrf = models.Rrf(k=rrf_k, weights=[float(w) for w in weights] if weights is not None else None)
        return {**base, "prefetch": prefetch, "query": models.RrfQuery(rrf=rrf)}

    def query(self, name: str, request: IndexQuery | None = None, /, **keywords: Any) -> list[IndexHit]:
        """Dense only, sparse only, or both fused by weighted RRF on the server; the top-level filter is
        applied inside the prefetches by Qdrant."""
        return self.query_batch(name, [IndexQuery.of(request, keywords)])[0]

    def query_batch(self, name: str, requests: Sequence[IndexQuery]) -> list[list[IndexHit]]:
        """The queries, one ``query_points`` each, results in order. A query of a vector the collection lacks
        (``context`` before schema 2, ``mean`` before schema 3) finds nothing."""
        plans = [
            self.plan_query(
                name, dense=q.dense, sparse=q.sparse, filter=q.filter, limit=q.limit, prefetch_limit=q.prefetch_limit,
                rrf_k=q.rrf_k, weights=q.weights, payload=q.payload, using=q.using,
            )
            for q in requests
        ]
        schema = self._schema(name)
        out: list[list[IndexHit]] = []
        for q, kwargs in zip(requests, plans):
            if q.dense is not None and not qc.has_vector(schema, q.using):
                out.append([])
                continue
            with self._errors("query", name):
                points = self.client.query_points(**kwargs).points
            out.append([IndexHit(id=str(p.id), score=float(p.score), payload=dict(p.payload or {})) for p in points])
        return out

    def query_sides(self, name: str, dense: IndexQuery, sparse: IndexQuery) -> tuple[list[IndexHit], list[IndexHit]]:
        """Both single-side queries, one request each."""
        got = self.query_batch(name, [dense, sparse])
        return got[0], got[1]

    def scroll(
        self, name: str, *, filter: Any = None, limit: int = 256, offset: Any = None, with_vectors: bool = False
    ) -> tuple[list[IndexHit], Any]:
        """A page in point-id order and the id to pass as ``offset`` for the next page (None at the end)."""
        f = qc.as_filter(filter)
        start = qc.check_point_id(offset, "offset") if offset is not None else None
        with self._errors("scroll", name):
            records, nxt = self.client.scroll(
                name, scroll_filter=f, limit=limit, offset=start, with_payload=True,
                with_vectors=self._vector_names(name) if with_vectors else False,
            )
        hits = [
            IndexHit(
                id=str(r.id), score=0.0, payload=dict(r.payload or {}),
                dense=qc.dense_of(r.vector) if with_vectors else None,
                context=qc.dense_of(r.vector, qc.CONTEXT) if with_vectors else None,
                sentences=qc.sentences_of(r.vector) if with_vectors else None,
            )
            for r in records
        ]
        return hits, (str(nxt) if nxt is not None else None)

    def _vector_names(self, name: str) -> list[str] | bool:
        return qc.read_vectors(self._schema(name))

    def retrieve(self, name: str, ids: Sequence[str], *, with_vectors: bool = False) -> list[IndexHit]:
        canon = [qc.check_point_id(i, "ids") for i in ids]
        with self._errors("retrieve", name):
            records = self.client.retrieve(
                name, ids=canon, with_payload=True, with_vectors=self._vector_names(name) if with_vectors else False
            )
        return [
            IndexHit(id=str(r.id), score=0.0, payload=dict(r.payload or {}),
                     dense=qc.dense_of(r.vector) if with_vectors else None,
                     context=qc.dense_of(r.vector, qc.CONTEXT) if with_vectors else None,
                     sentences=qc.sentences_of(r.vector) if with_vectors else None)
            for r in records
        ]

    def optimize(self, name: str) -> bool:
        """Nothing to do: a Qdrant server builds its indexes by itself (see ``stores.base.MANUAL_OPTIMIZE``)."""
        return False

    # -- error mapping -----------------------------------------------------------------------------------
    @contextmanager
    def _errors(self, op: str, name: str | None = None) -> Iterator[None]:
        """Translate qdrant-client / httpx exceptions at this seam only, naming the server location."""
        where = f"Qdrant at {self.location}" + (f", collection {name!r}" if name else "")
        try:
            with self._lock:
                yield
        except LayeredMemoryError:
            raise
        except (ResponseHandlingException, httpx.HTTPError) as exc:
            source = getattr(exc, "source", exc)
            if isinstance(source, httpx.TimeoutException):
                raise BackendTimeout(
                    f"{where}: {op} timed out ({source!r}); raise the timeout (from_url(..., timeout=...)) or check "
                    "the server load",
                    backend=BACKEND, op=op,
                ) from exc
            raise BackendUnavailable(
                f"{where}: {op} could not reach the server ({source!r}); check the URL, that Qdrant is running "
                "and that the network allows it",
                backend=BACKEND, op=op,
            ) from exc
        except UnexpectedResponse as exc:
            status = exc.status_code or 0
            detail = str(exc).replace("\n", " ")
            if status == 404 and name:
                raise NotFoundError(
                    f"{where}: not found during {op}; call ensure_collection({name!r}, dense_dim=...)"
                ) from exc
            if status in (401, 403):
                raise BackendUnavailable(
                    f"{where}: {op} was refused ({status}); pass the right api_key", backend=BACKEND, op=op
                ) from exc
            if status in (502, 503, 504):
                raise BackendUnavailable(f"{where}: {op} failed, {detail}", backend=BACKEND, op=op) from exc
            raise BackendError(f"{where}: {op} failed, {detail}", backend=BACKEND, op=op) from exc
        except ValueError as exc:  # local mode raises ValueError("Collection x not found")
            if name and "not found" in str(exc).lower():
                raise NotFoundError(
                    f"{where}: not found during {op}; call ensure_collection({name!r}, dense_dim=...)"
                ) from exc
            raise BackendError(f"{where}: {op} failed: {exc}", backend=BACKEND, op=op) from exc
        except RuntimeError as exc:  # local path mode: "Storage folder ... is already accessed"
            raise BackendUnavailable(f"{where}: {op} failed: {exc}", backend=BACKEND, op=op) from exc


def _vector(p: VectorPoint, schema: qc.CollectionSchema) -> dict[str, Any]:
    vec: dict[str, Any] = qc.dense_vectors(p, schema)
    if p.sparse is not None:
        vec[qc.SPARSE] = models.SparseVector(indices=list(p.sparse.indices), values=[float(x) for x in p.sparse.values])
    return vec


def _describe(client: QdrantClient) -> str:
    inner = getattr(client, "_client", None)
    rest_uri = getattr(inner, "rest_uri", None)
    if rest_uri:
        return str(rest_uri)
    location = getattr(inner, "location", None)
    return str(location) if location else type(inner).__name__


def _async_twin(client: QdrantClient) -> AsyncQdrantClient:
    """An AsyncQdrantClient to what ``client`` reaches: the same server options, or in local mode (RAM)
    an async local client sharing the sync one's collections (its calls finish without suspending)."""
    local = client._client
    if type(local).__name__ == "QdrantLocal":
        twin = AsyncQdrantClient(location=":memory:")
        twin._client.collections = local.collections
        twin._client.aliases = local.aliases
        return twin
    accepted = set(inspect.signature(AsyncQdrantClient.__init__).parameters)
    return AsyncQdrantClient(**{k: v for k, v in client._init_options.items() if k in accepted and v is not None})


async def _aclose(client: AsyncQdrantClient) -> None:
    await client.close()
