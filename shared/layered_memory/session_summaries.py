"""Session summaries: "Previous context summary: ..." (seed 002).

A summary covers the messages of a session older than the short-term window. It is refreshed once
``summary_threshold_messages - short_term_window`` older messages are not yet covered. With a chat
model the summary is written by the model (in the conversation's language); without one, or when
the model fails, an extractive summary picks the most central sentences.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .index.points import speaker
from .models import Message, check_id, iso
from .providers.base import ChatModel
from .retrieval.analyzer import Analyzer

if TYPE_CHECKING:
    from .index import Scope
    from .runtime import Runtime

logger = logging.getLogger(__name__)

SUMMARIES = "summary"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
MAX_SENTENCE_CHARS = 220

SUMMARY_PROMPT = """You maintain a running summary of a conversation for an assistant's memory.
Write the updated summary in the same language the participants use. Keep facts, names, numbers,
decisions, preferences and open questions; drop greetings and filler. At most {max_words} words.

Current summary (may be empty):
{previous}

New messages:
{messages}

Updated summary:"""


def extractive_summary(
    previous: str, messages: Sequence[Message], analyzer: Analyzer, *, max_sentences: int = 8
) -> str:
    """Pick the most central sentences (term overlap with the whole span), keep them in order."""
    candidates: list[tuple[int, str, list[str]]] = []
    for i, sent in enumerate(s for s in _SENTENCE.split(previous) if s.strip()):
        candidates.append((i, sent.strip(), analyzer.terms(sent)))
    base = len(candidates)
    for j, m in enumerate(messages):
        for sent in _SENTENCE.split(m.content):
            sent = sent.strip()
            if len(sent) < 3:
                continue
            if len(sent) > MAX_SENTENCE_CHARS:
                sent = sent[: MAX_SENTENCE_CHARS - 1] + "…"
            candidates.append((base + j, f"{speaker(m)}: {sent}", analyzer.terms(sent)))
    if not candidates:
        return previous
    df = Counter(t for _, _, terms in candidates for t in set(terms))
    scored = []
    for order, text, terms in candidates:
        if not terms:
            continue
        uniq = set(terms)
        centrality = sum(df[t] - 1 for t in uniq) / (len(uniq) ** 0.5)
        scored.append((centrality + 0.01 * len(uniq), order, text))
    chosen = sorted(sorted(scored, reverse=True)[:max_sentences], key=lambda x: x[1])
    seen: set[str] = set()
    lines = []
    for _, _, text in chosen:
        if text not in seen:
            seen.add(text)
            lines.append(text)
    return " ".join(lines)


def llm_summary(previous: str, messages: Sequence[Message], model: ChatModel, *, max_words: int = 200) -> str:
    convo = "\n".join(f"{speaker(m)}: {m.content}" for m in messages)
    prompt = SUMMARY_PROMPT.format(max_words=max_words, previous=previous or "(none)", messages=convo)
    text = model.complete(prompt, operation="session_summary").text.strip()
    if not text:
        raise ValueError("the chat model returned an empty summary")
    return text


def summarize(
    previous: str, messages: Sequence[Message], analyzer: Analyzer, model: ChatModel | None
) -> tuple[str, str]:
    """Return (summary, method) where method is "llm" or "extractive" (also after a model failure)."""
    if model is not None:
        try:
            return llm_summary(previous, messages, model), "llm"
        except Exception as exc:
            logger.warning("summary model failed (%s); using the extractive summary", type(exc).__name__)
    return extractive_summary(previous, messages, analyzer), "extractive"


class SessionSummaries:
    """The running summary of each session of one handle (``mem.get_summary`` / ``refresh_summary``
    delegate here); every call acts on ``scope.user(user_id)``."""

    def __init__(self, runtime: Runtime, scope: Scope) -> None:
        self._runtime = runtime
        self.scope = scope
        self.tenant_id = scope.tenant

    def _user(self, user_id: str | None) -> str:
        return self.scope.user(user_id)

    def get_summary(self, user_id: str | None, session_id: str) -> str | None:
        session_id = check_id("session_id", session_id)  # type: ignore[assignment]
        doc = self._runtime.records.get_docs(self.tenant_id, SUMMARIES, [f"{self._user(user_id)}|{session_id}"])[0]
        return doc["text"] if doc else None

    def refresh_summary(self, user_id: str | None, session_id: str, *, force: bool = False) -> str | None:
        """Summarize the session's messages older than the window when enough are uncovered (or ``force``)."""
        user_id = self._user(user_id)
        session_id = check_id("session_id", session_id)  # type: ignore[assignment]
        core = self._runtime
        mem_cfg = core.settings.memory
        key = f"{user_id}|{session_id}"
        doc = core.records.get_docs(self.tenant_id, SUMMARIES, [key])[0] or {"text": "", "covered_seq": 0, "covered_count": 0}
        total = core.records.count_messages(self.tenant_id, user_id=user_id, session_key=session_id)
        uncovered_old = total - mem_cfg.short_term_window - doc["covered_count"]
        step = mem_cfg.summary_threshold_messages - mem_cfg.short_term_window
        if uncovered_old <= 0 or (not force and (total <= mem_cfg.summary_threshold_messages or uncovered_old < step)):
            return doc["text"] or None
        new = core.records.scan_messages(
            self.tenant_id, user_id=user_id, session_key=session_id, after_seq=doc["covered_seq"], limit=uncovered_old
        )
        if not new:
            return doc["text"] or None
        text, method = summarize(doc["text"], new, core.analyzer, core.chat_model)
        doc = {
            "text": text, "method": method, "covered_seq": new[-1].seq or 0,
            "covered_count": doc["covered_count"] + len(new), "updated": iso(new[-1].create_time),
        }
        core.records.put_docs(self.tenant_id, SUMMARIES, {key: doc})
        return text

    def current(self, user_id: str, session_id: str) -> str | None:
        """The session's summary, refreshed first when stale and no chat model is set (the
        extractive summary is cheap; with a model the refresh waits for ``process()``)."""
        core = self._runtime
        cfg = core.settings.memory
        doc = core.records.get_docs(self.tenant_id, SUMMARIES, [f"{user_id}|{session_id}"])[0]
        if core.chat_model is None:
            # Stale when the session is past the threshold and ``step`` messages older than the window
            # are uncovered: a bounded read of the uncovered messages decides (a COUNT grows with the session).
            covered = doc["covered_count"] if doc else 0
            need = cfg.summary_threshold_messages + (1 if covered == 0 else 0)
            uncovered = core.records.scan_messages(
                self.tenant_id, user_id=user_id, session_key=session_id, after_seq=doc["covered_seq"] if doc else 0, limit=need
            )
            if len(uncovered) >= need:
                return self.refresh_summary(user_id, session_id)
        return doc["text"] if doc else None

