"""The fake embedder drives the real engine: dense search finds the similar message (Qdrant Edge on a tmp dir)."""

from __future__ import annotations

from layered_memory import LayeredMemory
from layered_memory.testing import HashEmbedder


def test_hash_embedder_drives_dense_search(tmp_path) -> None:
    emb = HashEmbedder(dim=48)  # one chat per message: the indexed text carries no neighbour
    with LayeredMemory.embedded(tmp_path, embedder=emb) as mem:
        mem.add_messages([
            {"message_id": "m1", "chat_id": "c1", "user_id": "u", "content": "We go hiking on the lake trail on Saturday"},
            {"message_id": "m2", "chat_id": "c2", "user_id": "u", "content": "The payments pod is in CrashLoopBackOff"},
            {"message_id": "m3", "chat_id": "c3", "user_id": "u", "content": "Buy oat milk and bread"},
        ])
        assert mem.flush(120)
        res = mem.search("hiking trail by the lake", route="dense", k=1)
        assert res.route_used == "dense" and [h.id for h in res.hits] == ["m1"]
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=48)) as again:  # same name and dim: reopens
        assert [h.id for h in again.search("payments pod crash", route="dense", k=1).hits] == ["m2"]
