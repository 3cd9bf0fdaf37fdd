"""The agent interactions kind (``kinds.Kind``): each agent's interaction records against its points.

    AgentKind(core).check("acme", repair=False)
    # {"records": 80, "points": 80, "missing": 0, "orphans": 0, "pending": 0, "agents": 2}

Summed over the tenant's registered agents (``agents`` counts them); an agent's points live in its own
collection (``per_agent``) or, scoped by payload, in the shared one. Without a vector index there is
nothing to compare (the agent store needs one).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..index.pending import Target, pending_refs
from ..index.points import scroll_all
from ..kinds import RecordKind, report
from ..progress import report as progress
from ..stores.base import RecordStore, iter_docs
from .api import Agent
from .models import AgentInfo, AgentScope, Interaction
from .store import PENDING_KIND, REGISTRY, AgentStore, scope_filter

if TYPE_CHECKING:
    from ..config import LayeredMemorySettings

PAGE = 1000


class AgentKind(RecordKind):
    name = PENDING_KIND

    @property
    def store(self) -> AgentStore:
        return self.core.agents.store  # type: ignore[no-any-return]  # built on first use

    def _parts(self, tenant: str) -> Iterator[tuple[AgentScope, AgentInfo]]:
        """(scope, info) of every registered agent of the tenant."""
        for info in self.store.list(tenant):
            yield AgentScope.of(tenant, info.user_id, info.agent_name), info

    @classmethod
    def collections(cls, records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
        return {AgentInfo.from_doc(d).collection for tenant in records.tenants() for _, d in iter_docs(records, tenant, REGISTRY, page=PAGE)}

    def targets(self, tenant: str, refs: Sequence[Any]) -> list[Target | None]:
        """Pending interactions, refs ``[user_id, agent_name, doc_key]``; an agent deleted since: nothing to do."""
        store = self.store
        out: dict[int, Target | None] = {}
        groups: dict[tuple[str, str], list[int]] = {}
        for i, r in enumerate(refs):
            groups.setdefault((r[0], r[1]), []).append(i)
        for (user, agent), idx in groups.items():
            scope = AgentScope(tenant, user, agent)
            info = store.info(scope)
            if info is None:  # unregistered: its documents and points went with it
                out.update((i, None) for i in idx)
                continue
            store.ensure(info)
            keys = [refs[i][2] for i in idx]
            for i, k, d in zip(idx, keys, self.core.records.get_docs(tenant, scope.docs, keys)):
                pid = scope.point_id(k.split("|", 1)[1])
                out[i] = Target(info.collection, pid, store.entry(scope, Interaction.from_doc(d)) if d is not None else None)
        return [out[i] for i in range(len(refs))]

    def _check_agent(self, scope: AgentScope, info: AgentInfo, repair: bool, pending_keys: set[str]) -> tuple[int, int, int, int, int]:
        store = self.store
        store.ensure(info)
        docs = {k: d for page in store.iter_docs(scope) for k, d in page}
        expected = {scope.point_id(k.split("|", 1)[1]): k for k in docs}
        flt, _ = scope_filter(scope, None)
        actual: set[str] = set()
        for hits in scroll_all(store.index, info.collection, flt):
            actual.update(h.id for h in hits)
        pending = {scope.point_id(k.split("|", 1)[1]) for k in pending_keys}
        orphans = sorted(actual - set(expected) - pending)
        missing = [k for p, k in expected.items() if p not in actual and p not in pending]
        if repair and (orphans or missing):
            with store.lock:
                if orphans:
                    store.index.delete(info.collection, ids=orphans)
                for start in range(0, len(missing), 256):
                    items = [Interaction.from_doc(docs[k]) for k in missing[start : start + 256]]
                    store.index.upsert(info.collection, store.points(scope, items, None))
        return len(docs), len(actual), len(missing), len(orphans), len(pending)

    def check(self, tenant: str, repair: bool, only: set[str] | None = None) -> dict[str, int]:
        """``only``: the keys of the agents to check (default: every agent of the tenant)."""
        if self.core.index is None:
            return report(0, 0, 0, 0, pending=0, agents=0)
        marked: dict[tuple[str, str], set[str]] = {}
        for user, agent, key in pending_refs(self.core.records, tenant, PENDING_KIND):
            marked.setdefault((user, agent), set()).add(key)
        totals = [0, 0, 0, 0, 0]
        n = 0
        for scope, info in self._parts(tenant):
            if only is not None and scope.key not in only:
                continue
            n += 1
            for i, v in enumerate(self._check_agent(scope, info, repair, marked.get((scope.user_id, scope.agent_name), set()))):
                totals[i] += v
        return report(*totals[:4], pending=totals[4], agents=n)

    def at_open(self, tenant: str, repair: bool) -> dict[str, int] | None:
        store = self.store
        drifting = set()
        for scope, info in self._parts(tenant):
            store.ensure(info)
            flt, _ = scope_filter(scope, None)
            if store.index.count(info.collection, filter=flt) != store.count_docs(scope):
                drifting.add(scope.key)
        if drifting:
            part = self.check(tenant, repair, only=drifting)
            if self.drifted(part):
                return part
        return None

    def reindex(self, tenant: str) -> int:
        """Re-create the points of every agent interaction of the tenant."""
        if self.core.index is None:
            return 0
        n = sum(Agent(self.core, scope, info).reindex() for scope, info in self._parts(tenant))
        progress("agent interactions indexed", n, n)
        return n


__all__ = ["AgentKind"]
