"""LangGraph BaseStore contract for LayeredMemoryStore (no standard suite exists): get/put/delete,
search by prefix / query / filter operators / paging, list_namespaces, namespace and tenant isolation,
async twins, batch order, and an agent tool writing through ``runtime.store``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.store.base import GetOp, Item, ListNamespacesOp, MatchCondition, PutOp, SearchItem, SearchOp

from langchain_layered_memory import LayeredMemoryStore
from layered_memory import LayeredMemory


def dense_memory(path) -> LayeredMemory:  # noqa: ANN001
    from layered_memory.providers.local import USEEmbedder

    return LayeredMemory.embedded(path, embedder=USEEmbedder())


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path, embedder="none")
    yield m
    m.close()


@pytest.fixture
def store(mem):
    return LayeredMemoryStore(mem)


def test_get_put_update_delete(store):
    assert store.get(("users", "u1"), "k") is None
    store.put(("users", "u1"), "k", {"text": "likes tea", "n": 1})
    item = store.get(("users", "u1"), "k")
    assert isinstance(item, Item)
    assert item.namespace == ("users", "u1") and item.key == "k" and item.value == {"text": "likes tea", "n": 1}
    assert item.created_at == item.updated_at
    store.put(("users", "u1"), "k", {"text": "likes coffee", "n": 2})
    again = store.get(("users", "u1"), "k")
    assert again.value["text"] == "likes coffee" and again.created_at == item.created_at and again.updated_at > item.updated_at
    store.delete(("users", "u1"), "k")
    assert store.get(("users", "u1"), "k") is None
    store.delete(("users", "u1"), "k")  # deleting twice is fine


def test_namespace_isolation(store):
    store.put(("a",), "k", {"v": "a"})
    store.put(("ab",), "k", {"v": "ab"})
    store.put(("a", "b"), "k", {"v": "a/b"})
    store.put(("a", "b", "c"), "k", {"v": "a/b/c"})
    assert store.get(("a",), "k").value == {"v": "a"}
    assert store.get(("a", "b"), "k").value == {"v": "a/b"}
    assert {i.value["v"] for i in store.search(("a",))} == {"a", "a/b", "a/b/c"}
    assert {i.value["v"] for i in store.search(("a", "b"))} == {"a/b", "a/b/c"}
    assert {i.value["v"] for i in store.search(("ab",))} == {"ab"}
    assert len(store.search(())) == 4
    # labels the separator could confuse
    store.put(("x|y", "z%2E"), "key.with|chars", {"v": 1})
    assert store.get(("x|y", "z%2E"), "key.with|chars").value == {"v": 1}
    assert store.search(("x",)) == []


def test_tenants_do_not_share_items(mem):
    acme, other = LayeredMemoryStore(mem.tenant("acme")), LayeredMemoryStore(mem.tenant("other"))
    acme.put(("m",), "k", {"text": "acme secret plan"})
    assert other.get(("m",), "k") is None
    assert other.search(("m",), query="secret plan") == [] and other.list_namespaces() == []
    assert acme.search(("m",), query="secret plan")[0].key == "k"


def test_filters_all_operators(store):
    for i in range(6):
        store.put(("docs",), f"d{i}", {"text": f"note {i} about gardening", "n": i, "tag": "even" if i % 2 == 0 else "odd",
                                       "flag": i < 3, "nested": {"level": i % 3}})
    def keys(**kw: Any) -> list[str]:
        return sorted(i.key for i in store.search(("docs",), **kw))
    assert keys(filter={"tag": "even"}) == ["d0", "d2", "d4"]
    assert keys(filter={"tag": {"$eq": "odd"}}) == ["d1", "d3", "d5"]
    assert keys(filter={"tag": {"$ne": "odd"}}) == ["d0", "d2", "d4"]
    assert keys(filter={"n": {"$gt": 3}}) == ["d4", "d5"]
    assert keys(filter={"n": {"$gte": 3}}) == ["d3", "d4", "d5"]
    assert keys(filter={"n": {"$lt": 2}}) == ["d0", "d1"]
    assert keys(filter={"n": {"$lte": 2, "$gt": 0}}) == ["d1", "d2"]
    assert keys(filter={"flag": True, "tag": "odd"}) == ["d1"]
    assert keys(filter={"nested": {"level": 0}}) == ["d0", "d3"]
    # the same filters with a query (pushed into the index where possible, checked on the documents)
    assert keys(query="gardening", filter={"n": {"$gte": 3}, "tag": {"$ne": "odd"}}) == ["d4"]
    assert keys(query="gardening", filter={"flag": False}) == ["d3", "d4", "d5"]
    with pytest.raises(ValueError, match=r"\$regex.*not a supported operator"):
        store.search(("docs",), filter={"text": {"$regex": "x"}})


def test_limit_offset_and_key_order(store):
    for i in range(7):
        store.put(("p",), f"k{i}", {"text": " ".join(["page"] * (i + 1) + ["filler"] * (7 - i))})  # distinct scores
    assert [i.key for i in store.search(("p",), limit=3)] == ["k0", "k1", "k2"]
    assert [i.key for i in store.search(("p",), limit=3, offset=5)] == ["k5", "k6"]
    ranked = store.search(("p",), query="page", limit=10)
    assert len(ranked) == 7 and all(isinstance(i, SearchItem) and i.score is not None for i in ranked)
    assert [i.key for i in store.search(("p",), query="page", limit=2, offset=2)] == [i.key for i in ranked[2:4]]


def test_index_false_and_index_fields(store):
    store.put(("m",), "hidden", {"text": "quantum physics lecture"}, index=False)
    store.put(("m",), "title_only", {"title": "cooking pasta", "body": "quantum entanglement"}, index=["title"])
    store.put(("m",), "all", {"text": "a quantum computer"})
    assert [i.key for i in store.search(("m",), query="quantum")] == ["all"]
    assert [i.key for i in store.search(("m",), query="pasta")] == ["title_only"]
    assert {i.key for i in store.search(("m",))} == {"hidden", "title_only", "all"}  # listed, just not indexed
    store.put(("m",), "hidden", {"text": "quantum physics lecture"})  # re-put with indexing
    assert "hidden" in {i.key for i in store.search(("m",), query="quantum")}


def test_index_config_fields(mem):
    store = LayeredMemoryStore(mem, index={"dims": 1, "embed": None, "fields": ["sections[*].text"]})
    store.put(("s",), "k", {"title": "zebra", "sections": [{"text": "giraffe"}, {"text": "okapi"}]})
    assert [i.key for i in store.search(("s",), query="okapi")] == ["k"]
    assert store.search(("s",), query="zebra") == []
    with pytest.raises(ValueError, match="list of JSON paths"):
        LayeredMemoryStore(mem, index={"fields": "text"})


def test_list_namespaces(store):
    for ns in [("users", "u1", "prefs"), ("users", "u2", "prefs"), ("users", "u2", "facts"), ("docs", "public"), ("docs",)]:
        store.put(ns, "k", {"v": 1})
    assert store.list_namespaces() == [("docs",), ("docs", "public"), ("users", "u1", "prefs"), ("users", "u2", "facts"), ("users", "u2", "prefs")]
    assert store.list_namespaces(prefix=("users",)) == [("users", "u1", "prefs"), ("users", "u2", "facts"), ("users", "u2", "prefs")]
    assert store.list_namespaces(suffix=("prefs",)) == [("users", "u1", "prefs"), ("users", "u2", "prefs")]
    assert store.list_namespaces(prefix=("users", "*", "facts")) == [("users", "u2", "facts")]
    assert store.list_namespaces(max_depth=2) == [("docs",), ("docs", "public"), ("users", "u1"), ("users", "u2")]
    assert store.list_namespaces(limit=2, offset=1) == [("docs", "public"), ("users", "u1", "prefs")]
    store.delete(("docs",), "k")
    assert ("docs",) not in store.list_namespaces()


def test_batch_runs_ops_in_order(store):
    results = store.batch([
        PutOp(("b",), "k1", {"text": "first"}),
        GetOp(("b",), "k1"),
        SearchOp(("b",), query="first"),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("b",)),)),
        PutOp(("b",), "k1", None),
        GetOp(("b",), "k1"),
    ])
    assert results[0] is None and results[1].value == {"text": "first"}
    assert [i.key for i in results[2]] == ["k1"] and results[3] == [("b",)]
    assert results[4] is None and results[5] is None


async def test_async_twins(store):
    await store.aput(("as",), "k", {"text": "async value"})
    assert (await store.aget(("as",), "k")).value == {"text": "async value"}
    assert [i.key for i in await store.asearch(("as",), query="async")] == ["k"]
    assert await store.alist_namespaces() == [("as",)]
    await store.adelete(("as",), "k")
    assert await store.aget(("as",), "k") is None


def test_rules_name_the_fix(store):
    with pytest.raises(NotImplementedError):
        store.put(("t",), "k", {"v": 1}, ttl=5)
    with pytest.raises(ValueError, match="periods"):
        store.put(("a.b",), "k", {"v": 1})
    with pytest.raises(ValueError, match="must be a dict"):
        store.batch([PutOp(("t",), "k", ["not", "a", "dict"])])  # type: ignore[arg-type]


def test_dense_query_finds_paraphrases(tmp_path):
    mem = dense_memory(tmp_path)
    try:
        store = LayeredMemoryStore(mem)
        store.put(("memories", "u1"), "drink", {"text": "The user enjoys green tea every morning"})
        store.put(("memories", "u1"), "city", {"text": "The user lives in Kazan"})
        store.put(("memories", "u2"), "drink", {"text": "Prefers espresso"})
        top = store.search(("memories", "u1"), query="what beverage does the person like?", limit=1)
        assert [i.key for i in top] == ["drink"] and top[0].namespace == ("memories", "u1")
    finally:
        mem.close()


def test_agent_tool_writes_through_runtime_store(mem):
    @tool
    def remember(fact: str, runtime: ToolRuntime) -> str:
        """Remember a fact about the user."""
        runtime.store.put(("memories", "u1"), "fact-1", {"text": fact})
        return "saved"

    class Fake(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Fake:  # noqa: ARG002
            return self

    store = LayeredMemoryStore(mem)
    model = Fake(responses=[
        AIMessage("", tool_calls=[{"name": "remember", "args": {"fact": "allergic to peanuts"}, "id": "c1"}]),
        AIMessage("Noted."),
    ])
    agent = create_agent(model, tools=[remember], store=store)
    agent.invoke({"messages": [HumanMessage("I am allergic to peanuts")]})
    assert store.search(("memories",), query="peanuts")[0].value == {"text": "allergic to peanuts"}


# -- issue 13: filters are exact, as in InMemoryStore -------------------------------------------------
def _both(mem):  # noqa: ANN001
    from langgraph.store.memory import InMemoryStore

    return LayeredMemoryStore(mem), InMemoryStore()


@pytest.mark.parametrize("flt", [{"active": True}, {"tags": ["a", "b"]}, {"meta": {"lang": "en"}}, {"active": {"$eq": True}}])
def test_filtered_query_search_fills_the_limit_with_unpushable_filters(mem, flt):
    ours, ref = _both(mem)
    for i in range(100):
        value = {"text": f"apple note {i}", "active": i % 10 == 0, "tags": ["a", "b"] if i % 10 == 0 else ["c"],
                 "meta": {"lang": "en" if i % 10 == 0 else "fr"}}
        for s in (ours, ref):
            s.put(("docs",), f"k{i}", value)
    got = ours.search(("docs",), query="apple", filter=flt, limit=10)
    want = ref.search(("docs",), query="apple", filter=flt, limit=10)
    assert len(got) == len(want) == 10
    assert {i.key for i in got} == {i.key for i in want}  # every matching item (the ten of them)
    assert len(ours.search(("docs",), query="apple", filter=flt, limit=5, offset=7)) == 3


@pytest.mark.parametrize("stored,asked", [(4.0, 4.0), (4.0, 4), (4, 4.0), (4, 4)])
def test_whole_number_float_matches_in_query_search(mem, stored, asked):
    ours, ref = _both(mem)
    for s in (ours, ref):
        s.put(("docs",), "pie", {"text": "apple pie", "n": stored})
        s.put(("docs",), "tart", {"text": "apple tart", "n": 5})
    for query in (None, "apple"):
        got = [i.key for i in ours.search(("docs",), query=query, filter={"n": asked})]
        want = [i.key for i in ref.search(("docs",), query=query, filter={"n": asked})]
        assert got == want == ["pie"], query
        got_ne = [i.key for i in ours.search(("docs",), query=query, filter={"n": {"$ne": asked}})]
        assert got_ne == ["tart"], query


def test_query_paging_is_stable_and_disjoint(store):
    for i in range(30):
        store.put(("docs",), f"k{i:02d}", {"text": f"apple banana {'apple ' * (i % 5)}note {i}"})
    pages = [store.search(("docs",), query="apple", limit=7, offset=o) for o in range(0, 35, 7)]
    keys = [i.key for page in pages for i in page]
    assert len(keys) == len(set(keys)) == 30  # every item once, across pages
    whole = [i.key for i in store.search(("docs",), query="apple", limit=30)]
    assert keys == whole
    scores = [i.score for page in pages for i in page]
    assert scores == sorted(scores, reverse=True)


async def test_concurrent_large_batches(store):
    import threading

    def writer(w: int) -> None:
        store.batch([PutOp(("team", f"w{w}"), f"k{i}", {"text": f"note {i} of writer {w}"}) for i in range(150)])

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    await asyncio.gather(*[store.abatch([PutOp(("team", f"a{w}"), f"k{i}", {"text": f"async {i}"}) for i in range(150)]) for w in range(4)])
    for t in threads:
        t.join()
    namespaces = store.list_namespaces(prefix=("team",))
    assert sorted(namespaces) == sorted([("team", f"w{w}") for w in range(4)] + [("team", f"a{w}") for w in range(4)])
    for ns in namespaces:
        assert len(store.search(ns, limit=1000)) == 150
    got = store.batch([GetOp(("team", "w3"), "k149"), GetOp(("team", "a0"), "k0")])
    assert got[0].value == {"text": "note 149 of writer 3"} and got[1].value == {"text": "async 0"}
