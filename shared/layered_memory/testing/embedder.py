"""A deterministic fake embedder: hashed character n-grams, for tests and examples without a model.

Each text is case-folded, its whitespace collapsed, and padded with one space on each side; every
character n-gram (``n`` = 3 by default) and every word adds +1 or -1 (a sign hash) to one of ``dim``
buckets (an index hash), with blake2b, so the vectors are the same in every process and on every
platform (Python's ``hash()`` is salted per process). The vector is L2-normalized. Texts sharing
many n-grams ("hiking trail" / "hiking trails") get a high cosine similarity, unrelated texts one
near 0: enough for retrieval tests, not a language model.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
from collections.abc import Sequence
from functools import lru_cache

from ..errors import InvalidInputError

__all__ = ["HashEmbedder"]

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=65_536)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dim, (1.0 if (value >> 63) & 1 else -1.0)


class HashEmbedder:
    """Deterministic ``Embedder`` (see the module docstring). Counts its calls in ``calls``.

    Args:
        dim: vector size (default 64).
        n: character n-gram size (default 3).
        name: stored with the collection; default ``hash-ngram-<n>-<dim>``.

    Example::

        emb = HashEmbedder(dim=32)
        mem = LayeredMemory.embedded(tmp_path, embedder=emb)   # dense + BM25 search, no model
    """

    def __init__(self, dim: int = 64, *, n: int = 3, name: str | None = None) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 2:
            raise InvalidInputError("dim", dim, "must be an integer >= 2", "e.g. HashEmbedder(dim=64)")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidInputError("n", n, "must be an integer >= 1", "e.g. HashEmbedder(n=3)")
        self.dim = dim
        self.n = n
        self.name = name or f"hash-ngram-{n}-{dim}"
        self.calls = 0

    def _features(self, text: str) -> list[str]:
        norm = " ".join(str(text).casefold().split())
        padded = f" {norm} "
        grams = [padded[i : i + self.n] for i in range(max(1, len(padded) - self.n + 1))]
        words = [f"w:{w}" for w in _WORD.findall(norm)]
        return grams + words if norm else ["<empty>"]

    def vector(self, text: str) -> list[float]:
        """The unit vector of one text (no call counted)."""
        vec = [0.0] * self.dim
        for feature in self._features(text):
            i, sign = _bucket(feature, self.dim)
            vec[i] += sign
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0.0:  # every feature cancelled out: still a valid unit vector
            i, _ = _bucket(" ".join(text.split()), self.dim)
            vec[i], norm = 1.0, 1.0
        return [v / norm for v in vec]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if isinstance(texts, str):
            raise InvalidInputError("texts", texts, "embed_documents takes a list of strings, got one string",
                                    "wrap it in a list, or call embed_query(text)")
        self.calls += 1
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        return self.vector(text)

    async def aembed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await asyncio.to_thread(self.embed_documents, texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await asyncio.to_thread(self.embed_query, text)

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self.dim}, n={self.n}, name={self.name!r})"
