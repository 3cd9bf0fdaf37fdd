"""Provider protocols: Embedder (text -> dense vectors) and ChatModel (prompt -> text)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class Embedder(Protocol):
    """Batched text embedder.

    ``dim`` is the vector size; ``name`` identifies the model (stored with the collection so a
    changed model is detected). Documents and queries are embedded separately because asymmetric
    models (e5) prefix them differently.
    """

    name: str
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    def embed_query(self, text: str) -> list[float]: ...


@runtime_checkable
class ChatModel(Protocol):
    """Minimal chat model: one prompt in, text out, with token usage when the provider reports it."""

    name: str

    def complete(self, prompt: str, *, system: str | None = None) -> str: ...
