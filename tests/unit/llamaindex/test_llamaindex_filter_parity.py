"""LlamaIndex ``LayeredMemoryVectorStore`` filters beside LlamaIndex's own ``SimpleVectorStore`` on the same
nodes (issue 24, "Vector stores"): every operator keeps the same nodes in ``query`` (in-index or over the
records), ``get_nodes(filters=)`` and ``delete_nodes(filters=)``, list-valued metadata included, and a
user's store keeps the tenant's matching nodes whichever path an operator takes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters, VectorStoreQuery

from layered_memory import LayeredMemory
from layered_memory.testing import HashEmbedder
from llamaindex_layered_memory import LayeredMemoryVectorStore

ROWS = {  # node id -> metadata: list values, scalars of the same key, numbers
    "list-ab": {"tags": ["a", "b"], "n": 1, "team": "ops"},
    "list-a": {"tags": ["a"], "n": 2, "team": "hr"},
    "str-a": {"tags": "a", "n": 1, "team": "ops"},
    "str-c": {"tags": "c", "n": 3.0, "team": "hr"},
    "none": {"n": 2, "team": "ops"},
}
USER_ROWS = {"u-list": {"tags": ["a", "c"], "n": 1, "team": "ops"}, "u-str": {"tags": "a", "n": 2, "team": "hr"}}

F = FilterOperator
FILTERS = [
    [MetadataFilter(key="tags", value="a", operator=F.EQ)],
    [MetadataFilter(key="tags", value=["a"], operator=F.IN)],
    [MetadataFilter(key="tags", value=["a", "c"], operator=F.IN)],
    [MetadataFilter(key="tags", value="a", operator=F.NE)],
    [MetadataFilter(key="tags", value=["a"], operator=F.NIN)],
    [MetadataFilter(key="tags", value="a", operator=F.CONTAINS)],
    [MetadataFilter(key="tags", value=["a", "c"], operator=F.ANY)],
    [MetadataFilter(key="tags", value=["a", "b"], operator=F.ALL)],
    [MetadataFilter(key="n", value=1, operator=F.EQ)],
    [MetadataFilter(key="n", value=2, operator=F.NE)],
    [MetadataFilter(key="n", value=1, operator=F.GT)],
    [MetadataFilter(key="team", value="ops", operator=F.EQ), MetadataFilter(key="tags", value="a", operator=F.EQ)],
    [MetadataFilter(key="team", value=["hr"], operator=F.IN)],
]
NAMES = ["eq-str", "in-one", "in-two", "ne", "nin", "contains", "any", "all", "eq-int", "ne-int", "gt", "eq-and-eq", "in-scalar"]


def _nodes(rows: dict[str, dict]) -> list[TextNode]:
    return [TextNode(text="lorem ipsum", id_=nid, metadata=dict(meta), embedding=[1.0, 0.0]) for nid, meta in rows.items()]


def _reference(rows: dict[str, dict], filters: MetadataFilters) -> set[str]:
    """What LlamaIndex's SimpleVectorStore keeps."""
    ref = SimpleVectorStore()
    ref.add(_nodes(rows))
    return set(ref.query(VectorStoreQuery(query_embedding=[1.0, 0.0], similarity_top_k=50, filters=filters)).ids or [])


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[LayeredMemory]:
    m = LayeredMemory.embedded(tmp_path / "m", embedder=HashEmbedder())
    yield m
    m.close()


def _store(mem: LayeredMemory, collection: str, rows: dict[str, dict], **kw) -> LayeredMemoryVectorStore:
    store = LayeredMemoryVectorStore(mem, collection=collection, **kw)
    store.add(_nodes(rows))
    return store


def _query(store: LayeredMemoryVectorStore, filters: MetadataFilters) -> set[str]:
    return set(store.query(VectorStoreQuery(query_str="lorem ipsum", similarity_top_k=50, filters=filters)).ids or [])


@pytest.mark.parametrize("filters", FILTERS, ids=NAMES)
def test_every_path_keeps_what_simple_vector_store_keeps(mem: LayeredMemory, filters: list[MetadataFilter]) -> None:
    mf = MetadataFilters(filters=filters)
    want = _reference(ROWS, mf)
    store = _store(mem, "p", ROWS)
    assert _query(store, mf) == want
    assert {n.node_id for n in store.get_nodes(filters=mf)} == want
    assert {n.node_id for n in store.get_nodes(list(ROWS), filters=mf)} == want
    store.delete_nodes(filters=mf)
    assert {n.node_id for n in store.get_nodes()} == set(ROWS) - want


def test_list_values_under_eq_and_in_are_left_out_like_simple_vector_store(mem: LayeredMemory) -> None:
    """The issue's case: ``{"tags": ["a", "b"]}`` and ``tags == "a"``: SimpleVectorStore does not match it."""
    mf = MetadataFilters(filters=[MetadataFilter(key="tags", value="a")])
    assert _reference(ROWS, mf) == {"str-a"}
    store = _store(mem, "issue", ROWS)
    assert _query(store, mf) == {"str-a"}
    contains = MetadataFilters(filters=[MetadataFilter(key="tags", value="a", operator=F.CONTAINS)])  # the operator for lists
    assert _query(store, contains) == _reference(ROWS, contains) == {"list-ab", "list-a", "str-a"}  # "a" in "a" too


@pytest.mark.parametrize("filters", FILTERS, ids=NAMES)
def test_a_users_store_keeps_the_tenants_nodes_whatever_the_operator(mem: LayeredMemory, filters: list[MetadataFilter]) -> None:
    mf = MetadataFilters(filters=filters)
    tenant = _store(mem, "scope", ROWS)
    alice = _store(mem, "scope", USER_ROWS, user_id="alice")
    _store(mem, "scope", {"b-" + k: v for k, v in USER_ROWS.items()}, user_id="bob")
    assert _query(alice, mf) == _reference({**ROWS, **USER_ROWS}, mf)  # the tenant's and alice's, never bob's
    assert _query(tenant, mf) == _reference(ROWS, mf)  # never a user's
    assert {n.node_id for n in alice.get_nodes(filters=mf)} == _reference(USER_ROWS, mf)  # reads: her own space


def test_similarity_top_k_limit_names_similarity_top_k(mem: LayeredMemory) -> None:
    store = _store(mem, "k", ROWS)
    with pytest.raises(ValueError, match=r"similarity_top_k=101: must be an integer from 1 to 100.*similarity_top_k="):
        store.query(VectorStoreQuery(query_str="lorem", similarity_top_k=101))
    with pytest.raises(ValueError, match=r"similarity_top_k=0"):
        store.query(VectorStoreQuery(query_str="lorem", similarity_top_k=0, filters=MetadataFilters(filters=FILTERS[3])))
