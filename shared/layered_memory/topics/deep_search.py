"""``quick_search`` (the default context source) and ``topic_search`` (deep search, a tool for the model).

``quick_search`` fuses (RRF) the hybrid message search with the topic-summary search into one
``SearchResult``. ``topic_search`` ranks topics by fusing the topics of the best summaries with the
topics of the best messages, then returns each topic with its title, keywords, latest summary and
the messages behind it (the matching ones first, then the topic's latest), as a
:class:`TopicSearchResult` that renders to a dict (``to_dict``) or a readable block (``to_text``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..models import SearchHit
from ..retrieval.fusion import rrf

__all__ = ["TopicHit", "TopicSearchResult", "summary_hit", "fuse_topics", "quality_brief"]


@dataclass
class TopicHit:
    topic_id: str
    title: str
    chat_id: str
    score: float
    summary: str | None = None
    summary_version: int = 0
    summary_quality: dict[str, Any] | None = None  # the stored score of that version (seed 3.2.3)
    keywords: list[str] = field(default_factory=list)
    start_time: str | None = None
    end_time: str | None = None
    message_count: int = 0
    is_active: bool = True
    messages: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic_id": self.topic_id, "title": self.title, "chat_id": self.chat_id, "score": round(self.score, 6),
            "summary": self.summary, "summary_version": self.summary_version, "summary_quality": self.summary_quality,
            "keywords": self.keywords,
            "start_time": self.start_time, "end_time": self.end_time, "message_count": self.message_count,
            "is_active": self.is_active, "messages": self.messages,
        }


@dataclass
class TopicSearchResult:
    query: str
    topics: list[TopicHit] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "topics": [t.to_dict() for t in self.topics], "total_found": len(self.topics)}

    def to_text(self) -> str:
        """A readable block for a tool result: one section per topic, its summary and messages."""
        if not self.topics:
            return f'No topics found for "{self.query}".'
        lines = [f'Topics matching "{self.query}":']
        for i, t in enumerate(self.topics, 1):
            span = f"{(t.start_time or '')[:16]} .. {(t.end_time or '')[:16]}".strip(" .")
            state = "active" if t.is_active else "closed"
            lines.append(f"\n{i}. {t.title} ({t.message_count} messages, {span}, {state})")
            if t.keywords:
                lines.append(f"   Keywords: {', '.join(t.keywords[:8])}")
            if t.summary:
                q = (t.summary_quality or {}).get("overall_score")
                lines.append(f"   Summary{f' (quality {q:.2f})' if q is not None else ''}: {t.summary}")
            for m in t.messages:
                lines.append(f"   - [{(m.get('create_time') or '')[:16]}] {m.get('user_name') or m.get('role')}: {m.get('content')}")
        return "\n".join(lines)


def summary_hit(payload: dict[str, Any], score: float) -> SearchHit:
    """A topic summary as a SearchHit (``meta.kind == "topic_summary"``)."""
    return SearchHit(
        id=str(payload.get("summary_id") or payload.get("id")), score=float(score),
        text=f"[{payload.get('title')}] {payload.get('text') or payload.get('content') or ''}",
        snippet=(payload.get("text") or payload.get("content") or "")[:160],
        meta={
            "kind": "topic_summary", "topic_id": payload.get("topic_id"), "chat_id": payload.get("chat_id"),
            "title": payload.get("title"), "version": payload.get("version"), "quality": payload.get("quality"),
            "date": payload.get("timestamp") or payload.get("update_time"),
            **({"stale": True} if payload.get("stale") else {}),  # quotes an edited or deleted message until rewritten
        },
    )


def quality_brief(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """The stored score of a summary version (seed 3.2.3), without its details (None: written before scoring)."""
    q = ((summary or {}).get("metadata") or {}).get("quality")
    if not q:
        return None
    return {k: q.get(k) for k in ("overall_score", "coverage", "coherence", "relevance")} | {
        "llm_score": (q.get("llm_evaluation") or {}).get("score"), "retried": bool(q.get("retried"))}


def fuse_topics(summary_topics: list[str], message_topics: list[str], k: int, rrf_k: int = 60) -> list[tuple[str, float]]:
    """Topics ranked by RRF over the summary ranking and the message ranking."""
    return rrf([summary_topics, message_topics], k=rrf_k, limit=k)
