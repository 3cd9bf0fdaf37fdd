"""The agent store seam: the RecordStore (truth) and the VectorIndex (derived) for agent interactions.

Everything that touches storage for agents goes through ``AgentStore``, and every method takes an
``AgentScope``: the scope becomes the ``tenant`` payload condition of every index request (built by
``retrieval.plan.build_filter``, the same helper the message search uses) and the RecordStore
collection ``agent:<user_id>:<agent_name>`` of every document read. No caller can name a filter
that widens it: the scope condition is ANDed in ``must`` and the scope fields are not filterable.

Layout:

- RecordStore, tenant = the engine tenant:
  ``agents`` registry, key ``casefold(user_id|agent_name)`` -> ``AgentInfo``;
  ``agent:<user>:<agent>``, key ``<YYYY-mm-ddTHH:MM:SS.ffffffZ>|<interaction_id>`` -> ``Interaction``
  (keys sort by timestamp, so "oldest first" and "older than" are key ranges).
- VectorIndex: one collection per agent (``user{user_id}_{agent_name}_context``, the seed's name) or
  one shared collection (``<prefix>agent_context``) where the scope is a tenant-indexed payload value.
  Either way the points carry the same payload and every request carries the scope filter.

Writes: validate -> embed (a failure writes nothing) -> RecordStore -> index; if the index write
fails, the documents are removed again and the error is raised (no half-written interaction). In the
background index mode the add does not embed: a pending marker per interaction goes with the
documents, the BM25 point is written inline, and the engine's index writer embeds (``index.pending``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from .._lazy import qdrant_models as models

from ..errors import InvalidInputError, NotFoundError
from ..models import iso, parse_time, utcnow
from ..providers.base import Embedder
from ..retrieval.analyzer import Analyzer
from ..retrieval.bm25 import BM25Encoder
from ..config import RetrievalSettings
from ..index.background import BackgroundIndexer
from ..index.collection import Entry, IndexedCollection
from ..index.pending import PENDING, Target, mark, write_sparse
from ..filterspec import Eq, FilterSpec
from ..retrieval.plan import build_filter
from ..stores.base import RecordStore, VectorIndex, VectorPoint
from .models import POINT_KIND, AgentInfo, AgentScope, Interaction, ts_key

logger = logging.getLogger(__name__)

REGISTRY = "agents"
PENDING_KIND = "agents"  # the writer's source name and the markers' key prefix (see index.pending)
PAGE = 1000
# The filters an agent search / prune / export may use. Scope fields (user_id, agent, tenant, chat...)
# are deliberately absent: a handle only ever sees its own agent.
AGENT_FILTERS = ("interaction_type", "success", "task_id", "timestamp_from", "timestamp_to")


def check_filters(filters: Mapping[str, Any] | None, op: str) -> dict[str, Any]:
    """Validate user filters for ``op``; scope-naming keys are refused with the reason."""
    if filters is None:
        return {}
    if not isinstance(filters, Mapping):
        raise InvalidInputError(f"{op} filters", filters, "must be a dict", "e.g. {'success': False}")
    for name in filters:
        if name not in AGENT_FILTERS:
            rule = (
                "names another scope; an agent handle only reaches its own interactions"
                if name in ("user_id", "agent_name", "agent", "tenant", "agent_id", "chat_id", "session_key", "kind")
                else "is not an agent filter"
            )
            raise InvalidInputError(f"{op} filters.{name}", filters[name], rule, f"use only {', '.join(AGENT_FILTERS)}")
    return {k: v for k, v in filters.items() if v is not None}


def scope_spec(scope: AgentScope, filters: Mapping[str, Any] | None, op: str = "search") -> tuple[FilterSpec, dict[str, Any]]:
    """The filter spec: the agent's scope (always first) AND the validated user filters, plus the normalized filters."""
    return build_filter(FilterSpec.of(Eq("tenant", scope.key), Eq("kind", POINT_KIND)), check_filters(filters, op))


def scope_filter(scope: AgentScope, filters: Mapping[str, Any] | None, op: str = "search") -> tuple[models.Filter, dict[str, Any]]:
    """``scope_spec`` compiled for the vector index."""
    spec, normalized = scope_spec(scope, filters, op)
    return spec.to_qdrant(), normalized


def doc_matches(doc: Mapping[str, Any], normalized: Mapping[str, Any]) -> bool:
    """Python twin of ``scope_filter`` for RecordStore documents (same normalized filters)."""
    for name in ("interaction_type", "task_id"):
        if name in normalized:
            want = normalized[name] if isinstance(normalized[name], list) else [normalized[name]]
            if doc.get(name) not in want:
                return False
    if "success" in normalized and bool(doc.get("success")) != normalized["success"]:
        return False
    if "timestamp_from" in normalized or "timestamp_to" in normalized:
        ts = parse_time("timestamp", doc.get("timestamp"))
        if "timestamp_from" in normalized and ts < parse_time("timestamp_from", normalized["timestamp_from"]):
            return False
        if "timestamp_to" in normalized and ts > parse_time("timestamp_to", normalized["timestamp_to"]):
            return False
    return True


def key_range(normalized: Mapping[str, Any]) -> tuple[str, str | None]:
    """(after, stop) document keys for the time part of a filter: keys > after and < stop."""
    after = ""
    stop = None
    if "timestamp_from" in normalized:
        after = ts_key(parse_time("timestamp_from", normalized["timestamp_from"]))[:-1]  # "...ffffff" < "...ffffffZ|id"
    if "timestamp_to" in normalized:
        end = parse_time("timestamp_to", normalized["timestamp_to"])
        stop = ts_key(end) + "|\U0010ffff"
    return after, stop


class AgentStore:
    """Storage operations for agents. Thread-safe: writes run under ``lock`` (the engine's write lock)."""

    def __init__(
        self,
        records: RecordStore,
        index: VectorIndex,
        embedder: Embedder | None,
        analyzer: Analyzer,
        encoder: BM25Encoder,
        *,
        collection_prefix: str,
        lock: threading.RLock,
        background: BackgroundIndexer | None = None,
        deferred: bool = False,
        bm25: Mapping[str, Any] | None = None,
    ) -> None:
        self.records = records
        self.index = index
        self.embedder = embedder
        self.analyzer = analyzer
        self.encoder = encoder
        self.prefix = collection_prefix
        self.bm25 = bm25  # recorded on each agent collection it creates (``retrieval.bm25.marker``)
        self.lock = lock
        # The index writer keeps the agents' HNSW indexes up (its thread builds them); only its HNSW calls are kept.
        self._watch = background.watch if background is not None else None
        self._check = background.check_optimize if background is not None else None
        self._optimize = background.optimize if background is not None else None
        self.ensured: set[str] = set()
        # The background index mode: interactions get their BM25 points inline and a pending marker each;
        # the index writer embeds them (``index.pending``; the add does not wait for the embedder).
        self.background = background if deferred and embedder is not None else None

    # -- registry -------------------------------------------------------------------------------
    def info(self, scope: AgentScope) -> AgentInfo | None:
        doc = self.records.get_docs(scope.tenant, REGISTRY, [scope.registry_key])[0]
        if doc is None:
            return None
        info = AgentInfo.from_doc(doc)
        if (info.user_id, info.agent_name) != (scope.user_id, scope.agent_name):
            return None  # a case-variant of another agent: not this one
        return info

    def require(self, scope: AgentScope) -> AgentInfo:
        info = self.info(scope)
        if info is None:
            raise NotFoundError(
                f"agent {scope.agent_name!r} of user {scope.user_id!r} does not exist in tenant {scope.tenant!r}; "
                f"create it with mem.agents.create({scope.user_id!r}, {scope.agent_name!r})"
            )
        return info

    def create(self, scope: AgentScope, *, mode: str, max_vectors: int | None) -> AgentInfo:
        """Register the agent and create its collection if missing (idempotent; updates max_vectors)."""
        with self.lock:
            doc = self.records.get_docs(scope.tenant, REGISTRY, [scope.registry_key])[0]
            if doc is not None:
                info = AgentInfo.from_doc(doc)
                if (info.user_id, info.agent_name) != (scope.user_id, scope.agent_name):
                    raise InvalidInputError(
                        "agent_name", f"{scope.user_id}/{scope.agent_name}",
                        f"differs only in letter case from the existing agent {info.user_id}/{info.agent_name} "
                        "(collection names must be unique on case-insensitive file systems)",
                        f"use the existing spelling {info.agent_name!r} or pick another name",
                    )
                if max_vectors is not None and max_vectors != info.max_vectors:
                    info.max_vectors = max_vectors
                    self.records.put_docs(scope.tenant, REGISTRY, {scope.registry_key: info.to_doc()})
            else:
                info = AgentInfo(
                    user_id=scope.user_id, agent_name=scope.agent_name, agent_id=scope.agent_id,
                    collection=scope.collection(mode, self.prefix), collection_mode=mode,
                    max_vectors=max_vectors or 1_000_000, created_at=iso(utcnow()),
                )
            self.ensure(info, force=True)
            if doc is None:
                self.records.put_docs(scope.tenant, REGISTRY, {scope.registry_key: info.to_doc()})
                logger.info("created agent %s (collection %s, mode %s)", scope.agent_id, info.collection, mode)
        return info

    def ensure(self, info: AgentInfo, *, force: bool = False) -> None:
        """Create the agent's collection if it is missing (checked once per process unless ``force``)."""
        if info.collection in self.ensured and not force:
            return
        dim = self.embedder.dim if self.embedder is not None else None
        name = self.embedder.name if self.embedder is not None else None
        self.index.ensure_collection(info.collection, dense_dim=dim, embedder=name, bm25=self.bm25)  # type: ignore[call-arg]
        self.ensured.add(info.collection)
        if self._watch is not None:
            self._watch(info.collection)

    def optimize(self, collection: str) -> bool:
        """Build the collection's HNSW index now (recorded in ``status()``; adds do not wait on it)."""
        if self._optimize is not None:
            return self._optimize(collection)
        return self.index.optimize(collection)

    def check_optimize(self) -> None:
        """Ask the index writer to build the HNSW indexes that passed its threshold (in its thread)."""
        if self._check is not None:
            self._check()

    def list(self, tenant: str, user_id: str | None = None) -> list[AgentInfo]:
        out: list[AgentInfo] = []
        after = ""
        prefix = f"{user_id}|".casefold() if user_id else ""
        while True:
            page = self.records.list_docs(tenant, REGISTRY, prefix=prefix, after=after, limit=PAGE)
            out.extend(AgentInfo.from_doc(d) for _, d in page)
            if len(page) < PAGE:
                return [i for i in out if user_id is None or i.user_id == user_id]
            after = page[-1][0]

    def touch(self, scope: AgentScope, info: AgentInfo) -> None:
        info.last_activity = iso(utcnow())
        self.records.put_docs(scope.tenant, REGISTRY, {scope.registry_key: info.to_doc()})

    def unregister(self, scope: AgentScope, info: AgentInfo) -> int:
        """Delete everything of the agent, its collection (per-agent mode) and its registry entry."""
        with self.lock:
            removed = self.clear(scope, info)
            if info.collection_mode == "per_agent":
                self.index.drop_collection(info.collection)
                self.ensured.discard(info.collection)
            self.records.delete_docs(scope.tenant, REGISTRY, [scope.registry_key])
        return removed

    # -- writes ---------------------------------------------------------------------------------
    def points(self, scope: AgentScope, items: Sequence[Interaction], vectors: Sequence[Sequence[float]] | None) -> list[VectorPoint]:
        dense: Sequence[Sequence[float]] | None = vectors
        if dense is None and self.embedder is not None:
            dense = self.embedder.embed_documents([it.text for it in items])
        out = []
        for i, it in enumerate(items):
            out.append(VectorPoint(
                id=scope.point_id(it.interaction_id),
                payload=payload(scope, it),
                dense=list(dense[i]) if dense is not None else None,
                sparse=self.encoder.document(self.analyzer.terms(it.text)),
            ))
        return out

    def write(
        self, scope: AgentScope, info: AgentInfo, items: Sequence[Interaction], vectors: Sequence[Sequence[float]] | None = None,
        *, check_ids: bool = True,
    ) -> None:
        """Store interactions: RecordStore first, then the index; all or nothing. ``check_ids=False`` skips the
        re-used-id check (one index round trip) for ids this process generated."""
        if not items:
            return
        if vectors is not None and len(vectors) != len(items):
            raise InvalidInputError("vectors", f"<{len(vectors)} vectors>", f"needs one per interaction ({len(items)})", "pass matching lists")
        bg = self.background if vectors is None else None
        points = [] if bg is not None else self.points(scope, items, vectors)  # embedding may fail: nothing written yet
        docs = {it.key: it.to_doc() for it in items}
        with self.lock:
            current = self.info(scope)  # deleted by another handle? then refuse rather than resurrect it
            if current is None:
                self.require(scope)
            info.max_vectors = current.max_vectors  # type: ignore[union-attr]  # limits changed elsewhere apply
            self.ensure(info)
            if check_ids:
                self._check_ids(scope, info, items)
            marks = mark(self.records, scope.tenant, PENDING_KIND, [[scope.user_id, scope.agent_name, k] for k in docs]) if bg else []
            self.records.put_docs(scope.tenant, scope.docs, docs)
            try:
                if bg is not None:  # BM25 now; the writer embeds from the markers
                    targets = [Target(info.collection, scope.point_id(it.interaction_id), self.entry(scope, it)) for it in items]
                    write_sparse(self.index, targets, self.analyzer, self.encoder, bg.optimizing)
                else:
                    self.index.upsert(info.collection, points)
            except Exception:
                self.records.delete_docs(scope.tenant, scope.docs, list(docs))
                self.records.delete_docs(scope.tenant, PENDING, marks)
                raise
            self.touch(scope, info)
        if bg is not None:
            bg.notify(scope.tenant, marks, source=PENDING_KIND)
        self.check_optimize()

    def entry(self, scope: AgentScope, it: Interaction) -> Entry:
        """What the index writer embeds for an interaction: its payload and text."""
        return Entry(scope.point_id(it.interaction_id), payload(scope, it), it.text)

    def _check_ids(self, scope: AgentScope, info: AgentInfo, items: Sequence[Interaction]) -> None:
        """An interaction_id already stored under another timestamp would leave two documents for one point."""
        by_id = {scope.point_id(it.interaction_id): it for it in items}
        for hit in self.index.retrieve(info.collection, list(by_id)):
            it = by_id.get(hit.id)
            if it is not None and hit.payload.get("doc_key") not in (None, it.key):
                raise InvalidInputError(
                    "interaction_id", it.interaction_id,
                    f"is already stored with timestamp {hit.payload.get('timestamp')}",
                    "re-send it with that timestamp (idempotent), or use a new interaction_id",
                )

    def delete_keys(self, scope: AgentScope, info: AgentInfo, keys: Sequence[str]) -> int:
        """Delete documents and their points by document key: index first, so a failure leaves the truth
        intact (re-runnable), never points whose documents are gone."""
        if not keys:
            return 0
        ids = [scope.point_id(k.split("|", 1)[1]) for k in keys]
        flt, _ = scope_filter(scope, None)
        with self.lock:
            self.index.delete(info.collection, ids=ids, filter=flt)
            return self.records.delete_docs(scope.tenant, scope.docs, list(keys))

    def clear(self, scope: AgentScope, info: AgentInfo) -> int:
        flt, _ = scope_filter(scope, None)
        with self.lock:
            if self.index.has_collection(info.collection):
                self.index.delete(info.collection, filter=flt)
            return self.records.delete_docs(scope.tenant, scope.docs)

    # -- reads ----------------------------------------------------------------------------------
    def iter_docs(self, scope: AgentScope, *, after: str = "", stop: str | None = None, page: int = PAGE) -> Iterator[list[tuple[str, dict[str, Any]]]]:
        """Pages of (key, document), oldest first, with ``after < key < stop``."""
        while True:
            rows = self.records.list_docs(scope.tenant, scope.docs, after=after, limit=page)
            if stop is not None:
                rows = [r for r in rows if r[0] < stop]
            if rows:
                yield rows
            if len(rows) < page:
                return
            after = rows[-1][0]

    def count_docs(self, scope: AgentScope) -> int:
        return self.records.count_docs(scope.tenant, scope.docs)

    def count(self, scope: AgentScope, info: AgentInfo, filters: Mapping[str, Any] | None = None) -> int:
        self.ensure(info)
        flt, _ = scope_filter(scope, filters, "count")
        return self.index.count(info.collection, filter=flt)

    def oldest(self, scope: AgentScope) -> str | None:
        rows = self.records.list_docs(scope.tenant, scope.docs, limit=1)
        return rows[0][1]["timestamp"] if rows else None

    def newest(self, scope: AgentScope) -> str | None:
        """The newest timestamp, by binary search over ``list_docs(after=...)`` (about 60 indexed probes,
        a few ms): the RecordStore lists keys in ascending order only."""
        rows = self.records.list_docs(scope.tenant, scope.docs, limit=1)
        if not rows:
            return None
        lo_doc = rows[0][1]
        lo = _micros(rows[0][0])
        hi = _micros("9999-12-31T23:59:59.999999Z") + 1
        while hi - lo > 1:  # invariant: a key at lo exists, none at or after hi
            mid = (lo + hi) // 2
            probe = self.records.list_docs(scope.tenant, scope.docs, after=_key_of(mid)[:-1], limit=1)
            if probe:
                lo, lo_doc = _micros(probe[0][0]), probe[0][1]
            else:
                hi = mid
        return lo_doc["timestamp"]

    def collection(self, info: AgentInfo, settings: RetrievalSettings) -> IndexedCollection:
        """The agent's collection behind the one collection API (embedding, BM25, fusion, fallback)."""
        self.ensure(info)
        return IndexedCollection(self.index, info.collection, self.embedder, self.analyzer, self.encoder, settings, ensured=True)

    def vectors(self, scope: AgentScope, info: AgentInfo, interaction_ids: Sequence[str]) -> dict[str, list[float] | None]:
        """Stored dense vectors by interaction id (for exports with embeddings)."""
        ids = {scope.point_id(i): i for i in interaction_ids}
        out: dict[str, list[float] | None] = {i: None for i in interaction_ids}
        if not ids:
            return out
        for hit in self.index.retrieve(info.collection, list(ids), with_vectors=True):
            if hit.payload.get("tenant") == scope.key and hit.id in ids:
                out[ids[hit.id]] = hit.dense
        return out


def payload(scope: AgentScope, it: Interaction) -> dict[str, Any]:
    """Payload of an interaction point: the scope (``tenant``), the filter fields, the text."""
    return {
        "tenant": scope.key,
        "kind": POINT_KIND,
        "user_id": scope.user_id,
        "agent_name": scope.agent_name,
        "interaction_id": it.interaction_id,
        "doc_key": it.key,
        "task_id": it.task_id,
        "timestamp": iso(it.timestamp),
        "success": int(it.success),
        "interaction_type": it.interaction_type,
        "error_details": it.error_details,
        "metadata": it.metadata,
        "text": it.text,
    }


_EPOCH = datetime(1, 1, 1, tzinfo=timezone.utc)


def _micros(key: str) -> int:
    ts = datetime.strptime(key[:27], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    delta = ts - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _key_of(micros: int) -> str:
    from datetime import timedelta

    return ts_key(_EPOCH + timedelta(microseconds=micros))
