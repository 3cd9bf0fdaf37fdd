"""langchain-tests' ``VectorStoreIntegrationTests`` over ``LayeredMemoryVectorStore`` (nothing overridden),
plus what the suite does not check: filters, scope, retriever, and the engine seeing the documents."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from langchain_layered_memory import LayeredMemoryVectorStore
from layered_memory import LayeredMemory


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LayeredMemory]:
    mem = LayeredMemory.embedded(tmp_path_factory.mktemp("lc-vs"), embedder=DeterministicFakeEmbedding(size=6))
    yield mem
    mem.close()


class TestLayeredMemoryVectorStore(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self, engine: LayeredMemory) -> VectorStore:
        return LayeredMemoryVectorStore(engine, collection=f"c{uuid.uuid4().hex[:8]}")  # an empty collection per test


def test_filter_scope_retriever_and_vector_rag(engine: LayeredMemory) -> None:
    store = LayeredMemoryVectorStore(engine, collection="handbook")
    store.add_documents([Document(page_content="Request leave in Workday", metadata={"source": "hr.pdf", "page": 3}),
                         Document(page_content="Expenses need receipts", metadata={"source": "finance.pdf"})], ids=["a", "b"])
    assert [d.id for d in store.similarity_search("leave", k=2, filter={"source": "finance.pdf"})] == ["b"]
    assert [d.id for d in store.as_retriever(search_kwargs={"k": 1}).invoke("request leave workday")] == ["a"]
    hit = engine.documents.vector_rag("request leave workday", k=1, filters={"collection": "handbook"}).hits[0]
    assert hit.meta["citation"] == "hr.pdf (page 3)" and hit.meta["source"] == "a"
    private = LayeredMemoryVectorStore(engine, collection="handbook", user_id="alice")
    private.add_documents([Document(page_content="Alice's leave balance is 12 days")], ids=["alice-1"])
    assert "alice-1" in [d.id for d in private.similarity_search("leave balance", k=5)]
    assert "alice-1" not in [d.id for d in LayeredMemoryVectorStore(engine, collection="handbook", user_id="bob").similarity_search("leave balance", k=5)]
    assert store.get_by_ids(["alice-1"]) == []
    with pytest.raises(ValueError, match="filter"):
        store.similarity_search("x", filter={"a.b": 1})
    with pytest.raises(ValueError, match="needs memory="):
        LayeredMemoryVectorStore.from_texts(["x"], DeterministicFakeEmbedding(size=6))
    built = LayeredMemoryVectorStore.from_texts(["hello world"], memory=engine, collection="built", ids=["h"])
    assert built.get_by_ids(["h"])[0].page_content == "hello world"
