"""The one collection API (index/collection.py) on Qdrant Edge: hybrid, bm25, dense, the fallback when the
embedder fails, the scope spec inside the index, and the core-mode twin over records."""

from __future__ import annotations

import uuid

import pytest

from layered_memory.config import RetrievalSettings
from layered_memory.errors import CapabilityError
from layered_memory.index import Eq, Scope
from layered_memory.index.collection import Entry, IndexedCollection
from layered_memory.providers.local import USEEmbedder
from layered_memory.retrieval.analyzer import Analyzer
from layered_memory.retrieval.bm25 import BM25Encoder
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex

TEXTS = {
    ("u1", "a"): "the payments pod fails with CrashLoopBackOff after the deploy",
    ("u1", "b"): "I drink green tea every morning",
    ("u2", "c"): "payments are failing for me too, CrashLoopBackOff everywhere",
    ("u2", "d"): "my cat likes to sleep on the keyboard",
}


class Flaky:
    """A real embedder that fails on demand (a timeout, an outage)."""

    def __init__(self, inner) -> None:  # noqa: ANN001
        self.inner, self.fail = inner, False
        self.dim, self.name = inner.dim, inner.name

    def embed_documents(self, texts):  # noqa: ANN001
        return self.inner.embed_documents(texts)

    def embed_query(self, text):  # noqa: ANN001
        if self.fail:
            raise TimeoutError("embedder timed out")
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    index = QdrantEdgeVectorIndex(str(tmp_path_factory.mktemp("coll")))
    emb = Flaky(USEEmbedder())
    c = IndexedCollection(index, "things", emb, Analyzer(), BM25Encoder(avgdl=32.0), RetrievalSettings())
    c.upsert([
        Entry(str(uuid.uuid5(uuid.NAMESPACE_OID, rid)), {"tenant": "t", "kind": "note", "user_id": user, "rid": rid}, text)
        for (user, rid), text in TEXTS.items()
    ])
    yield c
    index.close()


def _rids(found) -> list[str]:  # noqa: ANN001
    return [h.payload["rid"] for h in found.hits]


def test_hybrid_is_scoped_by_the_spec(coll):
    found = coll.query("payments CrashLoopBackOff", Scope("t", "u1").spec("note"), k=5)
    assert found.route_used == "hybrid" and found.fallback_reason is None
    assert _rids(found)[0] == "a" and "c" not in _rids(found)  # u2's point never enters u1's candidates
    assert "embed" in found.timings and "retrieve" in found.timings


def test_embedder_failure_falls_back_to_bm25_and_says_so(coll):
    coll.embedder.fail = True
    try:
        found = coll.query("payments CrashLoopBackOff", Scope("t").spec("note"), k=5)
        assert found.route_used == "bm25" and "TimeoutError" in (found.fallback_reason or "")
        assert set(_rids(found)) == {"a", "c"}
        with pytest.raises(TimeoutError):
            coll.query("payments", Scope("t").spec("note"), route="dense")
    finally:
        coll.embedder.fail = False


def test_dense_route_finds_paraphrases_and_bm25_route_needs_terms(coll):
    found = coll.query("what beverage does the user like in the morning?", Scope("t").spec("note"), k=1, route="dense")
    assert _rids(found) == ["b"]
    assert coll.query("???", Scope("t").spec("note"), route="bm25").hits == []


def test_no_index_means_the_core_mode(coll):
    bare = IndexedCollection(None, "x", None, coll.analyzer, coll.encoder, coll.settings)
    with pytest.raises(CapabilityError, match="query_records"):
        bare.query("payments", Scope("t").spec("note"))
    records = [(rid, {"tenant": "t", "kind": "note", "user_id": u, "rid": rid}, text) for (u, rid), text in TEXTS.items()]
    found = bare.query_records("payments CrashLoopBackOff", Scope("t", "u2").spec("note"), records)
    assert _rids(found) == ["c"] and found.route_used == "bm25"
    assert bare.query_records("payments", Scope("t").spec("note").and_(Eq("user_id", "nobody")), records).hits == []


def test_a_deep_tail_asked_per_call_reads_that_deep(coll, monkeypatch):
    """``pool`` is a call's deep tail (``retrieval.deep_limit`` for one search): a hybrid search for more than
    ``deep_from`` hits reads each side that deep; a shorter search, or a pool no deeper than the usual read,
    reads ``prefetch_limit``; the hits are the same."""
    seen: list[list[int]] = []
    real = coll.index.query_batch

    def spy(name, requests):  # noqa: ANN001
        seen.append([q.limit for q in requests])
        return real(name, requests)

    monkeypatch.setattr(coll.index, "query_batch", spy)
    spec = Scope("t").spec("note")
    prefetch, head = coll.settings.prefetch_limit, coll.settings.deep_from
    base = coll.query("payments CrashLoopBackOff", spec, k=head + 2, signals=True)
    deep = coll.query("payments CrashLoopBackOff", spec, k=head + 2, signals=True, pool=120)
    short = coll.query("payments CrashLoopBackOff", spec, k=head, signals=True, pool=120)
    shallow = coll.query("payments CrashLoopBackOff", spec, k=head + 2, signals=True, pool=3)
    assert seen == [[prefetch, prefetch], [120, 120], [prefetch, prefetch], [prefetch, prefetch]]
    assert _rids(base) == _rids(deep) == _rids(short) == _rids(shallow) and _rids(base)[0] in {"a", "c"}


def test_a_kind_the_index_never_held_is_not_embedded_nor_asked(tmp_path, monkeypatch):
    """A query pinned to a kind the index says it never held (``VectorIndex.holds_kind``) finds nothing at once:
    no query embedding, no index query; the route it would have taken is still reported. Once a point of that
    kind is written, the same query finds it."""
    index = QdrantEdgeVectorIndex(str(tmp_path), index_at_points=0)  # indexed from the start: kinds are known
    emb = Flaky(USEEmbedder())
    c = IndexedCollection(index, "things", emb, Analyzer(), BM25Encoder(avgdl=32.0), RetrievalSettings())
    c.upsert([Entry(str(uuid.uuid5(uuid.NAMESPACE_OID, "a")), {"tenant": "t", "kind": "note", "rid": "a"}, TEXTS[("u1", "a")])])
    asked: list[str] = []
    real = index.query_batch
    monkeypatch.setattr(index, "query_batch", lambda name, requests: asked.append(name) or real(name, requests))
    emb.fail = True  # an embedding would raise on the dense route
    found = c.query("payments CrashLoopBackOff", Scope("t").spec("topic"), k=5, route="dense")
    assert (found.hits, found.route_used, asked) == ([], "dense", [])
    no_embedder = IndexedCollection(index, "things", None, c.analyzer, c.encoder, c.settings)
    found = no_embedder.query("payments", Scope("t").spec("topic"))
    assert (found.hits, found.route_used, found.fallback_reason, asked) == ([], "bm25", "no embedder configured", [])
    with pytest.raises(CapabilityError, match="route='dense' needs an embedder"):
        no_embedder.query("payments", Scope("t").spec("topic"), route="dense")
    emb.fail = False
    c.upsert([Entry(str(uuid.uuid5(uuid.NAMESPACE_OID, "t1")), {"tenant": "t", "kind": "topic", "rid": "t1"}, TEXTS[("u2", "c")])])
    assert _rids(c.query("payments CrashLoopBackOff", Scope("t").spec("topic"), k=5)) == ["t1"] and asked
    index.close()
