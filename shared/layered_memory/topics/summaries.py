"""Mid-term memory (seed 001, 3): versioned topic summaries, keywords, and search over them.

Triggers (each queues a job in ``topic_jobs``; ``process()`` writes the summaries): a topic closing
after ``idle_timeout_seconds`` ("idle"), ``summary_every_messages`` new messages ("count"), active
topics with new messages every ``summary_interval_seconds`` ("schedule"), and ``summarize(topic_id)``
("manual").

Generation (3.2.2): the topic's messages (the newest ``summary_max_messages``; the previous version
stands in for older ones) -> segments of ``segment_messages`` (also cut at long pauses) -> one
summary per segment -> merged into one. If the model fails or none is configured, the simple
summary is extractive: the most central sentences, quoted, so it keeps the users' language.
Each new version is scored (``layered_memory.evaluation``, seed 3.2.3) and stored with its score in
``metadata.quality``; a model summary scoring below ``summary_quality.retry_below`` is written once
more by the fallback (one segment instead of several, else the extractive summary) and the better of
the two is kept (``metadata.quality.attempts``). Every run writes a new version; older versions
stay in the RecordStore. The newest version is indexed as one point (``kind="topic_summary"``) in
the engine's collection, with BM25 over title, keywords and text and the dense vector of the text,
so keyword and vector search fuse in one query.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from ..config import TopicSettings
from ..errors import NotFoundError
from ..evaluation import Background, SummaryEvaluator
from ..index.points import point_id, speaker
from ..models import Message, iso, parse_time, utcnow
from ..retrieval.analyzer import Analyzer
from ..index.background import BackgroundIndexer
from ..index.collection import Entry, IndexedCollection
from ..index.pending import Target, mark, write_sparse
from ..filterspec import Eq, FilterSpec
from ..index.scope import member_condition
from ..session_summaries import extractive_summary
from .llm import ModelCaller
from .store import TopicStore
from .threader import model_title, surface_keywords

logger = logging.getLogger(__name__)

KIND = "topic_summary"
PENDING_KIND = "topic_summaries"  # the writer's source name and the markers' key prefix (see index.pending)
SEGMENT_GAP = timedelta(hours=1)

SEGMENT_PROMPT = """Summarize this part of a conversation on the topic "{title}" for an assistant's long memory.
Write in the same language the participants use (do not translate). Keep names, facts, numbers,
decisions, preferences and open questions; drop greetings and filler. At most {max_words} words.

Messages:
{messages}

Summary:"""

MERGE_PROMPT = """Merge these partial summaries of one conversation topic "{title}" into one summary.
Write in the same language as the partial summaries (do not translate). Keep every fact, name, number
and decision; remove repetition. At most {max_words} words.

Partial summaries:
{parts}

Summary:"""


def segment_messages(messages: Sequence[Message], size: int, gap: timedelta = SEGMENT_GAP) -> list[list[Message]]:
    """Chunks of at most ``size`` messages, also cut where the conversation paused longer than ``gap``."""
    segments: list[list[Message]] = []
    for m in messages:
        if not segments or len(segments[-1]) >= size or m.create_time - segments[-1][-1].create_time > gap:
            segments.append([])
        segments[-1].append(m)
    return segments


def _words_for(n_messages: int) -> int:
    return min(250, 40 + 8 * n_messages)


def llm_topic_summary(title: str, segments: Sequence[Sequence[Message]], previous: str, caller: ModelCaller) -> str:
    parts = [previous] if previous else []
    for seg in segments:
        convo = "\n".join(f"{speaker(m)}: {m.content}" for m in seg)
        text = caller.call(SEGMENT_PROMPT.format(title=title, max_words=_words_for(len(seg)), messages=convo), operation="segment_summary")
        if not text.strip():
            raise ValueError("the chat model returned an empty segment summary")
        parts.append(text.strip())
    if len(parts) == 1:
        return parts[0]
    merged = caller.call(
        MERGE_PROMPT.format(title=title, max_words=250, parts="\n\n".join(f"- {p}" for p in parts)), operation="merge_summary"
    )
    if not merged.strip():
        raise ValueError("the chat model returned an empty merged summary")
    return merged.strip()


def simple_summary(previous: str, messages: Sequence[Message], analyzer: Analyzer) -> str:
    """The fallback: extractive, in the users' own words (and language)."""
    return extractive_summary(previous, messages, analyzer, max_sentences=6)


class Summarizer:
    """Writes summary versions for one tenant and keeps their points in the index."""

    def __init__(
        self, store: TopicStore, analyzer: Analyzer, settings: TopicSettings, caller: ModelCaller, collection: IndexedCollection,
        evaluator: SummaryEvaluator | None = None, retry_below: float = 0.0, background: BackgroundIndexer | None = None,
    ) -> None:
        self.store = store
        self.analyzer = analyzer
        self.settings = settings
        self.caller = caller
        self.coll = collection  # the engine's message collection: summaries are points of kind "topic_summary"
        self.evaluator = evaluator  # scores each new version; None: no scoring, no retry
        self.retry_below = retry_below
        self.background = background  # set in the background index mode: the writer embeds the points

    def _generate(self, title: str, segments: Sequence[Sequence[Message]], previous: str, msgs: Sequence[Message]) -> tuple[str, str]:
        """(content, method): the model's segmented summary, or the simple (extractive) one."""
        if self.caller.available:
            try:
                return llm_topic_summary(title, segments, previous, self.caller), "llm"
            except Exception as exc:
                logger.warning("topic summary model failed (%s); using the simple summary", type(exc).__name__)
        return simple_summary(previous, msgs, self.analyzer), "simple"

    def chat_background(self, topic: dict[str, Any], msgs: Sequence[Message], evaluator: SummaryEvaluator) -> Background | None:
        """The topic's chat around its messages (``summary_quality.background_messages`` of them, half
        before the topic's first message, the topic's own left out): what the evaluator weighs the
        topic's terms against (issue 24)."""
        limit = evaluator.settings.background_messages
        if not limit or not evaluator.settings.grounded or not msgs:
            return None
        first = min((m.seq for m in msgs if m.seq is not None), default=None)
        if first is None:
            return None
        rest = self.store.records.scan_messages(self.store.tenant, chat_id=topic["chat_id"], after_seq=max(0, first - 1 - limit // 2), limit=limit)
        return Background.build(self.analyzer, rest, exclude=msgs)

    def _checked(
        self, topic: dict[str, Any], segments: Sequence[Sequence[Message]], previous: str, msgs: Sequence[Message], content: str, method: str,
    ) -> tuple[str, str, dict[str, Any]]:
        """Score the new version; below ``retry_below`` write it once more by the seed's fallback (one
        segment instead of several, else the simple summary) and keep the better of the two."""
        assert self.evaluator is not None
        title = topic["title"]
        bg = self.chat_background(topic, msgs, self.evaluator)
        quality = self.evaluator.evaluate(content, msgs, title, background=bg)
        if quality["overall_score"] >= self.retry_below or method != "llm":
            return content, method, quality
        alt_method = "llm_single_segment" if len(segments) > 1 else "simple"
        try:
            alt = llm_topic_summary(title, [list(msgs)], previous, self.caller) if len(segments) > 1 else ""
        except Exception as exc:
            logger.warning("topic summary retry failed (%s); using the simple summary", type(exc).__name__)
            alt = ""
        if not alt:
            alt, alt_method = simple_summary(previous, msgs, self.analyzer), "simple"
        alt_quality = self.evaluator.evaluate(alt, msgs, title, background=bg)
        attempts = [{"generation_method": method, "overall_score": quality["overall_score"]},
                    {"generation_method": alt_method, "overall_score": alt_quality["overall_score"]}]
        logger.info("topic summary scored %.3f < %.3f; retry by %s scored %.3f", quality["overall_score"], self.retry_below,
                    alt_method, alt_quality["overall_score"])
        if alt_quality["overall_score"] > quality["overall_score"]:
            content, method, quality = alt, alt_method, alt_quality
        return content, method, {**quality, "retried": True, "attempts": attempts}

    def _messages(self, topic: dict[str, Any]) -> tuple[list[Message], int]:
        rows = self.store.members(topic["topic_id"])
        total = len(rows)
        return self._read(topic, rows[-self.settings.summary_max_messages :]), total

    def evaluate_version(self, topic: dict[str, Any], version: int | None, evaluator: SummaryEvaluator) -> dict[str, Any]:
        """Score a stored version (the latest when ``version`` is None) against the messages it summarized.

        Raises:
            NotFoundError: the topic has no summary, or no such version.
        """
        versions = self.store.summaries(topic["topic_id"])
        chosen = versions[-1] if versions and version is None else next((v for v in versions if v["version"] == version), None)
        if chosen is None:
            what = "has no summary yet; write one with mem.topics.summarize(topic_id)" if not versions else (
                f"has no version {version}; versions are {[v['version'] for v in versions]}")
            raise NotFoundError(f"topic_id={topic['topic_id']!r} {what}")
        msgs, _ = self.messages_until(topic, (chosen.get("metadata") or {}).get("last_message_id"))
        return evaluator.evaluate(chosen["content"], msgs, topic["title"], background=self.chat_background(topic, msgs, evaluator))

    def messages_until(self, topic: dict[str, Any], last_message_id: str | None) -> tuple[list[Message], int]:
        """The messages a version summarized: the newest ``summary_max_messages`` up to ``last_message_id``."""
        rows = self.store.members(topic["topic_id"])
        if last_message_id:
            ends = [i for i, r in enumerate(rows) if r["id"] == last_message_id]
            rows = rows[: ends[-1] + 1] if ends else rows
        return self._read(topic, rows[-self.settings.summary_max_messages :]), len(rows)

    def _read(self, topic: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[Message]:
        msgs = [m for m in self.store.records.get_messages(self.store.tenant, self.store.member_refs(topic, rows)) if m is not None]
        msgs.sort(key=lambda m: (m.create_time, m.seq or 0))
        return msgs

    def summarize(self, topic_id: str, trigger: str = "manual", *, index: bool = True) -> dict[str, Any] | None:
        """Write a new summary version of the topic. Returns the summary document (None: no messages).
        ``index=False``: the caller indexes it (``index_summaries`` embeds a batch in one call); a crash in
        between leaves a missing point that the open check and ``doctor --repair`` re-create."""
        topic = self.store.get([topic_id])[0]
        if topic is None:
            return None
        msgs, total = self._messages(topic)
        if not msgs:
            logger.warning("topic %s has no messages to summarize", topic_id)
            return None
        previous = ""  # a stale summary (an edited or deleted message) is never carried into the next version
        if total > len(msgs) and topic.get("summary_version") and not topic.get("summary_stale"):
            prev = self.store.latest_summaries([topic]).get(topic_id)
            previous = prev["content"] if prev else ""
        t0 = time.perf_counter()
        if topic.get("title_stale"):  # its title's message was edited or deleted (``topics.edits``): the model titles it again
            topic["title"] = model_title(self.caller, msgs[0].content) or topic["title"]
            topic.pop("title_stale", None)
        segments = segment_messages(msgs, self.settings.segment_messages)
        content, method = self._generate(topic["title"], segments, previous, msgs)
        quality = None
        if self.evaluator is not None:
            content, method, quality = self._checked(topic, segments, previous, msgs, content, method)
        keywords = surface_keywords([m.content for m in msgs], self.analyzer, k=10)
        now = utcnow()
        version = int(topic.get("summary_version") or 0) + 1
        doc = {
            "summary_id": f"s-{uuid.uuid4().hex[:16]}", "topic_id": topic_id, "chat_id": topic["chat_id"],
            "title": topic["title"], "content": content, "version": version,
            "create_time": iso(now), "update_time": iso(now), "keywords": keywords,
            "user_ids": sorted({m.user_id for m in msgs} | set(topic.get("user_ids") or [])),
            "metadata": {
                "generation_method": method, "trigger": trigger, "message_count": total,
                "start_time": iso(msgs[0].create_time), "end_time": iso(msgs[-1].create_time),
                "first_message_id": msgs[0].message_id, "last_message_id": msgs[-1].message_id,
                "participants": sorted({speaker(m) for m in msgs}), "seconds": round(time.perf_counter() - t0, 4),
                **({"quality": quality} if quality is not None else {}),
            },
        }
        self.store.put_summary(doc)
        topic.update({
            "summary_version": version, "covered_count": total, "covered_seq": max(m.seq or 0 for m in msgs),
            "last_summary_time": iso(now), "keywords": keywords,
        })
        topic.pop("summary_stale", None)
        topic.pop("summary_redacted", None)  # its point is written again below (or by the caller's batch)
        self.store.put([topic])
        if index:
            self.index_summaries([doc])
        logger.info("topic summary v%d of %s (%s, trigger %s)", version, topic_id, method, trigger)
        return doc

    # -- index ------------------------------------------------------------------------------------
    def _text(self, doc: dict[str, Any]) -> str:
        return f"{doc['title']}\n{' '.join(doc.get('keywords') or {})}\n{doc['content']}"

    def _payload(self, d: dict[str, Any]) -> dict[str, Any]:
        return {
            "tenant": self.store.tenant, "kind": KIND, "id": d["summary_id"], "summary_id": d["summary_id"],
            "topic_id": d["topic_id"], "chat_id": d["chat_id"], "user_ids": list(d.get("user_ids") or []),
            "title": d["title"], "text": d["content"], "version": d["version"], "timestamp": d["update_time"],
            "lang": self.analyzer.detect_lang(d["content"]), "keywords": list(d.get("keywords") or {}),
            "quality": ((d.get("metadata") or {}).get("quality") or {}).get("overall_score"),
        }

    def entries(self, docs: Sequence[dict[str, Any]]) -> list[Entry]:
        """One point per topic (its newest version): BM25 over title, keywords and text; the dense
        vector of title and text."""
        return [
            Entry(point_id(self.store.tenant, KIND, d["topic_id"]), self._payload(d), f"{d['title']}. {d['content']}",
                  terms=self.analyzer.terms(self._text(d)))
            for d in docs
        ]

    def index_summaries(self, docs: Sequence[dict[str, Any]]) -> None:
        """Index summary versions: inline (a failing embedder leaves the points BM25-only), or in the
        background mode BM25 points now and a pending marker per topic that the index writer embeds."""
        if self.coll.index is None or not docs:
            return
        entries = self.entries(docs)
        if self.background is None:
            self.coll.upsert(entries, on_embed_error="bm25")
            return
        tenant = self.store.tenant
        keys = mark(self.store.records, tenant, PENDING_KIND, [d["topic_id"] for d in docs])
        targets = [Target(self.coll.name, e.point_id, e) for e in entries]
        write_sparse(self.coll.index, targets, self.analyzer, self.coll.encoder, self.background.optimizing)
        self.background.notify(tenant, keys, source=PENDING_KIND)

    def search(
        self, query: str, *, chat_id: str | None = None, user_id: str | None = None, k: int = 5,
        vector: Sequence[float] | None = None, topic_ids: Sequence[str] | None = None, chats: Iterable[str] = (),
    ) -> list[tuple[dict[str, Any], float]]:
        """Latest summaries matching ``query``: BM25 and dense fused by RRF in the index (3.3.3),
        or BM25 over the stored summaries without one. Returns (payload-like doc, score), best first.
        ``user_id`` keeps the topics that user took part in or that belong to its member ``chats`` (the
        caller passes the scope's user and chats)."""
        spec = FilterSpec.of(Eq("tenant", self.store.tenant), Eq("kind", KIND))
        if chat_id:
            spec = spec.and_(Eq("chat_id", chat_id))
        if user_id:
            spec = spec.and_(member_condition(user_id, chats, kind=KIND, owner_key="user_ids"))
        if topic_ids:
            spec = spec.and_(Eq("topic_id", list(topic_ids)))
        if self.coll.index is not None:
            found = self.coll.query(query, spec, k=k, vector=vector)
            return [(h.payload, h.score) for h in found.hits]
        topics = [t for t in self.store.all_topics(chat_id=chat_id) if t.get("summary_version")]
        stale = {t["topic_id"] for t in topics if t.get("summary_stale")}
        records = [(d["summary_id"], {**d, **self._payload(d), **({"stale": 1} if d["topic_id"] in stale else {})}, self._text(d))
                   for d in self.store.latest_summaries(topics).values()]
        return [(h.payload, h.score) for h in self.coll.query_records(query, spec, records, k=k).hits]


def due_by_schedule(topics: Sequence[dict[str, Any]], interval: float, now: Any) -> list[str]:
    """Active topics with unsummarized messages whose last summary (or creation) is older than ``interval``."""
    out = []
    for t in topics:
        if not t.get("is_active") or t.get("message_count", 0) <= t.get("covered_count", 0):
            continue
        since = parse_time("t", t.get("last_summary_time") or t["create_time"])
        if (now - since).total_seconds() >= interval:
            out.append(t["topic_id"])
    return out
