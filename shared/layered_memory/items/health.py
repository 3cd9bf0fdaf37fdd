"""The items kind (``kinds.Kind``): item records against their points, and the index writer's targets.

    ItemKind(core).check("acme", repair=False)
    # {"records": 12, "points": 12, "missing": 0, "orphans": 0, "pending": 0, "namespace_counters": 0}

``records`` counts items of both spaces (the tenant's shared one and the users' own: one point
collection holds both); a point is expected for an item whose ``index`` is not ``False``. ``stale``
points (the timestamp of an older version: a put stopped before its index write) count as
``missing``; ``namespace_counters`` counts namespaces whose stored count differs from their items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..index import Scope
from ..index.pending import Target, pending_refs
from ..index.points import point_id, scope_filter, scroll_all
from ..kinds import DRIFT, RecordKind, count_points, report
from ..progress import report as progress
from ..stores.base import iter_docs
from .api import ITEM_NS, ITEMS, KIND, PENDING_KIND, USER_ITEMS, Items, item_entry, ns_key

if TYPE_CHECKING:
    from ..config import LayeredMemorySettings
    from ..stores.base import RecordStore

PAGE = 1000


class ItemKind(RecordKind):
    name = PENDING_KIND
    intents = ("item",)  # an interrupted put / delete (``Items.repair``)
    drift = (*DRIFT, "namespace_counters")

    @property
    def collection(self) -> str:
        return self.core.settings.qdrant.collection_prefix + ITEMS

    @classmethod
    def collections(cls, records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
        return {settings.qdrant.collection_prefix + ITEMS}

    def targets(self, tenant: str, refs: Sequence[Any]) -> list[Target | None]:
        """Pending items, refs ``[space, dkey]`` (space: the shared or the user-owned items collection)."""
        core = self.core
        docs: dict[tuple[str, str], dict[str, Any] | None] = {}
        for space in {r[0] for r in refs}:
            keys = [r[1] for r in refs if r[0] == space]
            docs.update(zip(((space, k) for k in keys), core.records.get_docs(tenant, space, keys)))
        out: list[Target | None] = []
        for space, k in refs:
            d = docs[(space, k)]
            entry = None if d is None or d["index"] is False else item_entry(tenant, k, d)
            out.append(Target(self.collection, point_id(tenant, KIND, k), entry))
        return out

    def drain(self, tenant: str, intent: Mapping[str, Any]) -> None:
        owner, scope = intent.get("owner"), Scope(tenant)
        Items(self.core, scope.narrow(owner) if owner else scope).repair(intent["dkey"], tuple(intent["namespace"]))

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        core = self.core
        shared = dict(iter_docs(core.records, tenant, ITEMS, page=PAGE))
        docs = {**shared, **dict(iter_docs(core.records, tenant, USER_ITEMS, page=PAGE))}  # one point collection holds both spaces
        expected = {point_id(tenant, KIND, k): k for k, d in docs.items() if d.get("index") is not False}
        counts: dict[str, int] = {}
        spaces: dict[str, tuple[str, ...]] = {}
        for d in shared.values():
            k = ns_key(tuple(d["namespace"]))
            counts[k] = counts.get(k, 0) + 1
            spaces[k] = tuple(d["namespace"])
        stored = {k: d.get("count", 0) for k, d in iter_docs(core.records, tenant, ITEM_NS, page=PAGE)}
        spaces.update({k: tuple(d["namespace"]) for k, d in iter_docs(core.records, tenant, ITEM_NS, page=PAGE)})
        bad_ns = sorted(k for k in set(counts) | set(stored) if counts.get(k, 0) != stored.get(k, 0))
        actual: set[str] = set()
        stale: set[str] = set()  # points of an older version of the item (a put stopped before its index write)
        items = Items(core, Scope(tenant)) if core.index is not None or bad_ns else None
        if core.index is not None:
            for hits in scroll_all(core.index, items.collection, scope_filter(tenant, KIND)):  # type: ignore[union-attr]
                actual.update(h.id for h in hits)
                stale.update(
                    h.id for h in hits if h.id in expected and h.payload.get("timestamp") != docs[expected[h.id]]["updated_at"]
                )
        pending = {point_id(tenant, KIND, r[1]) for r in pending_refs(core.records, tenant, PENDING_KIND)}
        orphans = sorted(actual - set(expected) - pending)
        missing = [k for p, k in expected.items() if (p not in actual or p in stale) and p not in pending]
        if repair and items is not None and (orphans or missing or bad_ns):
            with core.write_lock:
                if orphans:
                    core.index.delete(items.collection, ids=orphans)  # type: ignore[union-attr]
                for start in range(0, len(missing), 256):
                    items._index([(k, docs[k]) for k in missing[start : start + 256]])
                for k in bad_ns:
                    items.recount(spaces[k])
        return report(len(docs), len(actual), len(missing), len(orphans), pending=len(pending), namespace_counters=len(bad_ns))

    def at_open(self, tenant: str, repair: bool) -> dict[str, int] | None:
        core = self.core
        n_items = core.records.count_docs(tenant, ITEMS) + core.records.count_docs(tenant, USER_ITEMS)
        if n_items or core.index.has_collection(self.collection):  # type: ignore[union-attr]
            if count_points(core, Items(core, Scope(tenant)).collection, tenant, KIND) != n_items:
                part = self.check(tenant, repair)
                if self.drifted(part):
                    return part
        return None

    def reindex(self, tenant: str) -> int:
        records = self.core.records
        if not (records.count_docs(tenant, ITEMS) or records.count_docs(tenant, USER_ITEMS)):
            return 0
        n = Items(self.core, Scope(tenant)).reindex()
        progress("items indexed", n, n)
        return n


__all__ = ["ItemKind"]
