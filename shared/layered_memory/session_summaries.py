"""Session summaries: "Previous context summary: ..." (seed 002).

A summary covers the messages of a session older than the short-term window. It is refreshed once
``summary_threshold_messages - short_term_window`` older messages are not yet covered. With a chat
model the summary is written by the model (in the conversation's language); without one, or when
the model fails, an extractive summary picks the most central sentences.

Each new version is scored (``layered_memory.evaluation``, seed 001 3.2.3) against the messages it
covered (the previous summary standing in for older ones) and stored with its score; a model summary
scoring below ``summary_quality.retry_below`` is replaced by the extractive one when that scores
higher. ``get_summary_quality`` returns the score, the version and the scores of earlier versions.
A refresh inside ``get_context_for_user`` (no chat model) leaves the score to the next ``process()``,
so the request path never embeds the summary.

A summary whose messages changed (``mem.edit_message`` / ``mem.delete_message`` of a message it covers) is
marked stale (``mark_stale``): the context leaves it out (it may quote the replaced or deleted text) until
it is rebuilt without the old version, from the newest ``REBUILD_MESSAGES`` messages older than the window:
at once by the next context without a chat model, else by the next ``process()``.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import InvalidInputError
from .evaluation import Background, SummaryEvaluator
from .index.points import speaker
from .models import Message, check_id, iso
from .providers.base import ChatModel
from .retrieval.analyzer import Analyzer
from .sentences import split_sentences
from .sessions import STALE, SUMMARIES  # the collections: named in sessions, which drops them with their session

if TYPE_CHECKING:
    from .index import Scope
    from .kernel import Kernel

logger = logging.getLogger(__name__)

HISTORY = 20  # scores of earlier versions kept on the session's summary document
REBUILD_MESSAGES = 200  # a stale summary is rebuilt from at most this many of the newest messages older than the window
MAX_SENTENCE_CHARS = 220
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_LABEL = re.compile(r"^(?:— )?([^:—\n]{1,60}): ")

SUMMARY_PROMPT = """You maintain a running summary of a conversation for an assistant's memory.
Write the updated summary in the same language the participants use. Keep facts, names, numbers,
decisions, preferences and open questions; drop greetings and filler. At most {max_words} words.

Current summary (may be empty):
{previous}

New messages:
{messages}

Updated summary:"""


def _sentence(text: str) -> str:
    """One sentence, whole (cut at a word boundary with "…" only past ``MAX_SENTENCE_CHARS``), ending in punctuation."""
    if len(text) > MAX_SENTENCE_CHARS:
        text = text[: MAX_SENTENCE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    if text[-1] in ".!?…。！？)\"'»”":
        return text
    return text + ("。" if _CJK_CHAR.match(text[-1]) else ".")


def extractive_summary(
    previous: str, messages: Sequence[Message], analyzer: Analyzer, *, max_sentences: int = 8, min_terms: int = 3
) -> str:
    """The most central sentences (term overlap with the whole span), in order: whole sentences only (never
    cut at "e.g."), none with fewer than ``min_terms`` content terms ("ok", "Noted.", "好的"), each said once;
    the speaker is named where the speaker changes (``Anna: ... — assistant: ...``), so the summary reads as
    sentences, not as a transcript of turns."""
    candidates: list[tuple[int, str | None, str, list[str]]] = []
    for i, sent in enumerate(split_sentences(previous)):
        candidates.append((i, None, sent, analyzer.terms(sent)))
    base = len(candidates)
    for j, m in enumerate(messages):
        for sent in split_sentences(m.content):
            terms = analyzer.terms(sent)
            if len(set(terms)) < min_terms:
                continue
            candidates.append((base + j, speaker(m), _sentence(sent), terms))
    if not candidates:
        return previous
    df = Counter(t for _, _, _, terms in candidates for t in set(terms))
    scored = []
    for order, who, text, terms in candidates:
        if not terms:
            continue
        uniq = set(terms)
        centrality = sum(df[t] - 1 for t in uniq) / (len(uniq) ** 0.5)
        scored.append((centrality + 0.01 * len(uniq), order, who, text))
    chosen = sorted(sorted(scored, key=lambda x: (-x[0], x[1]))[:max_sentences], key=lambda x: x[1])
    units: list[tuple[str | None, str]] = []
    for _, _, who, text in chosen:
        if all(text != t for _, t in units):
            units.append((who, text))
    return join_units(units)


def summary_units(summary: str) -> list[tuple[str | None, str]]:
    """An extractive summary as (speaker named before it or None, sentence) pairs: the inverse of its rendering."""
    out: list[tuple[str | None, str]] = []
    for sent in split_sentences(summary):
        m = _LABEL.match(sent)
        out.append((m.group(1), sent[m.end():]) if m else (None, sent))
    return out


def join_units(units: Sequence[tuple[str | None, str]]) -> str:
    """Render (speaker, sentence) pairs as ``extractive_summary`` does (the speaker where it changes)."""
    parts: list[str] = []
    last: str | None = None
    for who, text in units:
        if who is not None and who != last:
            parts.append(("— " if parts else "") + f"{who}: {text}")
            last = who
        else:
            parts.append(text)
    return " ".join(parts)


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


def session_background(core: Any, tenant: str, where: dict[str, str], span: Sequence[Message]) -> Background | None:
    """The rest of the session around ``span`` (its newest ``summary_quality.background_messages``
    messages, the span left out): what the evaluator weighs the span's terms against (issue 24).
    ``where``: the summary's messages, a user's (``user_id``) or a group chat's (``chat_id``) in the session."""
    limit = core.settings.summary_quality.background_messages
    if not limit or not core.settings.summary_quality.grounded:
        return None
    if "chat_id" in where:
        rest = core.records.chat_window(tenant, chat_id=where["chat_id"], session_key=where["session_key"], limit=limit)
    else:
        rest = core.records.window(tenant, user_id=where["user_id"], session_key=where["session_key"], limit=limit)
    return Background.build(core.analyzer, rest, exclude=span)


def _checked(
    core: Any, previous: str, new: Sequence[Message], text: str, method: str, background: Background | None = None,
) -> tuple[str, str, dict[str, Any]]:
    """Score a new version; a model summary below ``retry_below`` is replaced by the extractive one
    when that scores higher (the seed's fallback, one retry)."""
    ev = SummaryEvaluator.for_runtime(core, "session_")
    basis: list[Any] = [previous, *new] if previous else list(new)
    quality = ev.evaluate(text, basis, None, background=background)
    if method != "llm" or quality["overall_score"] >= core.settings.summary_quality.retry_below:
        return text, method, quality
    alt = extractive_summary(previous, new, core.analyzer)
    alt_quality = ev.evaluate(alt, basis, None, background=background)
    attempts = [{"generation_method": method, "overall_score": quality["overall_score"]},
                {"generation_method": "extractive", "overall_score": alt_quality["overall_score"]}]
    if alt_quality["overall_score"] > quality["overall_score"]:
        text, method, quality = alt, "extractive", alt_quality
    return text, method, {**quality, "retried": True, "attempts": attempts}


def mark_stale(records: Any, tenant: str, user_id: str, session_key: str, seq: int, why: dict[str, Any],
               chat_id: str | None = None) -> bool:
    """Mark the session's summaries stale when they cover the message at ``seq``: the author's own and, with
    ``chat_id``, the chat's (a group's summary of everyone's messages). ``why``: what changed, e.g.
    ``{"reason": "edit", "chat_id": ..., "message_id": ...}``. Idempotent. Returns whether one was marked."""
    keys = [f"{user_id}|{session_key}", *([f"#{chat_id}|{session_key}"] if chat_id else [])]
    marked = False
    for key, doc in zip(keys, records.get_docs(tenant, SUMMARIES, keys)):
        if not doc or seq > int(doc.get("covered_seq") or 0):
            continue
        stale = [w for w in doc.get("stale") or [] if w != why] + [why]
        records.put_docs(tenant, STALE, {key: {"user_id": user_id, "session_key": session_key}})  # a member refreshes a group's
        records.put_docs(tenant, SUMMARIES, {key: {**doc, "stale": stale[-HISTORY:]}})
        marked = True
    return marked


def stale_sessions(records: Any, tenant: str, limit: int = 1000) -> set[tuple[str, str, str]]:
    """(tenant, user, session) of the summaries marked stale: refresh jobs for ``process()``."""
    return {(tenant, d["user_id"], d["session_key"]) for _, d in records.list_docs(tenant, STALE, limit=limit)}


def _check_messages(field: str, messages: Any) -> None:
    if isinstance(messages, (str, bytes, dict)) or not isinstance(messages, Sequence):
        raise InvalidInputError(field, messages, "must be a list of Messages, dicts with 'content' or strings",
                                "wrap a single message in a list")
    for i, m in enumerate(messages):
        if not isinstance(m, (str, Message, dict)) or (isinstance(m, dict) and not isinstance(m.get("content", m.get("text")), str)):
            raise InvalidInputError(f"{field}[{i}]", m, "must be a Message, a dict with a 'content' string or a string",
                                    "pass the message text")


class SessionSummaries:
    """The running summary of each session of one handle (``mem.get_summary`` / ``refresh_summary``
    delegate here); every call acts on ``scope.user(user_id)``."""

    def __init__(self, runtime: Kernel, scope: Scope) -> None:
        self._runtime = runtime
        self.scope = scope
        self.tenant_id = scope.tenant

    def _user(self, user_id: str | None) -> str:
        return self.scope.user(user_id)

    def _subject(self, user_id: str, session_id: str) -> tuple[str, dict[str, str]]:
        """Whose summary a user reads for a session: in a group chat they are a member of, the chat's (one
        summary of everyone's messages, key ``#chat|session``: no user id holds ``#``); else their own
        (``user|session``: their messages and the ones they stored for the bot). With the messages' filter."""
        chats = self._runtime.chats
        carried = sorted(set(chats.chats_of_session(self.tenant_id, session_id)) & chats.member_chats(self.tenant_id, user_id))
        if len(carried) == 1 and chats.info(self.tenant_id, carried[0])["kind"] == "group":
            return f"#{carried[0]}|{session_id}", {"chat_id": carried[0], "session_key": session_id}
        return f"{user_id}|{session_id}", {"user_id": user_id, "session_key": session_id}

    def get_summary(self, user_id: str | None, session_id: str) -> str | None:
        """The session's summary (a group chat's: everyone's messages), None when there is none. A summary
        marked stale (it may quote an edited or deleted message) is read as the context reads it: rebuilt
        now without a chat model, None until ``process()`` with one."""
        session_id = check_id("session_id", session_id)  # type: ignore[assignment]
        user = self._user(user_id)
        key, _ = self._subject(user, session_id)
        doc = self._runtime.records.get_docs(self.tenant_id, SUMMARIES, [key])[0]
        if doc and doc.get("stale"):
            return self.current(user, session_id)
        return doc["text"] if doc else None

    def refresh_summary(self, user_id: str | None, session_id: str, *, force: bool = False) -> str | None:
        """Summarize the session's messages older than the window when enough are uncovered (or ``force``).
        Each new version is scored and stored with its score (see ``get_summary_quality``)."""
        return self._refresh(self._user(user_id), check_id("session_id", session_id), force=force, score=True)  # type: ignore[arg-type]

    def _refresh(self, user_id: str, session_id: str, *, force: bool, score: bool) -> str | None:
        core = self._runtime
        mem_cfg = core.settings.memory
        key, where = self._subject(user_id, session_id)
        doc = core.records.get_docs(self.tenant_id, SUMMARIES, [key])[0] or {"text": "", "covered_seq": 0, "covered_count": 0}
        if doc.get("stale"):
            return self._rebuild(key, doc, where, score=score)
        total = core.records.count_messages(self.tenant_id, **where)
        uncovered_old = total - mem_cfg.short_term_window - doc["covered_count"]
        step = mem_cfg.summary_threshold_messages - mem_cfg.short_term_window
        if uncovered_old <= 0 or (not force and (total <= mem_cfg.summary_threshold_messages or uncovered_old < step)):
            if score and doc.get("quality_pending"):
                self._score_pending(key, doc, where)
            return doc["text"] or None
        new = core.records.scan_messages(self.tenant_id, **where, after_seq=doc["covered_seq"], limit=uncovered_old)
        if not new:
            return doc["text"] or None
        previous = doc["text"]
        text, method = summarize(previous, new, core.analyzer, core.chat_model)
        quality = None
        qs = core.settings.summary_quality
        if qs.enabled and score:
            bg = session_background(core, self.tenant_id, where, new)
            text, method, quality = _checked(core, previous, new, text, method, bg)
        version = int(doc.get("version") or 0) + 1
        history = list(doc.get("history") or [])
        if doc.get("version"):
            history.append({"version": doc["version"], "method": doc.get("method"), "updated": doc.get("updated"),
                            "overall_score": (doc.get("quality") or {}).get("overall_score")})
        doc = {
            "text": text, "method": method, "covered_seq": new[-1].seq or 0, "from_seq": doc["covered_seq"], "span": len(new),
            "covered_count": doc["covered_count"] + len(new), "updated": iso(new[-1].create_time),
            "version": version, "quality": quality, "quality_pending": qs.enabled and quality is None,
            "previous": previous, "history": history[-HISTORY:],
        }
        core.records.put_docs(self.tenant_id, SUMMARIES, {key: doc})
        return text

    def _rebuild(self, key: str, doc: dict[str, Any], where: dict[str, str], *, score: bool) -> str | None:
        """A stale summary written again without its old text: from the newest ``REBUILD_MESSAGES`` messages
        older than the window (none left: the summary goes). Keeps the version count and the score history."""
        core = self._runtime
        window = core.settings.memory.short_term_window
        limit = window + REBUILD_MESSAGES
        if "chat_id" in where:  # a group chat's summary: everyone's messages of the session
            tail = core.records.chat_window(self.tenant_id, chat_id=where["chat_id"], session_key=where["session_key"], limit=limit)
        else:
            tail = core.records.window(self.tenant_id, user_id=where["user_id"], session_key=where["session_key"], limit=limit)
        old = tail[:-window]
        if not old:
            core.records.delete_docs(self.tenant_id, SUMMARIES, [key])
            core.records.delete_docs(self.tenant_id, STALE, [key])
            return None
        text, method = summarize("", old, core.analyzer, core.chat_model)
        quality = None
        qs = core.settings.summary_quality
        if qs.enabled and score:
            text, method, quality = _checked(core, "", old, text, method)
        total = core.records.count_messages(self.tenant_id, **where)
        history = [*(doc.get("history") or []), {"version": doc.get("version"), "method": doc.get("method"), "updated": doc.get("updated"),
                                                  "overall_score": (doc.get("quality") or {}).get("overall_score"), "stale": True}]
        new = {
            "text": text, "method": method, "covered_seq": old[-1].seq or 0, "from_seq": (old[0].seq or 1) - 1, "span": len(old),
            "covered_count": max(len(old), total - window), "updated": iso(old[-1].create_time),
            "version": int(doc.get("version") or 0) + 1, "quality": quality, "quality_pending": qs.enabled and quality is None,
            "previous": "", "history": history[-HISTORY:], "rebuilt": doc.get("stale"),
        }
        core.records.put_docs(self.tenant_id, SUMMARIES, {key: new})
        core.records.delete_docs(self.tenant_id, STALE, [key])
        return text

    def _score_pending(self, key: str, doc: dict[str, Any], where: dict[str, str]) -> None:
        """Score a version written on the request path (``get_context_for_user``) without one."""
        core = self._runtime
        new = core.records.scan_messages(self.tenant_id, **where,
                                         after_seq=int(doc.get("from_seq") or 0), limit=max(1, int(doc.get("span") or doc["covered_count"])))
        new = [m for m in new if (m.seq or 0) <= doc["covered_seq"]]
        previous = doc.get("previous") or ""
        basis: list[Any] = [previous, *new] if previous else new
        bg = session_background(core, self.tenant_id, where, new)
        quality = SummaryEvaluator.for_runtime(core, "session_").evaluate(doc["text"], basis, None, background=bg)
        doc = {**doc, "quality": quality, "quality_pending": False}
        core.records.put_docs(self.tenant_id, SUMMARIES, {key: doc})

    def get_summary_quality(self, user_id: str | None, session_id: str) -> dict[str, Any] | None:
        """The session summary's score: ``{"version", "method", "updated", "quality", "history"}`` where
        ``quality`` is the evaluator's result for the current version (None until ``process()`` scores a
        version written by ``get_context_for_user``) and ``history`` the scores of earlier versions.
        None when the session has no summary."""
        session_id = check_id("session_id", session_id)  # type: ignore[assignment]
        key, _ = self._subject(self._user(user_id), session_id)
        doc = self._runtime.records.get_docs(self.tenant_id, SUMMARIES, [key])[0]
        if not doc:
            return None
        return {"version": int(doc.get("version") or 1), "method": doc.get("method"), "updated": doc.get("updated"),
                "quality": doc.get("quality"), "history": list(doc.get("history") or []), "stale": list(doc.get("stale") or [])}

    def evaluate_summary(
        self, summary: str, messages: Sequence[Any], title: str | None = None, *, background: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """Score any summary of ``messages`` (Messages, dicts with ``content``, or strings) on topic ``title``
        (seed 001, 3.2.3) with this engine's analyzer, embedder and chat model (the judge's calls are
        ``summary_evaluation`` in ``chat_model.usage``). ``background``: the rest of the chat, in the same
        forms: what it says everywhere weighs little, and what the summary takes from it instead of from
        ``messages`` lowers ``support`` (docs/summaries.md).

        Returns:
            ``{coverage, coherence, relevance, llm_evaluation, support, overall_score, weights, redistributed,
            details}``; see ``layered_memory.evaluation``.

        Raises:
            InvalidInputError: ``summary`` or ``title`` not a string, ``messages`` or ``background`` not a list.

        Example::

            mem.evaluate_summary("Anna flies to Lisbon on May 14.", ["We fly to Lisbon on May 14!"], "Trip")["overall_score"]
        """
        if not isinstance(summary, str):
            raise InvalidInputError("summary", summary, "must be a string", "pass the summary text")
        _check_messages("messages", messages)
        if background is not None:
            _check_messages("background", background)
        if title is not None and not isinstance(title, str):
            raise InvalidInputError("title", title, "must be a string or None", "pass the topic title")
        return SummaryEvaluator.for_runtime(self._runtime).evaluate(summary, messages, title, background=background)

    def current(self, user_id: str, session_id: str) -> str | None:
        """The session's summary, refreshed first when stale and no chat model is set (the
        extractive summary is cheap; with a model the refresh waits for ``process()``)."""
        core = self._runtime
        cfg = core.settings.memory
        key, where = self._subject(user_id, session_id)
        doc = core.records.get_docs(self.tenant_id, SUMMARIES, [key])[0]
        if doc and doc.get("stale"):  # it may quote a replaced or deleted text: rebuilt now, or left out until process()
            return self._refresh(user_id, session_id, force=False, score=False) if core.chat_model is None else None
        if core.chat_model is None:
            # Stale when the session is past the threshold and ``step`` messages older than the window
            # are uncovered: a bounded read of the uncovered messages decides (a COUNT grows with the session).
            covered = doc["covered_count"] if doc else 0
            need = cfg.summary_threshold_messages + (1 if covered == 0 else 0)
            uncovered = core.records.scan_messages(self.tenant_id, **where, after_seq=doc["covered_seq"] if doc else 0, limit=need)
            if len(uncovered) >= need:
                return self._refresh(user_id, session_id, force=False, score=False)  # scored by the next process()
        return doc["text"] if doc else None

