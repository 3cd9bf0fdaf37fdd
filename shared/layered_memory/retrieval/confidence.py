"""Route confidence: how much each route of a hybrid search knows about one query, and the fusion
weights that follows from it (``retrieval.fusion="confidence"``).

A fixed weight between BM25 and dense is right on average and wrong per query: on a short query
naming a rare thing BM25 is sharp; on a long, wordy question BM25 matches the filler ("help",
"week", "remember") and its top hits are no better than the rest, while dense ranks the meaning.
The estimator reads, per query and per side, only what the candidate lists already carry:

* ``strength``: how far the side's best hits stand above its own list (the mean z-score of its best
  ``confidence_top``);
* ``margin``: how far its best hit stands above its second, relative to its top-ten spread;
* ``agreement``: the share of each side's top five that the other side also ranks in its top ten;
* the query: how many terms it has after stop words, and how many of them are rare-looking
  (numbers, codes, capitalised names inside the sentence, quoted phrases: what BM25 matches exactly);
* ``coverage``: the largest share of the query's terms, speakers' names left out, that one of BM25's
  best hits holds (``SecondStage._coverage``). A BM25 list led by turns that share one filler word
  ("plan" in "planning a trip") or only the asker's name with the question knows little about it.

From these, each side gets a confidence; the side weights are the confidences to the power
``confidence_power``, sharpened further when the sides disagree (a confident side and a flat one:
the confident one leads), with BM25's confidence reduced for long queries without rare terms,
raised by rare ones, and reduced when its best hit holds under ``confidence_coverage_full`` of the
query: ``min(1, coverage / confidence_coverage_full) ** confidence_coverage``. Every coefficient is a
setting, chosen by leave-one-set-out on several set shapes (``benchmarks/retrieval_loso.py``);
``Confidence`` keeps the inputs for inspection.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Confidence", "estimate", "rare_terms", "side_weights"]

_QUOTED = re.compile(r"[\"“”«»「」『』]([^\"“”«»「」『』]{2,80})[\"“”«»「」『』]")
_WORD = re.compile(r"[^\W_][\w.:/@#+-]*[\w+#]|[^\W_]", re.UNICODE)
_CODE = re.compile(r"\d|[_./:@#]|[a-z][A-Z]|[A-Z]{2,}")


@dataclass(frozen=True, slots=True)
class Confidence:
    """The per-query inputs and the resulting side weights (dense, sparse)."""

    strength: tuple[float, float]  # mean z of each side's best ``confidence_top`` over its own list
    margin: tuple[float, float]  # (top1 - top2) / (top1 - top10) per side, 0..1
    agreement: float  # 0..1
    terms: int
    rare: int
    weights: tuple[float, float]
    coverage: float = 1.0  # the largest share of the query's terms (names left out) one of BM25's best hits holds


def rare_terms(query: str) -> int:
    """How many words of ``query`` look rare: numbers and codes (E4012, v2.3, psycopg2.connect, #123,
    camelCase, ACRONYMS), capitalised words inside the sentence (names, places), quoted phrases.
    Model-free and language-independent for Latin and Cyrillic; CJK text has no capitals, so only its
    numbers, codes and quotes count."""
    n = len(_QUOTED.findall(query))
    sentence_start = True
    for m in _WORD.finditer(query):
        w = m.group(0)
        before = query[max(0, m.start() - 2) : m.start()]
        if sentence_start or re.search(r"[.!?。！？]\s*$", before):
            sentence_start = False
            if _CODE.search(w):
                n += 1
            continue
        if _CODE.search(w) or (w[0].isupper() and len(w) > 1):
            n += 1
    return n


def _strength(z: np.ndarray, present: np.ndarray, top: int) -> float:
    vals = z[present]
    if len(vals) > top:
        vals = np.partition(vals, len(vals) - top)[-top:]
    return max(float(vals.mean()) if len(vals) else 0.0, 1e-3)


def _margin(scores: np.ndarray, present: np.ndarray) -> float:
    vals = np.sort(scores[present])[::-1]
    if len(vals) < 3:
        return 0.0
    spread = vals[0] - vals[min(len(vals), 10) - 1]
    return float((vals[0] - vals[1]) / spread) if spread > 1e-12 else 0.0


def _agreement(ranks: np.ndarray) -> float:
    """Share of each side's top five (by rank) that the other side ranks in its top ten."""
    d, s = ranks[0], ranks[1]
    top_d = (d >= 0) & (d < 5)
    top_s = (s >= 0) & (s < 5)
    if not top_d.any() or not top_s.any():
        return 0.0
    both = float(((s >= 0) & (s < 10))[top_d].mean()) + float(((d >= 0) & (d < 10))[top_s].mean())
    return both / 2


def side_weights(strength: tuple[float, float], margin: tuple[float, float], agreement: float, terms: int, rare: int,
                 settings: Any, coverage: float = 1.0) -> tuple[float, float]:
    """(dense, sparse) weights from the confidence inputs; they sum to 2 (a weight of 1 each is a
    plain z-score fusion)."""
    s = settings
    conf = [strength[j] * (1.0 + s.confidence_margin * margin[j]) for j in range(2)]
    long = max(0, terms - s.confidence_short_terms)
    conf[1] *= math.exp(-s.confidence_length * long) * (1.0 + s.confidence_rare * min(rare, 3))
    conf[1] *= min(1.0, max(coverage, 0.05) / s.confidence_coverage_full) ** s.confidence_coverage
    power = s.confidence_power * (1.0 + s.confidence_disagreement * (1.0 - agreement))
    w = np.array([max(c, 1e-6) for c in conf]) ** power
    w = 2.0 * w / w.sum()
    base = np.array([s.fusion_dense_weight, s.sparse_weight], dtype=float)
    w = w * base
    total = w.sum()
    return (float(2.0 * w[0] / total), float(2.0 * w[1] / total)) if total > 0 else (0.0, 0.0)


def estimate(query_terms: Sequence[str], query: str, scores: np.ndarray, ranks: np.ndarray, z: np.ndarray,
             settings: Any, coverage: float = 1.0) -> Confidence:
    """The confidence of each side for one query, from the candidate arrays of the second stage:
    ``scores``/``ranks``/``z`` are (2, n) in (dense, sparse) order, NaN / -1 where a side lacks a candidate."""
    present = ~np.isnan(scores)
    top = max(1, int(settings.confidence_top))
    strength = (_strength(z[0], present[0], top), _strength(z[1], present[1], top))
    margin = (_margin(scores[0], present[0]), _margin(scores[1], present[1]))
    agreement = _agreement(ranks)
    terms, rare = len(set(query_terms)), rare_terms(query)
    weights = side_weights(strength, margin, agreement, terms, rare, settings, coverage)
    return Confidence(strength, margin, agreement, terms, rare, weights, coverage)
