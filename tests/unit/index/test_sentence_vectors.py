"""A long message is also scored by its best sentence (schema 4, the ``sentences`` multivector): a fact said in
passing among filler is found by a question about it, the writer stores one vector per sentence, a deleted turn
before a message does not take them away, and a collection created before them keeps working and says how to
add them."""

from __future__ import annotations

import json
import logging

import qdrant_edge as qe

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.stores import qdrant_common as qc
from layered_memory.testing import HashEmbedder

FILLER = ("The weather keeps flipping between rain and sun. My phone battery dies before lunch these days. "
          "The traffic this morning was unbelievable again. I keep forgetting to reply to my messages. ")
PASSING = FILLER + "By the way, I am on a keto diet now. We watched a documentary about whales."
MSGS = [
    {"message_id": "long", "chat_id": "c", "user_id": "u", "content": PASSING},
    {"message_id": "near", "chat_id": "c", "user_id": "u", "content": "Am I on the list for the diet talk?"},
    {"message_id": "other", "chat_id": "c", "user_id": "u", "content": "The new bakery downstairs sells great rye bread."},
]


def _settings(weight: float) -> LayeredMemorySettings:
    s = LayeredMemorySettings()
    s.retrieval.sentence_weight = weight
    return s


def test_a_fact_said_in_passing_is_found_by_its_sentence(tmp_path):
    emb = HashEmbedder(dim=256)
    ranks = {}
    for weight in (0.0, 0.3):
        with LayeredMemory.embedded(tmp_path / str(weight), embedder=emb, settings=_settings(weight)) as mem:
            mem.add_messages(MSGS)
            assert mem.flush(60)
            ranks[weight] = [h.id for h in mem.search("what keto diet am I on", route="dense", k=3).hits]
    assert ranks[0.0][0] == "near"  # the long message is mostly filler: its own vector loses to a question's words
    assert ranks[0.3][0] == "long"


def test_the_writer_stores_a_vector_per_sentence_and_a_deleted_turn_before_keeps_them(tmp_path):
    emb = HashEmbedder(dim=64)
    with LayeredMemory.embedded(tmp_path, embedder=emb) as mem:
        mem.add_messages([{"message_id": "q", "chat_id": "c", "user_id": "u", "content": "How was your month?"}, *MSGS])
        assert mem.flush(60)
        assert mem.index.info("lm_messages")["schema"]["sentences"] is True
        by_id = {h.payload["message_id"]: h for h in mem.index.scroll("lm_messages", limit=10, with_vectors=True)[0]}
        assert len(by_id["long"].sentences) == 6 and by_id["near"].sentences is None  # one sentence: its own vector is its best
        assert by_id["long"].payload["sentences"] == 6 and "sentences" not in by_id["near"].payload  # what a search reads
        assert by_id["long"].context is not None  # "q" is the turn before it
        mem.delete_message("c", "q")
        assert mem.flush(60)
        point = mem.index.retrieve("lm_messages", [by_id["long"].id], with_vectors=True)[0]
        assert point.context is None and point.sentences == by_id["long"].sentences
        assert mem.search("keto diet", route="dense", k=1).hits[0].id == "long"


def _schema3_collection(path, dim: int) -> None:
    """What a release of schema 3 created on disk: ``dense``, ``context`` (cosine) and ``mean`` (dot), no ``sentences``."""
    path.mkdir(parents=True)
    config = qe.EdgeConfig(vectors={v: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Dot if v == qc.MEAN else qe.Distance.Cosine)
                                    for v in (qc.DENSE, qc.CONTEXT, qc.MEAN)},
                           sparse_vectors={qc.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)})
    qe.EdgeShard.create(str(path), config).close()
    (path / "layered_memory.json").write_text(json.dumps({"dense_dim": dim, "embedder": HashEmbedder(dim=256).name, "version": 3,
                                                          "context": True, "mean": True}))


def test_a_schema3_collection_is_searched_without_sentences_until_recreated(tmp_path, caplog):
    emb = HashEmbedder(dim=256)
    _schema3_collection(tmp_path / "vectors" / "lm_messages", emb.dim)
    with caplog.at_level(logging.WARNING), LayeredMemory.embedded(tmp_path, embedder=emb) as mem:
        mem.add_messages(MSGS)
        assert mem.flush(60)
        assert mem.index.info("lm_messages")["schema"]["sentences"] is False
        for route in ("hybrid", "dense"):
            assert mem.search("what keto diet am I on", route=route, k=3).hits  # answers, as schema 3 ranked
        assert "before the sentence vectors" in mem.doctor()["upgrade"] and mem.doctor()["ok"] is True
    assert "reindex --recreate" in caplog.text
    with LayeredMemory.embedded(tmp_path, embedder=emb, recreate_index=True) as mem:
        assert mem.flush(60)
        assert mem.index.info("lm_messages")["schema"]["sentences"] is True
        assert mem.search("what keto diet am I on", route="dense", k=1).hits[0].id == "long"
        assert mem.doctor()["upgrade"] is None


def test_a_chat_of_one_sentence_messages_costs_no_sentence_query(tmp_path):
    """The search reads the sentence vectors only of listed messages whose payload says they have some."""
    emb = HashEmbedder(dim=64)
    with LayeredMemory.embedded(tmp_path, embedder=emb) as mem:
        mem.add_messages([{"message_id": f"m{i}", "chat_id": "c", "user_id": "u", "content": f"short note number {i}"} for i in range(5)])
        assert mem.flush(60)
        asked: list[str] = []
        query = mem.index.query
        mem.index.query = lambda name, q: (asked.append(q.using), query(name, q))[1]  # type: ignore[method-assign]
        assert mem.search("note number 3", route="dense", k=3).hits
        assert "sentences" not in asked
        mem.add_messages([MSGS[0]])
        assert mem.flush(60)
        assert mem.search("what keto diet am I on", route="dense", k=3).hits[0].id == "long"
        assert "sentences" in asked
