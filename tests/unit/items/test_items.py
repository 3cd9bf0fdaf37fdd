"""Engine items (``mem.items``): the RecordStore is the source of truth, the index is derived."""

from __future__ import annotations

import pytest

from layered_memory import InvalidInputError, LayeredMemory
from layered_memory.index.points import point_id
from layered_memory.items import Items, doc_key, index_text, ns_key


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path, embedder="none")
    yield m
    m.close()


def test_keys_encode_labels_so_prefixes_never_collide():
    assert ns_key(("a", "b")) == "a.b." and ns_key(()) == ""
    assert doc_key(("a.b",), "k") != doc_key(("a", "b"), "k")
    assert not doc_key(("ab",), "k").startswith(ns_key(("a",)))
    assert doc_key(("x|y",), "k|z").count("|") == 1


def test_index_text_paths():
    value = {"title": "T", "n": 3, "flag": True, "sections": [{"text": "s1"}, {"text": "s2"}], "meta": {"a": {"b": "deep"}}}
    assert index_text(value, None) == "T\n3\ns1\ns2\ndeep"
    assert index_text(value, ["sections[*].text", "meta.a.b"]) == "s1\ns2\ndeep"
    assert index_text(value, ["missing"]) == ""


def test_items_survive_reopen_and_reindex(tmp_path):
    mem = LayeredMemory.embedded(tmp_path, embedder="none")
    mem.items.put(("notes",), "n1", {"text": "the invoice is due friday"})
    mem.close()
    mem = LayeredMemory.embedded(tmp_path, embedder="none")
    try:
        assert mem.items.get(("notes",), "n1").value == {"text": "the invoice is due friday"}
        assert [i.key for i in mem.items.search(("notes",), query="invoice")] == ["n1"]
        mem.index.delete(mem.items.collection, ids=[point_id(mem.tenant_id, "item", doc_key(("notes",), "n1"))])
        assert mem.items.search(("notes",), query="invoice") == []  # the index lost the point
        assert mem.items.reindex() == 1  # rebuilt from the RecordStore
        assert [i.key for i in mem.items.search(("notes",), query="invoice")] == ["n1"]
    finally:
        mem.close()


def test_items_stay_out_of_message_search(mem):
    mem.items.put(("notes",), "n1", {"text": "zeppelin maintenance schedule"})
    mem.add_message(message_id="m1", chat_id="c", user_id="u", content="hello there")
    assert mem.search("zeppelin maintenance").hits == []
    assert mem.get_context_for_user("u", "c")[-1].content == "hello there"


def test_without_a_vector_index_search_runs_bm25_over_the_documents(tmp_path):
    from layered_memory.stores.sqlite import SQLiteRecordStore

    mem = LayeredMemory.from_stores(SQLiteRecordStore(str(tmp_path / "r.sqlite3")), None, embedder="none")
    try:
        items = mem.items
        items.put(("kb",), "a", {"text": "reset the router by holding the button"})
        items.put(("kb",), "b", {"text": "the printer needs toner"})
        items.put(("kb",), "c", {"text": "router firmware update"}, index=False)
        got = items.search(("kb",), query="router button")
        assert [i.key for i in got] == ["a"] and got[0].score > 0
        assert [i.key for i in items.search(("kb",), query="printer", filter={"text": {"$ne": "x"}})] == ["b"]
    finally:
        mem.close()


def test_rules_are_checked_before_writing(mem):
    items = mem.items
    for bad in [("ns", "k", "not a dict"), ((), "k", {}), (("",), "k", {}), ("ns", "k", {})]:
        with pytest.raises(InvalidInputError):
            items.put(*bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="JSON"):
        items.put(("ns",), "k", {"x": object()})
    with pytest.raises(InvalidInputError, match="limit"):
        items.search(("ns",), limit=0)
    with pytest.raises(InvalidInputError, match="index"):
        items.put(("ns",), "k", {}, index="text")  # type: ignore[arg-type]
    assert items.list_namespaces() == [] and items.get(("ns",), "k") is None


async def test_async_twins(mem):
    items: Items = mem.items
    await items.aput(("a",), "k", {"text": "async"})
    assert (await items.aget(("a",), "k")).value == {"text": "async"}
    assert [i.key for i in await items.asearch(("a",), query="async")] == ["k"]
    assert await items.alist_namespaces() == [("a",)]
    assert await items.adelete(("a",), "k") is True
