"""Provider protocols: Embedder (text -> dense vectors), ChatModel (prompt -> :class:`Completion`) and Reranker
(a query and documents -> one relevance score per document)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class TokenUsage:
    """Tokens of one model call. ``estimated`` is True when they were counted locally (tiktoken)
    because the provider did not report them."""

    prompt_tokens: int
    completion_tokens: int
    estimated: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Completion:
    """A chat model's answer: the text, and the call's tokens when known (``None``: not reported;
    :func:`~layered_memory.providers.as_chat_model`'s wrapper then counts them)."""

    text: str
    usage: TokenUsage | None = None


@runtime_checkable
class ChatModel(Protocol):
    """Minimal chat model: one prompt in, one :class:`Completion` out.

    ``operation`` names the call (``session_summary``, ``topic_title``, ``extract_entities``, ...) so
    usage can be counted per operation; a model may ignore it. The engine wraps whatever it is given
    with :func:`~layered_memory.providers.as_chat_model`, which adds ``acomplete`` and ``usage`` (a
    :class:`~layered_memory.providers.usage.UsageMeter`) and accepts LangChain chat models, LlamaIndex
    LLMs and ``str -> str`` functions too.

    Example::

        class Echo:
            name = "echo"

            def complete(self, prompt, *, system=None, operation=None):
                return Completion(prompt, TokenUsage(len(prompt), len(prompt)))
    """

    name: str

    def complete(self, prompt: str, *, system: str | None = None, operation: str | None = None) -> Completion: ...


@runtime_checkable
class Reranker(Protocol):
    """Scores each document for the query (higher: more relevant); one finite number per document, in order.

    Example::

        class Overlap:
            name = "overlap"

            def rerank(self, query, documents):
                words = set(query.lower().split())
                return [len(words & set(d.lower().split())) for d in documents]
    """

    name: str

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]: ...
