"""The documents kind (``kinds.Kind``): document and repository chunks against their points, per tenant.

    DocumentKind(core).check("acme", repair=False)     # check_documents(core, "acme", repair=False)
    # {"records": 120, "points": 118, "missing": 2, "orphans": 0, "stale": 0, "pending": 0,
    #  "documents": 9, "repo_files": 31, "collections": 2, "repos": 1}

``records`` counts chunk records; a chunk is expected as a point when its key carries its source's
committed version (``SourceStore.replace``). ``stale`` counts chunk records of another version or of a
source that is gone (a write stopped between its steps), ``missing`` committed chunks without a point,
``orphans`` points without a committed chunk, ``pending`` interrupted document writes (their delete
intents). Repair drops the orphan points, then lets ``SourceStore.repair`` of each affected source drop
its stale chunks and re-create its missing points from the records (the same repair finishing the intent
runs): idempotent, nothing re-embedded that has a point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ..index import Scope
from ..index.intents import INTENTS
from ..index.points import point_id, scope_filter, scroll_all
from ..kinds import BaseKind
from ..stores.base import RecordStore, iter_docs
from .store import CHUNKS, CODE_KIND, DOC_KIND, REPOS, SOURCES, VECTORS, SourceStore

if TYPE_CHECKING:
    from ..config import LayeredMemorySettings
    from ..kernel import Kernel

PAGE = 1000


def _store(core: Kernel, tenant: str, key: str) -> SourceStore:
    token = key.split("!", 1)[0]
    scope = Scope(tenant)
    return SourceStore(core, scope if token == "*" else scope.narrow(unquote(token)))


def check_documents(core: Kernel, tenant: str, repair: bool = False) -> dict[str, int]:
    """Counts (see the module docstring); with ``repair`` the drift is repaired."""
    records = core.records
    sources = {k: d for k, d in iter_docs(records, tenant, SOURCES, page=PAGE)}
    expected: dict[str, str] = {}  # point id -> the source key
    stale: set[str] = set()  # source keys with chunk records of another version (or no source)
    n_chunks = n_stale = 0
    for key, _ in iter_docs(records, tenant, CHUNKS, page=PAGE):
        n_chunks += 1
        skey, _, rest = key.rpartition("#")
        src = sources.get(skey)
        if src is None or not rest.startswith(f"{src.get('version')}:"):
            stale.add(skey)
            n_stale += 1
        else:
            expected[point_id(tenant, src.get("kind", DOC_KIND), key)] = skey
    pending = sum(1 for _, d in iter_docs(records, tenant, INTENTS, page=PAGE) if d.get("op") == "doc")
    out = {
        "records": n_chunks, "points": 0, "missing": 0, "orphans": 0, "stale": n_stale, "pending": pending,
        "documents": sum(1 for d in sources.values() if d.get("kind", DOC_KIND) == DOC_KIND),
        "repo_files": sum(1 for d in sources.values() if d.get("kind") == CODE_KIND),
        "collections": len({d.get("collection") for d in sources.values() if d.get("kind", DOC_KIND) == DOC_KIND}),
        "repos": records.count_docs(tenant, REPOS),
    }
    coll = core.settings.qdrant.collection_prefix + VECTORS
    actual: set[str] = set()
    if core.index is not None and core.index.has_collection(coll):
        for kind in (DOC_KIND, CODE_KIND):
            for hits in scroll_all(core.index, coll, scope_filter(tenant, kind)):
                actual.update(h.id for h in hits)
    missing = {skey for p, skey in expected.items() if p not in actual} if core.index is not None else set()
    orphans = sorted(actual - set(expected))
    out.update(points=len(actual), missing=sum(1 for p in expected if p not in actual) if core.index is not None else 0,
               orphans=len(orphans))
    if repair and (orphans or missing or stale):
        with core.write_lock:
            if orphans:
                core.index.delete(coll, ids=orphans)  # type: ignore[union-attr]
        for skey in sorted(missing | stale):
            _store(core, tenant, skey).repair(skey)
    return out


def counts_differ(core: Kernel, tenant: str) -> bool:
    """The cheap check at open: chunk records against points (two counts)."""
    coll = core.settings.qdrant.collection_prefix + VECTORS
    n_records = core.records.count_docs(tenant, CHUNKS)
    if core.index is None or not core.index.has_collection(coll):
        return False if core.index is None else n_records > 0
    n_points = sum(core.index.count(coll, filter=scope_filter(tenant, kind)) for kind in (DOC_KIND, CODE_KIND))
    return n_points != n_records


class DocumentKind(BaseKind):
    """Chunks are written by ``mem.documents`` itself (nothing pending for the writer); its ``pending`` counts
    interrupted writes (intents ``doc``), which the drain finishes (``SourceStore.repair``)."""

    name = "documents"
    intents = ("doc",)

    @classmethod
    def collections(cls, records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
        return {settings.qdrant.collection_prefix + VECTORS}

    def drain(self, tenant: str, intent: Mapping[str, Any]) -> None:
        owner, scope = intent.get("owner"), Scope(tenant)
        SourceStore(self.core, scope.narrow(owner) if owner else scope).repair(intent["skey"])

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        return check_documents(self.core, tenant, repair)

    def at_open(self, tenant: str, repair: bool) -> dict[str, int] | None:
        if counts_differ(self.core, tenant):
            part = check_documents(self.core, tenant, repair)
            if self.drifted(part):
                return part
        return None

    def reindex(self, tenant: str) -> int:
        if not self.core.records.count_docs(tenant, CHUNKS):
            return 0
        return SourceStore(self.core, Scope(tenant)).reindex()


__all__ = ["DocumentKind", "check_documents", "counts_differ"]
