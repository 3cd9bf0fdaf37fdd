"""The index writer's sources besides messages: items, agent interactions and topic summaries, each an
outbox of pending markers in the RecordStore (``index.outbox``), registered by ``register``.

Each kind gives ``targets(tenant, refs)``: the points of the marked records as the records are now
(None entry: the record is gone or not indexed). Knowledge entities are not here: their vectors are
part of the extraction (an entity is matched to the stored ones by them), which runs in ``process()``
and never on a user's write path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .index.outbox import RecordOutbox, Target
from .index.points import point_id

if TYPE_CHECKING:
    from .kernel import Kernel


def item_targets(core: Kernel, tenant: str, refs: Sequence[Any]) -> list[Target | None]:
    """Pending items, refs ``[space, dkey]`` (space: the shared or the user-owned items collection)."""
    from .items import ITEMS, KIND, item_entry

    collection = core.settings.qdrant.collection_prefix + ITEMS
    docs: dict[tuple[str, str], dict[str, Any] | None] = {}
    for space in {r[0] for r in refs}:
        keys = [r[1] for r in refs if r[0] == space]
        docs.update(zip(((space, k) for k in keys), core.records.get_docs(tenant, space, keys)))
    out: list[Target | None] = []
    for space, k in refs:
        d = docs[(space, k)]
        entry = None if d is None or d["index"] is False else item_entry(tenant, k, d)
        out.append(Target(collection, point_id(tenant, KIND, k), entry))
    return out


def agent_targets(core: Kernel, tenant: str, refs: Sequence[Any]) -> list[Target | None]:
    """Pending interactions, refs ``[user_id, agent_name, doc_key]``; an agent deleted since: nothing to do."""
    from .agents.models import AgentScope, Interaction

    store = core.agents.store
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
        for i, k, d in zip(idx, keys, core.records.get_docs(tenant, scope.docs, keys)):
            pid = scope.point_id(k.split("|", 1)[1])
            out[i] = Target(info.collection, pid, store.entry(scope, Interaction.from_doc(d)) if d is not None else None)
    return [out[i] for i in range(len(refs))]


def summary_targets(core: Kernel, tenant: str, refs: Sequence[Any]) -> list[Target | None]:
    """Pending topic summaries, refs: topic ids (the point holds the topic's newest version)."""
    from .topics.store import TopicStore
    from .topics.summaries import KIND

    ids = [str(r) for r in refs]
    store = TopicStore(core.records, tenant)
    topics = {t["topic_id"]: t for t in store.get(sorted(set(ids))) if t is not None}
    latest = store.latest_summaries(list(topics.values()))
    entries = {e.point_id: e for e in core.topics.summarizer(tenant).entries(list(latest.values()))}
    collection = core.indexer.collection
    return [Target(collection, point_id(tenant, KIND, t), entries.get(point_id(tenant, KIND, t))) for t in ids]


KINDS = {"items": item_targets, "agents": agent_targets, "topic_summaries": summary_targets}


def register(core: Kernel) -> None:
    """Add the outbox of every kind to the engine's background indexer (a no-op without one)."""
    bg = core.background
    if bg is None or core.index is None:
        return
    for name, targets in KINDS.items():
        bg.add_source(RecordOutbox(
            name, lambda tenant, refs, f=targets: f(core, tenant, refs), records=core.records, index=core.index,
            embedder=core.embedder, analyzer=core.analyzer, encoder=core.indexer.encoder, lock=core.write_lock,
        ))


__all__ = ["KINDS", "agent_targets", "item_targets", "register", "summary_targets"]
