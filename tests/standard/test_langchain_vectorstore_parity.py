"""``LayeredMemoryVectorStore`` (LangChain) beside LangChain's own ``InMemoryVectorStore`` with the same
embeddings: search by vector, maximal marginal relevance (sync, async, ``search_type="mmr"``), the
``embeddings`` property and ``add_texts`` argument errors behave the same (issue 24, "Vector stores").
The engine keeps Qdrant's cosine similarity, ``InMemoryVectorStore`` numpy's: scores agree to 1e-5."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_layered_memory import LayeredMemoryVectorStore
from layered_memory import LayeredMemory
from layered_memory.testing import HashEmbedder

TEXTS = ["foo", "foo bar", "fou", "foy", "baz qux", "the quick brown fox", "lorem ipsum", "dolor sit amet"]
METAS = [{"n": i, "team": "ops" if i % 2 else "hr"} for i in range(len(TEXTS))]
IDS = [f"t{i}" for i in range(len(TEXTS))]


@pytest.fixture
def emb() -> DeterministicFakeEmbedding:
    return DeterministicFakeEmbedding(size=12)


@pytest.fixture
def mem(tmp_path: Path, emb: DeterministicFakeEmbedding) -> Iterator[LayeredMemory]:
    m = LayeredMemory.embedded(tmp_path / "m", embedder=emb)
    yield m
    m.close()


@pytest.fixture
def pair(mem: LayeredMemory, emb: DeterministicFakeEmbedding) -> tuple[LayeredMemoryVectorStore, InMemoryVectorStore]:
    ours = LayeredMemoryVectorStore(mem, collection="parity")
    ref = InMemoryVectorStore(embedding=emb)
    for store in (ours, ref):
        assert store.add_texts(TEXTS, METAS, ids=IDS) == IDS
    return ours, ref


def _ids(docs) -> list[str]:
    return [d.id for d in docs]


def test_embeddings_is_the_langchain_embeddings_the_engine_was_given(mem: LayeredMemory, emb, tmp_path: Path) -> None:
    assert LayeredMemoryVectorStore(mem).embeddings is emb
    other = LayeredMemory.embedded(tmp_path / "h", embedder=HashEmbedder())  # not a LangChain Embeddings
    try:
        assert LayeredMemoryVectorStore(other).embeddings is None
    finally:
        other.close()


def test_add_texts_with_fewer_metadatas_raises_value_error_like_in_memory(mem: LayeredMemory, emb) -> None:
    ours = LayeredMemoryVectorStore(mem, collection="bad")
    with pytest.raises(ValueError):
        InMemoryVectorStore(embedding=emb).add_texts(["a", "b"], [{"x": 1}])
    with pytest.raises(ValueError, match=r"metadatas: 1 metadatas for 2 texts; pass one metadata dict per text"):
        ours.add_texts(["a", "b"], [{"x": 1}])
    with pytest.raises(ValueError, match="metadatas: 3 metadatas for 2 texts"):
        ours.add_texts(["a", "b"], [{}, {}, {}])
    assert ours.get_by_ids(["a", "b"]) == [] and ours.similarity_search("a b", k=4) == []  # nothing half-written


@pytest.mark.parametrize("query", ["foo", "quick fox", "ipsum dolor"])
def test_search_by_vector_matches_in_memory(pair, emb, query: str) -> None:
    ours, ref = pair
    vec = emb.embed_query(query)
    for k in (1, 3, 8):
        assert _ids(ours.similarity_search_by_vector(vec, k=k)) == _ids(ref.similarity_search_by_vector(vec, k=k))
    got = ours.similarity_search_with_score_by_vector(vec, k=8)
    want = ref.similarity_search_with_score_by_vector(vec, k=8)
    assert [d.id for d, _ in got] == [d.id for d, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)
    assert got[0][0].page_content == want[0][0].page_content and got[0][0].metadata == want[0][0].metadata
    import numpy as np

    assert _ids(ours.similarity_search_by_vector(np.array(vec, dtype=np.float32), k=3)) == _ids(ref.similarity_search_by_vector(vec, k=3))
    only_ops = ours.similarity_search_by_vector(vec, k=8, filter={"team": "ops"})
    assert _ids(only_ops) == _ids(ref.similarity_search_by_vector(vec, k=8, filter=lambda d: d.metadata["team"] == "ops"))


async def test_async_search_by_vector_matches_in_memory(pair, emb) -> None:
    ours, ref = pair
    vec = emb.embed_query("foo")
    assert _ids(await ours.asimilarity_search_by_vector(vec, k=3)) == _ids(await ref.asimilarity_search_by_vector(vec, k=3))


@pytest.mark.parametrize(("k", "fetch_k", "lambda_mult"), [(4, 20, 0.5), (3, 6, 0.1), (2, 8, 0.9), (10, 20, 0.0), (8, 8, 1.0)])
def test_mmr_matches_in_memory(pair, emb, k: int, fetch_k: int, lambda_mult: float) -> None:
    ours, ref = pair
    for query in ("foo qux", "fox lorem"):  # not a stored text: at lambda 0.5 that would tie every candidate
        want = _ids(ref.max_marginal_relevance_search(query, k=k, fetch_k=fetch_k, lambda_mult=lambda_mult))
        assert _ids(ours.max_marginal_relevance_search(query, k=k, fetch_k=fetch_k, lambda_mult=lambda_mult)) == want
        vec = emb.embed_query(query)
        assert _ids(ours.max_marginal_relevance_search_by_vector(vec, k=k, fetch_k=fetch_k, lambda_mult=lambda_mult)) == want
    want = _ids(ref.max_marginal_relevance_search("foo qux", k=k, fetch_k=fetch_k, filter=lambda d: d.metadata["team"] == "hr"))
    assert _ids(ours.max_marginal_relevance_search("foo qux", k=k, fetch_k=fetch_k, filter={"team": "hr"})) == want


async def test_mmr_async_and_retriever_match_in_memory(pair, emb) -> None:
    ours, ref = pair
    kw = {"k": 3, "fetch_k": 6, "lambda_mult": 0.2}
    want = _ids(ref.max_marginal_relevance_search("foo", **kw))
    assert _ids(await ours.amax_marginal_relevance_search("foo", **kw)) == want
    assert _ids(await ours.amax_marginal_relevance_search_by_vector(emb.embed_query("foo"), **kw)) == want
    assert _ids(ours.as_retriever(search_type="mmr", search_kwargs=kw).invoke("foo")) == want
    assert _ids(await ours.as_retriever(search_type="mmr", search_kwargs=kw).ainvoke("foo")) == want
    assert want == _ids(ref.as_retriever(search_type="mmr", search_kwargs=kw).invoke("foo"))


async def test_in_memory_mmr_contract(tmp_path: Path) -> None:
    """langchain-core's ``test_inmemory_mmr`` (its texts and embeddings), on our store: k above the store's
    size returns every text, the duplicate "foo" comes last; the order is InMemoryVectorStore's (which
    one of "fou" / "foy" comes second depends on the installed numpy's random stream)."""
    texts = ["foo", "foo", "fou", "foy"]
    emb = DeterministicFakeEmbedding(size=6)
    want = [d.page_content for d in (await InMemoryVectorStore.afrom_texts(texts, emb)).max_marginal_relevance_search("foo", k=10, lambda_mult=0.1)]
    assert len(want) == 4 and want[0] == want[3] == "foo"
    mem = LayeredMemory.embedded(tmp_path / "six", embedder=emb)
    try:
        store = LayeredMemoryVectorStore.from_texts(texts, memory=mem, collection="mmr")
        for output in (store.max_marginal_relevance_search("foo", k=10, lambda_mult=0.1),
                       await store.amax_marginal_relevance_search("foo", k=10, lambda_mult=0.1)):
            assert [d.page_content for d in output] == want
    finally:
        mem.close()


def test_k_limits_name_the_argument(pair, emb) -> None:
    ours, _ = pair
    vec = emb.embed_query("foo")
    with pytest.raises(ValueError, match=r"fetch_k=101: must be an integer from 1 to 100"):
        ours.max_marginal_relevance_search("foo", k=4, fetch_k=101)
    with pytest.raises(ValueError, match=r"k=0: must be an integer from 1 to 100"):
        ours.max_marginal_relevance_search("foo", k=0)
    with pytest.raises(ValueError, match=r"k=101: must be an integer from 1 to 100"):
        ours.similarity_search_by_vector(vec, k=101)
    with pytest.raises(ValueError, match=r"embedding.*12 dimensions"):
        ours.similarity_search_by_vector([0.1, 0.2], k=1)


def test_search_by_vector_without_a_vector_index_says_so(tmp_path: Path, emb) -> None:
    from layered_memory.errors import CapabilityError
    from layered_memory.stores.sqlite import SQLiteRecordStore

    core = LayeredMemory.from_stores(SQLiteRecordStore(str(tmp_path / "core.db")), None, embedder=emb)
    try:
        store = LayeredMemoryVectorStore(core, collection="core")
        store.add_texts(["foo"], ids=["a"])
        with pytest.raises(CapabilityError, match="needs a vector index"):
            store.similarity_search_by_vector(emb.embed_query("foo"))
    finally:
        core.close()
