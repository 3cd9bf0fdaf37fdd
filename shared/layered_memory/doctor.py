"""Drift between the RecordStore (the truth) and what is derived from it, found and repaired.

    report = mem.doctor()                 # read only
    report = mem.doctor(repair=True)      # also repair; ``layered-memory doctor --repair`` does the same

Per tenant and kind of point (messages, topic summaries, items, agent interactions, document and
repository chunks: ``documents.health``, which also counts documents, repository files, collections
and repositories, and ``stale`` chunks of an interrupted write) the report counts
records, points, ``pending`` (records pending for the index writer: written, their point not complete
yet; the normal index lag, not drift), ``missing`` (records without their point and without a pending
marker: drift) and ``orphans`` (points whose record is gone with nothing pending: deleted text that
search would still return); messages also count ``stale`` points (their payload hash is not the stored
text's: an edit whose re-index another process's writer raced; repaired by indexing them again, and
counted in ``missing`` too). ``pending`` in the report's top level sums the writer's pending records
of messages, topic summaries, items and agents (a document's ``pending`` is an interrupted write: a
delete intent, counted in ``outbox``).
For the topic tier it counts ``unthreaded`` messages (stored, neither threaded nor queued) and topics
whose ``message_count`` differs from their membership rows; ``outbox`` counts the delete (and edit)
intents not yet finished (``index.intents``; the report's key keeps its first name). Every repair is idempotent: run it twice, the second run finds nothing.
``upgrade`` says what an index created by an older release lacks and how to add it (None when nothing:
today a message collection from before the ``mean`` vector, schema 3); it is not drift. Nor is ``bm25``:
the collections whose sparse vectors were written with other BM25 terms or settings than this engine's
(``bm25_markers``: an analyzer change of a newer release, or a changed ``retrieval.k1``...), with what
differs. Queries still match those vectors by the terms they hold; a re-index rewrites them.

Each kind brings its own part (``kinds.Kind``, in its tier's folder: ``message_health``,
``topics/health``, ``items/health``, ``agents/health``, ``documents/health``; registered in
``runtime._kinds``): its check, its cheap check at open, its reindex, and the intents it finishes. This
module loops over them.

``open_check`` runs when a store is opened: it finishes the delete intents, indexes pending messages, compares
counts per kind (a few cheap requests) and repairs a kind whose counts disagree (an index that is
behind, e.g. a deleted ``vectors/`` directory, or ahead, e.g. after a Redis data loss), with a
warning that says what was found. A tenant without a single message record but with message points
(a wiped or a wrong record store: a typo in the Redis URL must not wipe the index) is only reported,
with the command that repairs it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._lazy import qdrant_models as models
from .index import Scope
from .index.intents import INTENTS, drop_intent
from .kinds import Suspect
from .retrieval.bm25 import marker, marker_change
from .stores.base import iter_docs

if TYPE_CHECKING:
    from .config import LayeredMemorySettings
    from .kernel import Kernel, Kind
    from .stores.base import RecordStore

logger = logging.getLogger(__name__)

PAGE = 1000
BM25_DOCS = "index_bm25"  # per tenant, {collection: {"bm25": marker}}: the collections a re-index of the tenant rewrote


@dataclass(frozen=True)
class Tenant:
    """One tenant of one engine's runtime: the unit the doctor checks and repairs (the whole tenant,
    never a bound user's part of it)."""

    core: Kernel
    tenant_id: str

    @property
    def records(self) -> Any:
        return self.core.records

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant_id)


def _docs(tn: Tenant, collection: str, prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    return iter_docs(tn.records, tn.tenant_id, collection, prefix=prefix, page=PAGE)


# -- the delete intents -----------------------------------------------------------------------------
def drain_intents(tn: Tenant) -> int:
    """Finish every delete intent of the tenant (see ``index.intents``), each by the kind that wrote it
    (``Kind.intents``). Returns how many were finished."""
    core = tn.core
    finisher = {op: kind for kind in core.kinds for op in kind.intents}
    done = 0
    with core.write_lock:
        for key, doc in list(_docs(tn, INTENTS)):
            kind = finisher.get(doc.get("op"))
            if kind is not None:
                kind.drain(tn.tenant_id, doc)
            else:
                logger.warning("delete intents of tenant %s: unknown intent %r dropped", tn.tenant_id, doc.get("op"))
            drop_intent(core.records, tn.tenant_id, key)
            done += 1
    if done:
        logger.info("finished %d delete intents of tenant %s", done, tn.tenant_id)
    return done


def derived_collections(kinds: Iterable[type[Kind]], records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
    """Every vector collection derived from the records, of every kind and tenant (``recreate_index`` drops
    them all, before the engine's services are built)."""
    return {name for kind in kinds for name in kind.collections(records, settings)}


def reindex(tn: Tenant) -> int:
    """``mem.reindex()``: every kind re-created from the records, orphans removed. Returns the count."""
    core = tn.core
    if core.index is None:
        return 0
    with core.write_lock:
        if tn.records.count_docs(tn.tenant_id, INTENTS):
            drain_intents(tn)
    n = sum(kind.reindex(tn.tenant_id) for kind in core.kinds)
    current = {"bm25": marker(core.settings.retrieval)}  # every point of this tenant is written with it now
    tn.records.put_docs(tn.tenant_id, BM25_DOCS, {name: current for name in _collections(core)})
    check(tn, repair=True)  # orphans of items, summaries and agents; topic counters; the BM25 markers
    return n


def _collections(core: Kernel) -> list[str]:
    """The derived collections of every tenant that exist in the vector index."""
    index = core.index
    names = derived_collections(core.kinds, core.records, core.settings)
    return sorted(name for name in names if index is not None and index.has_collection(name))


def bm25_markers(core: Kernel, *, tenants: bool = True) -> dict[str, str]:
    """{collection: what differs} of the collections whose sparse vectors were written with other BM25 terms
    or settings than ``retrieval.bm25.marker`` of this engine. A collection whose every point is known to be
    current is recorded as current instead: it holds none, or (``tenants``: a record read per tenant) only points
    of tenants re-indexed since (each re-index leaves a ``BM25_DOCS`` record per collection; their counts must
    add up to the collection's)."""
    index = core.index
    if index is None:
        return {}
    current = marker(core.settings.retrieval)
    stale: dict[str, str] = {}
    for name in _collections(core):
        change = marker_change(index.info(name)["schema"].get("bm25"), current)
        if change is None:
            continue
        total = index.count(name)
        if total and (not tenants or _rewritten(core, name, current) < total):
            stale[name] = change
            continue
        try:  # a fact, not a repair: a store that cannot write its marker (a read-only key) still opens and reports
            index.set_bm25(name, current)
        except Exception as exc:
            logger.warning("could not record the BM25 marker of collection %s (%s: %s)", name, type(exc).__name__, exc)
            continue
        logger.info("recorded the BM25 marker of collection %s (%d points, all written with it)", name, total)
    return stale


def _rewritten(core: Kernel, name: str, current: dict[str, Any]) -> int:
    """How many points of collection ``name`` belong to tenants re-indexed with the ``current`` marker."""
    n = 0
    for tenant in core.records.tenants():
        doc = core.records.get_docs(tenant, BM25_DOCS, [name])[0]
        if doc is not None and doc.get("bm25") == current:
            n += core.index.count(name, filter=_tenant_filter(tenant))  # type: ignore[union-attr]
    return n


def warn_bm25(core: Kernel) -> dict[str, str]:
    """``bm25_markers`` at open (one ``info`` per collection, no read per tenant: a re-index records what it rewrote
    itself): one warning per collection written with other BM25 terms or settings, with the fix."""
    stale = bm25_markers(core, tenants=False)
    for name, change in stale.items():
        logger.warning(
            "collection %r: %s. Searches still match those vectors by the terms they hold; re-index to rewrite them: "
            "`layered-memory reindex` (mem.reindex()) for one tenant, `layered-memory reindex --recreate` for all",
            name, change,
        )
    return stale


def _tenant_filter(tenant: str) -> Any:
    return models.Filter(must=[models.FieldCondition(key="tenant", match=models.MatchValue(value=tenant))])


# -- the whole check --------------------------------------------------------------------------------------
def check(tn: Tenant, *, repair: bool = False) -> dict[str, Any]:
    """The full report of one tenant (see the module docstring); with ``repair`` the drift is repaired and
    the report says what was found before the repair (``ok`` is then the state after it)."""
    kinds = tn.core.kinds
    intents = tn.records.count_docs(tn.tenant_id, INTENTS)
    if repair and intents:
        drain_intents(tn)
    report: dict[str, Any] = {"tenant": tn.tenant_id, "outbox": intents}  # the delete intents, under their first name
    for kind in kinds:
        report[kind.name] = kind.check(tn.tenant_id, repair)
    report["pending"] = sum(report[k.name].get("pending", 0) for k in kinds if k.writer)  # the index lag, apart from drift
    if repair and report["pending"] and tn.core.deferred:
        tn.core.background.notify(tn.tenant_id)  # type: ignore[union-attr]  # the writer indexes them (e.g. left by a crash)
    report["upgrade"] = tn.core.searcher.coll.upgrade()  # not drift: what an older release's index lacks
    report["bm25"] = bm25_markers(tn.core)  # not drift either: sparse vectors of other BM25 terms or settings
    drift = bool(intents) or any(k.drifted(report[k.name]) for k in kinds)
    report["ok"] = not drift
    if repair and drift:
        report["repaired"] = True
        report["ok"] = check(tn)["ok"]  # the state after the repair
    return report


def open_check(tn: Tenant, *, repair: bool = True) -> dict[str, Any]:
    """The check run when a store opens: cheap counts per kind; a kind whose counts disagree is checked in
    full and (with ``repair``) repaired, with a warning. Returns {kind: report} of the drifting kinds."""
    core = tn.core
    found: dict[str, Any] = {}
    intents = core.records.count_docs(tn.tenant_id, INTENTS)
    if intents:
        if repair:
            drain_intents(tn)
        found["outbox"] = intents
    if core.index is None:
        return _warn(tn, found, repair)
    for kind in core.kinds:
        try:
            part = kind.at_open(tn.tenant_id, repair)
        except Suspect as exc:  # e.g. points without a single record: reported, never repaired on a guess
            found[kind.name] = exc.report
            return _warn(tn, found, False)
        if part is not None:
            found[kind.name] = part
    return _warn(tn, found, repair)


def _warn(tn: Tenant, found: dict[str, Any], repair: bool) -> dict[str, Any]:
    """One warning per tenant: what drifted, and either "repaired" or the command that repairs it."""
    if found:
        what = "; ".join(f"{k}: {v}" for k, v in found.items())
        if repair:
            logger.warning("the vector index of tenant %s was out of line with the record store (%s); repaired", tn.tenant_id, what)
        else:
            logger.warning(
                "the vector index of tenant %s is out of line with the record store (%s); run `layered-memory --tenant %s "
                "doctor --repair` or mem.tenant(%r).doctor(repair=True)", tn.tenant_id, what, tn.tenant_id, tn.tenant_id,
            )
    return found
