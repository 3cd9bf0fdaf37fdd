"""Rerankers: a model that reads the query and each candidate together (a cross-encoder, a hosted rerank API).

The engine's own ranking is model-free (``retrieval.rerank``). A reranker is opt-in: given one, a message
search reorders the head of its ranking (``retrieval.rerank_depth`` hits) by the model's scores, and keeps
its own order when the model fails (``SearchResult.rerank_error`` says why). :func:`as_reranker` accepts:

* an object with ``rerank(query, documents) -> scores`` (the :class:`Reranker` protocol);
* a cross-encoder: ``predict(pairs)`` (sentence-transformers ``CrossEncoder``) or ``score(pairs)``
  (LangChain's ``BaseCrossEncoder``, e.g. ``HuggingFaceCrossEncoder``);
* a LangChain ``BaseDocumentCompressor`` (``CohereRerank``, ``CrossEncoderReranker``, ``FlashrankRerank``, ...);
* a LlamaIndex ``BaseNodePostprocessor`` (``SentenceTransformerRerank``, ``CohereRerank``, ``LLMRerank``, ...);
* a ``(query, documents) -> scores`` function;
* ``"<model>@<url>"``: :class:`HTTPReranker`, the rerank API that Cohere, Jina, Voyage, vLLM and Infinity share.

Framework packages are never imported here: an object of a framework class can only exist once it is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import httpx

from ..errors import BackendError, BackendTimeout, BackendUnavailable, ConfigurationError
from .base import Reranker
from .wrappers import is_framework_instance, model_name

__all__ = ["HTTPReranker", "Reranker", "RerankerError", "as_reranker"]


class RerankerError(BackendError):
    """A reranker failed or answered something that is not one score per document."""

    def __init__(self, message: str, *, op: str = "rerank") -> None:
        super().__init__(message, backend="reranker", op=op)


def checked_scores(scores: Any, n: int, name: str) -> list[float]:
    """``scores`` as ``n`` finite floats, or a :class:`RerankerError` naming what came back instead."""
    try:
        out = [float(x) for x in (scores.tolist() if hasattr(scores, "tolist") else scores)]
    except (TypeError, ValueError):
        raise RerankerError(f"reranker {name!r} returned {type(scores).__name__}, not a list of numbers") from None
    if len(out) != n:
        raise RerankerError(f"reranker {name!r} returned {len(out)} scores for {n} documents")
    if not all(math.isfinite(x) for x in out):
        raise RerankerError(f"reranker {name!r} returned a score that is not a finite number")
    return out


def by_position(n: int, kept: Sequence[int]) -> list[float]:
    """Scores for ``n`` documents from the indices a compressor, a postprocessor or a ``top_n`` answer kept, in its
    order: the kept first, in that order; the rest after, in theirs (indices out of range are ignored)."""
    out = [-float(n + 1 + i) for i in range(n)]  # not returned: below every kept one, in the engine's order
    for rank, i in enumerate(kept):
        if 0 <= i < n:
            out[i] = float(n - rank)
    return out


class _FunctionReranker:
    def __init__(self, fn: Callable[[str, list[str]], Any], name: str) -> None:
        self.fn, self.name = fn, name

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return checked_scores(self.fn(query, list(documents)), len(documents), self.name)


class _CrossEncoderReranker:
    def __init__(self, model: Any, method: str) -> None:
        self.model, self.method = model, method
        self.name = model_name(model, "model_name")

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        pairs = [(query, d) for d in documents]
        return checked_scores(getattr(self.model, self.method)(pairs), len(documents), self.name)


class _CompressorReranker:
    """A LangChain ``BaseDocumentCompressor``: the documents it returns, in its order (its ``relevance_score``
    metadata is not needed: some compressors, e.g. ``CrossEncoderReranker``, return only the order)."""

    KEY = "layered_memory_index"

    def __init__(self, compressor: Any) -> None:
        self.compressor = compressor
        self.name = model_name(compressor, "model")

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        from langchain_core.documents import Document

        docs = [Document(page_content=d, metadata={self.KEY: i}) for i, d in enumerate(documents)]
        kept = self.compressor.compress_documents(docs, query)
        return by_position(len(documents), [int(d.metadata.get(self.KEY, -1)) for d in kept])


class _PostprocessorReranker:
    """A LlamaIndex ``BaseNodePostprocessor``: the nodes it returns, in its order."""

    def __init__(self, postprocessor: Any) -> None:
        self.postprocessor = postprocessor
        self.name = model_name(postprocessor, "model")

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        from llama_index.core.schema import NodeWithScore, TextNode

        nodes = [NodeWithScore(node=TextNode(text=d, id_=f"candidate-{i}"), score=None) for i, d in enumerate(documents)]
        kept = self.postprocessor.postprocess_nodes(nodes, query_str=query)
        ids = [n.node.node_id for n in kept]
        return by_position(len(documents), [int(i.removeprefix("candidate-")) if i.startswith("candidate-") else -1 for i in ids])


class HTTPReranker:
    """The rerank API that Cohere (``/v2/rerank``), Jina (``/v1/rerank``), Voyage, vLLM, Infinity and
    text-embeddings-inference (``/rerank``, with ``documents_field="texts"``) share: a POST of the query and the
    documents, an answer of ``{"results" | "data": [{"index", "relevance_score" | "score"}]}`` or that list alone.

    Args:
        url: the endpoint itself, e.g. ``https://api.cohere.com/v2/rerank``.
        model: the ``model`` field (omitted when None: a server with one model).
        api_key: sent as ``Authorization: Bearer ...``.
        timeout: seconds for the one attempt: a search waits for it, so there is no retry (the search keeps its
            own order when the reranker fails).
        documents_field: the request's name for the documents (``"texts"`` for text-embeddings-inference).
        client: a ready ``httpx.Client`` (not closed by :meth:`close`).

    Example::

        reranker = HTTPReranker("http://127.0.0.1:7997/rerank", model="BAAI/bge-reranker-v2-m3")
        mem = LayeredMemory.embedded("./memory", rerank_model=reranker)
    """

    def __init__(self, url: str, *, model: str | None = None, api_key: str | None = None, timeout: float = 5.0,
                 documents_field: str = "documents", client: httpx.Client | None = None) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigurationError(f"reranker url {url!r} must start with http:// or https://: pass the endpoint itself, "
                                     "e.g. https://api.cohere.com/v2/rerank")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ConfigurationError(f"reranker timeout {timeout!r} must be a number of seconds above 0, e.g. timeout=5.0")
        if not isinstance(documents_field, str) or not documents_field:
            raise ConfigurationError(f"documents_field {documents_field!r} must be the request's name for the documents: "
                                     '"documents" (Cohere, Jina, Voyage, vLLM, Infinity) or "texts" (text-embeddings-inference)')
        self.url, self.model, self.documents_field, self.timeout = url, model, documents_field, float(timeout)
        self.name = model or url
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client, self._owned = client, client is None

    def _get_client(self) -> httpx.Client:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout)
        return self._client

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        body: dict[str, Any] = {"query": query, self.documents_field: list(documents)}
        if self.model:
            body["model"] = self.model
        try:
            resp = self._get_client().post(self.url, json=body, headers=self._headers, timeout=self.timeout)
        except httpx.TimeoutException as exc:
            raise BackendTimeout(f"reranker {self.url} did not answer in {self.timeout:g} s", backend="reranker", op="rerank") from exc
        except httpx.TransportError as exc:
            raise BackendUnavailable(f"reranker {self.url} is not reachable: {exc}", backend="reranker", op="rerank") from exc
        if resp.status_code >= 400:
            raise RerankerError(f"reranker {self.url} answered HTTP {resp.status_code}: {resp.text[:300]}")
        try:
            data = resp.json()
        except ValueError:
            raise RerankerError(f"reranker {self.url} answered something that is not JSON: {resp.text[:120]!r}") from None
        rows = data.get("results", data.get("data")) if isinstance(data, dict) else data
        if not isinstance(rows, list):
            raise RerankerError(f"reranker {self.url} answered without a list of results: {str(data)[:200]}")
        picked: dict[int, float] = {}
        for row in rows:
            score = row.get("relevance_score", row.get("score")) if isinstance(row, dict) else None
            index = row.get("index") if isinstance(row, dict) else None
            if not isinstance(index, int) or not isinstance(score, (int, float)) or not 0 <= index < len(documents):
                raise RerankerError(f"reranker {self.url} answered a result without a valid index and score: {str(row)[:200]}")
            picked[index] = float(score)
        if len(picked) == len(documents):
            return checked_scores([picked[i] for i in range(len(documents))], len(documents), self.name)
        return by_position(len(documents), sorted(picked, key=lambda i: -picked[i]))  # a top_n answer

    def close(self) -> None:
        if self._owned and self._client is not None:
            self._client.close()
            self._client = None

    def __repr__(self) -> str:
        return f"HTTPReranker({self.url!r}, model={self.model!r})"


def as_reranker(obj: Any, *, api_key: str | None = None) -> Reranker | None:
    """Adapt ``obj`` to the :class:`Reranker` protocol (see the module docstring for what it accepts).

    Raises:
        ConfigurationError: ``obj`` is none of those.
    """
    if obj is None:
        return None
    if isinstance(obj, str):
        if obj == "none":
            return None
        model, sep, url = obj.partition("@")
        if sep and model and url.startswith(("http://", "https://")):
            return HTTPReranker(url, model=model, api_key=api_key)
        if obj.startswith(("http://", "https://")):
            return HTTPReranker(obj, api_key=api_key)
        raise ConfigurationError(
            f"reranker={obj!r} is not known; use '<model>@<url>' (e.g. rerank-v3.5@https://api.cohere.com/v2/rerank), "
            "the endpoint url alone, or pass a reranker object (a LangChain document compressor or cross-encoder, a "
            "LlamaIndex node postprocessor, a sentence-transformers CrossEncoder or a (query, documents) -> scores function)"
        )
    # a framework's reranker before the protocol: some have a rerank() of their own with other arguments
    # (LangChain's CohereRerank.rerank(documents, query))
    if is_framework_instance(obj, "langchain_core.documents.compressor", "BaseDocumentCompressor"):
        return _CompressorReranker(obj)
    if is_framework_instance(obj, "llama_index.core.postprocessor.types", "BaseNodePostprocessor"):
        return _PostprocessorReranker(obj)
    if callable(getattr(obj, "rerank", None)) and isinstance(getattr(obj, "name", None), str):
        return obj  # type: ignore[no-any-return]
    if hasattr(obj, "compress_documents"):
        return _CompressorReranker(obj)
    if hasattr(obj, "postprocess_nodes"):
        return _PostprocessorReranker(obj)
    if callable(getattr(obj, "score", None)):  # LangChain BaseCrossEncoder
        return _CrossEncoderReranker(obj, "score")
    if callable(getattr(obj, "predict", None)):  # sentence-transformers CrossEncoder
        return _CrossEncoderReranker(obj, "predict")
    if callable(obj):
        return _FunctionReranker(obj, str(getattr(obj, "__name__", None) or type(obj).__name__))
    raise ConfigurationError(
        f"reranker {type(obj).__name__} is not a reranker: pass an object with rerank(query, documents), a LangChain "
        "document compressor or cross-encoder, a LlamaIndex node postprocessor, a CrossEncoder, a function or '<model>@<url>'"
    )
