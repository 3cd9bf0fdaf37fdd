"""One ranking over every candidate the tiers offer: its value, its relevance floor, its duplicates.

**Value** is the estimated chance that a line is what the answer needs, on one scale for every tier:

- a message found by the search at rank ``r`` (0-based): ``(1 + r) ** -RANK_DECAY``; the search's own
  order (hybrid BM25 + dense, fused and reranked with its session, speaker and time signals) is the
  best-measured signal there is, so the context keeps it and only turns ranks into values. Measured
  (``--calibrate``, share of candidates that are evidence turns): LoCoMo 0.48 / 0.14 / 0.05 / 0.024 /
  0.010 / 0.005 / 0.002 at ranks 0 / 1-2 / 3-5 / 6-9 / 10-19 / 20-39 / 40-99, the synthetic set 0.68 /
  0.22 / 0.11 / 0.017 / 0.003 / 0 / 0; ``RANK_DECAY = 1.4`` follows LoCoMo's curve to within a factor
  of 1.5 at every rank. At the same rank a longer message is evidence more often, about in proportion
  to its length (LoCoMo, shortest / middle / longest third of the candidates: 0.32 / 0.47 / 0.68 at
  rank 0, 0.004 / 0.013 / 0.013 at ranks 10-19), so a message line's value grows with its tokens
  (``LINE_NORM``): per token, message lines go in by rank, long or short;
- the turn that follows a hit in its session: ``NEIGHBOUR_SHARE`` of the hit's value. Measured, it is
  rarely evidence itself (LoCoMo 0.004 after a top-5 hit, the synthetic set 0), so it comes after the
  hits, as the context of a hit the budget has room for; a low-content turn ("Noted.", "ok", "好的") is
  never a hit, only a neighbour;
- a topic summary, a fact, a document: a share of the value of their rank in their own tier;
- the user's profile and user data: fixed values (small, and about the person asking).

The shares were measured on the dev sets (``benchmarks/context.py --calibrate``: for each kind and rank,
how often a candidate holds evidence) and rounded; they are not tuned to one data set.

**Relevance** is absolute, so it can say "nothing here is about the question": the larger of the
embedder's cosine between the query and the candidate, rescaled by the embedder's two anchors
(unrelated texts -> 0, same-topic texts -> 0.8: ``topics.threader.embedder_calibration``), and the
IDF-weighted share of the query's terms the candidate contains (IDF over the candidate pool). A
candidate under ``context.relevance_floor`` is noise and is dropped: an empty block beats a wrong one.
A neighbour inherits its hit's relevance (it is shown as the hit's context); the user's profile is
about the person asking and always passes.

**Duplicates**: a candidate is left out when an item already chosen has its key, restates it (a fact
or topic summary whose ``sources`` hold the message, or the other way round), says it in the same
words (its content terms are, for ``DUP_CONTAINMENT`` of them, inside the other's: a topic summary
quoting a message) or holds it verbatim (a session summary made of the message's sentences).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .lines import MemoryLine

RANK_DECAY = 1.4
NEIGHBOUR_SHARE = 0.05
TOPIC_SHARE = 0.6
FACT_SHARE = 0.5
DOCUMENT_SHARE = 0.8
PROFILE_VALUE = 0.4
LINE_NORM = 35  # tokens of a typical recalled line
DUP_CONTAINMENT = 0.8
MESSAGE_KINDS = frozenset({"message", "neighbour"})
OTHER_KINDS = frozenset({"topic", "fact", "profile", "document"})
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=20_000)
def terms_of(analyzer: Any, text: str) -> frozenset[str]:
    """The distinct content terms of ``text`` (``Analyzer.terms``), cached: the same messages come back
    call after call."""
    return frozenset(analyzer.terms(text))


@lru_cache(maxsize=20_000)
def tokens_of(count: Callable[[str], int], text: str) -> int:
    return count(text)


def rank_value(rank: int) -> float:
    return float((1.0 + rank) ** -RANK_DECAY)


@dataclass(slots=True)
class Candidate:
    """One line the context may show: ``item`` (text, who, when, key, sources), the block it goes to,
    its kind (message | neighbour | topic | fact | profile | document), ``value`` and ``relevance``
    (see the module docstring) and its content ``terms`` (for duplicates)."""

    item: MemoryLine
    block: str
    kind: str
    value: float
    relevance: float = 1.0
    analyzer: Any = None  # computes ``terms`` when first asked (``Analyzer.terms``, cached)
    vector_id: str | None = None  # the point whose dense vector measures relevance (messages, topic summaries)
    parent: Candidate | None = None  # a neighbour's hit: it inherits the hit's relevance
    tokens: int = 0
    term_set: frozenset[str] | None = None

    @property
    def key(self) -> str:
        return self.item.key

    @property
    def terms(self) -> frozenset[str]:
        if self.term_set is None:
            self.term_set = terms_of(self.analyzer, self.item.text) if self.analyzer is not None else frozenset(self.item.text.casefold().split())
        return self.term_set


@lru_cache(maxsize=20_000)
def normalized(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def idf_weights(query_terms: Iterable[str], pool: Sequence[frozenset[str]]) -> dict[str, float]:
    """IDF of the query's terms over the candidate pool (a term every candidate has weighs little)."""
    n = len(pool)
    df = Counter(t for terms in pool for t in terms)
    return {t: math.log(1.0 + (n + 1.0) / (df.get(t, 0) + 0.5)) for t in set(query_terms)}


def lexical_relevance(query_terms: set[str], terms: frozenset[str], idf: dict[str, float]) -> float:
    total = sum(idf.get(t, 0.0) for t in query_terms)
    if total <= 0:
        return 0.0
    return sum(idf.get(t, 0.0) for t in query_terms & terms) / total


def rescaled(cosines: dict[str, float], floor: float, topical: float, level: float = 0.8) -> dict[str, float]:
    """Cosines rescaled so ``floor`` -> 0 and ``topical`` -> ``level``, clipped to [0, 1] (the embedder's
    anchors: ``topics.threader.embedder_calibration``)."""
    span = max(topical - floor, 1e-6)
    return {k: min(1.0, max(0.0, level * (c - floor) / span)) for k, c in cosines.items()}


def score_relevance(cands: Sequence[Candidate], queries: Sequence[set[str]], dense: dict[str, float], floor: float = 1.0) -> None:
    """Set each candidate's absolute relevance: its dense relevance, and where that is under ``floor``
    the best lexical relevance over the queries' term sets (IDF over those candidates); a neighbour's
    is at least its hit's."""
    for c in cands:
        c.relevance = dense.get(c.vector_id, 0.0) if c.vector_id else 0.0
    need = [c for c in cands if c.relevance < floor]
    if need and any(queries):
        pool = [c.terms for c in need]
        idfs = [(q, idf_weights(q, pool)) for q in queries if q]
        for c, terms in zip(need, pool):
            c.relevance = max(c.relevance, max(lexical_relevance(q, terms, idf) for q, idf in idfs))
    for c in cands:
        if c.parent is not None:
            c.relevance = max(c.relevance, c.parent.relevance)


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]+")
_STOP: frozenset[str] = frozenset()


@lru_cache(maxsize=20_000)
def content_size(text: str) -> int:
    """About how many content terms a text has (distinct words that are not stop words, plus the
    character bigrams of CJK runs): cheap, for telling "Noted." / "ok" / "好的" from a real turn."""
    global _STOP
    if not _STOP:
        from ..retrieval.analyzer import EN_STOPWORDS, RU_STOPWORDS

        _STOP = EN_STOPWORDS | RU_STOPWORDS
    words = {w.casefold() for w in _WORD.findall(_CJK_RUN.sub(" ", text))} - _STOP
    return len(words) + sum(len(r) - 1 for r in _CJK_RUN.findall(text))


class Chosen:
    """What the context already holds, for the duplicate rules."""

    def __init__(self, cross: bool = True) -> None:
        self.cross = cross  # some candidates are not messages: compare words across kinds
        self.keys: set[str] = set()
        self.sources: set[str] = set()
        self.texts: set[str] = set()
        self.term_sets: list[tuple[str, frozenset[str]]] = []
        self.verbatim: list[str] = []  # normalized texts that quote messages (session summary)

    def add(self, key: str = "", sources: Sequence[str] = (), text: str = "", verbatim: bool = False) -> None:
        if key:
            self.keys.add(key)
        self.sources.update(sources)
        if text:
            self.texts.add(normalized(text))
            if verbatim:
                self.verbatim.append(normalized(text))

    def repeats(self, c: Candidate) -> bool:
        item = c.item
        if item.key and (item.key in self.keys or item.key in self.sources):
            return True
        if any(s in self.keys for s in item.sources):
            return True
        text = normalized(item.text)
        if text in self.texts or any(text in v for v in self.verbatim):
            return True
        # the same words: a summary or fact against a message (two messages differ by key and text)
        mine = MESSAGE_KINDS if c.kind in MESSAGE_KINDS else OTHER_KINDS
        if self.cross and c.kind != "profile" and len(c.terms) >= 3:  # the profile sums the person up: shown whole
            for kind, other in self.term_sets:
                if kind in mine:
                    continue
                shared = len(c.terms & other)
                if shared and shared >= DUP_CONTAINMENT * min(len(c.terms), len(other)):
                    return True
        return False

    def take(self, c: Candidate) -> None:
        self.add(c.item.key, c.item.sources, c.item.text)
        if self.cross and c.kind != "profile" and len(c.terms) >= 3:
            self.term_sets.append((c.kind, c.terms))


def per_token(c: Candidate) -> float:
    """Value per token. A message line's value grows with its length about as fast as its cost does (see
    the module docstring), so per token it is its rank's value over a typical line's ``LINE_NORM`` tokens."""
    if c.kind in MESSAGE_KINDS:
        return c.value / LINE_NORM
    return c.value / max(c.tokens, 1)


def as_candidates(items: Sequence[MemoryLine], block: str, kind: str, share: float, terms: Callable[[str], frozenset[str]],
                  vector_ids: Sequence[str | None] | None = None) -> list[Candidate]:
    """Candidates of one tier, valued by their rank in it (``items`` best first); ``terms`` gives a text's term set."""
    out = []
    for r, item in enumerate(items):
        vid = vector_ids[r] if vector_ids is not None else None
        out.append(Candidate(item, block, kind, share * rank_value(r), term_set=terms(item.text), vector_id=vid))
    return out


__all__ = [
    "Candidate", "Chosen", "DOCUMENT_SHARE", "FACT_SHARE", "NEIGHBOUR_SHARE", "PROFILE_VALUE", "RANK_DECAY", "TOPIC_SHARE",
    "as_candidates", "rescaled", "idf_weights", "lexical_relevance", "normalized", "per_token", "rank_value",
    "content_size", "score_relevance", "terms_of", "tokens_of",
]
