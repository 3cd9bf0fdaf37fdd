"""Adapt framework objects to our ``Embedder`` / ``ChatModel`` protocols.

:func:`as_embedder` accepts our protocol objects, a LangChain ``Embeddings`` or a LlamaIndex
``BaseEmbedding``. :func:`as_chat_model` accepts our ``ChatModel`` objects, a LangChain
``BaseChatModel``, a LlamaIndex ``LLM`` or a plain ``str -> str`` callable.

Framework packages are never imported here unless the object passed in already comes from them
(an instance of a class in a module that is not loaded cannot exist), so neither extra is needed.

Every chat model returned by :func:`as_chat_model` counts usage in ``.usage`` (calls, prompt and
completion tokens, per ``operation``); tokens come from the provider when it reports them and are
counted with :mod:`.tokens` otherwise. Provider exceptions are translated here, at the seam, into
``BackendTimeout`` / ``BackendUnavailable`` / ``BackendError`` (the original is ``__cause__``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    ConfigurationError,
    InvalidInputError,
    LayeredMemoryError,
    SchemaMismatch,
)
from .base import Embedder
from .tokens import get_token_counter

logger = logging.getLogger(__name__)

__all__ = ["ChatUsage", "OperationUsage", "UsageCountingChatModel", "as_chat_model", "as_embedder"]

_DIM_PROBE = "dimension probe"
DEFAULT_OPERATION = "default"


# --------------------------------------------------------------------------- helpers


def _is_instance(obj: object, module: str, cls_name: str) -> bool:
    """isinstance against a framework class without importing the framework."""
    mod = sys.modules.get(module)
    cls = getattr(mod, cls_name, None) if mod is not None else None
    return isinstance(cls, type) and isinstance(obj, cls)


def _to_floats(vec: Any) -> list[float]:
    return [float(x) for x in (vec.tolist() if hasattr(vec, "tolist") else vec)]


@contextlib.contextmanager
def _map_errors(backend: str, op: str) -> Iterator[None]:
    """Translate a provider's exception into our tree; ours and bad-input errors pass through."""
    try:
        yield
    except (LayeredMemoryError, TypeError, asyncio.CancelledError):
        raise
    except Exception as exc:
        kind = type(exc).__name__
        text = f"{backend} failed in {op} ({kind}: {exc})"
        lowered = kind.lower()
        if "timeout" in lowered or isinstance(exc, TimeoutError):
            raise BackendTimeout(f"{text}; fix: raise the provider's timeout or retry",
                                 backend=backend, op=op) from exc
        if "connect" in lowered or isinstance(exc, ConnectionError):
            raise BackendUnavailable(f"{text}; fix: check the provider's URL and network",
                                     backend=backend, op=op) from exc
        raise BackendError(f"{text}; see __cause__ for the provider's error",
                           backend=backend, op=op) from exc


def _check_texts(texts: Sequence[str], op: str) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInputError(
            "texts", texts, f"{op} takes a list of strings, got one string",
            "wrap it in a list, or call embed_query(text) for a single query",
        )
    return list(texts)


# --------------------------------------------------------------------------- embedders


class _WrappedEmbedder:
    """Base for framework embedders: ``name``, lazily probed ``dim``, float lists, async twins."""

    backend = "embedder"

    def __init__(self, obj: Any, *, name: str, dim: int | None) -> None:
        self.wrapped = obj
        self.name = name
        self._dim = dim
        self._lock = threading.Lock()

    # subclass hooks
    def _docs(self, texts: list[str]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _query(self, text: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _adocs(self, texts: list[str]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    async def _aquery(self, text: str) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def dim(self) -> int:
        """Vector size: declared by the wrapped object, else learned by embedding one probe."""
        if self._dim is None:
            with self._lock:
                if self._dim is None:
                    with _map_errors(self.backend, "embed_query"):
                        probe = self._query(_DIM_PROBE)
                    self._dim = len(probe)
                    logger.debug("discovered dim %d for %s", self._dim, self.name)
        return self._dim

    def _check(self, vectors: list[list[float]], n: int) -> list[list[float]]:
        if len(vectors) != n:
            raise BackendError(f"{self.name} returned {len(vectors)} vectors for {n} texts",
                               backend=self.backend, op="embed")
        if self._dim is None and vectors:
            self._dim = len(vectors[0])
        for v in vectors:
            if len(v) != self._dim:
                raise SchemaMismatch(
                    f"{self.name} returned a {len(v)}-dim vector but dim={self._dim}; fix: pass "
                    "as_embedder(obj, dim=...) matching the model",
                    backend=self.backend, op="embed",
                )
        return vectors

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        items = _check_texts(texts, "embed_documents")
        if not items:
            return []
        with _map_errors(self.backend, "embed_documents"):
            raw = self._docs(items)
        return self._check([_to_floats(v) for v in raw], len(items))

    def embed_query(self, text: str) -> list[float]:
        with _map_errors(self.backend, "embed_query"):
            raw = self._query(text)
        return self._check([_to_floats(raw)], 1)[0]

    async def aembed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        items = _check_texts(texts, "aembed_documents")
        if not items:
            return []
        with _map_errors(self.backend, "aembed_documents"):
            raw = await self._adocs(items)
        return self._check([_to_floats(v) for v in raw], len(items))

    async def aembed_query(self, text: str) -> list[float]:
        with _map_errors(self.backend, "aembed_query"):
            raw = await self._aquery(text)
        return self._check([_to_floats(raw)], 1)[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self._dim})"


class _LangChainEmbedder(_WrappedEmbedder):
    backend = "langchain"

    def _docs(self, texts: list[str]) -> Any:
        return self.wrapped.embed_documents(texts)

    def _query(self, text: str) -> Any:
        return self.wrapped.embed_query(text)

    async def _adocs(self, texts: list[str]) -> Any:
        if not hasattr(self.wrapped, "aembed_documents"):  # duck-typed, sync only
            return await asyncio.to_thread(self.wrapped.embed_documents, texts)
        return await self.wrapped.aembed_documents(texts)

    async def _aquery(self, text: str) -> Any:
        if not hasattr(self.wrapped, "aembed_query"):
            return await asyncio.to_thread(self.wrapped.embed_query, text)
        return await self.wrapped.aembed_query(text)


class _LlamaIndexEmbedder(_WrappedEmbedder):
    backend = "llamaindex"

    def _docs(self, texts: list[str]) -> Any:
        return self.wrapped.get_text_embedding_batch(texts)

    def _query(self, text: str) -> Any:
        return self.wrapped.get_query_embedding(text)

    async def _adocs(self, texts: list[str]) -> Any:
        return await self.wrapped.aget_text_embedding_batch(texts)

    async def _aquery(self, text: str) -> Any:
        return await self.wrapped.aget_query_embedding(text)


class _ProtocolEmbedder(_WrappedEmbedder):
    """Our protocol object without async twins: add them via a worker thread."""

    backend = "embedder"

    def __init__(self, obj: Any) -> None:
        super().__init__(obj, name=obj.name, dim=obj.dim)

    def _docs(self, texts: list[str]) -> Any:
        return self.wrapped.embed_documents(texts)

    def _query(self, text: str) -> Any:
        return self.wrapped.embed_query(text)

    async def _adocs(self, texts: list[str]) -> Any:
        return await asyncio.to_thread(self.wrapped.embed_documents, texts)

    async def _aquery(self, text: str) -> Any:
        return await asyncio.to_thread(self.wrapped.embed_query, text)


def _has_members(obj: Any, names: Sequence[str]) -> bool:
    """Structural check that, unlike isinstance on a Protocol in Python <= 3.11, never evaluates
    a property (a lazily probed ``dim`` would send a request)."""
    for attr in names:
        try:
            inspect.getattr_static(obj, attr)
        except AttributeError:
            return False
    return True


def _declared_dim(obj: Any) -> int | None:
    for attr in ("dim", "dimensions", "embed_dim"):
        value = getattr(obj, attr, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _model_name(obj: Any, *attrs: str) -> str:
    for attr in attrs:
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value and value != "unknown":
            return value
    return type(obj).__name__


def as_embedder(obj: Any, *, name: str | None = None, dim: int | None = None) -> Embedder:
    """Adapt ``obj`` to the :class:`Embedder` protocol.

    Args:
        obj: one of our embedders (returned as is when it has async twins), a LangChain
            ``Embeddings`` (``embed_documents`` / ``embed_query`` / ``aembed_*``) or a LlamaIndex
            ``BaseEmbedding`` (``get_text_embedding_batch`` / ``get_query_embedding`` / ``aget_*``).
        name: model name stored with the collection; default: the object's model name, else
            its class name.
        dim: vector size; default: declared by the object (``dim``, ``dimensions``,
            ``embed_dim``), else learned by embedding one probe text on first access.

    Raises:
        ConfigurationError: ``obj`` is none of the above.

    Example::

        from langchain_core.embeddings import DeterministicFakeEmbedding
        emb = as_embedder(DeterministicFakeEmbedding(size=8))
        emb.dim  # 8
    """
    if isinstance(obj, _WrappedEmbedder) and name is None and dim is None:
        return obj  # type: ignore[return-value]
    if (
        _is_instance(obj, "llama_index.core.base.embeddings.base", "BaseEmbedding")
        or hasattr(obj, "get_text_embedding_batch") and hasattr(obj, "get_query_embedding")
    ):
        return _LlamaIndexEmbedder(  # type: ignore[return-value]
            obj, name=name or _model_name(obj, "model_name"), dim=dim or _declared_dim(obj)
        )
    if _has_members(obj, ("name", "dim", "embed_documents", "embed_query")) and (
        name is None and dim is None
    ):
        if hasattr(obj, "aembed_documents") and hasattr(obj, "aembed_query"):
            return obj
        return _ProtocolEmbedder(obj)  # type: ignore[return-value]
    if _is_instance(obj, "langchain_core.embeddings.embeddings", "Embeddings") or (
        hasattr(obj, "embed_documents") and hasattr(obj, "embed_query")
    ):
        return _LangChainEmbedder(  # type: ignore[return-value]
            obj, name=name or getattr(obj, "name", None) or _model_name(obj, "model", "model_name"),
            dim=dim or _declared_dim(obj),
        )
    raise ConfigurationError(
        f"as_embedder({type(obj).__module__}.{type(obj).__name__}): not an embedder; pass an "
        "object with name, dim, embed_documents and embed_query, a LangChain Embeddings, or a "
        "LlamaIndex BaseEmbedding"
    )


# --------------------------------------------------------------------------- usage


@dataclass
class OperationUsage:
    """Token usage of one operation (or of all operations, see :class:`ChatUsage`)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_calls: int = 0  # calls whose tokens were counted locally, not reported

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def _add(self, prompt: int, completion: int, estimated: bool) -> None:
        self.calls += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.estimated_calls += int(estimated)


@dataclass
class ChatUsage(OperationUsage):
    """Usage of a wrapped chat model; ``by_operation`` splits it by ``complete(operation=)``."""

    by_operation: dict[str, OperationUsage] = field(default_factory=dict)

    def record(self, operation: str | None, prompt: int, completion: int, estimated: bool) -> None:
        self._add(prompt, completion, estimated)
        key = operation or DEFAULT_OPERATION
        self.by_operation.setdefault(key, OperationUsage())._add(prompt, completion, estimated)


# --------------------------------------------------------------------------- chat models


class UsageCountingChatModel:
    """Base of every wrapper :func:`as_chat_model` returns.

    ``complete(prompt, *, system=None, operation=None)`` / ``acomplete(...)`` return text and
    add to ``usage``. Subclasses implement ``_call`` / ``_acall`` returning
    ``(text, prompt_tokens | None, completion_tokens | None)``.
    """

    backend = "chat"

    def __init__(self, obj: Any, *, name: str, token_counter: Callable[[str], int] | None) -> None:
        self.wrapped = obj
        self.name = name
        self.usage = ChatUsage()
        self._count = token_counter or get_token_counter()
        self._lock = threading.Lock()

    def _call(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        raise NotImplementedError  # pragma: no cover

    async def _acall(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        return await asyncio.to_thread(self._call, prompt, system)

    def _record(self, operation: str | None, prompt: str, system: str | None,
                result: tuple[str, int | None, int | None]) -> str:
        text, p_tok, c_tok = result
        if not isinstance(text, str):
            raise BackendError(f"{self.name} returned {type(text).__name__}, not text",
                               backend=self.backend, op="complete")
        estimated = p_tok is None or c_tok is None
        if p_tok is None:
            p_tok = self._count(prompt) + (self._count(system) if system else 0)
        if c_tok is None:
            c_tok = self._count(text)
        with self._lock:
            self.usage.record(operation, int(p_tok), int(c_tok), estimated)
        return text

    def complete(self, prompt: str, *, system: str | None = None,
                 operation: str | None = None) -> str:
        """One prompt in, text out. ``operation`` labels the call in ``usage.by_operation``."""
        with _map_errors(self.backend, "complete"):
            result = self._call(prompt, system)
        return self._record(operation, prompt, system, result)

    async def acomplete(self, prompt: str, *, system: str | None = None,
                        operation: str | None = None) -> str:
        """Async twin of :meth:`complete`."""
        with _map_errors(self.backend, "acomplete"):
            result = await self._acall(prompt, system)
        return self._record(operation, prompt, system, result)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, calls={self.usage.calls})"


def _lc_messages(prompt: str, system: str | None) -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    return ([SystemMessage(content=system)] if system else []) + [HumanMessage(content=prompt)]


def _lc_result(msg: Any) -> tuple[str, int | None, int | None]:
    text = getattr(msg, "text", None)
    if isinstance(text, str):  # langchain-core >= 1.0: a str property (also callable, deprecated)
        text = str(text)
    elif callable(text):  # langchain-core < 1.0: a method
        text = text()
    if not isinstance(text, str):
        text = msg.content if isinstance(msg.content, str) else str(msg.content)
    usage = getattr(msg, "usage_metadata", None) or {}
    return text, usage.get("input_tokens"), usage.get("output_tokens")


class _LangChainChatModel(UsageCountingChatModel):
    backend = "langchain"

    def _call(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        return _lc_result(self.wrapped.invoke(_lc_messages(prompt, system)))

    async def _acall(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        return _lc_result(await self.wrapped.ainvoke(_lc_messages(prompt, system)))


def _li_messages(prompt: str, system: str | None) -> list[Any]:
    from llama_index.core.llms import ChatMessage, MessageRole

    msgs = [ChatMessage(role=MessageRole.SYSTEM, content=system)] if system else []
    return msgs + [ChatMessage(role=MessageRole.USER, content=prompt)]


def _li_usage(resp: Any) -> tuple[int | None, int | None]:
    extra = getattr(resp, "additional_kwargs", None) or {}
    if "prompt_tokens" in extra and "completion_tokens" in extra:
        return extra["prompt_tokens"], extra["completion_tokens"]
    raw = getattr(resp, "raw", None)
    usage = raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)
    if usage is None:
        return None, None

    def pick(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key) if isinstance(usage, dict) else getattr(usage, key, None)
            if isinstance(value, int):
                return value
        return None

    return pick("prompt_tokens", "input_tokens"), pick("completion_tokens", "output_tokens")


class _LlamaIndexChatModel(UsageCountingChatModel):
    backend = "llamaindex"

    def _result(self, resp: Any) -> tuple[str, int | None, int | None]:
        content = resp.message.content
        return (content if isinstance(content, str) else ""), *_li_usage(resp)

    def _call(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        return self._result(self.wrapped.chat(_li_messages(prompt, system)))

    async def _acall(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        return self._result(await self.wrapped.achat(_li_messages(prompt, system)))


class _ProtocolChatModel(UsageCountingChatModel):
    """Our ChatModel protocol object (its own ``complete``), with usage counting added."""

    def _call(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        return self.wrapped.complete(prompt, system=system), None, None

    async def _acall(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        acomplete = getattr(self.wrapped, "acomplete", None)
        if acomplete is None:
            return await super()._acall(prompt, system)
        return await acomplete(prompt, system=system), None, None


class _CallableChatModel(UsageCountingChatModel):
    """A plain ``str -> str`` function (sync, or async for ``acomplete`` only).

    The function sees one string: ``system`` and ``prompt`` joined by a blank line.
    """

    backend = "callable"

    @staticmethod
    def _join(prompt: str, system: str | None) -> str:
        return f"{system}\n\n{prompt}" if system else prompt

    def _call(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        if inspect.iscoroutinefunction(self.wrapped):
            raise ConfigurationError(
                f"{self.name} is an async function; call `await model.acomplete(...)` instead of "
                "`model.complete(...)`, or pass a sync function"
            )
        return self.wrapped(self._join(prompt, system)), None, None

    async def _acall(self, prompt: str, system: str | None) -> tuple[str, int | None, int | None]:
        if inspect.iscoroutinefunction(self.wrapped):
            out: Awaitable[str] = self.wrapped(self._join(prompt, system))
            return await out, None, None
        return await super()._acall(prompt, system)


def as_chat_model(
    obj: Any, *, name: str | None = None, token_counter: Callable[[str], int] | None = None
) -> UsageCountingChatModel:
    """Adapt ``obj`` to the :class:`ChatModel` protocol, counting usage.

    Args:
        obj: a LangChain ``BaseChatModel`` (``invoke`` with System/Human messages; reads
            ``usage_metadata``), a LlamaIndex ``LLM`` (``chat`` with ``ChatMessage``; reads
            ``additional_kwargs`` / ``raw.usage``), one of our ``ChatModel`` objects, or a
            ``str -> str`` callable (sync; async ones work with ``acomplete``).
        name: model name; default: the object's model name, else its class or function name.
        token_counter: counts tokens when the provider does not report them; default
            :func:`~layered_memory.providers.tokens.get_token_counter`.

    Returns:
        A wrapper with ``complete(prompt, *, system=None, operation=None)``, ``acomplete`` and
        ``usage`` (``calls``, ``prompt_tokens``, ``completion_tokens``, ``by_operation``).
        A wrapper passed in again is returned as is.

    Raises:
        ConfigurationError: ``obj`` is none of the above.

    Example::

        from langchain_core.language_models.fake_chat_models import FakeListChatModel
        chat = as_chat_model(FakeListChatModel(responses=["ok"]))
        chat.complete("hi", operation="summarize")  # "ok"; chat.usage.by_operation["summarize"]
    """
    if isinstance(obj, UsageCountingChatModel) and name is None and token_counter is None:
        return obj
    kw = {"token_counter": token_counter}
    if _is_instance(obj, "langchain_core.language_models.chat_models", "BaseChatModel"):
        return _LangChainChatModel(
            obj, name=name or _model_name(obj, "model_name", "model", "_llm_type"), **kw
        )
    if _is_instance(obj, "llama_index.core.base.llms.base", "BaseLLM"):
        model = getattr(getattr(obj, "metadata", None), "model_name", None)
        if not isinstance(model, str) or model in ("", "unknown"):
            model = type(obj).__name__
        return _LlamaIndexChatModel(obj, name=name or model, **kw)
    if _has_members(obj, ("name", "complete")):
        return _ProtocolChatModel(obj, name=name or obj.name, **kw)
    if callable(obj) and not isinstance(obj, type):
        fn_name = getattr(obj, "__name__", None) or type(obj).__name__
        return _CallableChatModel(obj, name=name or fn_name, **kw)
    raise ConfigurationError(
        f"as_chat_model({type(obj).__module__}.{type(obj).__name__}): not a chat model; pass a "
        "LangChain BaseChatModel, a LlamaIndex LLM, an object with name and "
        "complete(prompt, *, system=None), or a str -> str function"
    )
