"""The deep tail (``retrieval.deep_limit``): hits below the first ``deep_from`` are ranked from deeper
index lists, so a message further down both lists reaches the results, while the head stays the
ranking of the usual ``prefetch_limit`` (docs/retrieval.md, benchmarks/retrieval_deep.py)."""

from __future__ import annotations

import uuid

import pytest

from layered_memory.config import RetrievalSettings
from layered_memory.index import Scope
from layered_memory.index.collection import Entry, IndexedCollection, fuse_sides
from layered_memory.retrieval.analyzer import Analyzer
from layered_memory.retrieval.bm25 import BM25Encoder
from layered_memory.retrieval.rerank import SecondStage, join_ranked
from layered_memory.stores.base import IndexHit
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from layered_memory.testing import HashEmbedder


def _hit(key: str, score: float, seq: int) -> IndexHit:
    return IndexHit(id=key, score=score, payload={"message_id": key, "chat_id": f"c{seq}", "seq": seq})


def _lists() -> dict[str, list[IndexHit]]:
    """Each side's top 10: disjoint but for "both", fifth on each side."""
    dense = [_hit(f"d{i}", 0.9 - 0.02 * i, i) for i in range(4)] + [_hit("both", 0.81, 50)] + [_hit(f"d{i}", 0.8 - 0.02 * i, i) for i in range(4, 9)]
    sparse = [_hit(f"s{i}", 9.0 - 0.5 * i, 20 + i) for i in range(4)] + [_hit("both", 6.9, 50)] + [_hit(f"s{i}", 6.8 - 0.5 * i, 20 + i) for i in range(4, 9)]
    return {"dense": dense, "sparse": sparse}


def test_a_hit_down_both_lists_reaches_the_tail_and_the_head_stays():
    stage = SecondStage(RetrievalSettings(), Analyzer())
    got = _lists()
    shallow = fuse_sides(stage, "q", {n: h[:3] for n, h in got.items()}, "text", 3, limit=5)  # what a 3-deep read returns
    deep = fuse_sides(stage, "q", got, "text", 10, limit=5, head=2, head_depth=3)
    assert "both" not in [k for k, _ in shallow]
    assert "both" in [k for k, _ in deep][2:]  # the only message on both sides leads the tail
    assert [k for k, _ in deep][:2] == [k for k, _ in shallow][:2]
    scores = [s for _, s in deep]
    assert all(a > b for a, b in zip(scores, scores[1:])) and len(deep) == 5


def test_join_keeps_the_head_drops_repeats_and_caps_the_tail_scores():
    got = join_ranked([("a", 0.5), ("b", 0.4)], [("c", 2.0), ("a", 1.9), ("d", 0.1), ("e", 0.05)], 4)
    assert [k for k, _ in got] == ["a", "b", "c", "d"]
    assert got[2][1] < 0.4 and got[3][1] == pytest.approx(0.1)
    assert join_ranked([("a", 1.0)], [("b", 0.5)], 1) == [("a", 1.0)]


class Reads:
    """A real Qdrant Edge index that records how deep each batch of queries read."""

    def __init__(self, inner: QdrantEdgeVectorIndex) -> None:
        self.inner, self.limits = inner, []

    def __getattr__(self, name):  # noqa: ANN001, ANN204
        return getattr(self.inner, name)

    def query_batch(self, name, requests):  # noqa: ANN001, ANN201
        self.limits.append([q.limit for q in requests])
        return self.inner.query_batch(name, requests)


@pytest.mark.parametrize("deep_limit", [0, 40])
def test_a_search_for_more_than_the_head_reads_the_deep_lists(tmp_path, deep_limit):
    index = Reads(QdrantEdgeVectorIndex(str(tmp_path)))
    settings = RetrievalSettings(prefetch_limit=5, deep_limit=deep_limit, deep_from=3)
    coll = IndexedCollection(index, "msgs", HashEmbedder(), Analyzer(), BM25Encoder(avgdl=32.0), settings)
    words = ["tea", "trip", "cat", "printer", "kyoto", "garden", "train", "music"]
    coll.upsert([Entry(str(uuid.uuid5(uuid.NAMESPACE_OID, str(i))),
                       {"tenant": "t", "kind": "message", "user_id": "u", "message_id": f"m{i}", "chat_id": "c", "seq": i},
                       f"{words[i % 8]} and {words[(i * 3) % 8]} number {i}") for i in range(60)])
    spec = Scope("t").spec("message")
    try:
        small = coll.query("tea trip", spec, k=3, signals=True)
        wide = coll.query("tea trip", spec, k=12, signals=True)
        assert index.limits[0] == [5, 5]  # a search for the head only reads prefetch_limit deep
        assert index.limits[1] == ([40, 40] if deep_limit else [12, 12])
        assert len(wide.hits) == 12
        if deep_limit:  # the head is ranked from the first prefetch_limit of each list: it does not move with k
            assert [h.id for h in wide.hits][:3] == [h.id for h in small.hits]
    finally:
        index.close()
