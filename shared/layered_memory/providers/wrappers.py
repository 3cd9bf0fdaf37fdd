"""Adapt framework objects to our ``Embedder`` / ``ChatModel`` protocols.

:func:`as_embedder` accepts our protocol objects, a LangChain ``Embeddings`` or a LlamaIndex
``BaseEmbedding``. :func:`as_chat_model` accepts our ``ChatModel`` objects, a LangChain
``BaseChatModel``, a LlamaIndex ``LLM`` or a plain ``str -> str`` callable.

Framework packages are never imported here unless the object passed in already comes from them
(an instance of a class in a module that is not loaded cannot exist), so neither extra is needed.

Every chat model returned by :func:`as_chat_model` returns a :class:`Completion` and counts usage in
``.usage``, a :class:`~.usage.UsageMeter` (calls, failures, tokens and seconds per ``operation``);
tokens come from the provider when it reports them and are counted with :mod:`.tokens` otherwise. Provider exceptions are translated here, at the seam, into
``BackendTimeout`` / ``BackendUnavailable`` / ``BackendError`` (the original is ``__cause__``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
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
from .base import Completion, Embedder, TokenUsage
from .tokens import get_token_counter
from .usage import UsageMeter

logger = logging.getLogger(__name__)

__all__ = ["UsageCountingChatModel", "as_chat_model", "as_embedder"]

_DIM_PROBE = "dimension probe"


# --------------------------------------------------------------------------- helpers


def is_framework_instance(obj: object, module: str, cls_name: str) -> bool:
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


def model_name(obj: Any, *attrs: str) -> str:
    """The first of ``attrs`` that holds a model's name (a non-empty str), else ``obj``'s class name."""
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
        is_framework_instance(obj, "llama_index.core.base.embeddings.base", "BaseEmbedding")
        or hasattr(obj, "get_text_embedding_batch") and hasattr(obj, "get_query_embedding")
    ):
        return _LlamaIndexEmbedder(  # type: ignore[return-value]
            obj, name=name or model_name(obj, "model_name"), dim=dim or _declared_dim(obj)
        )
    if _has_members(obj, ("name", "dim", "embed_documents", "embed_query")) and (
        name is None and dim is None
    ):
        if hasattr(obj, "aembed_documents") and hasattr(obj, "aembed_query"):
            return obj
        return _ProtocolEmbedder(obj)  # type: ignore[return-value]
    if is_framework_instance(obj, "langchain_core.embeddings.embeddings", "Embeddings") or (
        hasattr(obj, "embed_documents") and hasattr(obj, "embed_query")
    ):
        return _LangChainEmbedder(  # type: ignore[return-value]
            obj, name=name or getattr(obj, "name", None) or model_name(obj, "model", "model_name"),
            dim=dim or _declared_dim(obj),
        )
    raise ConfigurationError(
        f"as_embedder({type(obj).__module__}.{type(obj).__name__}): not an embedder; pass an "
        "object with name, dim, embed_documents and embed_query, a LangChain Embeddings, or a "
        "LlamaIndex BaseEmbedding"
    )


# --------------------------------------------------------------------------- chat models


class UsageCountingChatModel:
    """Base of every wrapper :func:`as_chat_model` returns.

    ``complete(prompt, *, system=None, operation=None)`` / ``acomplete(...)`` return a
    :class:`Completion` whose ``usage`` is always set, and record the call in ``usage`` (a
    :class:`UsageMeter`: calls, failures, tokens and seconds per ``operation``). Subclasses implement
    ``_call`` / ``_acall`` returning a ``Completion`` with the provider's usage, or ``usage=None``.
    """

    backend = "chat"

    def __init__(self, obj: Any, *, name: str, token_counter: Callable[[str], int] | None) -> None:
        self.wrapped = obj
        self.name = name
        self.usage = UsageMeter()
        self._count = token_counter or get_token_counter()

    def _call(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        raise NotImplementedError  # pragma: no cover

    async def _acall(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        return await asyncio.to_thread(self._call, prompt, system, operation)

    def _checked(self, result: Any) -> Completion:
        if not isinstance(result, Completion) or not isinstance(result.text, str):
            got = type(result.text if isinstance(result, Completion) else result).__name__
            raise BackendError(
                f"{self.name} returned {got}, not Completion(text: str, usage); fix: return "
                "layered_memory.providers.Completion(text) from complete()",
                backend=self.backend, op="complete",
            )
        return result

    def _finish(self, operation: str | None, prompt: str, system: str | None, result: Completion,
                seconds: float) -> Completion:
        usage = result.usage
        if usage is None:
            prompt_tokens = self._count(prompt) + (self._count(system) if system else 0)
            usage = TokenUsage(prompt_tokens, self._count(result.text), estimated=True)
        self.usage.record(operation, prompt=usage.prompt_tokens, completion=usage.completion_tokens,
                          seconds=seconds, estimated=usage.estimated)
        logger.debug("chat %s %s: %d prompt chars -> %d chars in %.3f s", self.name, operation,
                     len(prompt), len(result.text), seconds)
        return Completion(result.text, usage)

    def complete(self, prompt: str, *, system: str | None = None,
                 operation: str | None = None) -> Completion:
        """One prompt in, one :class:`Completion` out. ``operation`` labels the call in ``usage``."""
        t0 = time.perf_counter()
        try:
            with _map_errors(self.backend, "complete"):
                result = self._checked(self._call(prompt, system, operation))
        except Exception:
            self.usage.record(operation, seconds=time.perf_counter() - t0, failed=True)
            raise
        return self._finish(operation, prompt, system, result, time.perf_counter() - t0)

    async def acomplete(self, prompt: str, *, system: str | None = None,
                        operation: str | None = None) -> Completion:
        """Async twin of :meth:`complete`."""
        t0 = time.perf_counter()
        try:
            with _map_errors(self.backend, "acomplete"):
                result = self._checked(await self._acall(prompt, system, operation))
        except Exception:
            self.usage.record(operation, seconds=time.perf_counter() - t0, failed=True)
            raise
        return self._finish(operation, prompt, system, result, time.perf_counter() - t0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, calls={self.usage.calls})"


def _reported(prompt_tokens: Any, completion_tokens: Any) -> TokenUsage | None:
    if isinstance(prompt_tokens, int) and isinstance(completion_tokens, int):
        return TokenUsage(prompt_tokens, completion_tokens)
    return None


def _lc_messages(prompt: str, system: str | None) -> list[Any]:
    from langchain_core.messages import HumanMessage, SystemMessage

    return ([SystemMessage(content=system)] if system else []) + [HumanMessage(content=prompt)]


def _lc_result(msg: Any) -> Completion:
    text = getattr(msg, "text", None)
    if isinstance(text, str):  # langchain-core >= 1.0: a str property (also callable, deprecated)
        text = str(text)
    elif callable(text):  # langchain-core < 1.0: a method
        text = text()
    if not isinstance(text, str):
        text = msg.content if isinstance(msg.content, str) else str(msg.content)
    usage = getattr(msg, "usage_metadata", None) or {}
    return Completion(text, _reported(usage.get("input_tokens"), usage.get("output_tokens")))


class _LangChainChatModel(UsageCountingChatModel):
    backend = "langchain"

    def _call(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        return _lc_result(self.wrapped.invoke(_lc_messages(prompt, system)))

    async def _acall(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        return _lc_result(await self.wrapped.ainvoke(_lc_messages(prompt, system)))


def _li_messages(prompt: str, system: str | None) -> list[Any]:
    from llama_index.core.llms import ChatMessage, MessageRole

    msgs = [ChatMessage(role=MessageRole.SYSTEM, content=system)] if system else []
    return msgs + [ChatMessage(role=MessageRole.USER, content=prompt)]


def _li_usage(resp: Any) -> TokenUsage | None:
    extra = getattr(resp, "additional_kwargs", None) or {}
    if "prompt_tokens" in extra and "completion_tokens" in extra:
        return _reported(extra["prompt_tokens"], extra["completion_tokens"])
    raw = getattr(resp, "raw", None)
    usage = raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)
    if usage is None:
        return None

    def pick(*keys: str) -> int | None:
        for key in keys:
            value = usage.get(key) if isinstance(usage, dict) else getattr(usage, key, None)
            if isinstance(value, int):
                return value
        return None

    return _reported(pick("prompt_tokens", "input_tokens"), pick("completion_tokens", "output_tokens"))


class _LlamaIndexChatModel(UsageCountingChatModel):
    backend = "llamaindex"

    def _result(self, resp: Any) -> Completion:
        content = resp.message.content
        return Completion(content if isinstance(content, str) else "", _li_usage(resp))

    def _call(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        return self._result(self.wrapped.chat(_li_messages(prompt, system)))

    async def _acall(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        return self._result(await self.wrapped.achat(_li_messages(prompt, system)))


class _ProtocolChatModel(UsageCountingChatModel):
    """Our :class:`ChatModel` (its own ``complete``, and ``acomplete`` when it has one), with usage."""

    def _call(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        return self.wrapped.complete(prompt, system=system, operation=operation)

    async def _acall(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        if self._native_async:
            return await self.wrapped.acomplete(prompt, system=system, operation=operation)
        return await super()._acall(prompt, system, operation)

    @property
    def _native_async(self) -> bool:
        return _has_members(self.wrapped, ("acomplete",))


class _CallableChatModel(UsageCountingChatModel):
    """A plain ``str -> str`` function (sync, or async for ``acomplete`` only).

    The function sees one string: ``system`` and ``prompt`` joined by a blank line.
    """

    backend = "callable"

    @staticmethod
    def _join(prompt: str, system: str | None) -> str:
        return f"{system}\n\n{prompt}" if system else prompt

    def _call(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        if inspect.iscoroutinefunction(self.wrapped):
            raise ConfigurationError(
                f"{self.name} is an async function; call `await model.acomplete(...)` instead of "
                "`model.complete(...)`, or pass a sync function"
            )
        return Completion(self.wrapped(self._join(prompt, system)))

    async def _acall(self, prompt: str, system: str | None, operation: str | None) -> Completion:
        if inspect.iscoroutinefunction(self.wrapped):
            out: Awaitable[str] = self.wrapped(self._join(prompt, system))
            return Completion(await out)
        return await super()._acall(prompt, system, operation)


def _takes_operation(method: Any) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: trust it
        return True
    return any(p.name == "operation" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def as_chat_model(
    obj: Any, *, name: str | None = None, token_counter: Callable[[str], int] | None = None
) -> UsageCountingChatModel:
    """Adapt ``obj`` to the :class:`ChatModel` protocol, counting usage.

    Args:
        obj: a LangChain ``BaseChatModel`` (``invoke`` with System/Human messages; reads
            ``usage_metadata``), a LlamaIndex ``LLM`` (``chat`` with ``ChatMessage``; reads
            ``additional_kwargs`` / ``raw.usage``), one of our ``ChatModel`` objects
            (``complete(prompt, *, system=None, operation=None) -> Completion``, plus an
            ``acomplete`` twin when it has one), or a ``str -> str`` callable (sync; async ones
            work with ``acomplete``).
        name: model name; default: the object's model name, else its class or function name.
        token_counter: counts tokens when the provider does not report them; default
            :func:`~layered_memory.providers.tokens.get_token_counter`.

    Returns:
        A wrapper with ``complete(prompt, *, system=None, operation=None) -> Completion``,
        ``acomplete`` and ``usage`` (a :class:`UsageMeter`). A wrapper passed in again is
        returned as is.

    Raises:
        ConfigurationError: ``obj`` is none of the above, or its ``complete`` takes no ``operation``.

    Example::

        from langchain_core.language_models.fake_chat_models import FakeListChatModel
        chat = as_chat_model(FakeListChatModel(responses=["ok"]))
        chat.complete("hi", operation="summarize").text  # "ok"; chat.usage.by_operation["summarize"]
    """
    if isinstance(obj, UsageCountingChatModel) and name is None and token_counter is None:
        return obj
    kw = {"token_counter": token_counter}
    if is_framework_instance(obj, "langchain_core.language_models.chat_models", "BaseChatModel"):
        return _LangChainChatModel(
            obj, name=name or model_name(obj, "model_name", "model", "_llm_type"), **kw
        )
    if is_framework_instance(obj, "llama_index.core.base.llms.base", "BaseLLM"):
        model = getattr(getattr(obj, "metadata", None), "model_name", None)
        if not isinstance(model, str) or model in ("", "unknown"):
            model = type(obj).__name__
        return _LlamaIndexChatModel(obj, name=name or model, **kw)
    if _has_members(obj, ("name", "complete")):
        if not _takes_operation(obj.complete):
            raise ConfigurationError(
                f"{type(obj).__name__}.complete takes no `operation` argument; the ChatModel protocol is "
                "complete(prompt, *, system=None, operation=None) -> Completion: add the keyword "
                "(it may be ignored) and return layered_memory.providers.Completion(text)"
            )
        return _ProtocolChatModel(obj, name=name or obj.name, **kw)
    if callable(obj) and not isinstance(obj, type):
        fn_name = getattr(obj, "__name__", None) or type(obj).__name__
        return _CallableChatModel(obj, name=name or fn_name, **kw)
    raise ConfigurationError(
        f"as_chat_model({type(obj).__module__}.{type(obj).__name__}): not a chat model; pass a "
        "LangChain BaseChatModel, a LlamaIndex LLM, an object with name and "
        "complete(prompt, *, system=None, operation=None) -> Completion, or a str -> str function"
    )
