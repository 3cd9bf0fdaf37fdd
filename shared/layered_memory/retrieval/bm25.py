"""BM25 in two shapes, one formula.

* ``BM25Encoder`` turns analyzer terms into Qdrant sparse vectors: the document side carries the
  saturated, length-normalised term frequency, the query side weight 1 per distinct term, and the
  vector index applies IDF (Qdrant's ``Modifier.IDF``) over the whole collection.
* ``BM25Scorer`` scores in process (no vector index: seed 002 "core without vectors", and the
  reference for the encoder). bm25s-style: all math at index time into a CSC matrix
  (term -> postings), a query is a gather + add over its few terms, top-k by ``argpartition``.

The formula (Lucene / Qdrant)::

    idf(t)    = ln(1 + (N - n_t + 0.5) / (n_t + 0.5))
    tf_w(t,d) = tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
    score     = sum over distinct query terms t of idf(t) * tf_w(t, d)

``dl`` is the number of terms of the document (duplicates counted). Both shapes index and query
``analyzer.with_prefixes(terms)``: a Russian stem also counts by its six-letter prefix. rank_bm25's ``BM25Okapi``
uses ``ln((N - n + 0.5) / (n + 0.5))`` with an epsilon floor instead; with that IDF swapped in, the
scores are identical (``tests/unit/retrieval/test_bm25.py``).
"""

from __future__ import annotations

import logging
import zlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..vectors import SparseVector
from .analyzer import with_prefixes

if TYPE_CHECKING:
    from ..config import RetrievalSettings

logger = logging.getLogger(__name__)

__all__ = [
    "BM25Encoder", "BM25Scorer", "term_id", "idf", "DEFAULT_K1", "DEFAULT_B", "DEFAULT_AVGDL", "TERMS_CHANGES", "TERMS_VERSION", "marker",
    "marker_change",
]

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
DEFAULT_AVGDL = 20.0  # a chat message is ~10-30 terms; only used until real lengths are observed


# What a document's sparse vector holds, as a number: bumped with every change to the analyzer's terms or their
# encoding, so a collection records what its vectors were written with (``marker``) and the doctor can tell
# vectors written before a change (docs/search.md lists the versions). 1: Snowball stems, CJK bigrams, the
# Russian six-letter prefixes, the stopwords and stems of Spanish, German, French, Portuguese and Italian.
# Each later version says what changed (``TERMS_CHANGES``), so a warning can say whether a store is concerned.
TERMS_VERSION = 3
TERMS_CHANGES = {
    2: "Korean words also count by their syllable bigrams, and Hangul is split from a Latin word or number written "
       "against it; a store without Korean text has the same terms",
    3: "a word of an Indic script, Arabic, Hebrew, Syriac, Thaana or Tibetan keeps its vowel signs and points (it was cut at each), "
       "Arabic, Persian, Hindi and Greek words also count by their stems, and Thai, Lao, Myanmar and Khmer runs by "
       "pairs of clusters; a store without text in those scripts has the same terms",
}
_MARKED = ("k1", "b", "avgdl", "message_k1", "message_b", "message_avgdl")


def marker(settings: RetrievalSettings) -> dict[str, Any]:
    """What the engine writes sparse vectors with: the terms' version and both encoders' parameters (the
    messages' and the other kinds'), recorded on each collection it creates or wholly re-indexes."""
    return {"terms": TERMS_VERSION, **{key: getattr(settings, key) for key in _MARKED}}


def marker_change(stored: Mapping[str, Any] | None, current: Mapping[str, Any]) -> str | None:
    """How a collection's recorded marker differs from ``current``, in words (None: it does not)."""
    if stored is None:
        return "its sparse vectors were written by a release that recorded nothing about them (before " \
               "the Russian prefixes and the Latin-language stems, or with other BM25 settings)"
    changed = [f"{key} {stored.get(key)!r} -> {value!r}" for key, value in current.items() if stored.get(key) != value]
    if not changed:
        return None
    since = stored.get("terms") if isinstance(stored.get("terms"), int) else 0
    notes = [f"terms {v}: {TERMS_CHANGES[v]}" for v in sorted(TERMS_CHANGES) if since < v <= int(current.get("terms") or 0)]
    return f"its sparse vectors were written with other BM25 terms or settings ({', '.join(changed)})" + \
        (f" [{'; '.join(notes)}]" if notes else "")


def term_id(term: str) -> int:
    """Stable unsigned 32-bit id of a term: ``zlib.crc32(term.encode("utf-8"))``.

    Same value on every platform, Python version and process (unlike ``hash()``), so sparse
    vectors written today match queries encoded later. Changing it requires a full re-index.
    Collisions (birthday bound: ~1% chance of any collision among ~9k terms, a handful among 1M)
    merge two terms into one dimension; the encoder sums their weights.
    """
    return zlib.crc32(term.encode("utf-8"))


def idf(n_docs: int, doc_freq: np.ndarray | float) -> np.ndarray | float:
    """Qdrant/Lucene IDF: ``ln(1 + (N - n + 0.5) / (n + 0.5))``, always > 0."""
    return np.log1p((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def _tf_weight(tf: np.ndarray, dl: np.ndarray | float, avgdl: float, k1: float, b: float) -> np.ndarray:
    return tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / avgdl))


class BM25Encoder:
    """Sparse BM25 vectors for a vector index with an IDF modifier.

    ``avgdl``: a float fixes the average document length. ``None`` (default) keeps a running
    mean: every ``document()`` call first adds its length to ``doc_count`` / ``total_length``, then
    encodes with ``total_length / doc_count`` (the first document is encoded against itself).
    Documents encoded early used an earlier mean; the drift is small once a few hundred documents
    are in, and a re-index re-encodes everything with the converged value. Persist the running
    state with ``doc_count`` and ``total_length`` and pass them back to resume.
    """

    def __init__(
        self,
        k1: float = DEFAULT_K1,
        b: float = DEFAULT_B,
        avgdl: float | None = None,
        *,
        doc_count: int = 0,
        total_length: int = 0,
    ) -> None:
        if k1 < 0 or not 0.0 <= b <= 1.0:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        if avgdl is not None and avgdl <= 0:
            raise ValueError(f"avgdl must be > 0 or None (running mean), got {avgdl}")
        self.k1 = float(k1)
        self.b = float(b)
        self.fixed_avgdl = avgdl
        self.doc_count = int(doc_count)
        self.total_length = int(total_length)

    @property
    def avgdl(self) -> float:
        if self.fixed_avgdl is not None:
            return self.fixed_avgdl
        if self.doc_count == 0:
            return DEFAULT_AVGDL
        return max(self.total_length / self.doc_count, 1.0)

    def observe(self, lengths: Iterable[int]) -> None:
        """Add document lengths to the running mean without encoding (e.g. a bulk index pass)."""
        for n in lengths:
            self.doc_count += 1
            self.total_length += int(n)

    def document(self, terms: Sequence[str], *, update: bool = True) -> SparseVector:
        """Document-side vector: saturated tf per term id (hash duplicates summed), ids ascending."""
        terms = with_prefixes(terms)
        dl = len(terms)
        if update and self.fixed_avgdl is None:
            self.observe((dl,))
        if dl == 0:
            return SparseVector(indices=[], values=[])
        avgdl = self.avgdl
        k1, b = self.k1, self.b
        norm = k1 * (1.0 - b + b * dl / avgdl)
        acc: dict[int, float] = {}
        for term, tf in Counter(terms).items():
            tid = term_id(term)
            acc[tid] = acc.get(tid, 0.0) + tf * (k1 + 1.0) / (tf + norm)
        ids = sorted(acc)
        return SparseVector(indices=ids, values=[acc[i] for i in ids])

    def query(self, terms: Sequence[str]) -> SparseVector:
        """Query-side vector: weight 1.0 per distinct term id (the index multiplies in IDF)."""
        ids = sorted({term_id(t) for t in with_prefixes(terms)})
        return SparseVector(indices=ids, values=[1.0] * len(ids))


class BM25Scorer:
    """In-process BM25 over a fixed corpus of term lists (immutable; rebuild to add documents).

    Build cost is one pass over the postings; memory is ~8 bytes per (term, doc) pair.
    ``top_k`` returns document positions (indices into the corpus) and scores, best first, ties
    broken by position; documents matching no query term are never returned.
    """

    def __init__(self, corpus: Sequence[Sequence[str]], k1: float = DEFAULT_K1, b: float = DEFAULT_B) -> None:
        self.k1, self.b = float(k1), float(b)
        self.n_docs = len(corpus)
        vocab: dict[str, int] = {}
        rows: list[int] = []  # term index per posting
        cols: list[int] = []  # doc index per posting
        tfs: list[int] = []
        lengths = np.zeros(self.n_docs, dtype=np.float32)
        for d, terms in enumerate(corpus):
            terms = with_prefixes(terms)
            lengths[d] = len(terms)
            for t, tf in Counter(terms).items():
                rows.append(vocab.setdefault(t, len(vocab)))
                cols.append(d)
                tfs.append(tf)
        self.vocab = vocab
        self.doc_lengths = lengths
        self.avgdl = float(lengths.mean()) if self.n_docs and lengths.sum() > 0 else 1.0
        term_idx = np.asarray(rows, dtype=np.int32)
        order = np.argsort(term_idx, kind="stable")
        df_int = np.bincount(term_idx, minlength=len(vocab))
        self.indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        self.indptr[1:] = np.cumsum(df_int)
        df = df_int.astype(np.float32)
        self.indices = np.asarray(cols, dtype=np.int32)[order]
        tf = np.asarray(tfs, dtype=np.float32)[order]
        self.idf = idf(self.n_docs, df).astype(np.float32)
        w = _tf_weight(tf, lengths[self.indices], self.avgdl, self.k1, self.b)
        self.data = (w * np.repeat(self.idf, np.diff(self.indptr))).astype(np.float32)
        self.doc_freq = df
        logger.debug(
            "bm25 scorer: %d docs, %d terms, %d postings, avgdl %.1f",
            self.n_docs, len(vocab), len(self.indices), self.avgdl,
        )

    def __len__(self) -> int:
        return self.n_docs

    def get_scores(self, query_terms: Sequence[str]) -> np.ndarray:
        """Score of every document (float32, length N); each distinct query term counts once."""
        ids = sorted({self.vocab[t] for t in with_prefixes(query_terms) if t in self.vocab})
        if not ids or self.n_docs == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        if len(ids) == 1:
            s, e = self.indptr[ids[0]], self.indptr[ids[0] + 1]
            scores = np.zeros(self.n_docs, dtype=np.float32)
            scores[self.indices[s:e]] = self.data[s:e]
            return scores
        idx = np.concatenate([self.indices[self.indptr[i] : self.indptr[i + 1]] for i in ids])
        val = np.concatenate([self.data[self.indptr[i] : self.indptr[i + 1]] for i in ids])
        return np.bincount(idx, weights=val, minlength=self.n_docs).astype(np.float32)

    def top_k(self, query_terms: Sequence[str], k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        """(doc positions, scores) of the best ``k`` documents with a score > 0, best first."""
        scores = self.get_scores(query_terms)
        return top_k_scores(scores, k)


def top_k_scores(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions and values of the ``k`` largest positive scores; ties by ascending position."""
    n = scores.shape[0]
    if k <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=scores.dtype)
    if k < n:
        cand = np.argpartition(-scores, k - 1)[:k]
        # argpartition may cut through a tie at the k-th value: take every tied position too
        kth = scores[cand].min()
        if kth <= 0:
            cand = np.flatnonzero(scores > 0)
        else:
            cand = np.union1d(cand[scores[cand] > kth], np.flatnonzero(scores == kth))
    else:
        cand = np.arange(n)
    cand = cand[scores[cand] > 0]
    order = np.lexsort((cand, -scores[cand]))[:k]
    top = cand[order]
    return top, scores[top]
