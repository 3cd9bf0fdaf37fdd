"""The topic tier's kinds (``kinds.Kind``): topic summaries against their points, and topic threading.

    SummaryKind(core).check("acme", repair=False)     # {"records", "points", "missing", "orphans", "pending"}
    ThreadingCheck(core).check("acme", repair=False)  # {"topics", "unthreaded", "queued", "counters"}

A topic's point holds its newest summary version (in the messages' collection, ``kind="topic_summary"``).
Threading has no points: the doctor counts ``unthreaded`` messages (stored at or below the threading
cursor, neither threaded nor queued), ``queued`` ones (in the queue or above the cursor: not drift)
and topics whose ``message_count`` differs from their membership rows (``counters``); the repair
queues the unthreaded messages and sets the counters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..index.pending import Target, pending_refs
from ..index.points import MESSAGES, point_id, scope_filter, scroll_all
from ..kinds import BaseKind, RecordKind, count_points, iter_messages, report
from ..progress import report as progress
from ..stores.base import RecordStore, iter_docs
from .store import QUEUE, SUMMARIES, TOPIC_MSGS, TOPICS, TopicStore
from .summaries import KIND, PENDING_KIND, Summarizer

if TYPE_CHECKING:
    from ..config import LayeredMemorySettings

PAGE = 1000


class SummaryKind(RecordKind):
    name = PENDING_KIND

    def _summarizer(self, tenant: str) -> Summarizer:
        return self.core.topics.summarizer(tenant)  # type: ignore[no-any-return]

    @classmethod
    def collections(cls, records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
        return {settings.qdrant.collection_prefix + MESSAGES}  # beside the messages

    def targets(self, tenant: str, refs: Sequence[Any]) -> list[Target | None]:
        """Pending topic summaries, refs: topic ids (the point holds the topic's newest version)."""
        ids = [str(r) for r in refs]
        store = TopicStore(self.core.records, tenant)
        topics = {t["topic_id"]: t for t in store.get(sorted(set(ids))) if t is not None}
        latest = store.latest_summaries(list(topics.values()))
        entries = {e.point_id: e for e in self._summarizer(tenant).entries(list(latest.values()))}
        collection = self.core.indexer.collection
        return [Target(collection, point_id(tenant, KIND, t), entries.get(point_id(tenant, KIND, t))) for t in ids]

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        core = self.core
        # a topic whose summary text was redacted (a deleted message) has no point until its next version
        topics = {d["topic_id"]: d for _, d in iter_docs(core.records, tenant, TOPICS, page=PAGE)
                  if d.get("summary_version") and not d.get("summary_redacted")}
        expected = {point_id(tenant, KIND, t): t for t in topics}
        if core.index is None:
            return report(len(expected), 0, 0, 0)
        actual: set[str] = set()
        for hits in scroll_all(core.index, core.indexer.collection, scope_filter(tenant, KIND)):
            actual.update(h.id for h in hits)
        pending = {point_id(tenant, KIND, str(t)) for t in pending_refs(core.records, tenant, PENDING_KIND)}
        orphans = sorted(actual - set(expected) - pending)
        missing = [t for p, t in expected.items() if p not in actual and p not in pending]
        if repair and (orphans or missing):
            with core.write_lock:
                if orphans:
                    core.index.delete(core.indexer.collection, ids=orphans)
                if missing:
                    latest = TopicStore(core.records, tenant).latest_summaries([topics[t] for t in missing])
                    self._summarizer(tenant).index_summaries(list(latest.values()))
        return report(len(expected), len(actual), len(missing), len(orphans), pending=len(pending))

    def at_open(self, tenant: str, repair: bool) -> dict[str, int] | None:
        core = self.core
        n_topics, n_versions = core.records.count_docs(tenant, TOPICS), core.records.count_docs(tenant, SUMMARIES)
        n_points = count_points(core, core.indexer.collection, tenant, KIND)
        if n_points > n_topics or (n_versions and not n_points):
            return self.check(tenant, repair)
        return None

    def reindex(self, tenant: str) -> int:
        """Re-create the point of every topic's latest summary."""
        core = self.core
        if core.index is None:
            return 0
        topics = [d for _, d in iter_docs(core.records, tenant, TOPICS, page=PAGE) if d.get("summary_version") and not d.get("summary_redacted")]
        summarizer = self._summarizer(tenant)
        n = 0
        for start in range(0, len(topics), 256):
            latest = TopicStore(core.records, tenant).latest_summaries(topics[start : start + 256])
            with core.write_lock:
                summarizer.index_summaries(list(latest.values()))
            n += len(latest)
            progress("topic summaries indexed", n, len(topics))
        return n


class ThreadingCheck(BaseKind):
    name = "topics"
    drift = ("unthreaded", "counters")

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        core = self.core
        if not core.settings.topics.enabled:
            return {"topics": 0, "unthreaded": 0, "queued": 0, "counters": 0}
        topics = [d for _, d in iter_docs(core.records, tenant, TOPICS, page=PAGE)]
        chat_of = {t["topic_id"]: t["chat_id"] for t in topics}
        members: dict[str, int] = {}
        threaded: set[tuple[str, str]] = set()  # a topic's member ids resolve in the topic's chat
        for key, row in iter_docs(core.records, tenant, TOPIC_MSGS, page=PAGE):
            topic = key.rsplit("|", 1)[0]
            members[topic] = members.get(topic, 0) + 1
            threaded.add((chat_of.get(topic, ""), row["id"]))
        queued = {(d["chat_id"], d["message_id"]) for _, d in iter_docs(core.records, tenant, QUEUE, page=PAGE)}
        cursor = TopicStore(core.records, tenant).threading_cursor()  # the log above it waits for threading
        unthreaded, waiting = [], 0
        for m in iter_messages(self.core, tenant):
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


__all__ = ["SummaryKind", "ThreadingCheck"]
