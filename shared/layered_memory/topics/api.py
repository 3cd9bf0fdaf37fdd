"""``mem.topics``: topic threading, short-term recall, mid-term summaries and the two searches.

    mem = LayeredMemory.embedded("./memory", chat_model=llm)      # the model is optional
    mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content="Куда поедем летом?")
    mem.process()                                   # threads queued messages, writes due summaries
    mem.topics.topic_of("m1", chat_id="c1"); mem.topics.topic_search("отпуск", chat_id="c1").to_text()

``TopicRuntime`` is built once per engine by ``runtime.build_runtime``; the facade calls it by name:
``on_write`` after each record write (the recent-message cache only: the message log above the
threading cursor is the queue, so the write costs this tier no store write), ``process`` from
``mem.process()`` (threading, summary triggers; each new summary goes to ``on_summary``, the knowledge
tier's trigger); the context reads topic summaries through ``summarizer``.
``Topics`` is one handle's view (a tenant, optionally a bound user). State lives in the RecordStore
(``topics/store.py``), so any process can resume the work.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from ..progress import report

from .._async import async_twins
from ..errors import InvalidInputError, NotFoundError
from ..evaluation import SummaryEvaluator
from ..index.collection import IndexedCollection
from ..index.points import message_point_id
from ..models import Message, MessageRef, SearchResult, Topic, TopicSummary, check_id, check_refs, iso, parse_time, utcnow
from ..retrieval.fusion import rrf
from ..retrieval.plan import plan_search
from .cache import InProcessRecentCache, RecentCache
from .llm import ModelCaller
from .recall import MessageReader, short_term
from .deep_search import TopicHit, TopicSearchResult, fuse_topics, quality_brief, summary_hit
from .store import TOPIC_MSGS, TopicStore, seq_key
from .edits import rethread
from .summaries import Summarizer, due_by_schedule
from .threader import Threader, message_vectors, sweep_idle

if TYPE_CHECKING:
    from ..index import Scope
    from ..kernel import Kernel

logger = logging.getLogger(__name__)

__all__ = ["Topics", "TopicRuntime"]

TOPIC_OPS = ("topic_decision", "topic_title", "segment_summary", "merge_summary", "topic_summary_evaluation")


def _make_cache(core: Kernel) -> RecentCache | None:
    s = core.settings.topics
    if s.recent_cache == "none":
        return None
    if s.recent_cache in ("auto", "redis"):  # the store's shared cache (Redis) when it has one
        shared = core.records.recent_cache(size=s.recent_cache_size, ttl=s.recent_cache_ttl_seconds)
        if shared is not None:
            return shared
        if s.recent_cache == "redis":
            raise InvalidInputError(
                "topics.recent_cache", "redis", f"needs a RecordStore with a shared cache (Redis), got {core.records!r}",
                "use recent_cache='memory' or build the engine with LayeredMemory.from_urls(redis_url=...)",
            )
    return InProcessRecentCache(s.recent_cache_size, s.recent_cache_ttl_seconds)


class TopicRuntime:
    """Per-engine state of the topic tier: settings, the model caller, the cache, the worker."""

    def __init__(self, core: Kernel) -> None:
        self.core = core
        self.settings = core.settings.topics
        self.cache = _make_cache(core)
        self.lock = threading.RLock()  # one processing run at a time
        self.worker: threading.Thread | None = None
        self.stop_event = threading.Event()
        self.last_schedule = 0.0
        # Called with (tenant, summary doc) for each new summary version; the runtime points it at the
        # knowledge tier's trigger (this tier never imports the one above it).
        self.on_summary: Callable[[str, dict[str, Any]], None] | None = None

    def caller(self) -> ModelCaller:
        return ModelCaller(self.core.chat_model)

    def store(self, tenant: str) -> TopicStore:
        return TopicStore(self.core.records, tenant)

    def summarizer(self, tenant: str) -> Summarizer:
        core = self.core
        collection = IndexedCollection(
            core.index, core.indexer.collection, core.embedder, core.analyzer, core.indexer.encoder, core.settings.retrieval,
            ensured=True,  # the indexer created the message collection
        )
        quality = core.settings.summary_quality
        return Summarizer(
            self.store(tenant), core.analyzer, self.settings, self.caller(), collection,
            evaluator=self.evaluator() if quality.enabled else None, retry_below=quality.retry_below,
            background=core.background if core.deferred else None,
        )

    def evaluator(self) -> SummaryEvaluator:
        """The seed 3.2.3 evaluator with the engine's analyzer, embedder and chat model (the judge's
        calls are ``topic_summary_evaluation`` in the usage meter)."""
        return SummaryEvaluator.for_runtime(self.core, "topic_")

    # -- after each record write: fast, durable ------------------------------------------------------------
    def on_write(self, tenant: str, new: Sequence[Message]) -> None:
        """Newly stored messages into the recent cache (called by the facade inside its write lock). They
        wait for threading by being in the log above the threading cursor: nothing to write here."""
        if not self.settings.enabled or not new:
            return
        if self.cache is not None:
            try:
                self.cache.push(tenant, new)
            except Exception as exc:  # the cache only speeds reads up
                logger.warning("recent cache push failed (%s: %s)", type(exc).__name__, exc)

    # -- the processor -------------------------------------------------------------------------------
    def process(self, tenant: str) -> dict[str, int]:
        """Thread the tenant's queued messages and write due summaries."""
        done = {"threaded": 0, "topics_closed": 0, "topic_summaries": 0}
        if not self.settings.enabled:
            return done
        with self.lock:
            done["rethreaded"] = rethread(self.core, self.store(tenant), self.caller())  # edited messages that no longer fit their topic: threaded again below
            while True:
                n = self.thread_batch(tenant)
                done["threaded"] += n
                if n == 0:
                    break
                report("messages threaded", done["threaded"])
            store = self.store(tenant)
            if self.settings.summary_interval_seconds and time.monotonic() - self.last_schedule >= min(60.0, self.settings.summary_interval_seconds):
                self.last_schedule = time.monotonic()
                now = utcnow()
                done["topics_closed"] += sweep_idle(store, self.settings, now, self.core.analyzer, self.caller())
                due = due_by_schedule(store.all_topics(), self.settings.summary_interval_seconds, now)
                store.add_jobs({t: "schedule" for t in due if t not in dict(store.jobs())})
            done["topic_summaries"] += self.run_jobs(tenant)
        return done

    def run_jobs(self, tenant: str) -> int:
        store = self.store(tenant)
        summarizer = self.summarizer(tenant)
        n = 0
        while True:
            jobs = store.jobs(limit=100)
            if not jobs:
                return n
            docs = []
            for topic_id, job in jobs:  # the summaries of a page are embedded in one batch
                doc = summarizer.summarize(topic_id, job.get("trigger", "manual"), index=False)
                if doc is not None:
                    docs.append(doc)
            summarizer.index_summaries(docs)
            for doc in docs:
                n += 1
                self.summary_written(tenant, doc)
            store.done_jobs([topic_id for topic_id, _ in jobs])
            report("topic summaries", n)

    def summary_written(self, tenant: str, doc: dict[str, Any]) -> None:
        if self.on_summary is not None:
            self.on_summary(tenant, doc)

    def _threaded(self, tenant: str, msgs: Sequence[Message]) -> set[MessageRef]:
        """Messages already threaded: topic_id on the record, a membership row and the topic document."""
        with_topic = [m for m in msgs if m.topic_id]
        if not with_topic:
            return set()
        keys = [f"{m.topic_id}|{seq_key(m.seq)}" for m in with_topic]
        rows = self.core.records.get_docs(tenant, TOPIC_MSGS, keys)
        topic_ids = list(dict.fromkeys(str(m.topic_id) for m in with_topic))
        topics = {t for t, d in zip(topic_ids, self.store(tenant).get(topic_ids)) if d}
        return {m.ref for m, d in zip(with_topic, rows) if d and m.topic_id in topics}

    def _unthreaded(self, tenant: str, msgs: Sequence[Message]) -> list[Message]:
        """Leave out messages a stopped run already threaded: at least once, never twice. A message whose
        topic_id is on the record but whose membership or topic is missing joins that topic again."""
        done = self._threaded(tenant, msgs)
        return [m for m in msgs if m.ref not in done]

    def thread_batch(self, tenant: str) -> int:
        """Thread the next batch: messages queued again first, then the log above the cursor. Returns how
        many were taken (0: nothing waits)."""
        core = self.core
        store = self.store(tenant)
        size = self.settings.batch_size
        items = store.queued(size)
        log = store.backlog(size - len(items)) if len(items) < size else []
        if not items and not log:
            return 0
        refs = [MessageRef(d["chat_id"], d["message_id"]) for _, d in items]
        queued = [m for m in core.records.get_messages(tenant, refs) if m is not None]
        msgs = list({m.ref: m for m in [*queued, *log]}.values())
        fresh = self._unthreaded(tenant, msgs)
        vecs = message_vectors(core, tenant, fresh)
        th = Threader(store, core.analyzer, self.settings, self.caller(), embedder=core.embedder)
        for m in sorted(fresh, key=lambda m: m.seq or 0):
            th.thread(m, vecs.get(m.ref))
        updated = []
        for m in fresh:
            topic_id = th.assigned.get(m.ref)
            if topic_id:
                updated.append(m.model_copy(update={"topic_id": topic_id}))
        recount = {m.topic_id for m in msgs if m.topic_id} - set(th.topics)  # already threaded by a stopped run
        with core.write_lock:
            still = {m.ref for m in core.records.get_messages(tenant, [m.ref for m in updated]) if m is not None}
            updated = [m for m in updated if m.ref in still]  # deleted meanwhile: nothing to update
            # Crash-safe order: topic ids on the records first (a run stopped after this re-joins the same
            # topics), then membership (deterministic keys), then the topics with message_count counted
            # from their membership, so no crash point can count a message twice.
            if updated:
                core.records.update_messages(tenant, updated)
            store.add_members([r for r in th.members if (th.topics[r[0]]['chat_id'], r[2]) in still])
            th.members = []
            for topic in th.topics.values():
                topic["message_count"] = store.member_count(topic["topic_id"])
            th.flush()
            stale = [t for t in store.get(sorted(recount)) if t and t.get("message_count") != store.member_count(t["topic_id"])]
            for topic in stale:
                topic["message_count"] = store.member_count(topic["topic_id"])
            store.put(stale)
            if core.index is not None:
                by_topic: dict[str, list[str]] = {}
                for m in updated:
                    by_topic.setdefault(m.topic_id, []).append(message_point_id(tenant, m.ref))  # type: ignore[arg-type]
                for topic_id, pids in by_topic.items():
                    try:
                        core.index.set_payload(core.indexer.collection, pids, {"topic_id": topic_id})
                    except Exception as exc:  # not indexed yet: the indexer reads topic_id from the record
                        logger.debug("set_payload topic_id failed (%s)", exc)
            store.dequeue([k for k, _ in items])
            if log:  # after the batch's results: a run stopped before this threads it again (skipped above)
                store.set_threading_cursor(int(log[-1].seq or 0))
        if self.cache is not None and updated:
            try:
                self.cache.push(tenant, updated)
            except Exception as exc:
                logger.warning("recent cache push failed (%s: %s)", type(exc).__name__, exc)
        logger.info("threaded %d messages of tenant %s", len(updated), tenant)
        return len(items) + len(log)

    # -- context source (mid tier) -------------------------------------------------------------------


def _to_topic(doc: dict[str, Any]) -> Topic:
    return Topic(
        topic_id=doc["topic_id"], title=doc["title"], description=doc.get("description"), creator_id=doc["creator_id"],
        chat_id=doc["chat_id"], keywords=doc.get("keywords") or None, topic_vector=doc.get("topic_vector"),
        create_time=doc["create_time"], update_time=doc["update_time"], is_active=doc.get("is_active", True),
        is_archived=doc.get("is_archived", False), message_count=doc.get("message_count", 0),
    )


def _to_summary(doc: dict[str, Any]) -> TopicSummary:
    meta = {**(doc.get("metadata") or {}), "title": doc.get("title"), "chat_id": doc.get("chat_id"),
            "keywords": doc.get("keywords"), "user_ids": doc.get("user_ids")}
    return TopicSummary(
        summary_id=doc["summary_id"], topic_id=doc["topic_id"], content=doc["content"], metadata=meta,
        create_time=doc["create_time"], update_time=doc["update_time"], version=doc["version"],
    )


def _message_dict(m: Message) -> dict[str, Any]:
    return {"message_id": m.message_id, "user_id": m.user_id, "user_name": m.user_name, "role": m.role,
            "content": m.content, "create_time": iso(m.create_time), "reply_message_id": m.reply_message_id}


@async_twins
class Topics:
    """The topic tier of one engine handle (tenant, optionally bound to a user)."""

    _ASYNC = ("process", "get", "list", "messages", "topic_of", "recall", "summarize", "summary", "summaries", "evaluate_summary",
              "search_summaries", "quick_search", "topic_search", "close_idle")

    def __init__(self, core: Kernel, scope: Scope, process: Callable[[], dict[str, int]] | None = None) -> None:
        self.core = core
        self.scope = scope
        self.tenant = scope.tenant
        self.rt = cast("TopicRuntime", core.topics)  # the runtime builds this tier's own
        self.store = self.rt.store(scope.tenant)
        self._process_all = process  # the engine's whole process() (the worker runs it), given by the facade

    def _view(self) -> Scope:
        """This handle's scope with its user's member chats as they are now (a member sees the chat's topics)."""
        return self.core.chats.view(self.scope)

    def _message(self, message_id: str, chat_id: str) -> Message | None:
        """A stored message visible to this handle (None otherwise)."""
        ref = check_refs("message_ids", [(check_id("chat_id", chat_id), message_id)])[0]
        m = self.core.records.get_messages(self.tenant, [ref])[0]
        return m if m is not None and self._view().sees(m) else None

    def _search_messages(self, query: str, filters: Mapping[str, Any], k: int, view: Scope | None = None) -> SearchResult:
        """The engine's message search under this handle's scope (as ``mem.search``)."""
        plan = plan_search((view or self._view()).spec(), query, filters={"kind": "message", **filters}, k=k,
                           max_query_chars=self.core.settings.retrieval.max_query_chars)
        return self.core.searcher.execute(plan, self.tenant)

    def _visible(self, doc: dict[str, Any] | None, view: Scope | None = None) -> bool:
        return (view or self._view()).sees_topic(doc)

    def _topic_doc(self, topic_id: str) -> dict[str, Any]:
        check_id("topic_id", topic_id)
        doc = self.store.get([topic_id])[0]
        if not self._visible(doc):
            raise NotFoundError(f"topic_id={topic_id!r} does not exist in tenant {self.tenant!r}; list topics with mem.topics.list(chat_id)")
        return doc  # type: ignore[return-value]

    @property
    def usage(self) -> dict[str, dict[str, Any]]:
        """Token usage of the topic tier's model calls, per operation plus ``"total"``."""
        return self.rt.caller().usage(TOPIC_OPS)

    @property
    def cache(self) -> RecentCache | None:
        return self.rt.cache

    def pending(self) -> int:
        """Messages queued for threading."""
        return self.store.queue_size()

    def process(self) -> dict[str, int]:
        """Thread queued messages and write due summaries (also run by ``mem.process()``)."""
        return self.rt.process(self.tenant)

    # -- topics -----------------------------------------------------------------------------------
    def get(self, topic_id: str) -> Topic:
        """Raises NotFoundError for an unknown (or, for a bound handle, foreign) topic."""
        return _to_topic(self._topic_doc(topic_id))

    def list(self, chat_id: str, *, active_only: bool = False) -> list[Topic]:
        """The chat's topics, oldest first."""
        check_id("chat_id", chat_id)
        if active_only:
            docs = [d for d in self.store.get(self.store.active_ids(chat_id)) if d and d.get("is_active")]
        else:
            docs = self.store.all_topics(chat_id=chat_id)
        view = self._view()
        docs = [d for d in docs if self._visible(d, view)]
        docs.sort(key=lambda d: (d["create_time"], d.get("first_seq", 0)))
        return [_to_topic(d) for d in docs]

    def topic_of(self, message_id: str, *, chat_id: str) -> str | None:
        """The topic message ``message_id`` of chat ``chat_id`` was threaded into (None while it waits
        in the queue, or when it is not stored or not visible to this handle)."""
        m = self._message(message_id, chat_id)
        return m.topic_id if m is not None else None

    def messages(self, topic_id: str, *, start: datetime | str | None = None, end: datetime | str | None = None, limit: int = 100) -> list[Message]:
        """The topic's original messages, optionally within a time range, oldest first (seed 3.4.2)."""
        doc = self._topic_doc(topic_id)
        s = parse_time("start", start) if start is not None else None
        e = parse_time("end", end) if end is not None else None
        rows = self.store.members(topic_id, start=s, end=e)[:limit]
        reader = MessageReader(self.core.records, self.tenant, self.rt.cache)
        msgs = [m for m in reader.get(self.store.member_refs(doc, rows)) if m is not None]
        return msgs

    def close_idle(self, now: datetime | str | None = None) -> int:
        """Close topics idle at ``now`` (wall clock by default) and queue their summaries."""
        when = parse_time("now", now) if now is not None else utcnow()
        with self.rt.lock:
            return sweep_idle(self.store, self.rt.settings, when, self.core.analyzer, self.rt.caller())

    # -- short-term recall ----------------------------------------------------------------------------
    def recent(self, chat_id: str, limit: int = 20) -> list[Message]:
        """The chat's latest messages from the recent-message cache (empty without one)."""
        cache = self.rt.cache
        msgs = cache.recent(self.tenant, chat_id, limit) if cache is not None else []
        view = self._view()
        return [m for m in msgs if view.sees(m)]

    def recall(self, message: str | Message, *, chat_id: str | None = None, max_messages: int | None = None) -> list[Message]:
        """Seed 2.4.3 for a stored message (or its id with ``chat_id``): reply chain (depth
        ``reply_chain_depth``), the topic's messages, then the chat's latest to fill up;
        chronological, at most ``max_messages``.

        Raises:
            InvalidInputError: a message id without ``chat_id`` (ids are unique per chat only).
            NotFoundError: the message is not stored (or not visible to this handle).
        """
        reader = MessageReader(self.core.records, self.tenant, self.rt.cache)
        if isinstance(message, str):
            if chat_id is None:
                raise InvalidInputError(
                    "chat_id", None, "is required with a message id (message ids are unique per chat)",
                    f"call recall({message!r}, chat_id=...) or pass the Message",
                )
            found = self._message(message, chat_id)
            if found is None:
                raise NotFoundError(
                    f"message_id={message!r} of chat_id={chat_id!r} is not stored; add it with mem.add_message first"
                )
            message = found
        s = self.rt.settings
        view = self._view()
        return short_term(
            reader, self.store, message, max_messages=max_messages or s.recall_max_messages, max_depth=s.reply_chain_depth,
            visible=view.sees if view.bound_user else None,
        )

    # -- summaries --------------------------------------------------------------------------------------
    def summarize(self, topic_id: str) -> TopicSummary | None:
        """Write a new summary version now (the manual trigger)."""
        self._topic_doc(topic_id)
        with self.rt.lock:
            doc = self.rt.summarizer(self.tenant).summarize(topic_id, "manual")
            if doc is not None:
                self.rt.summary_written(self.tenant, doc)
        return _to_summary(doc) if doc else None

    def summary(self, topic_id: str) -> TopicSummary | None:
        doc = self._topic_doc(topic_id)
        latest = self.store.latest_summaries([doc]).get(topic_id)
        return _to_summary(latest) if latest else None

    def summaries(self, topic_id: str) -> list[TopicSummary]:
        """Every version, oldest first."""
        self._topic_doc(topic_id)
        return [_to_summary(d) for d in self.store.summaries(topic_id)]

    def evaluate_summary(self, topic_id: str, *, version: int | None = None) -> dict[str, Any]:
        """Score the topic's latest summary (or ``version``) against the messages it summarizes and the
        topic's title (seed 001, 3.2.3): ``{coverage, coherence, relevance, llm_evaluation, overall_score,
        weights, redistributed, details}``. With a chat model the judge is called (``topic_summary_evaluation``
        in ``usage``); the score is not stored (new versions are scored when written: ``metadata["quality"]``).

        Raises:
            NotFoundError: an unknown topic, a topic without a summary, or a version that does not exist.
        """
        doc = self._topic_doc(topic_id)
        return self.rt.summarizer(self.tenant).evaluate_version(doc, version, self.rt.evaluator())

    def _user_filter(self, user_id: str | None) -> str | None:
        return self.scope.owner(user_id)  # "" is refused, never "all users"; a bound handle names only its user

    def search_summaries(self, query: str, *, chat_id: str | None = None, user_id: str | None = None, k: int = 5) -> list[Any]:
        """Topic summaries by keyword + vector, fused (seed 3.3.3). Returns SearchHits (``meta.kind="topic_summary"``)."""
        uid = self._user_filter(user_id)
        hits = self.rt.summarizer(self.tenant).search(query, chat_id=chat_id, user_id=uid, k=k, chats=self._chats_of(uid))
        return [summary_hit(p, s) for p, s in hits]

    def _chats_of(self, uid: str | None, view: Scope | None = None) -> frozenset[str]:
        """The member chats that widen a search for ``uid``: the bound user's (an explicit ``user_id``
        filter on an unbound handle keeps its meaning: the topics that user took part in)."""
        if uid is None or uid != self.scope.bound_user:
            return frozenset()
        return (view or self._view()).chats

    def _fresh(self, hits: list[Any]) -> list[Any]:
        """Summary hits without the stale ones: a summary that quotes an edited or deleted message is left out
        until process() rewrites it, as the context does (the topic's flag decides; the point's may lag)."""
        if not hits:
            return hits
        docs = {d["topic_id"]: d for d in self.store.get(list({h.meta["topic_id"] for h in hits})) if d is not None}
        return [h for h in hits if not h.meta.get("stale") and not (docs.get(h.meta["topic_id"]) or {}).get("summary_stale")]

    # -- the two searches of seed 1.1 ----------------------------------------------------------------------
    def quick_search(self, query: str, *, chat_id: str | None = None, user_id: str | None = None, k: int = 5) -> SearchResult:
        """Fast hybrid search over messages and topic summaries, fused by RRF (the default context source)."""
        t0 = time.perf_counter()
        uid = self._user_filter(user_id)
        filters: dict[str, Any] = {}
        if chat_id:
            filters["chat_id"] = chat_id
        if uid and uid != self.scope.bound_user:  # a bound handle's spec already is its user's (and member chats') messages
            filters["user_id"] = uid
        msg_res = self._search_messages(query, filters, k)
        sums = self._fresh(self.search_summaries(query, chat_id=chat_id, user_id=uid, k=k))
        by_id = {h.id: h for h in [*msg_res.hits, *sums]}
        fused = rrf([[h.id for h in msg_res.hits], [h.id for h in sums]], k=self.core.settings.retrieval.rrf_k, limit=k)
        hits = [by_id[i].model_copy(update={"score": s}) for i, s in fused]
        return SearchResult(
            hits=hits, total_found=len(by_id), route_used=msg_res.route_used, fallback_reason=msg_res.fallback_reason,
            queries=msg_res.queries, timings={**msg_res.timings, "total": round((time.perf_counter() - t0) * 1000, 3)},
        )

    def topic_search(
        self, query: str, *, chat_id: str | None = None, user_id: str | None = None, k: int = 5, messages_per_topic: int = 5,
    ) -> TopicSearchResult:
        """Deep search: topics ranked by their summaries and their messages, each with its summary and messages."""
        t0 = time.perf_counter()
        uid = self._user_filter(user_id)
        view = self._view()
        chats = self._chats_of(uid, view)
        sums = self.rt.summarizer(self.tenant).search(query, chat_id=chat_id, user_id=uid, k=max(k * 2, 10), chats=chats)
        sums = [(p, sc) for p, sc in sums if not p.get("stale")]  # quotes an edited or deleted message: no vote, not shown
        filters: dict[str, Any] = {}
        if chat_id:
            filters["chat_id"] = chat_id
        if uid and uid != view.bound_user:  # a bound handle's spec already is its user's (and member chats') messages
            filters["user_id"] = uid
        msg_res = self._search_messages(query, filters, 50, view)
        timings = {"search": round((time.perf_counter() - t0) * 1000, 3)}
        msg_topics: list[str] = []
        hits_by_topic: dict[str, list[str]] = {}
        for h in msg_res.hits:
            tid = h.meta.get("topic_id")
            if tid:
                hits_by_topic.setdefault(tid, []).append(h.id)
                if tid not in msg_topics:
                    msg_topics.append(tid)
        ranked = fuse_topics([p["topic_id"] for p, _ in sums], msg_topics, k * 2, self.core.settings.retrieval.rrf_k)
        docs = {d["topic_id"]: d for d in self.store.get([t for t, _ in ranked]) if d is not None}
        latest = self.store.latest_summaries(list(docs.values()))
        reader = MessageReader(self.core.records, self.tenant, self.rt.cache)
        out: list[TopicHit] = []
        for tid, score in ranked:
            doc = docs.get(tid)
            in_chat = doc is not None and doc.get("chat_id") in chats
            if doc is None or not self._visible(doc, view) or (uid and uid not in doc.get("user_ids", []) and not in_chat):
                continue
            # hits carry their topic_id, so they are in the topic's chat, as its membership rows are
            want = list(dict.fromkeys(hits_by_topic.get(tid, [])))[:messages_per_topic]
            if len(want) < messages_per_topic:
                rows = self.store.members(tid)
                for r in reversed(rows):
                    if len(want) >= messages_per_topic:
                        break
                    if r["id"] not in want and (not self.scope.bound_user or in_chat or r.get("u") == self.scope.bound_user):
                        want.append(r["id"])
            refs = [MessageRef(doc["chat_id"], mid) for mid in want]
            msgs = sorted((m for m in reader.get(refs) if m is not None), key=lambda m: (m.create_time, m.seq or 0))
            summ = None if doc.get("summary_stale") else latest.get(tid)  # stale: left out until process() rewrites it
            out.append(TopicHit(
                topic_id=tid, title=doc["title"], chat_id=doc["chat_id"], score=score,
                summary=summ["content"] if summ else None, summary_version=int(doc.get("summary_version") or 0),
                summary_quality=quality_brief(summ),
                keywords=[] if doc.get("summary_stale") else list((doc.get("keywords") or {}).keys()),  # written with the summary
                start_time=doc["create_time"], end_time=doc["update_time"],
                message_count=doc.get("message_count", 0), is_active=doc.get("is_active", True),
                messages=[_message_dict(m) for m in msgs],
            ))
            if len(out) >= k:
                break
        timings["total"] = round((time.perf_counter() - t0) * 1000, 3)
        return TopicSearchResult(query=query, topics=out, timings=timings)

    # -- background worker ---------------------------------------------------------------------------------
    def start(self, interval: float = 5.0) -> None:
        """Run ``mem.process()`` every ``interval`` seconds in a daemon thread (until ``stop()``)."""
        rt = self.rt
        if rt.worker is not None and rt.worker.is_alive():
            return
        process = self._process_all or (lambda: self.rt.process(self.tenant))
        rt.stop_event.clear()

        def loop() -> None:
            while not rt.stop_event.wait(interval):
                try:
                    process()
                except Exception:
                    logger.exception("background topic processing failed")

        rt.worker = threading.Thread(target=loop, name="layered-memory-topics", daemon=True)
        rt.worker.start()

    def stop(self, timeout: float = 10.0) -> None:
        rt = self.rt
        rt.stop_event.set()
        if rt.worker is not None:
            rt.worker.join(timeout)
            rt.worker = None
