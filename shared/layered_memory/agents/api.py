"""The agent context store (seed 004): ``mem.agents`` and the ``Agent`` handle.

    agent = mem.agents.create("123", "coder", max_vectors=100_000)
    agent.add_interaction("ran pytest: 3 failures in test_io", task_id="t-17", interaction_type="tool_call",
                          success=False, error_details="AssertionError in test_io.py:42")
    hits = agent.search("failing io tests", k=5, filters={"success": False})
    agent.prune(days=30); agent.stats(period_days=14); agent.export_to("coder.json")

An ``Agent`` is bound to one (tenant, user_id, agent_name) scope; it has no parameter that names
another scope, and the scope condition is added below it in ``store.AgentStore``. Collections:
``collection_mode="per_agent"`` (default, the seed's ``user{user_id}_{agent_name}_context``) or
``"shared"`` (one collection, the scope as a tenant-indexed payload value, for many thousands of
agents). The mode is stored per agent, so existing agents keep theirs.

Every public operation has an async twin (``acreate``, ``aadd_interaction``, ``asearch``, ...).
"""

from __future__ import annotations

import logging
import math
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import IO, TYPE_CHECKING, Any

from .._async import async_twins
from ..errors import CapabilityError, InvalidInputError
from ..models import SearchHit, SearchResult, iso, parse_time, utcnow
from ..retrieval.plan import MAX_K, ROUTES, normalize_queries
from ..retrieval.snippet import make_snippet
from .models import (
    DEFAULT_MAX_VECTORS,
    AgentInfo,
    AgentScope,
    Interaction,
    check_max_vectors,
    check_mode,
)
from .store import AgentStore, check_filters, doc_matches, key_range, scope_filter, scope_spec

if TYPE_CHECKING:
    from ..index import Scope
    from ..kernel import Kernel
    from .monitor import AgentSizeMonitor

logger = logging.getLogger(__name__)


@dataclass
class AgentRuntime:
    """Per-engine state of the agent store (``Runtime.agents`` builds it on first use)."""

    store: AgentStore
    default_mode: str = "per_agent"
    monitors: list[Any] = field(default_factory=list)

    @classmethod
    def build(cls, core: Kernel) -> AgentRuntime:
        if core.index is None:
            raise CapabilityError(
                "the agent context store needs a vector index (seed 004 keeps interactions in Qdrant); "
                "use LayeredMemory.embedded(path) or pass qdrant_url= to LayeredMemory.from_urls"
            )
        return cls(AgentStore(
            core.records, core.index, core.embedder, core.analyzer, core.indexer.encoder,
            collection_prefix=core.settings.qdrant.collection_prefix, lock=core.write_lock, background=core.background,
            deferred=core.deferred, bm25=core.indexer.bm25,
        ))


def _check_vectors(vectors: Any, n: int) -> list[list[float]]:
    """Precomputed embeddings: one finite float vector per item."""
    if isinstance(vectors, (str, bytes, Mapping)) or not isinstance(vectors, Sequence) or len(vectors) != n:
        raise InvalidInputError("vectors", vectors, f"must be a list of {n} vectors, one per item", "pass vectors=None to embed")
    out = []
    for v in vectors:
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in v
        ):
            raise InvalidInputError("vectors", v, "every vector is a list of finite numbers", "pass the embedder's output")
        out.append([float(x) for x in v])
    return out


def _merge_filters(filters: Mapping[str, Any] | None, **named: Any) -> dict[str, Any]:
    out = dict(check_filters(filters, "search"))
    for name, value in named.items():
        if value is not None:
            if name in out and out[name] != value:
                raise InvalidInputError(name, value, f"conflicts with filters[{name!r}]={out[name]!r}", "pass it once")
            out[name] = value
    return out


@async_twins
class Agents:
    """``mem.agents``: create, open, list, delete and import agents; build the size monitor."""

    _ASYNC = ("create", "get", "list", "delete", "import_from")

    def __init__(self, core: Kernel, scope: Scope) -> None:
        self._runtime = core
        self._handle = scope

    @property
    def tenant(self) -> str:
        return self._handle.tenant

    @property
    def bound_user(self) -> str | None:
        return self._handle.bound_user

    @property
    def store(self) -> AgentStore:
        return self._runtime.agents.store

    def _scope(self, user_id: str, agent_name: str) -> AgentScope:
        user = self._handle.user(user_id)
        return AgentScope.of(self._handle.tenant, user, agent_name)

    def configure(self, *, collection_mode: str = "per_agent") -> None:
        """Default collection mode for agents created from now on by this engine ("per_agent" | "shared")."""
        self._runtime.agents.default_mode = check_mode(collection_mode)

    def create(self, user_id: str, agent_name: str, *, max_vectors: int | None = None, collection_mode: str | None = None) -> Agent:
        """Register an agent and create its collection if missing (idempotent).

        Args:
            user_id, agent_name: 1-60 / 1-40 ASCII letters, digits or '-' (see ``agents.models``).
            max_vectors: the size limit (default 1,000,000); given again, it updates the limit.
            collection_mode: "per_agent" (default) or "shared"; an existing agent keeps its mode.

        Raises:
            InvalidInputError: a bad name, or one that differs only in case from an existing agent.

        Example::

            coder = mem.agents.create("123", "coder", max_vectors=50_000)
        """
        scope = self._scope(user_id, agent_name)
        state = self._runtime.agents
        mode = check_mode(collection_mode or state.default_mode)
        limit = check_max_vectors(max_vectors) if max_vectors is not None else None
        info = state.store.create(scope, mode=mode, max_vectors=limit)
        if info.collection_mode != mode and collection_mode is not None:
            logger.warning("agent %s keeps its collection mode %s (asked %s)", scope.agent_id, info.collection_mode, mode)
        return Agent(self._runtime, scope, info)

    def get(self, user_id: str, agent_name: str) -> Agent:
        """The handle of an existing agent. Raises NotFoundError (with the fix) when it was never created."""
        scope = self._scope(user_id, agent_name)
        return Agent(self._runtime, scope, self.store.require(scope))

    def list(self, user_id: str | None = None) -> list[AgentInfo]:
        """Registered agents of this tenant (of one user when given, or of the bound user)."""
        user = self._handle.owner(None if user_id is None else str(user_id))  # "" is refused, never "all users"
        return self.store.list(self._handle.tenant, user)

    def delete(self, user_id: str, agent_name: str) -> int:
        """Delete an agent: its interactions, its collection (per-agent mode) and its registration.
        Returns how many interactions were removed."""
        agent = self.get(user_id, agent_name)
        return self.store.unregister(agent.scope, agent.info)

    def import_from(
        self, source: str | IO[str], *, user_id: str | None = None, agent_name: str | None = None,
        max_vectors: int | None = None, collection_mode: str | None = None,
    ) -> Agent:
        """Restore an agent from an ``export_to`` file (a path or a text file object), streamed page by page.

        The agent is the file's unless ``user_id`` / ``agent_name`` are given (restore under another
        name). Embeddings in the file are reused when they come from the configured embedder; otherwise
        the texts are embedded again. Idempotent: importing the same file twice stores each interaction once.
        """
        from .export import read_export

        header, pages = read_export(source)
        agent = self.create(
            user_id or header["user_id"], agent_name or header["agent_name"],
            max_vectors=max_vectors, collection_mode=collection_mode,
        )
        emb = self._runtime.embedder
        reuse = emb is not None and header.get("embedder") == emb.name
        n = 0
        for page in pages:
            items = [Interaction.build({k: v for k, v in row.items() if k != "embedding"}) for row in page]
            vectors = [row.get("embedding") for row in page] if reuse else None
            if vectors is not None and any(v is None or len(v) != emb.dim for v in vectors):  # type: ignore[union-attr]
                vectors = None
            agent._add(items, vectors, enforce=False)
            n += len(items)
        agent.enforce_limit()
        logger.info("imported %d interactions into agent %s", n, agent.scope.agent_id)
        return agent

    def monitor(self, **options: Any) -> AgentSizeMonitor:
        """The periodic size monitor for this tenant's agents (see ``agents.monitor.AgentSizeMonitor``)."""
        from .monitor import AgentSizeMonitor

        mon = AgentSizeMonitor(self, **options)
        self._runtime.agents.monitors.append(weakref.ref(mon))
        return mon


@async_twins
class Agent:
    """One agent's context: write, search, manage, export and measure only this agent's interactions."""

    _ASYNC = (
        "add_interaction", "add_interactions", "search", "list_interactions", "count", "clear", "prune",
        "enforce_limit", "set_max_vectors", "stats", "export", "export_to", "reindex", "refresh", "optimize",
    )

    def __init__(self, core: Kernel, scope: AgentScope, info: AgentInfo) -> None:
        self._runtime = core
        self.scope = scope
        self.info = info

    def __repr__(self) -> str:
        return f"Agent({self.scope.user_id!r}, {self.scope.agent_name!r}, collection={self.info.collection!r})"

    @property
    def _store(self) -> AgentStore:
        return self._runtime.agents.store

    @property
    def user_id(self) -> str:
        return self.scope.user_id

    @property
    def agent_name(self) -> str:
        return self.scope.agent_name

    @property
    def agent_id(self) -> str:
        return self.scope.agent_id

    @property
    def collection(self) -> str:
        return self.info.collection

    @property
    def max_vectors(self) -> int:
        return self.info.max_vectors

    def refresh(self) -> AgentInfo:
        """Re-read the registration (another handle may have changed max_vectors)."""
        self.info = self._store.require(self.scope)
        return self.info

    # -- writes ---------------------------------------------------------------------------------
    def add_interaction(
        self, text: str, *, interaction_type: str = "task_execution", task_id: str | None = None,
        timestamp: datetime | str | None = None, success: bool = True, error_details: str | None = None,
        metadata: Mapping[str, Any] | None = None, interaction_id: str | None = None,
    ) -> Interaction:
        """Store one interaction with its embedding and BM25 vector (durable before it returns).

        Args:
            text: what happened. interaction_type: task_execution | tool_call | user_message | agent_response.
            task_id: the task it belongs to. timestamp: aware datetime or ISO string (default now).
            success: False for a failure, with ``error_details``. interaction_id: for idempotent retries.

        Raises:
            InvalidInputError: a field breaks a rule (nothing is written).

        Example::

            agent.add_interaction("called search_docs('qdrant')", interaction_type="tool_call", task_id="t1")
        """
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError("metadata", metadata, "must be a dict", 'pass e.g. metadata={"tool": "pytest"}')
        data: dict[str, Any] = {
            "text": text, "interaction_type": interaction_type, "task_id": task_id, "success": success,
            "error_details": error_details, "metadata": dict(metadata or {}),
        }
        if timestamp is not None:
            data["timestamp"] = timestamp
        if interaction_id is not None:
            data["interaction_id"] = interaction_id
        return self.add_interactions([data])[0]

    def add_interactions(
        self, items: Iterable[Mapping[str, Any] | Interaction], *, vectors: Sequence[Sequence[float]] | None = None
    ) -> list[Interaction]:
        """Store a batch (all or nothing; embedded in one batch). ``vectors``: precomputed embeddings from
        the configured embedder, one per item (bulk loads, restores). Enforces ``max_vectors`` afterwards
        by deleting the oldest interactions."""
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
            raise InvalidInputError("items", items, "must be a list of dicts or Interactions", "wrap one item in a list")
        raw = list(items)
        batch = [Interaction.build(dict(i) if isinstance(i, Mapping) else i) for i in raw]
        if vectors is not None:
            vectors = _check_vectors(vectors, len(batch))
        given_ids = any(not isinstance(i, Mapping) or i.get("interaction_id") is not None for i in raw)
        self._add(batch, vectors, enforce=True, check_ids=given_ids)
        return batch

    def _add(self, batch: list[Interaction], vectors: Sequence[Sequence[float]] | None, *, enforce: bool, check_ids: bool = True) -> None:
        if not batch:
            return
        seen: set[str] = set()
        for it in batch:
            if it.interaction_id in seen:
                raise InvalidInputError("interaction_id", it.interaction_id, "occurs twice in one batch", "make ids unique")
            seen.add(it.interaction_id)
        self._store.write(self.scope, self.info, batch, vectors, check_ids=check_ids)
        if enforce:
            self.enforce_limit()

    def enforce_limit(self) -> int:
        """Delete the oldest interactions until at most ``max_vectors`` remain. Returns how many were removed."""
        n = self._store.count_docs(self.scope)
        excess = n - self.info.max_vectors
        if excess <= 0:
            return 0
        removed = self._delete_oldest(excess)
        logger.info("agent %s over max_vectors=%d: removed the %d oldest", self.agent_id, self.info.max_vectors, removed)
        return removed

    def _delete_oldest(self, n: int) -> int:
        removed = 0
        for page in self._store.iter_docs(self.scope, page=min(1000, max(n, 1))):
            keys = [k for k, _ in page][: n - removed]
            removed += self._store.delete_keys(self.scope, self.info, keys)
            if removed >= n:
                break
        return removed

    def set_max_vectors(self, max_vectors: int) -> int:
        """Change the limit and enforce it now. Returns how many interactions were removed."""
        self.info = self._store.create(self.scope, mode=self.info.collection_mode, max_vectors=check_max_vectors(max_vectors))
        return self.enforce_limit()

    def clear(self) -> int:
        """Delete every interaction of this agent (its vectors and documents). Returns how many were removed."""
        n = self._store.clear(self.scope, self.info)
        logger.info("cleared agent %s: %d interactions", self.agent_id, n)
        return n

    def prune(self, days: float | None = None, *, filter: Mapping[str, Any] | None = None) -> int:
        """Delete interactions older than ``days`` and/or matching ``filter`` (both: AND).

        Args:
            days: remove interactions with a timestamp before now - days.
            filter: agent filters, e.g. ``{"success": False}``, ``{"interaction_type": "tool_call"}``,
                ``{"timestamp_to": "2024-06-01T00:00:00Z"}``.

        Returns:
            How many interactions were removed.

        Raises:
            InvalidInputError: neither days nor a non-empty filter (that would delete everything: use
                ``clear()``), a negative ``days``, or an unknown / scope-naming filter.
        """
        flt = check_filters(filter, "prune")
        if days is None and not flt:
            raise InvalidInputError(
                "prune", {"days": days, "filter": filter}, "needs days=N or a non-empty filter (an empty one would delete everything)",
                "pass days=30 or filter={'success': False}, or call clear() to delete everything",
            )
        if days is not None:
            if isinstance(days, bool) or not isinstance(days, (int, float)) or not 0 <= days < math.inf:
                raise InvalidInputError("days", days, "must be a finite number >= 0", "e.g. prune(days=30)")
            try:
                cutoff = utcnow() - timedelta(days=days)
            except OverflowError:  # before year 1: nothing is that old
                return 0
            prev = flt.get("timestamp_to")
            if prev is None or parse_time("filters.timestamp_to", prev) > cutoff:
                flt["timestamp_to"] = cutoff - timedelta(microseconds=1)  # strictly older than the cutoff
        _, normalized = scope_filter(self.scope, flt, "prune")
        after, stop = key_range(normalized)
        removed = 0
        for page in self._store.iter_docs(self.scope, after=after, stop=stop):
            keys = [k for k, d in page if doc_matches(d, normalized)]
            removed += self._store.delete_keys(self.scope, self.info, keys)
        logger.info("pruned agent %s (days=%s, filter=%s): %d removed", self.agent_id, days, sorted(flt), removed)
        return removed

    def reindex(self) -> int:
        """Rebuild this agent's points from the RecordStore (after a lost index or an embedder change of the
        same size). Returns how many interactions were indexed."""
        n = 0
        for page in self._store.iter_docs(self.scope, page=256):
            items = [Interaction.from_doc(d) for _, d in page]
            points = self._store.points(self.scope, items, None)
            with self._store.lock:
                self._store.ensure(self.info)
                self._store.index.upsert(self.info.collection, points)
            n += len(items)
        return n

    def optimize(self) -> bool:
        """Build the HNSW graph and merge segments of this agent's collection (Qdrant Edge; the shared collection
        in shared mode). Maintenance only: it blocks for seconds (10k points) to minutes (100k) and is never run
        on the request path; without it search is exact, which stays fast for filtered queries. Returns True
        when anything changed; False on backends that optimize by themselves (a Qdrant server)."""
        self._store.ensure(self.info)
        return self._store.optimize(self.info.collection)

    # -- reads ----------------------------------------------------------------------------------
    def count(self, filters: Mapping[str, Any] | None = None) -> int:
        """How many vectors this agent has (matching ``filters`` when given), counted in the index."""
        return self._store.count(self.scope, self.info, filters)

    def list_interactions(self, *, filters: Mapping[str, Any] | None = None, limit: int = 100) -> list[Interaction]:
        """Interactions oldest first from the RecordStore (the source of truth), at most ``limit``."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidInputError("limit", limit, "must be an int >= 1", "pass e.g. limit=100")
        _, normalized = scope_filter(self.scope, filters, "list")
        after, stop = key_range(normalized)
        out: list[Interaction] = []
        for page in self._store.iter_docs(self.scope, after=after, stop=stop):
            out.extend(Interaction.from_doc(d) for _, d in page if doc_matches(d, normalized))
            if len(out) >= limit:
                break
        return out[:limit]

    def search(
        self, query: str, *, k: int = 10, filters: Mapping[str, Any] | None = None, interaction_type: str | Sequence[str] | None = None,
        success: bool | None = None, since: datetime | str | None = None, until: datetime | str | None = None,
        task_id: str | None = None, route: str = "hybrid", query_vector: Sequence[float] | None = None,
    ) -> SearchResult:
        """Hybrid search (dense + BM25 fused by RRF inside Qdrant) over this agent's interactions only.

        Args:
            query: the task or question. k: 1..100 hits.
            filters / interaction_type / success / since / until / task_id: metadata filters applied
                inside the index (``since``/``until`` = ``timestamp_from``/``timestamp_to``).
            route: "hybrid" | "bm25" | "dense". query_vector: a precomputed query embedding.

        Returns:
            SearchResult: hits (id = interaction_id, meta: task_id, interaction_type, success, timestamp,
            error_details, metadata) and timings in ms (``embed`` apart from ``retrieve``).

        Example::

            agent.search("deploy failed", k=5, success=False, since="2024-06-01T00:00:00Z")
        """
        t_start = time.perf_counter()
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise InvalidInputError("k", k, f"must be an integer from 1 to {MAX_K}", "pass e.g. k=10")
        if route not in ROUTES:
            raise InvalidInputError("route", route, f"must be one of {', '.join(ROUTES)}", 'use route="hybrid"')
        text = normalize_queries(query, max_chars=self._runtime.settings.retrieval.max_query_chars)[0] if isinstance(query, str) else None
        if text is None:
            raise InvalidInputError("query", query, "must be one non-blank string", "pass the task or question text")
        merged = _merge_filters(filters, interaction_type=interaction_type, success=success, timestamp_from=since, timestamp_to=until, task_id=task_id)
        spec, _ = scope_spec(self.scope, merged)
        vector = [float(x) for x in query_vector] if query_vector is not None else None
        found = self._store.collection(self.info, self._runtime.settings.retrieval).query(text, spec, k=k, route=route, vector=vector)
        hits, route, fallback, timings = found.hits, found.route_used, found.fallback_reason, dict(found.timings)
        analyzer = self._store.analyzer
        terms = sorted(set(analyzer.terms(text)))
        out = []
        for h in hits:
            p = h.payload
            if p.get("tenant") != self.scope.key:  # defence in depth: never hand out another scope's point
                logger.error("agent %s: index returned a point of another scope; dropped", self.agent_id)
                continue
            meta = {f: p.get(f) for f in ("task_id", "interaction_type", "timestamp", "error_details", "metadata")}
            meta["success"] = bool(p.get("success"))
            out.append(SearchHit(id=p["interaction_id"], score=h.score, text=p.get("text", ""),
                                 snippet=make_snippet(p.get("text", ""), terms, analyzer), meta=meta))
        timings["total"] = round((time.perf_counter() - t_start) * 1000, 3)
        result = SearchResult(hits=out, total_found=len(out), route_used=route, queries=[text], timings=timings)
        if fallback:
            result.fallback_reason = fallback
        logger.info("agent search %s route=%s hits=%d in %.1f ms", self.agent_id, route, len(out), timings["total"])
        return result

    def stats(self, *, period_days: int | None = None, since: datetime | str | None = None,
              until: datetime | str | None = None, granularity: str = "day") -> dict[str, Any]:
        """total_vectors, collection_size_mb, oldest/newest_interaction, by_type, success_rate, and with a
        period (``period_days`` back from now, or ``since``/``until``) per-day or per-week aggregates.
        See ``agents.stats.agent_stats``."""
        from .stats import agent_stats

        return agent_stats(self._store, self.scope, self.info, period_days=period_days, since=since, until=until, granularity=granularity)

    def export(self, *, include_embeddings: bool = False, since: datetime | str | None = None,
               until: datetime | str | None = None, interaction_type: str | Sequence[str] | None = None) -> dict[str, Any]:
        """The export as a dict (agent_id, export_date, total_interactions, interactions[]). For large agents
        use ``export_to`` (streamed)."""
        import io
        import json

        buf = io.StringIO()
        self.export_to(buf, include_embeddings=include_embeddings, since=since, until=until, interaction_type=interaction_type)
        return json.loads(buf.getvalue())

    def export_to(self, dest: str | IO[str], *, include_embeddings: bool = False, since: datetime | str | None = None,
                  until: datetime | str | None = None, interaction_type: str | Sequence[str] | None = None) -> int:
        """Write the export JSON to a path or a text file object, page by page (bounded memory).
        Returns total_interactions. Filters: ``since``/``until`` (date range) and ``interaction_type``."""
        from .export import write_export

        core = self._runtime
        if include_embeddings and core.deferred:  # the vectors of recent adds: wait for the index writer (not on a failing embedder)
            core.background.settle()  # type: ignore[union-attr]
        return write_export(self._store, self.scope, self.info, dest, include_embeddings=include_embeddings, since=since, until=until,
                            interaction_type=interaction_type)


__all__ = ["Agent", "Agents", "AgentInfo", "Interaction", "DEFAULT_MAX_VECTORS", "iso"]
