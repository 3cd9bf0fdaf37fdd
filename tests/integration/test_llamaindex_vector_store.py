"""LlamaIndex ``LayeredMemoryVectorStore``: VectorStoreIndex round trip, ref-doc delete, filters, scope."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import Document, MockEmbedding, StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import ExactMatchFilter, FilterOperator, MetadataFilter, MetadataFilters, VectorStoreQuery

from layered_memory import LayeredMemory
from layered_memory.testing import HashEmbedder
from llamaindex_layered_memory import LayeredMemoryVectorStore

EMBED = MockEmbedding(embed_dim=8)  # LlamaIndex's side; the engine embeds with its own embedder


@pytest.fixture
def mem(tmp_path: Path):
    m = LayeredMemory.embedded(tmp_path / "m", embedder=HashEmbedder())
    yield m
    m.close()


def test_index_round_trip_and_ref_doc_delete(mem: LayeredMemory) -> None:
    store = LayeredMemoryVectorStore(mem, collection="handbook")
    docs = [Document(text="Request leave in Workday two weeks ahead.", doc_id="hr", metadata={"team": "hr"}),
            Document(text="Expenses need receipts above 50 EUR.", doc_id="fin", metadata={"team": "finance"})]
    index = VectorStoreIndex.from_documents(docs, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=EMBED)
    found = index.as_retriever(similarity_top_k=1).retrieve("how do I request leave")
    assert found[0].node.get_content() == "Request leave in Workday two weeks ahead." and found[0].node.ref_doc_id == "hr"
    assert found[0].node.metadata["team"] == "hr"
    reopened = VectorStoreIndex.from_vector_store(LayeredMemoryVectorStore(mem, collection="handbook"), embed_model=EMBED)
    assert reopened.as_retriever(similarity_top_k=1).retrieve("receipts expenses")[0].node.ref_doc_id == "fin"
    filtered = reopened.as_retriever(similarity_top_k=5, filters=MetadataFilters(filters=[ExactMatchFilter(key="team", value="finance")]))
    assert {n.node.ref_doc_id for n in filtered.retrieve("leave")} == {"fin"}
    store.delete("hr")
    assert {n.node.ref_doc_id for n in reopened.as_retriever(similarity_top_k=5).retrieve("request leave")} == {"fin"}
    assert mem.documents.vector_rag("receipts", filters={"collection": "handbook"}).hits[0].text.startswith("Expenses")


def test_nodes_query_fields_scope_and_errors(mem: LayeredMemory) -> None:
    store = LayeredMemoryVectorStore(mem, collection="n", user_id="alice")
    ids = store.add([TextNode(text="alpha beta", id_="n1", metadata={"k": "a"}), TextNode(text="gamma delta", id_="n2", metadata={"k": "b"})])
    assert ids == ["n1", "n2"]
    res = store.query(VectorStoreQuery(query_str="alpha gamma", similarity_top_k=5, node_ids=["n2"]))
    assert res.ids == ["n2"] and res.nodes[0].get_content() == "gamma delta"
    res = store.query(VectorStoreQuery(query_str="alpha", similarity_top_k=5,
                                       filters=MetadataFilters(filters=[MetadataFilter(key="k", value=["a", "b"], operator=FilterOperator.IN)])))
    assert set(res.ids) == {"n1", "n2"}
    assert [n.node_id for n in store.get_nodes(["n1", "missing"])] == ["n1"]
    assert LayeredMemoryVectorStore(mem, collection="n", user_id="bob").query(VectorStoreQuery(query_str="alpha", similarity_top_k=5)).ids == []
    store.delete_nodes(["n1"])
    assert store.query(VectorStoreQuery(query_str="alpha beta", similarity_top_k=5)).ids == ["n2"]
    with pytest.raises(ValueError, match="only == and in"):
        store.query(VectorStoreQuery(query_str="x", filters=MetadataFilters(filters=[MetadataFilter(key="k", value=1, operator=FilterOperator.GT)])))
    with pytest.raises(ValueError, match="query_str"):
        store.query(VectorStoreQuery(query_embedding=[0.0] * 8))
    store.clear()
    assert store.query(VectorStoreQuery(query_str="gamma", similarity_top_k=5)).ids == []
