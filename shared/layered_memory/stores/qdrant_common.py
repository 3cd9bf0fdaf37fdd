"""The Qdrant collection schema shared by the Edge and the server/client backends.

Both backends store the same thing: named vectors ``dense`` (cosine, sized by the embedder; absent when there
is no embedder), ``context`` (schema 2: a second dense vector of the same size, e.g. a message embedded with the
turn before it; a point may lack it), ``mean`` (schema 3, dot product: the mean of the point's unit ``dense`` and
``context`` vectors, its unit ``dense`` alone without a context, so one query of it scores every point by the
mean of its two cosines exactly; derived here from the other two, never given by a writer), ``sentences`` (schema 4,
a cosine multivector compared by MaxSim, no HNSW: one vector per sentence of a message of two sentences or more;
read by a has-id query over a list's candidates) and ``bm25`` (sparse,
IDF modifier), UUID-string point ids, and the payload indexes listed in ``PAYLOAD_INDEXES``. A collection created
before schema 2 (3) has no ``context`` (``mean``) vector: points written there keep the vectors it has, and a
query of a missing vector finds nothing (``recreate_index=True`` adds them; ``CollectionSchema`` says which a
collection has). ``qdrant_client.models`` is the request language on both; ``qdrant_edge.py`` translates it.

This module holds only what is identical on both sides: the schema marker and its check, input validation
(ids, vector sizes, filters), the payload index kinds, and a reference RRF used by the tests and the benchmark.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._lazy import qdrant_models as models

from ..errors import CapabilityError, ConfigurationError, InvalidInputError, SchemaMismatch
from .base import PAYLOAD_INDEXES, IndexHit, SparseVector, VectorPoint

logger = logging.getLogger(__name__)

DENSE = "dense"
CONTEXT = "context"
MEAN = "mean"
SENTENCES = "sentences"
DENSE_VECTORS = (DENSE, CONTEXT, MEAN, SENTENCES)  # what IndexQuery.using may name
STORED_VECTORS = (DENSE, CONTEXT)  # the cosine vectors a writer gives and ``with_vectors`` reads back (``mean`` is derived)
SPARSE = "bm25"
MARKER_KEY = "layered_memory"
SCHEMA_VERSION = 4  # 2: the ``context`` dense vector; 3: the ``mean`` vector; 4: the ``sentences`` multivector
DEFAULT_RRF_K = 60


@dataclass(frozen=True, slots=True)
class CollectionSchema:
    """What a collection was created for. Stored next to the data (Edge: a JSON file in the collection
    directory; server: the collection's ``metadata``) so a changed embedder is caught at open time."""

    dense_dim: int | None
    embedder: str | None = None
    version: int = SCHEMA_VERSION
    context: bool = False  # the collection has the ``context`` vector (read from its config, not the marker)
    mean: bool = False  # the collection has the ``mean`` vector (read from its config, not the marker)
    sentences: bool = False  # the collection has the ``sentences`` multivector (read from its config, not the marker)
    bm25: Mapping[str, Any] | None = None  # what every point's sparse vector was written with (None: not known, an older release)

    def to_json(self) -> dict[str, Any]:
        return {"dense_dim": self.dense_dim, "embedder": self.embedder, "version": self.version, "context": self.context,
                "mean": self.mean, "sentences": self.sentences, "bm25": dict(self.bm25) if self.bm25 is not None else None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CollectionSchema:
        dim = data.get("dense_dim")
        return cls(
            dense_dim=int(dim) if dim is not None else None,
            embedder=data.get("embedder"),
            version=int(data.get("version", 1)),
            context=bool(data.get("context", False)),
            mean=bool(data.get("mean", False)),
            sentences=bool(data.get("sentences", False)),
            bm25=dict(data["bm25"]) if isinstance(data.get("bm25"), Mapping) else None,
        )


def check_schema(
    name: str, stored: CollectionSchema, *, dense_dim: int | None, embedder: str | None, backend: str
) -> None:
    """Raise SchemaMismatch when the existing collection was built for another dense size or embedder. A dense
    collection opened without an embedder (``dense_dim=None``) is allowed, with a warning: sparse only."""

    def shown(dim: int | None) -> str:
        return "no dense vector" if dim is None else f"dense size {dim}"

    if dense_dim is None and stored.dense_dim is not None:
        # Opened without an embedder (e.g. an app installed without the embedding extra): serve BM25 from the
        # sparse vectors rather than no memory at all. New points get no dense vector until a reindex.
        logger.warning(
            "collection %r was built with embedder %s (dense size %d) but no embedder is configured: serving "
            "BM25 only. Install or configure that embedder again, then run `layered-memory reindex` (or "
            "mem.reindex()) so messages added meanwhile get their dense vectors too",
            name, stored.embedder or "?", stored.dense_dim,
        )
        return
    if stored.dense_dim != dense_dim:
        raise SchemaMismatch(
            f"collection {name!r} has {shown(stored.dense_dim)} but the configuration asks for {shown(dense_dim)}"
            f" (embedder {embedder or 'none'}); vectors of different sizes cannot share a collection. "
            "Re-index from the record store with LayeredMemory.embedded(..., recreate_index=True) or "
            "`layered-memory reindex --recreate`, or use another collection prefix",
            backend=backend,
            op="ensure_collection",
        )
    if embedder is not None and stored.embedder is not None and stored.embedder != embedder:
        raise SchemaMismatch(
            f"collection {name!r} was built with embedder {stored.embedder!r} but the configuration uses "
            f"{embedder!r} (both {shown(dense_dim)}); scores across embedders are meaningless. "
            "Re-index from the record store with LayeredMemory.embedded(..., recreate_index=True) or "
            "`layered-memory reindex --recreate`, or use another collection prefix",
            backend=backend,
            op="ensure_collection",
        )


def payload_index_kinds() -> list[tuple[str, str]]:
    """``(field, kind)`` with kind in tenant | keyword | integer | datetime | float, in a stable order."""
    known = {"tenant", "keyword", "integer", "datetime", "float"}
    out = []
    for field_name, kind in PAYLOAD_INDEXES.items():
        if kind not in known:
            raise SchemaMismatch(
                f"PAYLOAD_INDEXES[{field_name!r}]={kind!r} is not a known index kind; use one of {sorted(known)}",
                backend="qdrant",
                op="ensure_collection",
            )
        out.append((field_name, kind))
    return out


def client_index_schema(kind: str) -> Any:
    """The ``create_payload_index`` field_schema for one kind (qdrant-client spelling)."""
    if kind == "tenant":
        return models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
    if kind == "integer":
        return models.IntegerIndexParams(type=models.IntegerIndexType.INTEGER, lookup=True, range=True)
    return {
        "keyword": models.PayloadSchemaType.KEYWORD,
        "datetime": models.PayloadSchemaType.DATETIME,
        "float": models.PayloadSchemaType.FLOAT,
    }[kind]


# -- validation -----------------------------------------------------------------------------------------


_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def check_point_id(value: Any, field: str = "id") -> str:
    """A canonical UUID string; other strings are rejected as on every Qdrant backend."""
    if isinstance(value, str) and _CANONICAL_UUID.fullmatch(value):  # what the engine's own ids look like: as they are
        return value
    if isinstance(value, uuid.UUID):
        return str(value)
    try:
        return str(uuid.UUID(str(value)))
    except (ValueError, TypeError, AttributeError):
        raise InvalidInputError(
            field, value, "point ids must be UUID strings", "derive one with uuid.uuid5(namespace, message_id)"
        ) from None


def check_dense(vector: Sequence[float] | None, dense_dim: int | None, *, name: str, field: str) -> None:
    if vector is None:
        return
    if dense_dim is None:
        raise CapabilityError(
            f"{field}: collection {name!r} has no dense vector (it was created without an embedder); "
            "query with sparse only, or re-create the collection with dense_dim set"
        )
    if len(vector) != dense_dim:
        raise InvalidInputError(
            field,
            f"<{len(vector)} floats>",
            f"collection {name!r} stores dense vectors of size {dense_dim}",
            "embed with the collection's embedder, or re-create the collection for the new size",
        )


def check_sparse(vector: SparseVector | None, *, field: str) -> None:
    if vector is None:
        return
    if len(vector.indices) != len(vector.values):
        raise InvalidInputError(
            field,
            f"<{len(vector.indices)} indices, {len(vector.values)} values>",
            "a sparse vector needs one value per index",
            "build indices and values from the same term list",
        )
    if len(set(vector.indices)) != len(vector.indices):
        raise InvalidInputError(field, vector.indices[:8], "sparse indices must be unique", "sum duplicate terms first")


def check_points(points: Sequence[VectorPoint], dense_dim: int | None, *, name: str) -> list[str]:
    """Validate a whole batch before anything is written. Returns the canonical ids."""
    ids = []
    for i, p in enumerate(points):
        ids.append(check_point_id(p.id, f"points[{i}].id"))
        check_dense(p.dense, dense_dim, name=name, field=f"points[{i}].dense")
        check_dense(p.context, dense_dim, name=name, field=f"points[{i}].context")
        for j, row in enumerate(p.sentences or ()):
            check_dense(row, dense_dim, name=name, field=f"points[{i}].sentences[{j}]")
        check_sparse(p.sparse, field=f"points[{i}].sparse")
        if p.dense is None and p.sparse is None:
            raise InvalidInputError(
                f"points[{i}]", p.id, "a point needs a dense or a sparse vector", "set dense= or sparse="
            )
        check_payload(p.payload, field=f"points[{i}].payload")
    return ids


def check_payload(payload: Mapping[str, Any], *, field: str) -> None:
    for key in _INT_FLAGS:
        if isinstance(payload.get(key), bool):
            raise InvalidInputError(
                f"{field}[{key!r}]",
                payload[key],
                "flags are stored as int 0/1 (Qdrant Edge cannot match bool payloads)",
                f"store int({payload[key]})",
            )


_INT_FLAGS = tuple(f for f, kind in PAYLOAD_INDEXES.items() if kind == "integer")


def check_using(using: str) -> None:
    if using not in DENSE_VECTORS:
        raise InvalidInputError("using", using, f"must name a dense vector: {', '.join(DENSE_VECTORS)}", 'use "dense"')


def has_vector(schema: CollectionSchema, using: str) -> bool:
    """Whether a collection of ``schema`` holds the dense vector ``using`` (a query of one it lacks finds nothing)."""
    return schema.dense_dim is not None and (using == DENSE or (using == CONTEXT and schema.context) or (using == MEAN and schema.mean)
                                             or (using == SENTENCES and schema.sentences))


def dense_vectors(p: VectorPoint, schema: CollectionSchema) -> dict[str, list[float]]:
    """The named dense vectors one point is written with in a collection of ``schema``: ``dense``, ``context``
    when the collection has it, and ``mean`` when it has that and the point asks for it (``VectorPoint.mean``,
    messages): the mean of the unit ``dense`` and ``context`` vectors (the unit ``dense`` alone for a point
    without a context), so its dot product with a unit query is the mean of the two cosines."""
    if p.dense is None:
        return {}
    vec = {DENSE: [float(x) for x in p.dense]}
    context = p.context if schema.context else None
    if context is not None:
        vec[CONTEXT] = [float(x) for x in context]
    if schema.mean and p.mean:
        own = _unit(vec[DENSE])
        vec[MEAN] = ((own + _unit(vec[CONTEXT])) / 2 if context is not None else own).tolist()
    if schema.sentences and p.mean and p.sentences:
        vec[SENTENCES] = [[float(x) for x in row] for row in p.sentences]
    return vec


def query_vector(dense: Sequence[float], using: str) -> list[Any]:
    """The query as sent for the vector ``using``: unit length for ``mean`` (a dot product; cosine vectors are
    normalized by Qdrant itself), so a score there is the mean of the two cosines, comparable to theirs."""
    if using == SENTENCES:  # a one-row multivector: MaxSim scores a point by its best row
        return [[float(x) for x in dense]]
    return _unit(dense).tolist() if using == MEAN else [float(x) for x in dense]


def _unit(vector: Sequence[float]) -> Any:
    import numpy as np

    v = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def dropped_context(points: Sequence[VectorPoint], schema: CollectionSchema, name: str, warned: set[str]) -> None:
    """Log once per collection that ``context`` vectors are dropped (a collection from before schema 2)."""
    if not schema.context and name not in warned and any(p.context is not None for p in points):
        warned.add(name)
        logger.warning(
            "collection %r was created before the context vector (schema 2): messages are indexed without it, so a "
            "message is found by its own text but not by the turn before it. Re-create it from the record store to add "
            "it: LayeredMemory.embedded(..., recreate_index=True) or `layered-memory reindex --recreate`", name,
        )


def check_query_args(
    dense: Sequence[float] | None,
    sparse: SparseVector | None,
    limit: int,
    prefetch_limit: int,
    rrf_k: int,
    weights: tuple[float, float] | None,
) -> None:
    if dense is None and sparse is None:
        raise InvalidInputError("dense/sparse", None, "a query needs a dense or a sparse vector", "pass one or both")
    if limit < 1:
        raise InvalidInputError("limit", limit, "must be >= 1", "ask for at least one hit")
    if prefetch_limit < limit:
        raise InvalidInputError(
            "prefetch_limit", prefetch_limit, f"must be >= limit ({limit})", "raise prefetch_limit or lower limit"
        )
    if rrf_k < 1:
        raise InvalidInputError("rrf_k", rrf_k, "must be >= 1", "use the default 60 or a small constant like 2")
    if weights is not None and (len(weights) != 2 or any(w <= 0 for w in weights)):
        raise InvalidInputError(
            "weights", weights, "must be two positive numbers (dense, sparse)", "e.g. weights=(1.0, 1.0)"
        )


def as_filter(value: Any, field: str = "filter") -> models.Filter | None:
    """Accept a ``models.Filter`` (or its dict form) and reject bool matches, which Edge never matches."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = models.Filter.model_validate(value)
    if not isinstance(value, models.Filter):
        raise InvalidInputError(
            field, value, "filters are qdrant_client.models.Filter objects", "wrap conditions in models.Filter(must=[...])"
        )
    _reject_bool_match(value, field)
    return value


def _reject_bool_match(node: Any, field: str) -> None:
    if isinstance(node, models.Filter):
        for part in (node.must, node.should, node.must_not):
            for cond in _as_list(part):
                _reject_bool_match(cond, field)
        if node.min_should is not None:
            for cond in node.min_should.conditions:
                _reject_bool_match(cond, field)
    elif isinstance(node, models.NestedCondition):
        _reject_bool_match(node.nested.filter, field)
    elif isinstance(node, models.FieldCondition) and isinstance(node.match, models.MatchValue):
        if isinstance(node.match.value, bool):
            raise InvalidInputError(
                f"{field}: {node.key}",
                node.match.value,
                "bool payload matches are not supported (Qdrant Edge 0.9 never matches them)",
                f"store the flag as int 0/1 and match MatchValue(value={int(node.match.value)})",
            )


def _as_list(part: Any) -> list[Any]:
    if part is None:
        return []
    return list(part) if isinstance(part, list) else [part]


# -- results ----------------------------------------------------------------------------------------------


def rrf_fuse(
    ranked: Sequence[Sequence[IndexHit]], *, k: int, weights: Sequence[float] | None = None, limit: int
) -> list[IndexHit]:
    """Weighted reciprocal rank fusion with Qdrant's formula: ``sum_i 1 / ((rank_i + 1) / w_i + k - 1)``
    (rank from 0; with w = 1 this is ``1 / (rank + k)``). Ties keep first-seen order."""
    scores: dict[str, float] = {}
    first: dict[str, IndexHit] = {}
    for i, hits in enumerate(ranked):
        w = 1.0 if weights is None else float(weights[i])
        for rank, hit in enumerate(hits):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / ((rank + 1.0) / w + k - 1.0)
            first.setdefault(hit.id, hit)
    order = sorted(scores, key=lambda pid: -scores[pid])[:limit]
    return [IndexHit(id=pid, score=scores[pid], payload=first[pid].payload, dense=first[pid].dense) for pid in order]


def dense_of(vector: Any, name: str = DENSE) -> list[float] | None:
    """The ``dense`` (or ``name``) part of a returned vector (dict of named vectors, or None)."""
    if isinstance(vector, Mapping):
        got = vector.get(name)
        return [float(x) for x in got] if got is not None else None
    return None


def sentences_of(vector: Any) -> list[list[float]] | None:
    """The rows of a returned ``sentences`` multivector (None: the point has none)."""
    rows = vector.get(SENTENCES) if isinstance(vector, Mapping) else None
    return [[float(x) for x in r] for r in rows] if rows else None


def read_vectors(schema: CollectionSchema) -> list[str] | bool:
    """The named vectors a ``with_vectors`` read asks for in a collection of ``schema``."""
    if schema.dense_dim is None:
        return False
    names = list(STORED_VECTORS) if schema.context else [DENSE]
    return names + [SENTENCES] if schema.sentences else names


def check_collection_name(name: str) -> str:
    """Collection names become directory names (Edge) and URL parts (server)."""
    ok = bool(name) and len(name) <= 128 and not name.startswith(".")
    ok = ok and all(ch.isascii() and (ch.isalnum() or ch in "_-.") for ch in name)
    if not ok:
        raise InvalidInputError(
            "collection", name, "names are 1-128 ASCII letters, digits, '_', '-' or '.', not starting with '.'",
            "e.g. 'messages' or 'mem_v2'",
        )
    return name


QDRANT_SCHEMES = ("http", "https")


def check_url(url: object) -> str:
    """A Qdrant server url (``http(s)://host[:port][/prefix]``, or ``host:port`` for http), checked before
    anything opens: qdrant-client's own error for a bad scheme is a bare ``ValueError: Unknown scheme``."""
    import difflib

    if not isinstance(url, str) or not url.strip():
        raise ConfigurationError(f"qdrant url {url!r}: must be a non-empty string; e.g. http://localhost:6333")
    scheme, sep, rest = url.strip().partition("://")
    if sep and scheme.lower() not in QDRANT_SCHEMES:
        guess = "https" if "s" in scheme.lower() else "http"  # "httsp", "htps": TLS was meant
        close = difflib.SequenceMatcher(None, scheme.lower(), guess).ratio() >= 0.5
        hint = f"did you mean {guess}://{rest}?" if close else "e.g. http://localhost:6333"
        raise ConfigurationError(
            f"qdrant url {url!r}: unknown scheme {scheme!r}; a Qdrant server url starts with http:// or https:// ({hint})"
        )
    return url.strip()
