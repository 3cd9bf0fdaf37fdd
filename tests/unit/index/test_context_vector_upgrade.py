"""A collection created before the context vector (schema 1: ``dense`` and ``bm25`` only) keeps
working: messages are indexed without the context (a warning says how to add it), a query of the
context vector finds nothing, every route still answers; ``recreate_index=True`` adds it."""

from __future__ import annotations

import json
import logging

import qdrant_edge as qe

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.stores import qdrant_common as qc
from layered_memory.stores.base import IndexQuery
from layered_memory.testing import HashEmbedder


def _old_collection(path, dim: int) -> None:
    """What a release before schema 2 created on disk: one dense vector, the sparse one, the marker."""
    path.mkdir(parents=True)
    config = qe.EdgeConfig(vectors={qc.DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
                           sparse_vectors={qc.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})
    qe.EdgeShard.create(str(path), config).close()
    (path / "layered_memory.json").write_text(json.dumps({"dense_dim": dim, "embedder": HashEmbedder().name, "version": 1}))


def test_an_old_collection_serves_without_the_context_vector_until_recreated(tmp_path, caplog):
    emb = HashEmbedder()
    _old_collection(tmp_path / "store" / "vectors" / "lm_messages", emb.dim)
    msgs = [{"message_id": f"m{i}", "chat_id": "c", "user_id": "u", "content": text}
            for i, text in enumerate(["Where is the key?", "Under the blue flowerpot by the door."])]
    with caplog.at_level(logging.WARNING), LayeredMemory.embedded(tmp_path / "store", embedder=emb, settings=LayeredMemorySettings()) as mem:
        mem.add_messages(msgs)
        assert mem.flush(60)
        assert mem.index.info("lm_messages")["schema"]["context"] is False
        for route in ("hybrid", "dense", "bm25"):
            assert mem.search("blue flowerpot", route=route, k=1).hits[0].id == "m1"
        point = mem.index.retrieve("lm_messages", [mem.index.scroll("lm_messages", limit=10)[0][0].id], with_vectors=True)[0]
        assert point.dense is not None and point.context is None
        assert mem.index.query_batch("lm_messages", [IndexQuery(dense=emb.embed_query("key"), limit=3, using="context")]) == [[]]
    assert "created before the context vector" in caplog.text and "recreate_index=True" in caplog.text
    with LayeredMemory.embedded(tmp_path / "store", embedder=emb, settings=LayeredMemorySettings(), recreate_index=True) as mem:
        assert mem.flush(60)
        assert mem.index.info("lm_messages")["schema"]["context"] is True
        got = mem.index.query_batch("lm_messages", [IndexQuery(dense=emb.embed_query("key"), limit=3, using="context")])[0]
        assert [h.payload["message_id"] for h in got] == ["m1"]  # only the reply has a turn before it


def _schema2_collection(path, dim: int) -> None:
    """What a release of schema 2 created on disk: ``dense`` and ``context`` (cosine), no ``mean``."""
    path.mkdir(parents=True)
    config = qe.EdgeConfig(vectors={v: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine) for v in (qc.DENSE, qc.CONTEXT)},
                           sparse_vectors={qc.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})
    qe.EdgeShard.create(str(path), config).close()
    (path / "layered_memory.json").write_text(json.dumps({"dense_dim": dim, "embedder": HashEmbedder().name, "version": 2, "context": True}))


def test_a_schema2_collection_ranks_as_the_mean_vector_does_until_recreated(tmp_path, caplog):
    """Without the ``mean`` vector a message search merges both vectors' lists (``dense_of``); with it one list
    scores the same means, so both rank a small chat alike (every point in both lists: the merge is exact). The
    sentence vectors (schema 4) are off in both: they rescore the mean list, which is what is compared here."""
    emb = HashEmbedder()
    _schema2_collection(tmp_path / "old" / "vectors" / "lm_messages", emb.dim)
    texts = ["Where is the key?", "Under the blue flowerpot by the door.", "Thanks! And the wifi password?",
             "It is on the fridge, written on a yellow note.", "Did you feed the cat?", "Yes, twice, she was hungry."]
    msgs = [{"message_id": f"m{i}", "chat_id": "c", "user_id": "u", "role": "user" if i % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)]
    queries = ["key under the flowerpot", "wifi password note", "cat food", "yellow fridge"]

    def ranked(mem) -> list[list[tuple[str, float]]]:
        return [[(h.id, round(h.score, 4)) for h in mem.search(q, route=route, k=6).hits] for q in queries for route in ("hybrid", "dense")]

    settings = LayeredMemorySettings()
    settings.retrieval.sentence_weight = 0.0
    with caplog.at_level(logging.WARNING), LayeredMemory.embedded(tmp_path / "old", embedder=emb, settings=settings) as old, \
            LayeredMemory.embedded(tmp_path / "new", embedder=emb, settings=settings) as new:
        for mem in (old, new):
            mem.add_messages(msgs)
            assert mem.flush(60)
        assert old.index.info("lm_messages")["schema"]["mean"] is False and new.index.info("lm_messages")["schema"]["mean"] is True
        assert old.index.query_batch("lm_messages", [IndexQuery(dense=emb.embed_query("key"), limit=3, using="mean")]) == [[]]
        assert "reindex --recreate" in old.doctor()["upgrade"] and new.doctor()["upgrade"] is None  # said, and not drift
        assert old.doctor()["ok"] is True
        assert ranked(old) == ranked(new)
        warned = [r.getMessage() for r in caplog.records if "before the mean vector" in r.getMessage()]
        assert len(warned) == 1 and "'lm_messages'" in warned[0] and "recreate_index=True" in warned[0]  # once, the old one only
        for q in queries:  # the context too: its search reads the mean list or both lists
            texts_of = [m.get_context_for_user("u", "elsewhere", query=q, max_tokens=400).text for m in (old, new)]
            assert texts_of[0] == texts_of[1] and "Relevant" in texts_of[1]
    with LayeredMemory.embedded(tmp_path / "old", embedder=emb, recreate_index=True) as mem:
        assert mem.flush(60)
        assert mem.index.info("lm_messages")["schema"]["mean"] is True and mem.doctor()["upgrade"] is None
        assert len(mem.index.query_batch("lm_messages", [IndexQuery(dense=emb.embed_query("key"), limit=10, using="mean")])[0]) == len(texts)

