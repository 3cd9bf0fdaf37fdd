"""The route-confidence estimator (layered_memory.retrieval.confidence): the fusion weights move with
each signal, and a confident side beats a flat one in the ranking."""

from __future__ import annotations

import numpy as np
import pytest

from layered_memory.config import RetrievalSettings
from layered_memory.retrieval.analyzer import Analyzer
from layered_memory.retrieval.confidence import estimate, rare_terms, side_weights
from layered_memory.retrieval.rerank import SIGNAL_WEIGHTS, Candidate, SecondStage

OFF = dict.fromkeys(SIGNAL_WEIGHTS, 0.0)
ON = {"confidence_power": 1.0, "confidence_margin": 1.0, "confidence_disagreement": 1.0, "confidence_length": 0.3,
      "confidence_short_terms": 4, "confidence_rare": 0.5, "fusion_dense_weight": 1.0, "sparse_weight": 1.0}


def settings(**over) -> RetrievalSettings:
    return RetrievalSettings(**{**OFF, "fusion": "confidence", **ON, **over})


def weights(strength=(1.0, 1.0), margin=(0.0, 0.0), agreement=1.0, terms=3, rare=0, coverage=1.0, **over) -> tuple[float, float]:
    return side_weights(strength, margin, agreement, terms, rare, settings(**over), coverage)


def test_weights_sum_to_two_and_are_even_for_equal_sides():
    w = weights()
    assert sum(w) == pytest.approx(2.0) and w[0] == pytest.approx(w[1])


def test_the_base_weights_tilt_the_result():
    w = weights(fusion_dense_weight=1.5)
    assert sum(w) == pytest.approx(2.0) and w[0] / w[1] == pytest.approx(1.5)


def test_a_stronger_side_gets_more_weight_and_the_power_sharpens_it():
    soft = weights(strength=(2.0, 1.0), confidence_power=1.0)
    sharp = weights(strength=(2.0, 1.0), confidence_power=3.0)
    assert soft[0] > soft[1] and sharp[0] > soft[0]
    assert weights(strength=(1.0, 2.0))[1] > 1.0


def test_disagreement_sharpens_and_agreement_keeps_the_balance():
    agree = weights(strength=(2.0, 1.0), agreement=1.0)
    disagree = weights(strength=(2.0, 1.0), agreement=0.0)
    assert disagree[0] > agree[0] > 1.0


def test_a_clear_margin_raises_that_side():
    assert weights(margin=(0.0, 0.8))[1] > 1.0 > weights(margin=(0.8, 0.0))[1]


def test_long_queries_lower_bm25_and_rare_terms_raise_it():
    short, long = weights(terms=3), weights(terms=12)
    assert long[1] < short[1] == pytest.approx(1.0)
    assert weights(terms=12, rare=2)[1] > long[1]
    assert weights(terms=12, confidence_length=0.0)[1] == pytest.approx(1.0)  # switched off


def test_rare_terms_are_codes_numbers_names_and_quotes():
    assert rare_terms("how do I fix error E4012 in psycopg2.connect") == 2
    assert rare_terms("What did Caroline say about the trip to Lisbon?") == 2  # the sentence's first word is no name
    assert rare_terms('who sang "whale songs" at the party') == 1
    assert rare_terms("How many times did I mention going to the dentist?") == 0
    assert rare_terms("Что Анна говорила о поездке?") == 1
    assert rare_terms("我们聊过我去京都旅行的什么?") == 0


def test_estimate_reads_the_candidate_arrays():
    # dense: one hit far above a flat list; sparse: flat; the sides disagree on the top
    dense = np.array([0.95] + [0.50 - 0.001 * i for i in range(19)])
    sparse = np.array([1.2 - 0.01 * i for i in range(20)])
    scores = np.vstack([dense, sparse[::-1]])
    ranks = np.vstack([np.arange(20), np.arange(20)[::-1]]).astype(float)
    z = (scores - scores.mean(axis=1, keepdims=True)) / scores.std(axis=1, keepdims=True)
    conf = estimate(["fix", "laptop", "screen"], "fix my laptop screen", scores, ranks, z, settings())
    assert conf.strength[0] > conf.strength[1] and conf.margin[0] > 0.9 and conf.margin[1] < 0.2
    assert conf.agreement < 0.5 and conf.weights[0] > 1.5


def _filler_case() -> list[Candidate]:
    """BM25 matches the filler of a long question in a wordy turn (flat scores), dense is sure of the answer."""
    out = [Candidate("answer", {"seq": 1, "chat_id": "a"}, scores={"dense": 0.91, "sparse": 3.0}, ranks={"dense": 0, "sparse": 6})]
    for i in range(1, 12):
        out.append(Candidate(f"wordy{i}", {"seq": 1 + i, "chat_id": f"w{i}"},
                             scores={"dense": 0.80 - 0.002 * i, "sparse": 4.2 - 0.05 * i}, ranks={"dense": i, "sparse": i - 1 if i <= 6 else i}))
    return out


def test_a_confident_dense_side_leads_over_a_flat_bm25_side():
    query = "Remind me, what was the name of the little dog my sister adopted last spring, I keep forgetting it?"
    st = SecondStage(settings(), Analyzer())
    assert st.rank(query, _filler_case(), k=3)[0].key == "answer"
    assert st.confidence is not None and st.confidence.weights[0] > st.confidence.weights[1]
    rrf = SecondStage(RetrievalSettings(**OFF, fusion="rrf"), Analyzer())
    assert rrf.rank(query, _filler_case(), k=3)[0].key != "answer"  # a fixed rank fusion follows BM25's filler


def test_low_coverage_lowers_bm25_and_full_coverage_leaves_it():
    full, half, low = (weights(coverage=c, confidence_coverage=2.0, confidence_coverage_full=0.5) for c in (1.0, 0.5, 0.2))
    assert full == pytest.approx(half) and low[1] < half[1]
    assert low[1] / low[0] == pytest.approx((0.2 / 0.5) ** 2 * half[1] / half[0])  # power 1 in these settings
    assert weights(coverage=0.2, confidence_coverage=0.0) == pytest.approx(full)  # switched off


def _name_only_case() -> tuple[str, list[Candidate]]:
    """The question names Anna and asks about her job in other words: BM25's best hits are Anna's turns that
    share only her name with it; dense ranks the answer (Anna's "signed the offer") first."""
    query = "What position did Anna accept?"
    out = [Candidate("answer", {"seq": 1, "chat_id": "c", "author": "Anna", "text": "Signed the offer yesterday, I start as a chef."},
                     scores={"dense": 0.88}, ranks={"dense": 0})]
    for i in range(1, 8):
        text = f"Anna here again, day {i} of the move."
        out.append(Candidate(f"anna{i}", {"seq": 1 + i, "chat_id": "c", "author": "Bob", "text": text},
                             scores={"dense": 0.84 - 0.01 * i, "sparse": 4.0 - 0.1 * i}, ranks={"dense": i, "sparse": i - 1}))
    return query, out


def test_bm25_hits_that_share_only_a_name_do_not_lead():
    query, cands = _name_only_case()
    on = SecondStage(settings(confidence_coverage=2.0, confidence_coverage_full=0.5), Analyzer())
    assert on.rank(query, cands, k=3)[0].key == "answer"
    assert on.confidence is not None and on.confidence.coverage == pytest.approx(0.0)  # "anna" holds no word of "position accept"
    off = SecondStage(settings(confidence_coverage=0.0), Analyzer())
    assert off.rank(query, _name_only_case()[1], k=3)[0].key != "answer"


def test_the_default_settings_let_the_dense_answer_lead_over_name_only_matches():
    query, cands = _name_only_case()
    on = SecondStage(RetrievalSettings(**OFF), Analyzer())
    assert on.rank(query, cands, k=3)[0].key == "answer"
    off = SecondStage(RetrievalSettings(**OFF, confidence_coverage=0.0), Analyzer())
    assert off.rank(query, _name_only_case()[1], k=3)[0].key == "anna1"
    assert on.confidence is not None and off.confidence is not None
    assert on.confidence.weights[1] < off.confidence.weights[1]


def test_coverage_leaves_out_speakers_names_and_needs_the_hits_text():
    st = SecondStage(settings(confidence_coverage=2.0), Analyzer())
    query, cands = _name_only_case()
    for c in cands:
        c.payload["author"] = "Anna"  # now "anna" is a speaker's name: left out, and still no hit holds "position"
    st.rank(query, cands, k=3)
    assert st.confidence is not None and st.confidence.coverage == pytest.approx(0.0)
    st.rank("Anna", cands, k=3)  # a query of a name alone: nothing to cover
    assert st.confidence.coverage == 1.0
    for c in cands:
        c.payload.pop("text")
    st.rank(query, cands, k=3)  # the index did not read the text: no reduction
    assert st.confidence.coverage == 1.0


def test_the_index_path_reads_the_text_from_bm25s_hits():
    """``rank_sides`` (the index path): a candidate both sides list keeps the payload with more keys, so the text
    that only BM25's request reads reaches the coverage."""
    from types import SimpleNamespace as Hit

    query, cands = _name_only_case()
    dense = [Hit(id=c.key, score=c.scores["dense"], payload={k: v for k, v in c.payload.items() if k != "text"}) for c in cands]
    sparse = [Hit(id=c.key, score=c.scores["sparse"], payload=c.payload) for c in cands if "sparse" in c.scores]
    st = SecondStage(settings(confidence_coverage=2.0, confidence_coverage_full=0.5), Analyzer())
    assert st.rank_sides(query, [("dense", dense), ("sparse", sparse)], k=3)[0][0] == "answer"
    assert st.confidence is not None and st.confidence.coverage == pytest.approx(0.0)
