"""Drift between the RecordStore (the truth) and what is derived from it, found and repaired.

    report = mem.doctor()                 # read only
    report = mem.doctor(repair=True)      # also repair; ``layered-memory doctor --repair`` does the same

Per tenant and kind of point (messages, topic summaries, items, agent interactions, document and
repository chunks: ``documents.health``, which also counts documents, repository files, collections
and repositories, and ``stale`` chunks of an interrupted write) the report counts
records, points, ``pending`` (records in the index writer's outbox: written, their point not complete
yet; the normal index lag, not drift), ``missing`` (records without their point and without a pending
marker: drift) and ``orphans`` (points whose record is gone with nothing pending: deleted text that
search would still return); messages also count ``stale`` points (their payload hash is not the stored
text's: an edit whose re-index another process's writer raced; repaired by indexing them again, and
counted in ``missing`` too). ``pending`` in the report's top level sums the writer's pending records
of messages, topic summaries, items and agents (a document's ``pending`` is an interrupted write: the
``outbox``).
For the topic tier it counts ``unthreaded`` messages (stored, neither threaded nor queued) and topics
whose ``message_count`` differs from their membership rows; ``outbox`` counts delete (and edit) intents
not yet drained. Every repair is idempotent: run it twice, the second run finds nothing.

``open_check`` runs when a store is opened: it drains the outbox, indexes pending messages, compares
counts per kind (a few cheap requests) and repairs a kind whose counts disagree (an index that is
behind, e.g. a deleted ``vectors/`` directory, or ahead, e.g. after a Redis data loss), with a
warning that says what was found. A tenant without a single message record but with message points
(a wiped or a wrong record store: a typo in the Redis URL must not wipe the index) is only reported,
with the command that repairs it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .index.points import message_point_id, point_id, scope_filter
from .index.outbox import pending_refs
from .indexing import OUTBOX, drop_intent, scroll_all
from .index import Scope
from .models import Message, MessageRef
from .stores.base import iter_docs
from .progress import report

if TYPE_CHECKING:
    from .runtime import Runtime

logger = logging.getLogger(__name__)

PAGE = 1000
KINDS = ("messages", "topic_summaries", "items", "agents", "documents")
WRITER_KINDS = ("messages", "topic_summaries", "items", "agents")  # embedded by the background index writer


@dataclass(frozen=True)
class Tenant:
    """One tenant of one engine's runtime: the unit the doctor checks and repairs (the whole tenant,
    never a bound user's part of it)."""

    core: Runtime
    tenant_id: str

    @property
    def records(self) -> Any:
        return self.core.records

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant_id)


def _docs(tn: Tenant, collection: str, prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    return iter_docs(tn.records, tn.tenant_id, collection, prefix=prefix, page=PAGE)


def _messages_iter(tn: Tenant) -> Iterator[Message]:
    after = 0
    while True:
        page = tn.records.scan_messages(tn.tenant_id, after_seq=after, limit=PAGE)
        yield from page
        if len(page) < PAGE:
            return
        after = page[-1].seq or after


def _report(records: int, points: int, missing: int, orphans: int, **extra: int) -> dict[str, int]:
    return {"records": records, "points": points, "missing": missing, "orphans": orphans, **extra}


# -- the delete outbox ------------------------------------------------------------------------------
def drain_outbox(tn: Tenant) -> int:
    """Finish every delete intent of the tenant (see ``indexing``). Returns how many were drained."""
    from .items import Items

    core = tn.core
    done = 0
    with core.write_lock:
        for key, doc in list(_docs(tn, OUTBOX)):
            op = doc.get("op")
            if op == "clear":
                user, session = doc.get("user_id"), doc.get("session_key")
                core.indexer.orphan_messages(tn.tenant_id, user_id=user, session_key=session)
                core.indexer.drop_context(tn.tenant_id)  # the turns after the deleted ones (any user of their chats)
                if user and not core.records.count_messages(tn.tenant_id, user_id=user, session_key=session):
                    tn.core.sessions.drop(tn.tenant_id, user, session)
            elif op == "item":
                owner = doc.get("owner")
                Items(tn.core, tn.scope.narrow(owner) if owner else tn.scope).repair(doc["dkey"], tuple(doc["namespace"]))
            elif op in ("edit", "delete"):  # an interrupted mem.edit_message / mem.delete_message
                from .edits import finish_intent

                finish_intent(core, tn.tenant_id, doc)
            elif op == "doc":  # an interrupted document / repository file write (layered_memory.documents.store)
                from .documents.store import SourceStore

                owner = doc.get("owner")
                SourceStore(tn.core, tn.scope.narrow(owner) if owner else tn.scope).repair(doc["skey"])
            else:
                logger.warning("index outbox of tenant %s: unknown intent %r dropped", tn.tenant_id, op)
            drop_intent(core.records, tn.tenant_id, key)
            done += 1
    if done:
        logger.info("drained %d delete intents of tenant %s", done, tn.tenant_id)
    return done


# -- messages ---------------------------------------------------------------------------------------
def _check_messages(tn: Tenant, repair: bool) -> dict[str, int]:
    from .edits import content_hash

    core, tenant = tn.core, tn.tenant_id
    pending = set(core.records.pending_index(tenant, limit=10**9))
    expected: dict[str, tuple[MessageRef, MessageRef | None]] = {}  # point id -> (ref, previous turn's ref)
    hashes: dict[str, str] = {}  # point id -> the hash of the stored text
    last: dict[str, Message] = {}  # chat -> its latest message so far (the turn before the next one)
    neighbours = core.indexer.context == "neighbour"
    for m in _messages_iter(tn):
        prev = last.get(m.chat_id) if neighbours else None
        pid = message_point_id(tenant, m.ref)
        expected[pid] = (m.ref, prev.ref if prev is not None and core.indexer.is_neighbour(prev, m) else None)
        hashes[pid] = content_hash(m.content)
        last[m.chat_id] = m
    if core.index is None:
        return _report(len(expected), 0, 0, 0, pending=len(pending))
    actual: set[str] = set()
    stale: set[str] = set()  # points of an older text (an edit whose re-index was lost, e.g. raced by another process)
    for hits in scroll_all(core.index, core.indexer.collection, scope_filter(tenant, "message")):
        actual.update(h.id for h in hits)
        stale.update(h.id for h in hits if h.id in hashes and h.payload.get("hash") not in (None, hashes[h.id]))
    orphans = sorted(actual - set(expected))
    missing = [expected[p] for p in expected if (p not in actual or p in stale) and expected[p][0] not in pending]
    stale_context = core.indexer.drop_context(tenant, rewrite=False)  # a context from a turn whose record is gone
    if repair:
        with core.write_lock:
            if orphans:
                core.index.delete(core.indexer.collection, ids=orphans)
            if stale_context:
                core.indexer.drop_context(tenant)
            for start in range(0, len(missing), 256):
                chunk = missing[start : start + 256]
                ids = list({i for pair in chunk for i in pair if i})
                found = {m.ref: m for m in core.records.get_messages(tenant, ids) if m is not None}
                msgs = [found[mid] for mid, _ in chunk if mid in found]
                previous = {mid: found.get(prev) if prev else None for mid, prev in chunk}
                core.indexer.upsert_messages(tenant, msgs, previous)
            core.indexer.flush(tenant)
    extra = {"stale_context": stale_context} if stale_context else {}
    return _report(len(expected), len(actual), len(missing), len(orphans), pending=len(pending),
                   stale=len([p for p in stale if expected[p][0] not in pending]), **extra)


# -- topic summaries ----------------------------------------------------------------------------------
def _check_summaries(tn: Tenant, repair: bool) -> dict[str, int]:
    from .topics.store import TOPICS, TopicStore
    from .topics.summaries import KIND, OUTBOX_KIND

    core, tenant = tn.core, tn.tenant_id
    topics = {d["topic_id"]: d for _, d in _docs(tn, TOPICS) if d.get("summary_version")}
    expected = {point_id(tenant, KIND, t): t for t in topics}
    if core.index is None:
        return _report(len(expected), 0, 0, 0)
    actual: set[str] = set()
    for hits in scroll_all(core.index, core.indexer.collection, scope_filter(tenant, KIND)):
        actual.update(h.id for h in hits)
    pending = {point_id(tenant, KIND, str(t)) for t in pending_refs(core.records, tenant, OUTBOX_KIND)}
    orphans = sorted(actual - set(expected) - pending)
    missing = [t for p, t in expected.items() if p not in actual and p not in pending]
    if repair and (orphans or missing):
        with core.write_lock:
            if orphans:
                core.index.delete(core.indexer.collection, ids=orphans)
            if missing:
                latest = TopicStore(core.records, tenant).latest_summaries([topics[t] for t in missing])
                core.topics.summarizer(tenant).index_summaries(list(latest.values()))
    return _report(len(expected), len(actual), len(missing), len(orphans), pending=len(pending))


def reindex_summaries(tn: Tenant) -> int:
    """Re-create the point of every topic's latest summary. Returns how many were indexed."""
    from .topics.store import TOPICS, TopicStore

    core = tn.core
    if core.index is None:
        return 0
    topics = [d for _, d in _docs(tn, TOPICS) if d.get("summary_version")]
    summarizer = core.topics.summarizer(tn.tenant_id)
    n = 0
    for start in range(0, len(topics), 256):
        latest = TopicStore(core.records, tn.tenant_id).latest_summaries(topics[start : start + 256])
        with core.write_lock:
            summarizer.index_summaries(list(latest.values()))
        n += len(latest)
        report("topic summaries indexed", n, len(topics))
    return n


# -- items ----------------------------------------------------------------------------------------------
def _check_items(tn: Tenant, repair: bool) -> dict[str, int]:
    from .items import ITEM_NS, ITEMS, KIND, OUTBOX_KIND, USER_ITEMS, Items, ns_key

    core, tenant = tn.core, tn.tenant_id
    shared = dict(_docs(tn, ITEMS))
    docs = {**shared, **dict(_docs(tn, USER_ITEMS))}  # one point collection holds both spaces
    expected = {point_id(tenant, KIND, k): k for k, d in docs.items() if d.get("index") is not False}
    counts: dict[str, int] = {}
    spaces: dict[str, tuple[str, ...]] = {}
    for d in shared.values():
        k = ns_key(tuple(d["namespace"]))
        counts[k] = counts.get(k, 0) + 1
        spaces[k] = tuple(d["namespace"])
    stored = {k: d.get("count", 0) for k, d in _docs(tn, ITEM_NS)}
    spaces.update({k: tuple(d["namespace"]) for k, d in _docs(tn, ITEM_NS)})
    bad_ns = sorted(k for k in set(counts) | set(stored) if counts.get(k, 0) != stored.get(k, 0))
    actual: set[str] = set()
    stale: set[str] = set()  # points of an older version of the item (a put stopped before its index write)
    items = Items(core, tn.scope) if core.index is not None or bad_ns else None
    if core.index is not None:
        for hits in scroll_all(core.index, items.collection, scope_filter(tenant, KIND)):  # type: ignore[union-attr]
            actual.update(h.id for h in hits)
            stale.update(
                h.id for h in hits if h.id in expected and h.payload.get("timestamp") != docs[expected[h.id]]["updated_at"]
            )
    pending = {point_id(tenant, KIND, r[1]) for r in pending_refs(core.records, tenant, OUTBOX_KIND)}
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
    return _report(len(docs), len(actual), len(missing), len(orphans), pending=len(pending), namespace_counters=len(bad_ns))


# -- agents ---------------------------------------------------------------------------------------------
def _agent_parts(tn: Tenant) -> Iterator[tuple[Any, Any, Any]]:
    """(store, scope, info) of every registered agent of the tenant."""
    from .agents.models import AgentScope

    store = tn.core.agents.store
    for info in store.list(tn.tenant_id):
        yield store, AgentScope.of(tn.tenant_id, info.user_id, info.agent_name), info


def _check_agent(store: Any, scope: Any, info: Any, repair: bool, pending_keys: set[str]) -> tuple[int, int, int, int, int]:
    from .agents.models import Interaction
    from .agents.store import scope_filter as agent_filter

    store.ensure(info)
    docs = {k: d for page in store.iter_docs(scope) for k, d in page}
    expected = {scope.point_id(k.split("|", 1)[1]): k for k in docs}
    flt, _ = agent_filter(scope, None)
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


def _check_agents(tn: Tenant, repair: bool, only: set[str] | None = None) -> dict[str, int]:
    from .agents.store import OUTBOX_KIND

    if tn.core.index is None:
        return _report(0, 0, 0, 0, pending=0, agents=0)
    marked: dict[tuple[str, str], set[str]] = {}
    for user, agent, key in pending_refs(tn.records, tn.tenant_id, OUTBOX_KIND):
        marked.setdefault((user, agent), set()).add(key)
    totals = [0, 0, 0, 0, 0]
    n = 0
    for store, scope, info in _agent_parts(tn):
        if only is not None and scope.key not in only:
            continue
        n += 1
        for i, v in enumerate(_check_agent(store, scope, info, repair, marked.get((scope.user_id, scope.agent_name), set()))):
            totals[i] += v
    return _report(*totals[:4], pending=totals[4], agents=n)


def reindex_agents(tn: Tenant) -> int:
    """Re-create the points of every agent interaction of the tenant. Returns how many were indexed."""
    from .agents.api import Agent

    if tn.core.index is None:
        return 0
    return sum(Agent(tn.core, scope, info).reindex() for _, scope, info in _agent_parts(tn))


def derived_collections(records: Any, prefix: str) -> set[str]:
    """Every vector collection derived from the records: messages (with topic summaries), items, and
    the agents' collections of every tenant (``recreate_index`` drops them all)."""
    from .agents.models import AgentInfo
    from .agents.store import REGISTRY
    from .indexing import MESSAGES
    from .items import ITEMS

    from .documents.store import VECTORS

    names = {prefix + MESSAGES, prefix + ITEMS, prefix + VECTORS}
    for tenant in records.tenants():
        names.update(AgentInfo.from_doc(d).collection for _, d in iter_docs(records, tenant, REGISTRY, page=PAGE))
    return names


# -- topic threading ------------------------------------------------------------------------------------
def _check_topics(tn: Tenant, repair: bool) -> dict[str, int]:
    from .topics.store import QUEUE, TOPIC_MSGS, TOPICS, TopicStore

    core, tenant = tn.core, tn.tenant_id
    if not core.settings.topics.enabled:
        return {"topics": 0, "unthreaded": 0, "queued": 0, "counters": 0}
    topics = [d for _, d in _docs(tn, TOPICS)]
    chat_of = {t["topic_id"]: t["chat_id"] for t in topics}
    members: dict[str, int] = {}
    threaded: set[tuple[str, str]] = set()  # a topic's member ids resolve in the topic's chat
    for key, row in _docs(tn, TOPIC_MSGS):
        topic = key.rsplit("|", 1)[0]
        members[topic] = members.get(topic, 0) + 1
        threaded.add((chat_of.get(topic, ""), row["id"]))
    queued = {(d["chat_id"], d["message_id"]) for _, d in _docs(tn, QUEUE)}
    cursor = TopicStore(core.records, tenant).threading_cursor()  # the log above it waits for threading
    unthreaded, waiting = [], 0
    for m in _messages_iter(tn):
        if (m.seq or 0) > cursor:
            waiting += m.ref not in threaded
        elif m.ref not in threaded and m.ref not in queued:
            unthreaded.append(m)
    bad = [t for t in topics if t.get("message_count", 0) != members.get(t["topic_id"], 0)]
    if repair and (unthreaded or bad):
        store = TopicStore(core.records, tenant)
        with core.write_lock:
            store.enqueue([(m.seq, m.message_id, m.chat_id) for m in unthreaded])
            for t in bad:
                t["message_count"] = members.get(t["topic_id"], 0)
            store.put(bad)
    return {"topics": len(topics), "unthreaded": len(unthreaded), "queued": len(queued) + waiting, "counters": len(bad)}


def reindex(tn: Tenant) -> int:
    """``mem.reindex()``: every kind re-created from the records, orphans removed. Returns the count."""
    from .items import ITEMS, USER_ITEMS, Items

    core = tn.core
    if core.index is None:
        return 0
    with core.write_lock:
        if tn.records.count_docs(tn.tenant_id, OUTBOX):
            drain_outbox(tn)
        core.records.mark_all_pending(tn.tenant_id)
        n = core.indexer.flush(tn.tenant_id)
        core.indexer.orphan_messages(tn.tenant_id)
    if core.records.count_docs(tn.tenant_id, ITEMS) or core.records.count_docs(tn.tenant_id, USER_ITEMS):
        items = Items(tn.core, tn.scope).reindex()
        report("items indexed", items, items)
        n += items
    n += reindex_summaries(tn)
    agents = reindex_agents(tn)
    report("agent interactions indexed", agents, agents)
    n += agents
    from .documents.store import CHUNKS, SourceStore

    if core.records.count_docs(tn.tenant_id, CHUNKS):
        n += SourceStore(tn.core, tn.scope).reindex()
    check(tn, repair=True)  # orphans of items, summaries and agents; topic counters
    return n


# -- the whole check --------------------------------------------------------------------------------------
def _drifted(part: dict[str, int]) -> bool:
    """Drift: what no running part will fix. ``pending`` is the index writer's lag (its outbox has them)."""
    return any(part.get(k, 0) for k in ("missing", "orphans", "namespace_counters", "unthreaded", "counters", "stale", "stale_context"))


def check(tn: Tenant, *, repair: bool = False) -> dict[str, Any]:
    """The full report of one tenant (see the module docstring); with ``repair`` the drift is repaired and
    the report says what was found before the repair (``ok`` is then the state after it)."""
    outbox = tn.records.count_docs(tn.tenant_id, OUTBOX)
    if repair and outbox:
        drain_outbox(tn)
    report: dict[str, Any] = {"tenant": tn.tenant_id, "outbox": outbox}
    report["messages"] = _check_messages(tn, repair)
    report["topic_summaries"] = _check_summaries(tn, repair)
    report["items"] = _check_items(tn, repair)
    report["agents"] = _check_agents(tn, repair)
    from .documents.health import check_documents

    report["documents"] = check_documents(tn.core, tn.tenant_id, repair)
    report["topics"] = _check_topics(tn, repair)
    report["pending"] = sum(report[k].get("pending", 0) for k in WRITER_KINDS)  # the index lag, reported apart from drift
    if repair and report["pending"] and tn.core.deferred:
        tn.core.background.notify(tn.tenant_id)  # type: ignore[union-attr]  # the writer indexes them (e.g. left by a crash)
    drift = bool(outbox) or any(_drifted(report[k]) for k in (*KINDS, "topics"))
    report["ok"] = not drift
    if repair and drift:
        report["repaired"] = True
        report["ok"] = check(tn)["ok"]  # the state after the repair
    return report


def _count(tn: Tenant, collection: str, kind: str) -> int:
    index = tn.core.index
    if index is None or not index.has_collection(collection):
        return 0
    return index.count(collection, filter=scope_filter(tn.tenant_id, kind))


def open_check(tn: Tenant, *, repair: bool = True) -> dict[str, Any]:
    """The check run when a store opens: cheap counts per kind; a kind whose counts disagree is checked in
    full and (with ``repair``) repaired, with a warning. Returns {kind: report} of the drifting kinds."""
    from .items import ITEMS, USER_ITEMS, Items
    from .items import KIND as ITEM_KIND
    from .topics.store import SUMMARIES, TOPICS
    from .topics.summaries import KIND as SUMMARY_KIND

    core, tenant = tn.core, tn.tenant_id
    records = core.records
    found: dict[str, Any] = {}
    outbox = records.count_docs(tenant, OUTBOX)
    if outbox:
        if repair:
            drain_outbox(tn)
        found["outbox"] = outbox
    if core.index is None:
        return _warn(tn, found, repair)
    if repair and core.deferred:  # pending messages (a crash, a close before the writer drained): the writer embeds them
        core.background.notify(tenant)  # type: ignore[union-attr]
    elif repair:
        core.indexer.flush(tenant)
    n_msgs = records.count_messages(tenant)
    n_pending = len(records.pending_index(tenant, limit=n_msgs + 1)) if n_msgs else 0
    n_points = _count(tn, core.indexer.collection, "message")
    if n_points and not n_msgs:  # no record at all: a lost or a wrong record store? never wipe on a guess
        found["messages"] = _check_messages(tn, False)
        return _warn(tn, found, False)
    if n_points > n_msgs or n_points < n_msgs - n_pending:
        found["messages"] = _check_messages(tn, repair)
    n_topics, n_versions = records.count_docs(tenant, TOPICS), records.count_docs(tenant, SUMMARIES)
    n_sum_points = _count(tn, core.indexer.collection, SUMMARY_KIND)
    if n_sum_points > n_topics or (n_versions and not n_sum_points):
        found["topic_summaries"] = _check_summaries(tn, repair)
    n_items = records.count_docs(tenant, ITEMS) + records.count_docs(tenant, USER_ITEMS)
    if n_items or core.index.has_collection(core.settings.qdrant.collection_prefix + ITEMS):
        if _count(tn, Items(tn.core, tn.scope).collection, ITEM_KIND) != n_items:
            part = _check_items(tn, repair)
            if _drifted(part):
                found["items"] = part
    from .agents.store import scope_filter as agent_filter

    drifting = set()
    for store, scope, info in _agent_parts(tn):
        store.ensure(info)
        flt, _ = agent_filter(scope, None)
        if store.index.count(info.collection, filter=flt) != store.count_docs(scope):
            drifting.add(scope.key)
    if drifting:
        part = _check_agents(tn, repair, only=drifting)
        if _drifted(part):
            found["agents"] = part
    from .documents.health import check_documents, counts_differ

    if counts_differ(core, tenant):
        part = check_documents(core, tenant, repair)
        if _drifted(part):
            found["documents"] = part
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
