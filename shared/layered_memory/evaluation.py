"""Summary quality (seed 001, 3.2.3): coverage, coherence, relevance and an LLM judgement, weighted.

    ev = SummaryEvaluator(analyzer, embedder=embedder, model=chat_model)
    ev.evaluate("Anna flies to Lisbon on May 14.", messages, "Trip to Lisbon", background=rest_of_chat)
    # {"coverage": 0.71, "coherence": None, "relevance": 0.66, "llm_evaluation": {...}, "support": 0.93,
    #  "overall_score": 0.69, ...}

The same evaluator scores topic summaries (``mem.topics.evaluate_summary``: the topic's chat around
it is the background) and session summaries (the seed 002 "Previous context summary": the rest of
the session is the background); ``mem.evaluate_summary(summary, messages, title, background=...)``
scores any text. The background (``layered_memory.grounding``) is what sets the summarized messages
apart from the rest of their chat (issue 24): terms every part of the chat uses weigh little. Every
component is in [0, 1]:

* **coverage**: how much of the messages' distinctive content the summary keeps. Half is the share of
  the messages' top ``TOP_TERMS`` content terms found in the summary, each weighted by log-tf x idf
  over the background (without one, by log-tf alone) (the analyzer's terms, so Russian
  is stemmed and Chinese is compared by character bigrams; CJK unigrams and function-character
  bigrams do not count); half is the share of the messages' named entities the summary keeps (names:
  capitalised words inside a sentence, acronyms, mixedCase words; numbers, dates and times; technical
  tokens; quoted titles 《》「」“”), an entity the background also names weighing ``RECURRING_ENTITY``.
  Without entities, coverage is the term share alone.
* **coherence**: do adjacent sentences continue each other? With an embedder, the mean over adjacent
  sentence pairs of their cosine rescaled by the embedder's two anchors (unrelated sentences -> 0, a
  typical same-topic pair -> 1, clipped), the anchors the topic tier measures once per embedder.
  Without one, lexical continuity in the spirit of the entity grid (Barzilay & Lapata 2008): a pair
  scores 1 when it shares two content terms, 0.5 for one or when the second opens with a pronoun. A near-duplicate pair scores 0 (repetition is
  a defect, not coherence). A one-sentence summary has no pairs: coherence is None and its weight is
  redistributed. Measured in ``benchmarks/summaries.py`` (human reference summaries against the same
  sentences interleaved with another session's).
* **relevance**: similarity of the summary to the topic title: the share of the title's terms in the
  summary, averaged with the rescaled cosine of the two with an embedder. Without a title (session
  summaries; ``details.relevance_basis == "keywords"``, ``details.keywords`` the conversation's top
  words, the most distinctive ones with a background) it is the cosine of the summary's and the
  messages' log-tf x idf term vectors: how the summary's vocabulary follows the conversation's.
  Measured on LoCoMo (extractive, lead-8 and fact-list summaries against ROUGE-L): the share of the
  five top keywords ranked them at Spearman 0.24, the tf cosine at 0.45; adding the embedder's cosine
  to a keyword anchor lowered it (0.37 -> 0.26 with USE).
* **llm_evaluation**: only with a chat model and ``llm_judge`` on: the model rates the summary 0-10
  against the messages (JSON ``{"score", "reason"}``; operation ``<prefix>summary_evaluation``, so
  its tokens land in the model's usage meter). Without a model, or when the answer has no score, its
  weight is redistributed over the other components and ``redistributed`` names it.

* **support** (not weighted; issue 24): the idf-weighted share of the summary's content terms the
  messages say (their words, speakers and dates), a term the background has instead counting in
  full, one nobody said ``grounding.UNSEEN_WEIGHT``; ``details.support`` has the masses and
  ``unsupported``, the numbers, dates and names the messages do not have (unsupported claims).

``overall_score`` is the weighted mean over the measured components (seed weights 0.3 / 0.2 / 0.2 /
0.3, settable in ``SummaryQualitySettings``; ``details.weighted_mean``) times ``support_penalty``:
``min(1, support / SUPPORT_FULL) ** SUPPORT_POWER`` times ``CLAIM_FACTOR`` per unsupported claim
(``details.support_penalty``). The constants are chosen leave-one-set-out on six sets of same-chat
summary pairs (``benchmarks/summaries.py --pairs``, docs/summaries.md). ``grounded=False`` in
``SummaryQualitySettings`` gives the evaluator before issue 24 (no background, no penalty, tf weights).
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from .config import SummaryQualitySettings
from .grounding import Background, Grounding, content_terms, split_sentences, text_of
from .providers.base import ChatModel, Embedder
from .retrieval.analyzer import Analyzer

logger = logging.getLogger(__name__)

__all__ = ["COMPONENTS", "Background", "SummaryEvaluator", "split_sentences", "support_penalty", "weights_of"]

COMPONENTS = ("coverage", "coherence", "relevance", "llm_evaluation")
TOP_TERMS = 150  # the messages' most frequent content terms coverage looks for (LoCoMo: 40 -> 150 raised Spearman with ROUGE-L 0.45 -> 0.51)
TOP_ENTITIES = 30
ENTITY_SHARE = 0.5  # coverage = (1 - ENTITY_SHARE) x term coverage + ENTITY_SHARE x entity coverage
RELEVANCE_IDF = True
SUPPORT_FULL = 0.4  # support at or above this: no penalty (leave-one-set-out: benchmarks/summaries.py --pairs)
SUPPORT_POWER = 2.0
CLAIM_FACTOR = 0.9  # the score is multiplied by this once per unsupported number, date or name (at most 8)
DUPLICATE_COSINE = 0.97  # adjacent sentences closer than this repeat each other
_PRONOUN = re.compile(
    r"(?i)(?:\w+:\s*)?(?:he|she|they|it|this|that|these|his|her|their|its|он|она|они|оно|это|его|её|их|там|тогда|他|她|它|他们|她们|这|那)\b"
    r"|(?:他|她|它|这|那)"
)
_SCORE = re.compile(r"score\"?\s*[:=]?\s*(\d+(?:\.\d+)?)", re.IGNORECASE)

JUDGE_PROMPT = """Rate how well the summary below captures the conversation{about}, for an assistant's memory.
Judge coverage of the key facts (names, numbers, dates, decisions), faithfulness (nothing invented),
coherence and relevance. A summary in the conversation's own language is correct.
Reply with JSON only: {{"score": <integer 0-10>, "reason": "<one short sentence>"}}

Conversation:
{messages}

Summary:
{summary}"""


def weights_of(settings: SummaryQualitySettings) -> dict[str, float]:
    return {"coverage": settings.coverage_weight, "coherence": settings.coherence_weight,
            "relevance": settings.relevance_weight, "llm_evaluation": settings.llm_weight}


class SummaryEvaluator:
    """Scores a summary against its messages and title (see the module docstring).

    Args:
        analyzer: the engine's analyzer (terms for en / ru / zh).
        embedder: for coherence and relevance; None: lexical proxies.
        model: the chat model for the LLM judgement; None: its weight is redistributed.
        settings: weights, ``llm_judge``, ``judge_max_chars``.
        operation_prefix: names the judge's calls, e.g. ``"topic_"`` -> ``topic_summary_evaluation``.
    """

    def __init__(
        self, analyzer: Analyzer, *, embedder: Embedder | None = None, model: ChatModel | None = None,
        settings: SummaryQualitySettings | None = None, operation_prefix: str = "",
    ) -> None:
        self.analyzer = analyzer
        self.settings = settings or SummaryQualitySettings()
        self.embedder = embedder if self.settings.embedder_proxies else None
        self.model = model if self.settings.llm_judge else None
        self.operation = f"{operation_prefix}summary_evaluation"

    @classmethod
    def for_runtime(cls, runtime: Any, operation_prefix: str = "") -> SummaryEvaluator:
        """The evaluator of an engine's runtime: its analyzer, embedder, chat model and ``summary_quality`` settings."""
        return cls(runtime.analyzer, embedder=runtime.embedder, model=runtime.chat_model,
                   settings=runtime.settings.summary_quality, operation_prefix=operation_prefix)

    # -- the whole ----------------------------------------------------------------------------------
    def evaluate(
        self, summary: str, messages: Sequence[Any], title: str | None = None, *, background: Background | Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """Score ``summary`` of ``messages`` (Messages, dicts with ``content`` or strings) on topic ``title``.

        ``background``: the rest of the chat (messages, or a ``Background`` built once for several
        evaluations): what every part of the chat says weighs little in coverage, and a summary term
        the chat says elsewhere but ``messages`` do not lowers ``support``. None: no distinctiveness
        weights (every term of ``messages`` weighs the same); support is still checked.

        Returns ``{coverage, coherence, relevance, llm_evaluation, support, overall_score, weights,
        redistributed, details, seconds}``; a component that could not be measured is None and listed in
        ``redistributed``.
        """
        t0 = time.perf_counter()
        grounded = self.settings.grounded
        if not grounded:
            background = None
        elif background is not None and not isinstance(background, Background):
            background = Background.build(self.analyzer, background, exclude=messages)
        ground = Grounding(self.analyzer, messages, background)
        turns = [text_of(m) for m in messages]
        texts = ground.texts
        summary = summary or ""
        details: dict[str, Any] = {}
        summary_terms = set(content_terms(self.analyzer.terms(summary)))
        term_cov = ground.term_coverage(summary_terms, TOP_TERMS)
        ent_cov, n_ent = ground.entity_coverage(summary_terms, TOP_ENTITIES)
        coverage = term_cov if ent_cov is None else (1 - ENTITY_SHARE) * term_cov + ENTITY_SHARE * ent_cov
        details.update(term_coverage=round(term_cov, 4), entity_coverage=None if ent_cov is None else round(ent_cov, 4), entities=n_ent,
                       background_docs=background.n_docs if background else 0)
        sentences = [s for s in split_sentences(summary) if self.analyzer.terms(s)]
        basis = "title" if title and title.strip() else "keywords"
        titled = basis == "title"
        vectors = self._embed([*sentences, title.strip()] if titled else sentences) if sentences else None  # type: ignore[union-attr]
        coherence = self._coherence(sentences, vectors[: len(sentences)] if vectors is not None else None)
        pair = None
        if vectors is not None and titled:  # the summary's vector: the mean of its sentences' (one text less to embed)
            mean = vectors[: len(sentences)].mean(axis=0)
            pair = np.stack([mean / (np.linalg.norm(mean) or 1.0), vectors[-1]])
        relevance = self._relevance(title or "", summary, None if titled else ground, pair, details, idf=grounded)
        support = ground.support(summary, summary_terms)
        details.update(sentences=len(sentences), coherence_method="embedder" if vectors is not None else "lexical",
                       relevance_basis=basis, keywords=self._keywords(ground, texts), support=support)
        if not summary_terms:  # empty or punctuation only: nothing to judge
            coverage, relevance, support["support"] = 0.0, 0.0, 0.0
        llm = self._judge(summary, turns, title) if summary_terms else {"score": 0.0, "reason": "empty summary"}
        scores = {"coverage": coverage, "coherence": coherence, "relevance": relevance, "llm_evaluation": llm.get("score")}
        weights = weights_of(self.settings)
        used = {c: w for c, w in weights.items() if scores[c] is not None and w > 0}
        total = sum(used.values())
        mean = sum(w * float(scores[c]) for c, w in used.items()) / total if total else 0.0  # type: ignore[arg-type]
        penalty = support_penalty(support["support"], len(support["unsupported"])) if grounded else 1.0
        details.update(weighted_mean=round(mean, 4), support_penalty=round(penalty, 4))
        r = lambda x: None if x is None else round(float(x), 4)  # noqa: E731
        return {
            "coverage": r(coverage), "coherence": r(coherence), "relevance": r(relevance), "llm_evaluation": llm,
            "support": r(support["support"]), "overall_score": round(mean * penalty, 4),
            "weights": {c: round(w / total, 4) for c, w in used.items()} if total else {},
            "redistributed": [c for c in COMPONENTS if c not in used and weights[c] > 0],
            "details": details, "seconds": round(time.perf_counter() - t0, 4),
        }

    def _keywords(self, ground: Grounding, texts: Sequence[str]) -> list[str]:
        """The span's five most distinctive terms, as the messages write them (a keyword title)."""
        top = list(ground.weights(5))
        surface: dict[str, Counter[str]] = {}
        for text in texts[:200]:
            norm, spans = self.analyzer.spans(text)
            for start, end, terms in spans:
                if len(terms) == 1 and terms[0] in top:
                    surface.setdefault(terms[0], Counter())[norm[start:end].casefold()] += 1
        return [surface[t].most_common(1)[0][0] if t in surface else t for t in top]

    # -- coherence and relevance --------------------------------------------------------------------
    def _embed(self, texts: list[str]) -> np.ndarray | None:
        if self.embedder is None:
            return None
        try:
            v = np.asarray(self.embedder.embed_documents(texts), dtype=np.float32)
        except Exception as exc:  # lexical proxies instead
            logger.warning("summary evaluation: embedder failed (%s); using lexical proxies", type(exc).__name__)
            return None
        n = np.linalg.norm(v, axis=1, keepdims=True)
        return v / np.where(n == 0, 1, n)

    def _rescale(self, cos: float) -> float:
        from .topics.threader import embedder_calibration  # lazy: the topic package imports this module's users

        floor, topical = embedder_calibration(self.embedder)
        return min(1.0, max(0.0, (cos - floor) / (topical - floor)))

    def _coherence(self, sentences: Sequence[str], vectors: np.ndarray | None) -> float | None:
        if len(sentences) < 2:
            return None
        terms = [set(content_terms(self.analyzer.terms(s))) for s in sentences]
        scores = []
        for i in range(len(sentences) - 1):
            a, b = terms[i], terms[i + 1]
            if a and b and len(a & b) / len(a | b) >= 0.9:
                scores.append(0.0)  # the same sentence again
                continue
            if vectors is not None:
                cos = float(vectors[i] @ vectors[i + 1])
                scores.append(0.0 if cos >= DUPLICATE_COSINE else self._rescale(cos))
            else:
                pair = min(1.0, len(a & b) / 2)
                if _PRONOUN.match(sentences[i + 1]):  # "They ...", "Он ...", "他们...": refers back
                    pair = max(pair, 0.5)
                scores.append(pair)
        return float(np.mean(scores))

    def _relevance(
        self, anchor: str, summary: str, ground: Grounding | None, vectors: np.ndarray | None, details: dict[str, Any], *,
        idf: bool = True,
    ) -> float:
        """Title: the share of its terms in the summary, averaged with the rescaled cosine of the two
        (with an embedder). No title (``ground`` given): the cosine of the summary's and the messages'
        log-tf x idf term vectors (idf over the background: the chat's common words weigh little)."""
        summary_tf = Counter(content_terms(self.analyzer.terms(summary)))
        if ground is None:
            anchor_terms = set(content_terms(self.analyzer.terms(anchor))) or set(self.analyzer.terms(anchor))
            lexical = len(anchor_terms & set(summary_tf)) / len(anchor_terms) if anchor_terms else 0.0
        else:
            lexical = _tf_cosine(summary_tf, ground.tf, ground.idf if idf and RELEVANCE_IDF else (lambda t: 1.0))
        details["relevance_lexical"] = round(lexical, 4)
        if vectors is None:
            return lexical
        dense = self._rescale(float(vectors[0] @ vectors[1]))
        details["relevance_dense"] = round(dense, 4)
        return 0.5 * (lexical + dense)

    # -- the LLM judge ----------------------------------------------------------------------------------
    def _judge(self, summary: str, turns: Sequence[tuple[str, str]], title: str | None) -> dict[str, Any]:
        if self.model is None:
            reason = "llm_judge is off" if not self.settings.llm_judge else "no chat model configured"
            return {"score": None, "skipped": reason}
        lines, size = [], 0
        for who, text in reversed(turns):  # the newest turns, within the budget
            line = f"{who}: {text}" if who else text
            if size + len(line) > self.settings.judge_max_chars and lines:
                break
            lines.append(line[: self.settings.judge_max_chars])
            size += len(line)
        about = f' on the topic "{title}"' if title else ""
        prompt = JUDGE_PROMPT.format(about=about, messages="\n".join(reversed(lines)), summary=summary)
        try:
            answer = self.model.complete(prompt, operation=self.operation).text
        except Exception as exc:
            logger.warning("summary judge failed (%s); its weight is redistributed", type(exc).__name__)
            return {"score": None, "error": f"{type(exc).__name__}: the model call failed"}
        score, reason = parse_judgement(answer)
        if score is None:
            return {"score": None, "error": "the model's answer has no score"}
        return {"score": round(score, 4), "reason": reason}


def _tf_cosine(a: Counter[str], b: Counter[str], idf: Any = lambda t: 1.0) -> float:
    wa = {t: (1.0 + math.log(n)) * idf(t) for t, n in a.items()}
    wb = {t: (1.0 + math.log(n)) * idf(t) for t, n in b.items()}
    den = math.sqrt(sum(v * v for v in wa.values())) * math.sqrt(sum(v * v for v in wb.values()))
    return sum(w * wb.get(t, 0.0) for t, w in wa.items()) / den if den else 0.0


def support_penalty(support: float, claims: int = 0) -> float:
    """The factor on the weighted mean: ``min(1, support / SUPPORT_FULL) ** SUPPORT_POWER``, times
    ``CLAIM_FACTOR`` per unsupported claim (a number, date or name the messages do not have)."""
    return min(1.0, max(0.0, support) / SUPPORT_FULL) ** SUPPORT_POWER * CLAIM_FACTOR ** claims


def parse_judgement(answer: str) -> tuple[float | None, str]:
    """(score in [0, 1], reason) from a judge answer: JSON ``{"score": 0-10, "reason": ...}`` (bare,
    fenced or inside prose) or "score: 7"; integers are read on 0-10 (0-100 above 10), a fraction below 1 as it is. (None, "") if none."""
    raw, reason = None, ""
    for m in re.finditer(r"\{[^{}]*\}", answer or ""):
        try:
            obj = json.loads(m.group())
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("score"), (int, float)) and not isinstance(obj.get("score"), bool):
            raw, reason = float(obj["score"]), str(obj.get("reason") or "")[:300]
            break
    if raw is None:
        m2 = _SCORE.search(answer or "")
        raw = float(m2.group(1)) if m2 else None
    if raw is None or raw < 0 or raw > 100:
        return None, ""
    if raw <= 1 and not raw.is_integer():
        return raw, reason  # already on 0-1
    return (raw / 10 if raw <= 10 else raw / 100), reason
