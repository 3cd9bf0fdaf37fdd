import pytest

from layered_memory.retrieval import rrf


def test_rrf_basic_scores_match_qdrant_formula():
    fused = rrf([["a", "b", "c"], ["b", "d"]], k=60)
    scores = dict(fused)
    assert scores["b"] == pytest.approx(1 / 61 + 1 / 60)
    assert scores["a"] == pytest.approx(1 / 60)
    assert [d for d, _ in fused] == ["b", "a", "d", "c"]


def test_rrf_weights_scale_the_rank():
    fused = dict(rrf([["a"], ["b", "c"]], k=2, weights=[1.0, 2.0]))
    assert fused["a"] == pytest.approx(1 / 2)
    assert fused["c"] == pytest.approx(1 / (2 / 2 + 2 - 1))
    muted = rrf([["a"], ["b"]], weights=[1.0, 0.0])
    assert dict(muted)["b"] == 0.0 and muted[0][0] == "a"


def test_rrf_deterministic_tie_break():
    # a and x tie on score: a came first (list 0, position 0)
    assert [d for d, _ in rrf([["a", "b"], ["x", "y"]])] == ["a", "x", "b", "y"]
    assert [d for d, _ in rrf([["x", "y"], ["a", "b"]])] == ["x", "a", "y", "b"]


def test_rrf_duplicates_limit_and_validation():
    fused = rrf([["a", "a", "b"]], k=1)
    assert dict(fused)["b"] == pytest.approx(1 / 3)
    assert len(rrf([[1, 2, 3], [4]], limit=2)) == 2
    assert rrf([]) == [] and rrf([[], []]) == []
    with pytest.raises(ValueError):
        rrf([["a"]], weights=[1, 2])
    with pytest.raises(ValueError):
        rrf([["a"]], k=0)


def test_rrf_matches_qdrant_client_local_fusion():
    fusion = pytest.importorskip("qdrant_client.hybrid.fusion")
    from qdrant_client import models

    lists = [["a", "b", "c", "d"], ["c", "a", "e"], ["e", "f"]]
    weights = [1.0, 2.0, 0.5]
    ids = {name: i for i, name in enumerate("abcdef")}
    responses = [[models.ScoredPoint(id=ids[x], version=0, score=1.0) for x in lst] for lst in lists]
    ref = fusion.reciprocal_rank_fusion(responses, limit=10, ranking_constant_k=3, weights=weights)
    ours = rrf([[ids[x] for x in lst] for lst in lists], k=3, weights=weights)
    assert {p.id: pytest.approx(p.score, rel=1e-5) for p in ref} == dict(ours)
