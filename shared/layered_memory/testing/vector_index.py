"""The VectorIndex conformance suite: subclass :class:`VectorIndexConformance` and override ``new_index``.

No mocks: every answer is checked against a numpy / Python truth computed here (cosine top-k, BM25-IDF
top-k, weighted RRF, per-point filter predicates) over ``DATA``, 400 points in 4 tenants (``vector_data``).
Filters are ``qdrant_client.models`` objects, the protocol's request language::

    class TestMyIndex(VectorIndexConformance):
        @pytest.fixture(scope="class")
        @classmethod  # a class-scoped fixture is a classmethod (pytest 9 deprecates instance methods)
        def new_index(cls, tmp_path_factory):
            return lambda: MyVectorIndex(tmp_path_factory.mktemp("vectors"))  # empty, new storage per call

A test may be overridden only with ``@pytest.mark.xfail(reason=...)``.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from qdrant_client import models

from ..errors import CapabilityError, InvalidInputError, NotFoundError, SchemaMismatch
from ..stores import qdrant_common as qc
from ..stores.base import INDEX_CAPABILITIES, MANUAL_OPTIMIZE, IndexHit, IndexQuery, SparseVector, VectorIndex, VectorPoint
from ._suite import forbid_silent_overrides
from .vector_data import (
    COL, DATA, DIM, FILTERS, N, TENANTS, Dataset, assert_ranking, assert_same_hits, fc, make_dataset, query_vectors, scroll_all,
)

__all__ = [
    "COL", "DATA", "DIM", "FILTERS", "N", "Dataset", "VectorIndexConformance", "assert_ranking", "assert_same_hits",
    "fc", "make_dataset", "query_vectors", "scroll_all",
]


class VectorIndexConformance:
    """The VectorIndex protocol's behaviour, backend-neutral (see the module docstring)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        forbid_silent_overrides(cls, VectorIndexConformance)

    @pytest.fixture(scope="class")
    @classmethod
    def new_index(cls) -> Callable[[], VectorIndex]:
        """Override (class-scoped): a function opening an empty VectorIndex on new storage at each call."""
        pytest.fail("override the class-scoped `new_index` fixture")

    @pytest.fixture(scope="class")
    @classmethod
    def loaded(cls, new_index: Callable[[], VectorIndex]) -> Iterator[VectorIndex]:
        """A read-only index holding DATA, shared by the read tests of the class."""
        index = new_index()
        index.ensure_collection(COL, dense_dim=DIM)
        index.upsert(COL, DATA.points)
        yield index
        index.close()

    @pytest.fixture
    def fresh(self, new_index: Callable[[], VectorIndex]) -> Iterator[VectorIndex]:
        """A writable index holding DATA, one per test."""
        index = new_index()
        index.ensure_collection(COL, dense_dim=DIM)
        index.upsert(COL, DATA.points)
        yield index
        index.close()

    # -- search ------------------------------------------------------------------------------------------------


    def test_protocol(self, loaded):
        assert isinstance(loaded, VectorIndex)
        assert loaded.has_collection(COL) and not loaded.has_collection("nope")
        assert loaded.count(COL) == N


    @pytest.mark.parametrize("seed", range(5))
    def test_dense_exact_topk(self, loaded, seed):
        q, _ = query_vectors(seed)
        got = loaded.query(COL, dense=q.tolist(), limit=10)
        assert_ranking(got, DATA.dense_truth(q, k=30), 10)
        assert [h.id for h in got] == [i for i, _ in DATA.dense_truth(q, k=10)]


    @pytest.mark.parametrize("seed", range(5))
    def test_sparse_idf_scores_equal_numpy_bm25(self, loaded, seed):
        _, s = query_vectors(seed)
        got = loaded.query(COL, sparse=s, limit=10)
        assert_ranking(got, DATA.sparse_truth(s, k=60), 10)


    @pytest.mark.parametrize("weights", [None, (1.0, 1.0), (3.0, 1.0), (0.5, 2.0)])
    @pytest.mark.parametrize("seed", range(3))
    def test_hybrid_equals_weighted_rrf_of_truths(self, loaded, seed, weights):
        q, s = query_vectors(seed)
        pl, k = 40, 2
        dense = [IndexHit(i, sc) for i, sc in DATA.dense_truth(q, k=pl)]
        sparse = [IndexHit(i, sc) for i, sc in DATA.sparse_truth(s, k=pl)]
        want = qc.rrf_fuse([dense, sparse], k=k, weights=weights, limit=2 * pl)
        got = loaded.query(COL, dense=q.tolist(), sparse=s, limit=10, prefetch_limit=pl, rrf_k=k, weights=weights)
        assert_ranking(got, [(h.id, h.score) for h in want], 10)


    def test_the_query_object_and_its_keywords_ask_the_same(self, loaded):
        q, s = query_vectors(5)
        flt, _ = FILTERS["combined"]
        request = IndexQuery(dense=q.tolist(), sparse=s, filter=flt, limit=7, prefetch_limit=30, rrf_k=2, weights=(1.0, 0.5))
        by_keywords = loaded.query(COL, dense=q.tolist(), sparse=s, filter=flt, limit=7, prefetch_limit=30, rrf_k=2, weights=(1.0, 0.5))
        assert [(h.id, h.score) for h in loaded.query(COL, request)] == [(h.id, h.score) for h in by_keywords]
        with pytest.raises(InvalidInputError, match="limit.*given twice"):
            loaded.query(COL, request, limit=3)
        with pytest.raises(InvalidInputError, match="top_k.*not a field of IndexQuery"):
            loaded.query(COL, dense=q.tolist(), top_k=3)
        with pytest.raises(InvalidInputError, match="must be an IndexQuery"):
            loaded.query(COL, {"dense": q.tolist()})


    def test_payload_keys_select_what_comes_back(self, loaded):
        q, s = query_vectors(5)
        full = loaded.query(COL, dense=q.tolist(), limit=5)
        some = loaded.query(COL, dense=q.tolist(), limit=5, payload=["user_id"])
        none = loaded.query(COL, sparse=s, limit=5, payload=False)
        assert [h.id for h in some] == [h.id for h in full] and [h.score for h in some] == pytest.approx([h.score for h in full])
        assert all(set(h.payload) <= {"user_id"} for h in some) and any(h.payload for h in some)
        assert all(not h.payload for h in none) and none


    def test_query_sides_equals_each_side_alone(self, loaded):
        q, s = query_vectors(7)
        flt, _ = FILTERS["keyword"]
        dense, sparse = loaded.query_sides(COL, IndexQuery(dense=q.tolist(), filter=flt, limit=20, prefetch_limit=20, payload=["user_id"]),
                                           IndexQuery(sparse=s, filter=flt, limit=20, prefetch_limit=20, payload=["user_id"]))
        assert [h.id for h in dense] == [h.id for h in loaded.query(COL, dense=q.tolist(), filter=flt, limit=20)]
        assert [h.id for h in sparse] == [h.id for h in loaded.query(COL, sparse=s, filter=flt, limit=20)]
        assert all(set(h.payload) <= {"user_id"} for h in dense + sparse)


    def test_a_batch_answers_each_query_as_alone(self, loaded):
        """Requests that share one filter object (a search's sides) and requests with different filters, in
        one batch: each gets what it gets alone (a backend may translate a shared filter once)."""
        q, s = query_vectors(9)
        shared, _ = FILTERS["keyword"]
        other, _ = FILTERS["success=0"]
        asks = [IndexQuery(dense=q.tolist(), filter=shared, limit=15), IndexQuery(sparse=s, filter=shared, limit=15),
                IndexQuery(dense=q.tolist(), filter=other, limit=15), IndexQuery(dense=q.tolist(), limit=15)]
        for got, ask in zip(loaded.query_batch(COL, asks), asks):
            assert_same_hits(got, loaded.query(COL, ask))
        assert len({h.id for h in loaded.query_batch(COL, asks[:1])[0]} ^ {h.id for h in loaded.query_batch(COL, asks[2:3])[0]}) > 0


    @pytest.mark.parametrize("fname", ["keyword", "combined", "datetime Z/+00:00", "success=0"])
    def test_filtered_hybrid_equals_truth(self, loaded, fname):
        flt, pred = FILTERS[fname]
        q, s = query_vectors(11)
        pl = 30
        dense = [IndexHit(i, sc) for i, sc in DATA.dense_truth(q, pred, k=pl)]
        sparse = [IndexHit(i, sc) for i, sc in DATA.sparse_truth(s, pred, k=pl)]
        want = qc.rrf_fuse([dense, sparse], k=60, limit=2 * pl)
        got = loaded.query(COL, dense=q.tolist(), sparse=s, filter=flt, limit=10, prefetch_limit=pl)
        assert_ranking(got, [(h.id, h.score) for h in want], min(10, len(want)))
        assert all(pred(h.payload) for h in got)


    # -- filters ---------------------------------------------------------------------------------------------


    @pytest.mark.parametrize("fname", list(FILTERS))
    def test_filter_matches_python_truth_per_point(self, loaded, fname):
        flt, pred = FILTERS[fname]
        truth = {pid for pid, p in zip(DATA.ids, DATA.payloads) if pred(p)}
        assert 0 < len(truth) < N, "the filter must split the data"
        assert loaded.count(COL, flt) == len(truth)
        assert {h.id for h in scroll_all(loaded, flt)} == truth
        q, s = query_vectors(5)
        for h in loaded.query(COL, dense=q.tolist(), sparse=s, filter=flt, limit=50):
            assert h.id in truth


    def test_dict_filter_is_accepted(self, loaded):
        flt = {"must": [{"key": "tenant", "match": {"value": "t2"}}]}
        assert loaded.count(COL, flt) == sum(p["tenant"] == "t2" for p in DATA.payloads)


    def test_bool_match_is_rejected_with_the_fix(self, loaded):
        flt = models.Filter(must=[fc("success", match=models.MatchValue(value=True))])
        with pytest.raises(InvalidInputError, match="int 0/1"):
            loaded.count(COL, flt)


    @pytest.mark.parametrize("tenant", TENANTS)
    def test_tenant_isolation(self, loaded, tenant):
        flt = models.Filter(must=[fc("tenant", match=models.MatchValue(value=tenant))])
        others = [i for i, p in enumerate(DATA.payloads) if p["tenant"] != tenant]
        for row in others[:8]:  # query with another tenant's exact vectors: still never returned
            s = DATA.points[row].sparse
            for kw in ({"dense": DATA.points[row].dense}, {"sparse": s}, {"dense": DATA.points[row].dense, "sparse": s}):
                hits = loaded.query(COL, filter=flt, limit=50, prefetch_limit=100, **kw)
                assert hits and all(h.payload["tenant"] == tenant for h in hits)
                assert DATA.ids[row] not in {h.id for h in hits}


    # -- writes and paging -------------------------------------------------------------------------------------


    def test_scroll_pages_are_stable_and_complete(self, loaded):
        pages = scroll_all(loaded, page=37)
        assert [h.id for h in pages] == sorted(DATA.ids, key=uuid.UUID)
        one, nxt = loaded.scroll(COL, limit=N + 5)
        assert nxt is None and [h.id for h in one] == [h.id for h in pages]
        first, _ = loaded.scroll(COL, limit=3, with_vectors=True)
        row = DATA.ids.index(first[0].id)
        np.testing.assert_allclose(first[0].dense, DATA.X[row], rtol=1e-5, atol=1e-6)
        assert first[0].payload == DATA.payloads[row]


    def test_count_delete_set_payload(self, fresh):
        ids = DATA.ids
        fresh.delete(COL, ids=ids[:10])
        assert fresh.count(COL) == N - 10
        fresh.delete(COL, ids=[])  # no-op, not "delete everything"
        t3 = models.Filter(must=[fc("tenant", match=models.MatchValue(value="t3"))])
        n_t3 = sum(p["tenant"] == "t3" for p in DATA.payloads[10:])
        fresh.delete(COL, filter=t3)
        assert fresh.count(COL) == N - 10 - n_t3 and fresh.count(COL, t3) == 0
        # ids AND filter: only the listed ids that match
        t0 = models.Filter(must=[fc("tenant", match=models.MatchValue(value="t0"))])
        listed = ids[10:30]
        fresh.delete(COL, ids=listed, filter=t0)
        gone = {i for i, p in zip(ids[10:30], DATA.payloads[10:30]) if p["tenant"] == "t0"}
        left = {h.id for h in scroll_all(fresh)}
        assert not gone & left and set(listed) - gone - {i for i, p in zip(ids, DATA.payloads) if p["tenant"] == "t3"} <= left
        with pytest.raises(InvalidInputError):
            fresh.delete(COL)
        # set_payload merges keys; a deleted (missing) id is ignored
        fresh.set_payload(COL, [ids[0], ids[50], ids[53]], {"topic_id": "new", "success": 1})
        got = fresh.count(COL, models.Filter(must=[fc("topic_id", match=models.MatchValue(value="new"))]))
        assert got == 2
        hit = next(h for h in scroll_all(fresh) if h.id == ids[50])
        assert hit.payload["tenant"] == DATA.payloads[50]["tenant"] and hit.payload["topic_id"] == "new"
        with pytest.raises(InvalidInputError, match="int 0/1"):
            fresh.set_payload(COL, [ids[50]], {"success": True})


    def test_holds_kind_never_denies_a_kind_written(self, new_index):
        """``holds_kind`` may say True for anything, but never False for a kind some point was written with:
        by an upsert (small and past the payload-index threshold), by ``set_payload``, after a delete."""
        index = new_index()
        index.ensure_collection("kinds", dense_dim=DIM)
        p = DATA.points
        index.upsert("kinds", [VectorPoint(id=x.id, payload={**x.payload, "kind": "message"}, dense=x.dense) for x in p[:5]])
        assert index.holds_kind("kinds", "message")
        index.upsert("kinds", [VectorPoint(id=x.id, payload={**x.payload, "kind": "message"}, dense=x.dense) for x in p[5:]])
        index.upsert("kinds", [VectorPoint(id=p[0].id, payload={**p[0].payload, "kind": "topic"}, dense=p[0].dense)])
        index.set_payload("kinds", [p[1].id], {"kind": "entity"})
        for kind in ("message", "topic", "entity"):
            assert index.holds_kind("kinds", kind), kind
            assert index.count("kinds", models.Filter(must=[fc("kind", match=models.MatchValue(value=kind))])) >= 1
        index.delete("kinds", ids=[p[0].id])
        assert index.holds_kind("kinds", "message")
        index.close()

    def test_upsert_overwrites_and_validates(self, fresh):
        p = DATA.points[100]
        fresh.upsert(COL, [VectorPoint(id=p.id, payload={**p.payload, "role": "system"}, dense=p.dense, sparse=p.sparse)])
        assert fresh.count(COL) == N
        assert fresh.count(COL, models.Filter(must=[fc("role", match=models.MatchValue(value="system"))])) == 1
        with pytest.raises(InvalidInputError, match="UUID"):
            fresh.upsert(COL, [VectorPoint(id="msg-1", payload={}, dense=p.dense)])
        with pytest.raises(InvalidInputError, match=f"size {DIM}"):
            fresh.upsert(COL, [VectorPoint(id=str(uuid.uuid4()), payload={}, dense=[0.1] * (DIM + 1))])
        with pytest.raises(InvalidInputError, match=f"size {DIM}"):
            fresh.query(COL, dense=[0.1] * 3)
        assert fresh.count(COL) == N  # rejected batches wrote nothing


    def test_drop_and_missing_collection(self, fresh):
        fresh.drop_collection(COL)
        assert not fresh.has_collection(COL)
        with pytest.raises(NotFoundError):
            fresh.count(COL)
        fresh.drop_collection(COL)  # idempotent


    def test_context_vector_is_a_second_dense_vector(self, new_index):
        """``context``: an optional second dense vector per point, queried with ``using="context"``;
        ``query_batch`` runs several queries, each ranked as alone; vectors read back with the points."""
        index = new_index()
        index.ensure_collection("ctx", dense_dim=DIM)
        rng = np.random.default_rng(3)
        pts = DATA.points[:60]
        ctx = rng.normal(size=(60, DIM))
        ctx /= np.linalg.norm(ctx, axis=1, keepdims=True)
        with_ctx = [VectorPoint(id=p.id, payload=p.payload, dense=p.dense, sparse=p.sparse, context=ctx[i].tolist() if i % 2 == 0 else None)
                    for i, p in enumerate(pts)]
        index.upsert("ctx", with_ctx)
        q = ctx[10]
        by_ctx = index.query("ctx", IndexQuery(dense=q.tolist(), limit=5, using="context"))
        truth = sorted(((float(ctx[i] @ q), pts[i].id) for i in range(0, 60, 2)), reverse=True)[:5]
        assert [h.id for h in by_ctx] == [pid for _, pid in truth]
        assert [h.score for h in by_ctx] == pytest.approx([sc for sc, _ in truth], abs=1e-4)
        by_text = index.query("ctx", dense=q.tolist(), limit=5)
        batch = index.query_batch("ctx", [IndexQuery(dense=q.tolist(), limit=5), IndexQuery(dense=q.tolist(), limit=5, using="context"),
                                          IndexQuery(sparse=pts[3].sparse, limit=5)])
        assert [[h.id for h in hits] for hits in batch] == [[h.id for h in by_text], [h.id for h in by_ctx],
                                                            [h.id for h in index.query("ctx", sparse=pts[3].sparse, limit=5)]]
        got = {h.id: h for h in index.retrieve("ctx", [pts[0].id, pts[1].id], with_vectors=True)}
        assert got[pts[0].id].context == pytest.approx(ctx[0].tolist(), abs=1e-5) and got[pts[1].id].context is None
        assert got[pts[1].id].dense == pytest.approx(pts[1].dense, abs=1e-5)
        assert index.info("ctx")["schema"]["context"] is True
        with pytest.raises(InvalidInputError, match="using"):
            index.query("ctx", IndexQuery(dense=q.tolist(), limit=5, using="other"))
        with pytest.raises(InvalidInputError, match="context"):
            index.upsert("ctx", [VectorPoint(id=pts[0].id, payload={}, dense=pts[0].dense, context=[0.1, 0.2])])
        index.close()


    def test_mean_vector_scores_the_mean_of_both_cosines(self, new_index):
        """``mean``: derived by the index from ``dense`` and ``context`` for a point that asks for it
        (``VectorPoint.mean``, messages), queried with ``using="mean"``, it scores each point by the mean of its
        two cosines exactly (its text's alone without a context): one list ranks what ``dense_of`` merged
        from two. A point without ``mean`` (any other kind) is not in that list; no vector is read back."""
        index = new_index()
        index.ensure_collection("mean", dense_dim=DIM)
        rng = np.random.default_rng(5)
        pts, ctx = DATA.points[:80], rng.normal(size=(80, DIM)) * 3.0  # not unit length: the index normalizes
        index.upsert("mean", [VectorPoint(id=p.id, payload=p.payload, dense=p.dense, sparse=p.sparse, mean=i % 5 != 0,
                                          context=ctx[i].tolist() if i % 3 else None) for i, p in enumerate(pts)])

        def cos(a, b) -> float:
            return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
        def truth(q, tenant=None) -> list[str]:
            scored = (((cos(pts[i].dense, q) + cos(ctx[i], q)) / 2 if i % 3 else cos(pts[i].dense, q), pts[i].id) for i in range(80)
                      if i % 5 != 0 and tenant in (None, pts[i].payload["tenant"]))
            return sorted(scored, reverse=True)

        for q in (ctx[4] * 0.5, np.asarray(pts[9].dense) * 7.0, rng.normal(size=DIM)):
            got = index.query("mean", IndexQuery(dense=q.tolist(), limit=10, using="mean"))
            assert [(h.id, h.score) for h in got] == [(pid, pytest.approx(sc, abs=1e-4)) for sc, pid in truth(q)[:10]]
            flt = {"must": [{"key": "tenant", "match": {"value": TENANTS[0]}}]}
            filtered = index.query("mean", IndexQuery(dense=q.tolist(), limit=5, using="mean", filter=flt))
            assert [h.id for h in filtered] == [pid for _, pid in truth(q, TENANTS[0])[:5]]
        assert len(index.query("mean", IndexQuery(dense=ctx[0].tolist(), limit=80, using="mean"))) == 64
        assert index.retrieve("mean", [pts[1].id], with_vectors=True)[0].dense == pytest.approx(pts[1].dense, abs=1e-5)
        assert index.info("mean")["schema"]["mean"] is True and index.info("mean")["schema"]["version"] >= 3
        index.close()

    def test_sentences_vector_scores_the_best_sentence(self, new_index):
        """``sentences`` (schema 4): for a point that asks for ``mean`` (messages) and has ``sentences``, a MaxSim
        multivector of them; queried with ``using="sentences"`` over a has-id filter, each such point scores its
        best row's cosine exactly. A point without sentences, or without ``mean``, is not in that list."""
        index = new_index()
        index.ensure_collection("sent", dense_dim=DIM)
        rng = np.random.default_rng(6)
        pts = DATA.points[:40]
        rows = [rng.normal(size=(i % 4, DIM)) * 2.0 for i in range(40)]  # 0 to 3 sentences, not unit length
        index.upsert("sent", [VectorPoint(id=p.id, payload=p.payload, dense=p.dense, sparse=p.sparse, mean=i % 5 != 0,
                                          sentences=rows[i].tolist() if len(rows[i]) else None) for i, p in enumerate(pts)])

        def cos(a, b) -> float:
            return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))

        only = {"must": [{"has_id": [p.id for p in pts[:30]]}]}
        for q in (rows[2][1] * 0.5, np.asarray(pts[7].dense), rng.normal(size=DIM)):
            got = {h.id: h.score for h in index.query("sent", IndexQuery(dense=q.tolist(), limit=30, prefetch_limit=30, using="sentences", filter=only))}
            want = {pts[i].id: max(cos(r, q) for r in rows[i]) for i in range(30) if i % 5 != 0 and len(rows[i])}
            assert got == {pid: pytest.approx(sc, abs=1e-4) for pid, sc in want.items()}
        assert index.info("sent")["schema"]["sentences"] is True and index.info("sent")["schema"]["version"] >= 4
        index.close()


    # -- schema -------------------------------------------------------------------------------------------------


    def test_schema_mismatch_on_dense_size_change(self, new_index):
        index = new_index()
        index.ensure_collection("m", dense_dim=8, embedder="model-a")
        index.ensure_collection("m", dense_dim=8, embedder="model-a")  # idempotent
        with pytest.raises(SchemaMismatch, match="dense size 8.*dense size 16") as err:
            index.ensure_collection("m", dense_dim=16)
        assert "recreate_index=True" in str(err.value)
        with pytest.raises(SchemaMismatch, match="model-a.*model-b"):
            index.ensure_collection("m", dense_dim=8, embedder="model-b")
        index.close()


    def test_the_bm25_marker_is_recorded_at_creation_and_by_set_bm25_only(self, new_index):
        """``bm25`` says what the sparse vectors were written with: kept as given, never replaced by opening the
        collection again (that would vouch for points written before), replaced by ``set_bm25``."""
        index = new_index()
        first, second = {"terms": 1, "k1": 1.2, "avgdl": 32.0}, {"terms": 2, "k1": 0.9, "avgdl": 64.0}
        index.ensure_collection("mk", dense_dim=DIM, bm25=first)
        index.upsert("mk", DATA.points[:5])
        assert index.info("mk")["schema"]["bm25"] == first
        index.ensure_collection("mk", dense_dim=DIM, embedder="model-a", bm25=second)  # records the embedder only
        assert index.info("mk")["schema"]["bm25"] == first and index.info("mk")["schema"]["embedder"] == "model-a"
        index.set_bm25("mk", second)
        assert index.info("mk")["schema"]["bm25"] == second and index.info("mk")["schema"]["embedder"] == "model-a"
        assert index.count("mk") == 5
        index.ensure_collection("none", dense_dim=None)
        assert index.info("none")["schema"]["bm25"] is None  # not known: the caller said nothing
        index.close()

    def test_sparse_only_collection(self, new_index):
        index = new_index()
        index.ensure_collection("lex", dense_dim=None)
        index.upsert("lex", [VectorPoint(id=p.id, payload=p.payload, sparse=p.sparse) for p in DATA.points[:50]])
        _, s = query_vectors(1)
        assert index.query("lex", sparse=s, limit=5)
        with pytest.raises(CapabilityError, match="no dense vector"):
            index.query("lex", dense=[0.1] * DIM)
        with pytest.raises(SchemaMismatch, match="no dense vector"):
            index.ensure_collection("lex", dense_dim=DIM)
        index.close()


    def test_dense_collection_opens_sparse_only_without_an_embedder(self, new_index, caplog):
        """An app without the embedder still gets its memory: BM25 over the sparse vectors, with a warning."""
        index = new_index()
        index.ensure_collection("both", dense_dim=DIM, embedder="model-a")
        index.upsert("both", DATA.points[:50])
        with caplog.at_level("WARNING"):
            index.ensure_collection("both", dense_dim=None)
        assert "serving BM25 only" in caplog.text and "model-a" in caplog.text
        _, s = query_vectors(1)
        assert index.query("both", sparse=s, limit=5)
        p = DATA.points[50]
        index.upsert("both", [VectorPoint(id=p.id, payload=p.payload, sparse=p.sparse)])
        assert index.count("both") == 51
        index.close()


    def test_idf_counts_only_points_with_a_sparse_vector(self, new_index):
        """IDF's N is the number of points that have a ``bm25`` vector, not all points."""
        index = new_index()
        index.ensure_collection("mix", dense_dim=4)
        pid = [str(uuid.UUID(int=i)) for i in range(1, 5)]
        index.upsert("mix", [
            VectorPoint(pid[0], {}, dense=[1, 0, 0, 0], sparse=SparseVector([1, 2], [1.0, 1.0])),
            VectorPoint(pid[1], {}, sparse=SparseVector([2], [1.0])),
            VectorPoint(pid[2], {}, dense=[0, 1, 0, 0]),
            VectorPoint(pid[3], {}, dense=[0, 1, 1, 0]),
        ])
        (hit,) = index.query("mix", sparse=SparseVector([1], [1.0]))
        assert hit.id == pid[0] and math.isclose(hit.score, math.log(1 + 1.5 / 1.5), rel_tol=1e-5)  # N=2, n=1
        index.close()


    # -- retrieve, capabilities, optimize ----------------------------------------------------------------

    def test_retrieve_by_ids(self, loaded):
        wanted = [DATA.ids[3], DATA.ids[250], str(uuid.UUID(int=12345))]  # the last is missing
        got = {h.id: h for h in loaded.retrieve(COL, wanted)}
        assert set(got) == set(wanted[:2])
        assert got[DATA.ids[3]].payload == DATA.payloads[3] and got[DATA.ids[3]].dense is None
        (hit,) = loaded.retrieve(COL, [DATA.ids[250]], with_vectors=True)
        np.testing.assert_allclose(hit.dense, DATA.X[250], rtol=1e-5, atol=1e-6)
        assert loaded.retrieve(COL, []) == []

    def test_capabilities_are_declared(self, loaded):
        assert isinstance(loaded.capabilities, frozenset)
        assert loaded.capabilities <= INDEX_CAPABILITIES, loaded.capabilities - INDEX_CAPABILITIES

    def test_optimize_keeps_every_answer(self, fresh):
        q, s = query_vectors(4)
        before = fresh.query(COL, dense=q.tolist(), sparse=s, limit=10)
        changed = fresh.optimize(COL)
        assert isinstance(changed, bool)
        if MANUAL_OPTIMIZE not in fresh.capabilities:
            assert changed is False  # the backend optimizes by itself
        assert fresh.count(COL) == N
        assert_same_hits(fresh.query(COL, dense=q.tolist(), sparse=s, limit=10), before)
        assert [h.id for h in fresh.query(COL, dense=q.tolist(), limit=10)] == [i for i, _ in DATA.dense_truth(q, k=10)]
