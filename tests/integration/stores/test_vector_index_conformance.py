"""The VectorIndex conformance suite (``layered_memory.testing``) over Qdrant Edge (a tmp dir, the real engine)
and qdrant-client local mode (``:memory:``, the test double of the server path). Then what only these backends
share or do: the two agree with each other, Edge persistence and its one-opener rule."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from layered_memory.errors import BackendUnavailable, InvalidInputError, SchemaMismatch
from layered_memory.stores.base import PAYLOAD_INDEXES, VectorIndex, VectorPoint
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from layered_memory.stores.qdrant_server import QdrantVectorIndex
from layered_memory.testing import VectorIndexConformance
from layered_memory.testing.vector_index import (
    COL,
    DATA,
    DIM,
    FILTERS,
    N,
    assert_same_hits,
    query_vectors,
    scroll_all,
)


class TestQdrantEdge(VectorIndexConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def new_index(cls, tmp_path_factory):
        return lambda: QdrantEdgeVectorIndex(tmp_path_factory.mktemp("edge") / "vectors")


class TestQdrantClientLocal(VectorIndexConformance):
    @pytest.fixture(scope="class")
    @classmethod
    def new_index(cls):
        return QdrantVectorIndex.in_memory


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> Iterator[tuple[VectorIndex, VectorIndex]]:
    a = QdrantEdgeVectorIndex(tmp_path_factory.mktemp("both"))
    b = QdrantVectorIndex.in_memory()
    for index in (a, b):
        index.ensure_collection(COL, dense_dim=DIM)
        index.upsert(COL, DATA.points)
    yield a, b
    a.close()
    b.close()


# -- the two backends agree --------------------------------------------------------------------------------


def test_backends_agree(both):
    edge, local = both
    for seed in range(4):
        q, s = query_vectors(seed)
        for kw in ({"dense": q.tolist()}, {"sparse": s}, {"dense": q.tolist(), "sparse": s, "rrf_k": 2}):
            a = edge.query(COL, limit=10, prefetch_limit=50, filter=FILTERS["any"][0], **kw)
            b = local.query(COL, limit=10, prefetch_limit=50, filter=FILTERS["any"][0], **kw)
            assert_same_hits(a, b)
            if "rrf_k" not in kw:  # no ties outside fusion: same ids in the same order
                assert [h.id for h in a] == [h.id for h in b]
    assert [h.id for h in scroll_all(edge)] == [h.id for h in scroll_all(local)]


def test_edge_filter_top_level_equals_per_prefetch(both):
    edge, _ = both
    q, s = query_vectors(3)
    for flt, _pred in FILTERS.values():
        kw = dict(dense=q.tolist(), sparse=s, filter=flt, limit=10, prefetch_limit=25, rrf_k=2)
        top = edge.run_query(COL, edge.plan_query(COL, **kw))
        inner = edge.run_query(COL, edge.plan_query(COL, filter_in_prefetch=True, **kw))
        assert_same_hits(top, inner)


def test_client_bm25_marker_is_read_back_by_another_handle():
    """The server path keeps the marker in the collection's metadata: a second handle on the same server reads it."""
    index = QdrantVectorIndex.in_memory()
    index.ensure_collection(COL, dense_dim=DIM, embedder="e", bm25={"terms": 1})
    index.set_bm25(COL, {"terms": 2, "k1": 0.9})
    other = QdrantVectorIndex(index.client, location=":memory:")
    assert other.info(COL)["schema"]["bm25"] == {"terms": 2, "k1": 0.9} and other.info(COL)["schema"]["embedder"] == "e"
    index.close()


# -- Edge only: persistence and the one-opener rule ------------------------------------------------------------


def test_edge_reopen_keeps_data_and_indexes(tmp_path):
    root = tmp_path / "vectors"
    index = QdrantEdgeVectorIndex(root, index_at_points=0)
    index.ensure_collection(COL, dense_dim=DIM, embedder="e")
    index.upsert(COL, DATA.points)
    before = index.info(COL)
    q, s = query_vectors(2)
    hits = index.query(COL, dense=q.tolist(), sparse=s, filter=FILTERS["combined"][0], limit=5)
    assert index.size_bytes(COL) > 0
    index.set_bm25(COL, {"terms": 1, "k1": 0.9})
    index.close()

    again = QdrantEdgeVectorIndex(root)
    assert again.info(COL)["schema"]["bm25"] == {"terms": 1, "k1": 0.9}
    info = again.info(COL)
    assert info["points"] == N and info["payload_indexes"] == before["payload_indexes"]
    assert info["payload_indexes"]["tenant"] == "keyword" and info["payload_indexes"]["timestamp"] == "datetime"
    assert info["payload_indexes"]["success"] == "integer" and info["schema"]["embedder"] == "e"
    assert again.query(COL, dense=q.tolist(), sparse=s, filter=FILTERS["combined"][0], limit=5) == hits
    again.ensure_collection(COL, dense_dim=DIM, embedder="e")
    with pytest.raises(SchemaMismatch):
        again.ensure_collection(COL, dense_dim=DIM * 2)
    again.close()


def test_edge_payload_indexes_wait_for_the_threshold_then_persist(tmp_path):
    """A new collection is created without payload indexes (each one costs a sync to disk); the upsert that
    takes it to ``index_at_points`` creates them all, filtered results are the same before and after, and a
    reopen of an indexed collection finds them instead of creating them again."""
    root = tmp_path / "vectors"
    index = QdrantEdgeVectorIndex(root, index_at_points=N // 2)
    index.ensure_collection(COL, dense_dim=DIM)
    assert index.info(COL)["payload_indexes"] == {}
    index.upsert(COL, DATA.points[: N // 4])
    flt = FILTERS["combined"][0]
    before = sorted(h.id for h in scroll_all(index, flt))
    assert index.info(COL)["payload_indexes"] == {}
    index.upsert(COL, DATA.points[N // 4 :])
    made = index.info(COL)["payload_indexes"]
    assert set(made) == set(PAYLOAD_INDEXES) and made["success"] == "integer"
    assert set(before) <= {h.id for h in scroll_all(index, flt)}
    index.close()
    again = QdrantEdgeVectorIndex(root, index_at_points=N // 2)
    assert again.info(COL)["payload_indexes"] == made
    again.close()


def test_edge_small_collection_is_indexed_by_optimize_and_reopen_past_threshold(tmp_path):
    root = tmp_path / "vectors"
    index = QdrantEdgeVectorIndex(root)
    index.ensure_collection(COL, dense_dim=DIM)
    index.upsert(COL, DATA.points[:10])
    index.optimize(COL)
    assert set(index.info(COL)["payload_indexes"]) == set(PAYLOAD_INDEXES)
    index.ensure_collection("other", dense_dim=DIM)
    index.upsert("other", DATA.points[:10])
    index.close()
    lower = QdrantEdgeVectorIndex(root, index_at_points=5)  # a store reopened with a lower threshold
    assert set(lower.info("other")["payload_indexes"]) == set(PAYLOAD_INDEXES)
    lower.close()
    with pytest.raises(InvalidInputError, match="index_at_points"):
        QdrantEdgeVectorIndex(root, index_at_points=-1)


def _of_kind(points, kind):
    return [VectorPoint(id=x.id, payload={**x.payload, "kind": kind}, dense=x.dense, sparse=x.sparse) for x in points]


def test_edge_knows_the_kinds_it_holds_without_a_query(tmp_path):
    """Edge is the one opener of its directory, so ``holds_kind`` is exact, not merely safe: False for a kind
    never written (a context then skips the query), True once one is, the same after a reopen (from the kind
    index's facet). Below the payload-index threshold it does not know and says True."""
    root = tmp_path / "vectors"
    index = QdrantEdgeVectorIndex(root, index_at_points=N // 2)
    index.ensure_collection(COL, dense_dim=DIM)
    index.upsert(COL, _of_kind(DATA.points[:10], "message"))
    assert index.holds_kind(COL, "topic")  # no kind index yet: not known
    index.upsert(COL, _of_kind(DATA.points[10:], "message"))  # crosses the threshold: indexed, kinds learned
    assert index.holds_kind(COL, "message") and not index.holds_kind(COL, "topic") and not index.holds_kind(COL, "entity")
    index.upsert(COL, _of_kind(DATA.points[:1], "topic"))
    index.set_payload(COL, [DATA.ids[1]], {"kind": "entity"})
    assert index.holds_kind(COL, "topic") and index.holds_kind(COL, "entity") and not index.holds_kind(COL, "fact")
    index.close()
    again = QdrantEdgeVectorIndex(root, index_at_points=N // 2)
    assert [again.holds_kind(COL, k) for k in ("message", "topic", "entity", "fact")] == [True, True, True, False]
    again.close()


def test_edge_second_opener_gets_a_clear_error(tmp_path):
    root = tmp_path / "vectors"
    first = QdrantEdgeVectorIndex(root)
    first.ensure_collection(COL, dense_dim=8)
    second = QdrantEdgeVectorIndex(root)
    with pytest.raises(BackendUnavailable, match="already open by another opener") as err:
        second.count(COL)
    assert str(root / COL) in str(err.value)
    first.close()
    assert second.count(COL) == 0  # free once the first opener closed
    second.close()

    # Another process holds the directory (raw qdrant_edge, the cheapest import): same clear error here.
    holder = (
        "import sys, qdrant_edge\n"
        f"s = qdrant_edge.EdgeShard.load({str(root / COL)!r})\n"
        "print('ready', flush=True)\nsys.stdin.readline()\ns.close()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        third = QdrantEdgeVectorIndex(root)
        with pytest.raises(BackendUnavailable, match=str(root / COL)):
            third.count(COL)
    finally:
        proc.communicate("\n", timeout=60)
    assert third.count(COL) == 0
    third.close()


def test_server_unreachable_names_the_url():
    index = QdrantVectorIndex.from_url("http://127.0.0.1:9", timeout=1)  # the discard port: refused at once
    with pytest.raises(BackendUnavailable, match=r"http://127\.0\.0\.1:9"):
        index.has_collection(COL)


def test_invalid_collection_name(tmp_path):
    index = QdrantEdgeVectorIndex(tmp_path)
    with pytest.raises(InvalidInputError, match="collection"):
        index.ensure_collection("../escape", dense_dim=4)
