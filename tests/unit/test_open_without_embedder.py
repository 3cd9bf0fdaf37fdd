"""Issue 18.6: a store built with an embedder opens without it (an app installed without the embedding
extra): a warning, BM25 search and contexts, writes keep working; with the embedder back, reindex restores
dense search for what was written meanwhile."""

from __future__ import annotations

import logging

from layered_memory import LayeredMemory
from layered_memory.testing import HashEmbedder

ROWS = [
    {"message_id": "m1", "chat_id": "c1", "user_id": "u1", "content": "the payments pod crashed with OOMKilled"},
    {"message_id": "m2", "chat_id": "c1", "user_id": "u1", "content": "I switched to green tea"},
]


def test_store_built_with_an_embedder_serves_bm25_without_it(tmp_path, caplog):
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=32)) as mem:
        mem.add_messages(ROWS)
        mem.items.put(("notes",), "k1", {"text": "payments runbook"})
    with caplog.at_level(logging.WARNING), LayeredMemory.embedded(tmp_path, embedder="none") as mem:
        assert "serving BM25 only" in caplog.text and "reindex" in caplog.text
        res = mem.search("payments pod", k=3)
        assert res.route_used == "bm25" and res.hits[0].id == "m1"
        mem.add_message(message_id="m3", chat_id="c1", user_id="u1", content="payments pod is fine again")
        assert {h.id for h in mem.search("payments pod", k=5).hits} >= {"m1", "m3"}
        assert [c.content for c in mem.get_context_for_user("u1", "c1")][-1] == "payments pod is fine again"
        assert [i.key for i in mem.items.search(("notes",), query="runbook")] == ["k1"]
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=32)) as mem:
        mem.reindex()
        dense = mem.search("payments pod is fine again", k=5, route="dense")
        assert "m3" in {h.id for h in dense.hits}
