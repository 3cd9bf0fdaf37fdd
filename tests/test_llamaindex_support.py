"""Helpers shared by the test_llamaindex_* modules (no tests here).

- ``HashEmbedding``: a tiny deterministic LlamaIndex ``BaseEmbedding`` (hashed bag of words), handed
  to the engine like any LlamaIndex embedding; lexical, cheap, enough to switch the dense paths on;
- ``use_embedder()``: one shared ``USEEmbedder`` per test process (a real offline model);
- ``HISTORY`` / ``seed(mem)``: six messages of two users (u1: Kazan, pelmeni, docker; u2: Lisbon, a PIN);
- ``Recorder``: a scripted ``response_generator`` for ``MockFunctionCallingLLM`` that records what
  reached the model on every call.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Callable
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.llms import ChatMessage

from layered_memory import LayeredMemory

DIM = 64


def _vector(text: str) -> list[float]:
    vec = [0.0] * DIM
    for word in re.findall(r"\w+", text.lower()):
        h = int(hashlib.md5(word.encode()).hexdigest(), 16)
        vec[h % DIM] += 1.0 if (h >> 8) % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class HashEmbedding(BaseEmbedding):
    """Deterministic bag-of-words embedding (LlamaIndex ``BaseEmbedding``)."""

    model_name: str = "hash-bow-64"
    embed_dim: int = DIM
    calls: int = 0

    def _get_query_embedding(self, query: str) -> list[float]:
        self.calls += 1
        return _vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        self.calls += 1
        return _vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)


HISTORY = [
    ("a1", "tg:1", "u1", "user", "I moved to Kazan last spring and rent a flat near the river", "2024-03-01T10:00:00Z"),
    ("a2", "tg:1", "u1", "assistant", "Congratulations on the move!", "2024-03-01T10:00:05Z"),
    ("a3", "tg:1", "u1", "user", "My favourite food is pelmeni with sour cream", "2024-03-02T09:00:00Z"),
    ("a4", "tg:3", "u1", "user", "Docker keeps failing with permission denied on the socket", "2024-04-01T12:00:00Z"),
    ("a5", "tg:3", "u1", "assistant", "Add your user to the docker group and log in again", "2024-04-01T12:00:30Z"),
    ("b1", "tg:2", "u2", "user", "I live in Lisbon; my bank PIN is 9911", "2024-03-05T08:00:00Z"),
]


def seed(mem: LayeredMemory) -> None:
    mem.add_messages([
        {"message_id": i, "chat_id": c, "user_id": u, "role": r, "content": t, "create_time": ts} for i, c, u, r, t, ts in HISTORY
    ])
    assert mem.flush(120)  # the dense vectors too: tests rank by meaning right after seeding


@functools.lru_cache(maxsize=1)
def use_embedder() -> Any:
    from layered_memory.providers.local import USEEmbedder

    return USEEmbedder()


class Recorder:
    """``response_generator`` for MockFunctionCallingLLM: ``script(messages) -> ChatMessage``; every
    call's messages are kept in ``calls``."""

    def __init__(self, script: Callable[[list[ChatMessage]], ChatMessage]) -> None:
        self.script = script
        self.calls: list[list[ChatMessage]] = []

    def __call__(self, messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.calls.append([m.model_copy(deep=True) for m in messages])
        return self.script(list(messages))
