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
    for other in (LayeredMemoryVectorStore(mem, collection="n", user_id="bob"), LayeredMemoryVectorStore(mem, collection="n")):
        assert other.get_nodes() == [] and other.get_nodes(["n1"]) == []  # listing and filters never reach alice's space
        assert other.query(VectorStoreQuery(query_str="alpha", filters=MetadataFilters(filters=[
            MetadataFilter(key="k", value="a", operator=FilterOperator.NE)]))).ids == []
    store.delete_nodes(["n1"])
    assert store.query(VectorStoreQuery(query_str="alpha beta", similarity_top_k=5)).ids == ["n2"]
    with pytest.raises(ValueError, match="stored type"):
        store.query(VectorStoreQuery(query_str="x", filters=MetadataFilters(filters=[MetadataFilter(key="k", value=1, operator=FilterOperator.GT)])))
    with pytest.raises(ValueError, match="query_str"):
        store.query(VectorStoreQuery(query_embedding=[0.0] * 8))
    store.clear()
    assert store.query(VectorStoreQuery(query_str="gamma", similarity_top_k=5)).ids == []


# -- LlamaIndex's vector-store contract (its SimpleVectorStore tests, restated over text queries) ------------
# Three nodes from three source documents; every query text matches all three equally, so what a filter keeps
# is what comes back.

W1, W2, W3 = "node-w1-a", "node-w2-c", "node-w3-c"


@pytest.fixture
def contract(mem: LayeredMemory) -> LayeredMemoryVectorStore:
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

    store = LayeredMemoryVectorStore(mem, collection="contract")
    rows = [(W1, "src-1", 1.0, "a", ["medium", "high"], "6FTR78Yun"), (W2, "src-2", 2.0, "c", ["medium"], "6FTR78Ygl"),
            (W3, "src-3", 3.0, "c", ["low", "medium", "high"], "6FTR78Ztl")]
    nodes = [TextNode(text="lorem ipsum", id_=nid, relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=src)},
                      metadata={"weight": w, "rank": r, "quality": q, "identifier": ident}) for nid, src, w, r, q, ident in rows]
    assert store.add(nodes) == [W1, W2, W3]
    return store


def _ids(store: LayeredMemoryVectorStore, filters: MetadataFilters | None = None, k: int = 3, **kw) -> list[str]:
    return store.query(VectorStoreQuery(query_str="lorem ipsum", similarity_top_k=k, filters=filters, **kw)).ids or []


def _f(*filters: MetadataFilter, condition: str = "and") -> MetadataFilters:
    return MetadataFilters(filters=list(filters), condition=condition)


def test_contract_query_top_k_node_ids_and_exact_filters(contract: LayeredMemoryVectorStore) -> None:
    assert sorted(_ids(contract)) == sorted([W1, W2, W3])
    rank_c = _f(ExactMatchFilter(key="rank", value="c"))
    assert sorted(_ids(contract, rank_c)) == [W2, W3]
    assert len(_ids(contract, rank_c, k=1)) == 1 and _ids(contract, rank_c, k=1)[0] in (W2, W3)
    assert _ids(contract, rank_c, node_ids=[W3]) == [W3]
    assert _ids(contract, _f(ExactMatchFilter(key="rank", value="c"), ExactMatchFilter(key="weight", value=2.0))) == [W2]
    assert _ids(contract, _f(ExactMatchFilter(key="weight", value=2), ExactMatchFilter(key="weight", value=3))) == []
    assert _ids(contract, _f(ExactMatchFilter(key="unknown_field", value="c"))) == []
    assert _ids(contract, _f(ExactMatchFilter(key="weight", value=2))) == [W2]  # 2 == 2.0, as in LlamaIndex


@pytest.mark.parametrize(("operator", "key", "value", "expected"), [
    (FilterOperator.EQ, "weight", 1.0, {W1}),
    (FilterOperator.NE, "weight", 1.0, {W2, W3}),
    (FilterOperator.GT, "weight", 1.5, {W2, W3}),
    (FilterOperator.GTE, "weight", 1.0, {W1, W2, W3}),
    (FilterOperator.LT, "weight", 1.1, {W1}),
    (FilterOperator.LTE, "weight", 1.0, {W1}),
    (FilterOperator.IN, "rank", ["a", "c"], {W1, W2, W3}),
    (FilterOperator.NIN, "rank", ["c"], {W1}),
    (FilterOperator.CONTAINS, "quality", "high", {W1, W3}),
    (FilterOperator.TEXT_MATCH, "identifier", "6FTR78Y", {W1, W2}),
    (FilterOperator.TEXT_MATCH_INSENSITIVE, "identifier", "6ftr78y", {W1, W2}),
    (FilterOperator.ANY, "quality", ["high", "low"], {W1, W3}),
    (FilterOperator.ALL, "quality", ["medium", "high"], {W1, W3}),
    (FilterOperator.IS_EMPTY, "not_existed_key", None, {W1, W2, W3}),
])
def test_contract_every_filter_operator(contract: LayeredMemoryVectorStore, operator, key, value, expected) -> None:
    assert set(_ids(contract, _f(MetadataFilter(key=key, value=value, operator=operator)))) == expected


def test_contract_filter_conditions(contract: LayeredMemoryVectorStore) -> None:
    pair = (ExactMatchFilter(key="rank", value="c"), ExactMatchFilter(key="weight", value=1.0))
    assert len(_ids(contract, _f(*pair, condition="or"))) == 3
    assert _ids(contract, _f(*pair, condition="and")) == []
    assert sorted(_ids(contract, _f(MetadataFilter(key="rank", value="a"), condition="not"))) == [W2, W3]
    with pytest.raises(ValueError, match="nested"):
        _ids(contract, MetadataFilters(filters=[_f(ExactMatchFilter(key="rank", value="c"))]))


def test_contract_delete_delete_nodes_get_nodes_clear(contract: LayeredMemoryVectorStore) -> None:
    contract.delete("src-2")
    assert sorted(_ids(contract)) == [W1, W3]
    contract.delete_nodes([W1, W3], filters=_f(ExactMatchFilter(key="rank", value="a")))  # both must match
    assert _ids(contract) == [W3]
    assert [n.node_id for n in contract.get_nodes()] == [W3]
    assert contract.get_nodes(filters=_f(ExactMatchFilter(key="rank", value="a"))) == []
    node = contract.get_nodes([W3])[0]
    assert node.get_content() == "lorem ipsum" and node.metadata["weight"] == 3.0 and node.ref_doc_id == "src-3"
    with pytest.raises(ValueError, match="clear"):
        contract.delete_nodes()
    contract.add([TextNode(text="dolor sit", id_="extra", metadata={"rank": "z"})])
    contract.delete_nodes(filters=_f(MetadataFilter(key="rank", value="z")))
    assert [n.node_id for n in contract.get_nodes()] == [W3]
    contract.clear()
    assert _ids(contract) == [] and contract.get_nodes() == []


def test_contract_through_vector_store_index(mem: LayeredMemory) -> None:
    from llama_index.core.vector_stores.types import VectorStoreQueryMode

    store = LayeredMemoryVectorStore(mem, collection="idx")
    index = VectorStoreIndex.from_vector_store(store, embed_model=EMBED)
    index.insert(Document(text="The VPN needs the hardware token.", doc_id="it", metadata={"year": 2024}))
    index.insert(Document(text="Lunch is served at noon in the atrium.", doc_id="fm", metadata={"year": 2023}))
    recent = index.as_retriever(similarity_top_k=5, filters=_f(MetadataFilter(key="year", value=2023, operator=FilterOperator.GT)))
    assert [n.node.ref_doc_id for n in recent.retrieve("token")] == ["it"]
    assert [n.node.ref_doc_id for n in index.as_retriever(similarity_top_k=5, doc_ids=["fm"]).retrieve("lunch")] == ["fm"]
    sparse = store.query(VectorStoreQuery(query_str="hardware token", similarity_top_k=1, mode=VectorStoreQueryMode.SPARSE))
    assert sparse.nodes[0].ref_doc_id == "it"
    with pytest.raises(ValueError, match="mmr"):
        store.query(VectorStoreQuery(query_str="x", mode=VectorStoreQueryMode.MMR))
    index.delete_ref_doc("it")
    assert [n.node.ref_doc_id for n in index.as_retriever(similarity_top_k=5).retrieve("token")] == ["fm"]
