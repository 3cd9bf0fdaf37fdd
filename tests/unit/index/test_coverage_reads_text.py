"""The index path of a hybrid search reads the text of BM25's hits (and only of BM25's), which the route
confidence's coverage needs (``retrieval.confidence_coverage``); with the coverage off it reads no text."""

from __future__ import annotations

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.testing import HashEmbedder

MSGS = [
    {"message_id": "a1", "chat_id": "c", "user_id": "anna", "user_name": "Anna", "content": "Signed the offer yesterday, I start as a chef."},
    {"message_id": "a2", "chat_id": "c", "user_id": "anna", "user_name": "Anna", "content": "The move is going slowly, boxes everywhere."},
    {"message_id": "b1", "chat_id": "c", "user_id": "bob", "user_name": "Bob", "content": "Which position did you get in the end?"},
]


def _sparse_payloads(tmp_path, coverage: float) -> list[object]:
    settings = LayeredMemorySettings()
    settings.retrieval.confidence_coverage = coverage
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=64), settings=settings) as mem:
        mem.add_messages(MSGS)
        assert mem.flush(60)
        seen: list[object] = []
        real = mem.index.query_batch

        def recording(name, requests):
            seen.extend(q.payload for q in requests if q.sparse is not None)
            return real(name, requests)

        mem.index.query_batch = recording  # the real index answers; the wrapper only records what was asked
        hits = mem.search("What position did Anna accept?", route="hybrid", k=3).hits
        assert hits and {h.id for h in hits} <= {"a1", "a2", "b1"}
    return seen


def test_bm25s_request_reads_the_text_for_the_coverage(tmp_path):
    on = _sparse_payloads(tmp_path / "on", 0.5)
    assert on and all(isinstance(p, list) and "text" in p for p in on)
    off = _sparse_payloads(tmp_path / "off", 0.0)
    assert off and all(isinstance(p, list) and "text" not in p for p in off)
