import math
import random
import zlib

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from layered_memory.retrieval import Analyzer, BM25Encoder, BM25Scorer, idf, term_id, top_k_scores
from layered_memory.retrieval.analyzer import with_prefixes
from layered_memory.stores.base import SparseVector


def test_term_id_is_stable_crc32():
    assert term_id("instal") == zlib.crc32(b"instal") == 2863369846  # pinned: changing term_id means re-indexing
    assert term_id("установ") == zlib.crc32("установ".encode())
    assert 0 <= term_id("高铁") < 2**32
    assert term_id("a") != term_id("b")


def test_document_vector_formula_fixed_avgdl():
    enc = BM25Encoder(k1=1.2, b=0.75, avgdl=4.0)
    vec = enc.document(["cat", "cat", "dog"])
    assert isinstance(vec, SparseVector)
    assert vec.indices == sorted(vec.indices)
    got = dict(zip(vec.indices, vec.values))
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 4.0)
    assert got[term_id("cat")] == pytest.approx(2 * 2.2 / (2 + norm))
    assert got[term_id("dog")] == pytest.approx(1 * 2.2 / (1 + norm))
    assert enc.document([]) == SparseVector([], [])


def test_hash_duplicates_are_summed(monkeypatch):
    import layered_memory.retrieval.bm25 as bm25

    monkeypatch.setattr(bm25, "term_id", lambda t: 7)
    vec = BM25Encoder(avgdl=2.0).document(["x", "y"])
    norm = 1.2 * (1 - 0.75 + 0.75 * 2 / 2.0)
    assert vec.indices == [7] and vec.values[0] == pytest.approx(2 * 2.2 / (1 + norm))


def test_running_avgdl():
    enc = BM25Encoder()
    enc.document(["a"] * 10)
    assert enc.avgdl == 10
    enc.document(["a"] * 20)
    assert enc.avgdl == 15 and enc.doc_count == 2 and enc.total_length == 30
    resumed = BM25Encoder(doc_count=enc.doc_count, total_length=enc.total_length)
    assert resumed.avgdl == 15
    enc.document(["a"] * 100, update=False)
    assert enc.avgdl == 15


def test_query_vector_weight_one_per_distinct_term():
    q = BM25Encoder().query(["cat", "dog", "cat"])
    assert sorted(q.indices) == q.indices and len(q.indices) == 2 and q.values == [1.0, 1.0]


def test_invalid_parameters():
    with pytest.raises(ValueError):
        BM25Encoder(b=2)
    with pytest.raises(ValueError):
        BM25Encoder(avgdl=0)


def _corpus(n=400, seed=0):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(300)]
    weights = [1 / (i + 1) for i in range(300)]  # Zipf-like
    return [rng.choices(vocab, weights, k=rng.randint(3, 40)) for _ in range(n)], vocab


class _LuceneIdfOkapi(BM25Okapi):
    """rank_bm25 with Qdrant's IDF, so the scores must be identical to ours."""

    def _calc_idf(self, nd):
        self.idf = {w: math.log(1 + (self.corpus_size - f + 0.5) / (f + 0.5)) for w, f in nd.items()}


def test_scorer_matches_rank_bm25_with_same_idf():
    corpus, vocab = _corpus()
    ours = BM25Scorer(corpus)
    ref = _LuceneIdfOkapi(corpus, k1=1.2, b=0.75)
    rng = random.Random(1)
    for _ in range(50):
        q = list(dict.fromkeys(rng.choices(vocab[:150], k=rng.randint(1, 5))))
        expected = ref.get_scores(q)
        got = ours.get_scores(q)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
        top, scores = ours.top_k(q, 10)
        ref_order = sorted(range(len(corpus)), key=lambda d: (-expected[d], d))
        ref_top = [d for d in ref_order[:10] if expected[d] > 0]
        # same top-10 up to float ties
        assert [round(float(expected[d]), 4) for d in top] == [round(float(expected[d]), 4) for d in ref_top]


def test_scorer_top10_close_to_plain_rank_bm25():
    """Plain BM25Okapi differs only in IDF (no +1 inside the log, epsilon floor for common terms)."""
    corpus, vocab = _corpus(seed=3)
    ours, ref = BM25Scorer(corpus), BM25Okapi(corpus)
    rng = random.Random(2)
    overlaps = []
    for _ in range(50):
        q = list(dict.fromkeys(rng.choices(vocab[20:200], k=3)))  # rarer terms: both IDFs positive
        top, _ = ours.top_k(q, 10)
        ref_top = np.argsort(-ref.get_scores(q), kind="stable")[:10]
        overlaps.append(len(set(top.tolist()) & set(ref_top.tolist())) / 10)
    assert np.mean(overlaps) >= 0.9


def test_encoder_times_idf_equals_scorer():
    an = Analyzer()
    docs = ["I installed psycopg2 yesterday", "the server crashed with E4012", "we installed a new server",
            "погода хорошая", "установка сервера заняла час", "с переездом решено: Лиссабон"]
    corpus = [an.terms(d) for d in docs]
    scorer = BM25Scorer(corpus)
    enc = BM25Encoder(avgdl=scorer.avgdl)
    vecs = [dict(zip(v.indices, v.values)) for v in (enc.document(t, update=False) for t in corpus)]
    df = {}
    for t in corpus:
        for tid in {term_id(x) for x in with_prefixes(t)}:  # both shapes index a Russian stem's prefix too
            df[tid] = df.get(tid, 0) + 1
    for query in ["installed server", "установить сервер", "E4012", "когда переезжаете?"]:
        q = enc.query(an.terms(query))
        manual = [sum(idf(len(docs), df[i]) * v.get(i, 0.0) for i in q.indices if i in df) for v in vecs]
        np.testing.assert_allclose(scorer.get_scores(an.terms(query)), manual, rtol=1e-5)


def test_top_k_ties_and_zero_scores():
    scores = np.array([0.0, 2.0, 1.0, 2.0, 0.0, 1.0], dtype=np.float32)
    top, vals = top_k_scores(scores, 3)
    assert top.tolist() == [1, 3, 2] and vals.tolist() == [2.0, 2.0, 1.0]
    top, _ = top_k_scores(scores, 10)
    assert top.tolist() == [1, 3, 2, 5]
    assert top_k_scores(np.zeros(5, np.float32), 3)[0].tolist() == []


def test_scorer_unknown_terms_and_empty_corpus():
    scorer = BM25Scorer([["a", "b"], ["b"]])
    assert scorer.top_k(["zzz"], 5)[0].tolist() == []
    assert scorer.top_k(["a", "a"], 5)[0].tolist() == [0]
    assert BM25Scorer([]).top_k(["a"], 3)[0].tolist() == []
