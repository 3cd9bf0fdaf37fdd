"""Real-time topic attribution (seed 001, 2.3), run off the write path.

For each queued message, in write order:

1. **Reply chain**: a reply joins the topic of the message it replies to (a closed topic reopens).
2. **Similarity** to the chat's active topics. A topic vector is the running mean of its messages'
   embeddings. Raw cosines mean different things per model (multilingual-e5 puts unrelated texts at
   0.76, USE at 0.10), so they are rescaled by two anchors measured once per embedder: the mean
   cosine of unrelated sentences (``floor`` -> 0) and of same-topic message pairs (``topical`` -> 0.8):
   ``sim = clip(0.8 * (cos - floor) / (topical - floor), 0, 1)``; the seed's 0.7 / 0.5 bands then
   mean "about as close as a typical same-topic pair" for any model. Without an embedder the
   similarity is the share of the message's BM25 terms the topic has already seen (an overlap
   coefficient): no vectors, same bands.
   The chat's latest topic gets ``continuity_bonus`` while the gap is under ``continuity_seconds``,
   and a message with fewer than ``min_terms`` terms ("ok", "好的", "да") continues it outright.
3. ``sim > assign_threshold``: join the best topic. ``ambiguous_threshold < sim <= assign_threshold``
   with a chat model: ask it among the top ``candidates`` with their recent messages (the seed's
   prompt; the answer is a number or "新主题"; an unparsable answer or a failing model picks the best).
4. Otherwise a new topic, titled by the chat model or, without one, by the message's keywords.

Topics idle for ``idle_timeout_seconds`` (on the chat's own clock: its latest message time) close and
queue a summary; so does a topic that gathered ``summary_every_messages`` new messages.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from .._lazy import qdrant_models as models
from ..config import TopicSettings
from ..index.points import message_point_id
from ..models import Message, MessageRef, iso, parse_time
from ..retrieval.analyzer import Analyzer
from .llm import ModelCaller
from .store import TopicStore

if TYPE_CHECKING:
    from ..kernel import Kernel

logger = logging.getLogger(__name__)

MAX_TOPIC_TERMS = 300
RECENT_IDS = 10
TOPICAL_LEVEL = 0.8  # where a typical same-topic pair lands on the rescaled similarity
_CALIBRATION: dict[str, tuple[float, float]] = {}

# Unrelated sentences (three languages): their mean pairwise cosine is an embedder's floor.
_REFERENCE = (
    "The train to the airport leaves at seven.", "My grandmother grows tomatoes in her garden.",
    "The quarterly tax report is due next week.", "Whales communicate over long distances.",
    "He fixed the leaking kitchen faucet.", "Я купил новые зимние ботинки.",
    "В библиотеке закрыли читальный зал на ремонт.", "Футбольный матч перенесли на воскресенье.",
    "我昨天去医院看牙医了。", "这家餐厅的面条很好吃。", "明天的数学考试很难。", "The violin concert was sold out.",
)
# Pairs of chat messages on one topic (not paraphrases): their mean cosine is the "topical" anchor.
_TOPICAL = (
    ("Where should we go hiking this weekend?", "The trail along the lake has great mountain views."),
    ("My laptop keeps crashing after the update.", "Try reinstalling the graphics driver."),
    ("What should I cook for dinner tonight?", "Pasta with tomato sauce is quick to make."),
    ("Did you watch the football game yesterday?", "Yes, the second goal in the final minute was amazing."),
    ("I'm looking for a new job in marketing.", "Have you updated your resume and LinkedIn profile?"),
    ("Куда поедем в отпуск летом?", "Давай на море, в Сочи тепло и пляжи хорошие."),
    ("У меня сломалась машина.", "Отвези её в сервис, пусть проверят коробку передач."),
    ("Мы выбираем щенка, думаем о лабрадоре.", "Лабрадоры добрые, но им нужно много гулять."),
    ("周末我们去哪里爬山？", "湖边那条山路风景很好。"),
    ("我的电脑更新后一直死机。", "你试试重装显卡驱动。"),
)


def _unit(x: Any) -> np.ndarray:
    v = np.asarray(x, dtype=np.float32)
    return v / (np.linalg.norm(v, axis=-1, keepdims=True) + 1e-12)


def embedder_calibration(embedder: Any) -> tuple[float, float]:
    """(floor, topical): mean cosine of unrelated sentences and of same-topic message pairs for this
    embedder, measured once per embedder name (one batch of 32 texts)."""
    key = f"{getattr(embedder, 'name', type(embedder).__name__)}:{getattr(embedder, 'dim', '')}"
    if key not in _CALIBRATION:
        texts = [*_REFERENCE, *(a for a, _ in _TOPICAL), *(b for _, b in _TOPICAL)]
        v = _unit(embedder.embed_documents(texts))
        ref, a, b = v[: len(_REFERENCE)], v[len(_REFERENCE) : len(_REFERENCE) + len(_TOPICAL)], v[len(_REFERENCE) + len(_TOPICAL) :]
        n = len(ref)
        floor = float((ref @ ref.T).sum() - n) / (n * (n - 1))
        topical = float((a * b).sum(axis=1).mean())
        if topical - floor < 0.02:  # a degenerate embedder: fall back to raw cosines
            floor, topical = 0.0, TOPICAL_LEVEL
        _CALIBRATION[key] = (floor, topical)
        logger.info("similarity calibration of %s: floor %.3f, topical %.3f", key, floor, topical)
    return _CALIBRATION[key]


def calibrated_cosine(a: Sequence[float], b: Sequence[float], floor: float, topical: float = TOPICAL_LEVEL) -> float:
    """Cosine rescaled so ``floor`` -> 0 and ``topical`` -> TOPICAL_LEVEL, clipped to [0, 1]."""
    va, vb = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
    if denom == 0.0:
        return 0.0
    cos = float(va @ vb) / denom
    return min(1.0, max(0.0, TOPICAL_LEVEL * (cos - floor) / (topical - floor)))


def term_overlap(terms: Sequence[str], topic_terms: dict[str, int]) -> float:
    """Share of the message's distinct terms the topic has seen (0..1)."""
    uniq = set(terms)
    if not uniq:
        return 0.0
    return sum(1 for t in uniq if t in topic_terms) / len(uniq)


def content_terms(terms: Sequence[str]) -> int:
    """Distinct terms that carry content: CJK unigrams only echo their bigrams, so they do not count."""
    return sum(1 for t in set(terms) if not (len(t) == 1 and "\u3040" <= t <= "\u9fff"))


def mean_update(vector: list[float] | None, n: int, new: Sequence[float]) -> list[float]:
    """Running mean of unit vectors (each message counts once)."""
    x = np.asarray(new, dtype=np.float32)
    x = x / (np.linalg.norm(x) + 1e-12)
    if vector is None or n <= 0:
        return x.tolist()
    v = np.asarray(vector, dtype=np.float32)
    return ((v * n + x) / (n + 1)).tolist()


def add_terms(counts: dict[str, int], terms: Sequence[str]) -> dict[str, int]:
    c = Counter(counts)
    c.update(terms)
    return dict(c.most_common(MAX_TOPIC_TERMS)) if len(c) > MAX_TOPIC_TERMS else dict(c)


def surface_keywords(texts: Sequence[str], analyzer: Analyzer, k: int = 10) -> dict[str, float]:
    """The ``k`` most frequent terms, each shown by its most frequent surface form, weights sum to 1."""
    counts: Counter[str] = Counter()
    forms: dict[str, Counter[str]] = {}
    for text in texts:
        norm, spans = analyzer.spans(text)
        wanted = set(analyzer.terms(text))  # stopwords are not keywords
        for start, end, terms in spans:
            if not terms or terms[0] not in wanted:
                continue
            term = terms[0]
            counts[term] += 1
            forms.setdefault(term, Counter())[norm[start:end].casefold()] += 1
    if not counts:
        return {}
    # prefer longer terms on ties: they carry more meaning than 2-letter ones
    top = sorted(counts.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[:k]
    total = sum(n for _, n in top)
    return {forms[t].most_common(1)[0][0]: round(n / total, 4) for t, n in top}


def keyword_title(text: str, analyzer: Analyzer, words: int = 4) -> str:
    kws = list(surface_keywords([text], analyzer, k=words))
    if not kws:
        return text.strip()[:40]
    joiner = "" if all(re.fullmatch(r"[\u3040-\u30ff\u3400-\u9fff]+", w) for w in kws) else " "
    return joiner.join(kws)


TITLE_PROMPT = """Write a short title (at most 8 words) for a conversation topic that starts with the message below.
Use the same language as the message. Answer with the title only, no quotes.

Message: {content}"""


def model_title(caller: ModelCaller, content: str) -> str:
    """The chat model's title for a topic that starts with ``content`` ('' without a model, or when it fails:
    the caller falls back to ``keyword_title``)."""
    if not caller.available:
        return ""
    try:
        return clean_title(caller.call(TITLE_PROMPT.format(content=content[:1000]), operation="topic_title"))
    except Exception as exc:
        logger.warning("topic title model failed (%s); using keywords", type(exc).__name__)
        return ""


def clean_title(text: str) -> str:
    line = next((ln for ln in (text or "").splitlines() if ln.strip()), "")
    line = re.sub(r"^(title|标题|主题|название|тема)\s*[:：]\s*", "", line.strip(), flags=re.IGNORECASE)
    return line.strip(" \"'“”«»「」*#")[:120]


def decision_prompt(message: Message, candidates: Sequence[tuple[dict[str, Any], float]], recent: dict[str, list[Message]]) -> str:
    """The seed's prompt (2.3.3): the message, the candidates with their recent messages."""
    prompt = f"""
当前消息:
用户: {message.user_name or message.user_id}
内容: {message.content}

候选主题:
"""
    for i, (topic, sim) in enumerate(candidates):
        prompt += f"\n{i + 1}. 主题: {topic['title']} (相似度: {sim:.2f})\n"
        prompt += f"   描述: {topic.get('description') or '无'}\n"
        prompt += "   最近消息:\n"
        for m in recent.get(topic["topic_id"], []):
            prompt += f"   - {m.user_name or m.user_id}: {m.content}\n"
    prompt += "\n请判断当前消息应该归属于哪个主题？如果不属于任何候选主题，请回答'新主题'。只需回答主题编号或'新主题'。"
    return prompt


_NEW = re.compile(r"新主题|new topic|новая тема", re.IGNORECASE)


def parse_choice(response: str, n: int) -> int | None:
    """0-based candidate index, None for a new topic; an unparsable answer picks the first (seed)."""
    if _NEW.search(response or ""):
        return None
    m = re.search(r"(\d+)", response or "")
    if m and 0 <= int(m.group(1)) - 1 < n:
        return int(m.group(1)) - 1
    return 0


@dataclass
class Decision:
    topic_id: str | None  # None: open a new topic
    reason: str  # "reply" | "explicit" | "continuity" | "similar" | "model" | "new"
    score: float = 0.0
    ranked: list[tuple[str, float]] = field(default_factory=list)


def rank_topics(
    topics: Sequence[dict[str, Any]], *, vector: Sequence[float] | None, terms: Sequence[str], floor: float, topical: float,
    latest_id: str | None, gap_seconds: float | None, settings: TopicSettings,
) -> list[tuple[dict[str, Any], float]]:
    """Active topics with their similarity (plus the continuity bonus), best first."""
    out = []
    for t in topics:
        if vector is not None and t.get("topic_vector"):
            sim = calibrated_cosine(vector, t["topic_vector"], floor, topical)
        else:
            sim = term_overlap(terms, t.get("terms") or {})
        if t["topic_id"] == latest_id and gap_seconds is not None and gap_seconds <= settings.continuity_seconds:
            sim += settings.continuity_bonus
        out.append((t, min(sim, 1.0)))
    out.sort(key=lambda x: -x[1])
    return out


class Threader:
    """Threads queued messages of one tenant. Needs the store, the analyzer, optional embedder / vectors / model."""

    def __init__(
        self, store: TopicStore, analyzer: Analyzer, settings: TopicSettings, caller: ModelCaller,
        embedder: Any = None,
    ) -> None:
        self.store = store
        self.analyzer = analyzer
        self.settings = settings
        self.caller = caller
        self.embedder = embedder
        floor, topical = embedder_calibration(embedder) if embedder is not None else (0.0, TOPICAL_LEVEL)
        self.floor = settings.similarity_floor if settings.similarity_floor is not None else floor
        self.topical = settings.similarity_topical if settings.similarity_topical is not None else topical
        self.topics: dict[str, dict[str, Any]] = {}  # working set of this batch
        self.active: dict[str, list[str]] = {}
        self.chats: dict[str, dict[str, Any]] = {}
        self.members: list[tuple[str, int | None, str, str, str]] = []
        self.jobs: dict[str, str] = {}
        self.decisions: dict[MessageRef, Decision] = {}
        self.assigned: dict[MessageRef, str] = {}  # (chat_id, message_id) -> topic_id (this batch)

    # -- working set --------------------------------------------------------------------------
    def _topic(self, topic_id: str) -> dict[str, Any] | None:
        if topic_id not in self.topics:
            doc = self.store.get([topic_id])[0]
            if doc is None:
                return None
            self.topics[topic_id] = doc
        return self.topics[topic_id]

    def _active(self, chat_id: str) -> list[dict[str, Any]]:
        if chat_id not in self.active:
            self.active[chat_id] = self.store.active_ids(chat_id)
        docs = [self._topic(t) for t in self.active[chat_id]]
        return [d for d in docs if d is not None and d.get("is_active")]

    def _chat(self, chat_id: str) -> dict[str, Any]:
        if chat_id not in self.chats:
            self.chats[chat_id] = self.store.chat_state([chat_id]).get(chat_id) or {}
        return self.chats[chat_id]

    # -- one message --------------------------------------------------------------------------
    def close_idle(self, chat_id: str, now: datetime) -> list[str]:
        """Close the chat's topics idle for longer than the timeout; queue their summaries."""
        limit = now - timedelta(seconds=self.settings.idle_timeout_seconds)
        closed = []
        for t in self._active(chat_id):
            if parse_time("update_time", t["update_time"]) < limit:
                t["is_active"] = False
                closed.append(t["topic_id"])
                if t.get("message_count", 0) > t.get("covered_count", 0):
                    self.jobs[t["topic_id"]] = "idle"
        return closed

    def thread(self, msg: Message, vector: Sequence[float] | None) -> Decision:
        chat = self._chat(msg.chat_id)
        clock = parse_time("clock", chat["clock"]) if chat.get("clock") else None
        if clock is None or msg.create_time > clock:
            clock = msg.create_time
        self.close_idle(msg.chat_id, clock)
        terms = self.analyzer.terms(msg.content)
        decision = self._decide(msg, vector, terms, chat)
        if decision.topic_id is None:
            topic = self._new_topic(msg)
            decision = Decision(topic["topic_id"], decision.reason, decision.score, decision.ranked)
        topic = self._topic(decision.topic_id)  # type: ignore[arg-type]
        self._join(topic, msg, vector, terms)  # type: ignore[arg-type]
        chat.update({"clock": iso(clock), "latest": topic["topic_id"], "latest_time": iso(msg.create_time)})  # type: ignore[index]
        self.decisions[msg.ref] = decision
        self.assigned[msg.ref] = decision.topic_id  # type: ignore[assignment]
        return decision

    def _decide(self, msg: Message, vector: Sequence[float] | None, terms: list[str], chat: dict[str, Any]) -> Decision:
        s = self.settings
        if msg.topic_id:  # set by the caller: respected
            if self._topic(msg.topic_id) is None:
                self._new_topic(msg, topic_id=msg.topic_id)
            return Decision(msg.topic_id, "explicit", 1.0)
        if msg.reply_ref is not None:  # the replied-to message is in the same chat
            parent_topic = self.assigned.get(msg.reply_ref)
            if parent_topic is None:
                parent = self.store.records.get_messages(self.store.tenant, [msg.reply_ref])[0]
                parent_topic = parent.topic_id if parent is not None else None
            if parent_topic and self._topic(parent_topic) is not None:
                return Decision(parent_topic, "reply", 1.0)
        active = self._active(msg.chat_id)
        if not active:
            return Decision(None, "new")
        latest = chat.get("latest")
        gap = None
        if chat.get("latest_time"):
            gap = (msg.create_time - parse_time("latest_time", chat["latest_time"])).total_seconds()
        if (
            content_terms(terms) < s.min_terms and latest and gap is not None and gap <= s.continuity_seconds
            and any(t["topic_id"] == latest for t in active)
        ):
            return Decision(latest, "continuity", 1.0)
        ranked = rank_topics(active, vector=vector, terms=terms, floor=self.floor, topical=self.topical, latest_id=latest, gap_seconds=gap, settings=s)
        summary = [(t["topic_id"], round(sc, 4)) for t, sc in ranked[: s.candidates]]
        best, score = ranked[0]
        if score > s.assign_threshold:
            return Decision(best["topic_id"], "similar", score, summary)
        if score > s.ambiguous_threshold and self.caller.available:
            top = ranked[: s.candidates]
            recent = self._recent_messages([t for t, _ in top])
            try:
                answer = self.caller.call(decision_prompt(msg, top, recent), operation="topic_decision")
                idx = parse_choice(answer, len(top))
            except Exception as exc:  # a failing model: keep the best candidate (the seed's fallback)
                logger.warning("topic decision model failed (%s); joining the most similar topic", type(exc).__name__)
                idx = 0
            if idx is None:
                return Decision(None, "model", score, summary)
            return Decision(top[idx][0]["topic_id"], "model", top[idx][1], summary)
        return Decision(None, "new", score, summary)

    def _recent_messages(self, topics: Sequence[dict[str, Any]]) -> dict[str, list[Message]]:
        n = self.settings.decision_messages
        # a topic lives in one chat: its recent message ids resolve there
        refs = [MessageRef(t["chat_id"], mid) for t in topics for mid in (t.get("recent") or [])[-n:]] if n else []
        found = {m.ref: m for m in self.store.records.get_messages(self.store.tenant, refs) if m is not None} if refs else {}
        return {
            t["topic_id"]: [found[r] for r in (MessageRef(t["chat_id"], i) for i in (t.get("recent") or [])[-n:]) if r in found]
            for t in topics
        }

    def _title(self, content: str) -> str:
        return model_title(self.caller, content) or keyword_title(content, self.analyzer)

    def _new_topic(self, msg: Message, topic_id: str | None = None) -> dict[str, Any]:
        now = iso(msg.create_time)
        topic = {
            "topic_id": topic_id or f"t-{uuid.uuid4().hex[:16]}", "title": self._title(msg.content), "description": None,
            "creator_id": msg.user_id, "chat_id": msg.chat_id, "keywords": {}, "topic_vector": None, "vec_n": 0,
            "terms": {}, "create_time": now, "update_time": now, "is_active": True, "is_archived": False,
            "message_count": 0, "user_ids": [], "recent": [], "summary_version": 0, "covered_count": 0,
            "covered_seq": 0, "last_summary_time": None, "first_seq": msg.seq or 0,
        }
        self.topics[topic["topic_id"]] = topic
        self.active.setdefault(msg.chat_id, self.store.active_ids(msg.chat_id)).append(topic["topic_id"])
        return topic

    def _join(self, topic: dict[str, Any], msg: Message, vector: Sequence[float] | None, terms: list[str]) -> None:
        if vector is not None:
            topic["topic_vector"] = mean_update(topic.get("topic_vector"), topic.get("vec_n", 0), vector)
            topic["vec_n"] = topic.get("vec_n", 0) + 1
        topic["terms"] = add_terms(topic.get("terms") or {}, terms)
        topic["message_count"] = topic.get("message_count", 0) + 1
        if msg.user_id not in topic["user_ids"]:
            topic["user_ids"].append(msg.user_id)
        topic["recent"] = [*topic.get("recent", []), msg.message_id][-RECENT_IDS:]
        if msg.create_time > parse_time("update_time", topic["update_time"]):
            topic["update_time"] = iso(msg.create_time)
        if not topic.get("is_active"):  # a reply to a closed topic reopens it
            topic["is_active"] = True
            if topic["topic_id"] not in self.active.setdefault(msg.chat_id, []):
                self.active[msg.chat_id].append(topic["topic_id"])
        topic["last_seq"] = max(topic.get("last_seq", 0), msg.seq or 0)
        self.members.append((topic["topic_id"], msg.seq, msg.message_id, iso(msg.create_time), msg.user_id))
        if topic["message_count"] - topic.get("covered_count", 0) >= self.settings.summary_every_messages:
            self.jobs.setdefault(topic["topic_id"], "count")

    # -- write back ---------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the working set: topics, the active set, membership, chat clocks, summary jobs."""
        topics = list(self.topics.values())
        self.store.put(topics)
        self.store.set_active(topics)
        self.store.add_members(self.members)
        self.store.put_chat_state(self.chats)
        self.store.add_jobs(self.jobs)


def message_vectors(core: Kernel, tenant: str, msgs: Sequence[Message]) -> dict[MessageRef, list[float]]:
    """The vectors messages are threaded by: the index's when they embed the message alone, else embedded
    here (off the write path); none without an embedder or when it fails (threading by terms)."""
    if core.embedder is None or not msgs:
        return {}
    vecs: dict[MessageRef, list[float]] = {}
    # The index's vectors can be reused only when they embed the message alone: with the
    # "neighbour" context they also carry the previous turn, which would pull the first
    # message of a new topic into the old one. Then the message is embedded again, here.
    if core.index is not None and core.indexer.context != "neighbour":
        ids = [message_point_id(tenant, m.ref) for m in msgs]
        try:
            hits, _ = core.index.scroll(
                core.indexer.collection, filter=models.Filter(must=[models.HasIdCondition(has_id=ids)]),
                limit=len(ids), with_vectors=True,
            )
            vecs = {MessageRef(h.payload.get("chat_id"), h.payload.get("message_id")): h.dense for h in hits if h.dense}
        except Exception as exc:
            logger.warning("reading message vectors failed (%s); embedding again", type(exc).__name__)
    missing = [m for m in msgs if m.ref not in vecs]
    if missing:
        try:
            for m, v in zip(missing, core.embedder.embed_documents([m.content for m in missing])):
                vecs[m.ref] = v
        except Exception as exc:  # thread by terms
            logger.warning("embedder failed (%s); threading %d messages by BM25 terms", type(exc).__name__, len(missing))
    return vecs


def sweep_idle(store: TopicStore, settings: TopicSettings, now: datetime, analyzer: Analyzer, caller: ModelCaller) -> int:
    """Close every topic idle at wall-clock ``now`` (the scheduled side of the idle trigger)."""
    th = Threader(store, analyzer, settings, caller)
    closed = 0
    for chat in store.active_chats():
        closed += len(th.close_idle(chat, now))
    th.flush()
    return closed
