"""The LangChain and LlamaIndex adapters give the model the same tools: for the same call, both
return the same text (and ``search`` the same JSON, the LangChain artifact being LlamaIndex's raw
output), sync and async, over good input, bad input, an empty memory and no memory at all.

Both wrap ``layered_memory.tools``; this pins that neither adds, drops or rewrites anything, and
that no bad value the model may send raises into the agent loop (LangChain validates the args
schema before the tool runs)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from test_llamaindex_support import HashEmbedding, seed

from langchain_layered_memory import QdrantSearchMemoryTool, create_memory_tools
from langchain_layered_memory.tools import ListTasksTool, MemorySearchTool, TopicSearchTool
from layered_memory import LayeredMemory
from layered_memory import tools as shared
from llamaindex_layered_memory import LayeredMemoryToolSpec

CALLS: dict[str, list[dict[str, Any]]] = {
    "qdrant_search_memory": [
        {"query_text": "docker socket permission"},
        {"query_text": "kazan", "limit": 3, "filters": {"role": "user"}},
        {"query_text": "docker", "filters": {"session_key": "tg:3", "timestamp_from": "2024-04-01T00:00:00Z",
                                             "timestamp_to": "2024-12-31T23:59:59Z"}},
        {"query_text": "kazan", "filters": '{"role": "assistant"}'},
        {"query_text": "nothing like this zzqx", "filters": {"session_key": "none"}},
        {"query_text": "docker", "limit": 0},
        {"query_text": "docker", "limit": -3},
        {"query_text": "docker", "limit": 25},
        {"query_text": "docker", "limit": "2"},
        {"query_text": "docker", "limit": "many"},
        {"query_text": "docker", "limit": 2.5},
        {"query_text": ""},
        {"query_text": "   "},
        {"query_text": None},
        {"query_text": 42},
        {},
        {"query_text": "docker", "filters": {"timestamp_from": "yesterday"}},
        {"query_text": "docker", "filters": {"role": "bot"}},
        {"query_text": "docker", "filters": {"user_id": "u2"}},
        {"query_text": "docker", "filters": [1]},
    ],
    "search": [
        {"queries": ["docker", "kazan"], "k": 3, "route": "bm25"},
        {"query": "kazan river flat"},
        {"queries": "docker socket", "filters": {"role": "user"}, "route": "dense"},
        {"queries": '["docker", "pelmeni"]', "k": "4", "route": "hybrid", "filters": {"session_key": "tg:3"}},
        {"queries": "docker", "filters": {"timestamp_from": "2024-03-02T00:00:00Z", "timestamp_to": "2024-04-30T00:00:00Z"}},
        {"queries": "docker", "route": "fuzzy"},
        {"queries": "docker", "route": 7},
        {"queries": "docker", "k": 0},
        {"queries": "docker", "k": 500},
        {"queries": "docker", "k": "x"},
        {"queries": "   "},
        {},
        {"queries": "docker", "filters": {"timestamp_from": "yesterday"}},
        {"queries": "docker", "filters": "role=user"},
        {"queries": "lisbon pin", "filters": {"user_id": "u2"}},
    ],
    "topic_search": [
        {"query": "docker permission"},
        {"query": "kazan", "chat_id": "tg:1", "k": 2},
        {"query": ""},
        {"query": None},
        {},
        {"query": "docker", "k": 0},
        {"query": "docker", "k": "x"},
    ],
    "list_tasks": [{}, {"status": "open"}, {"status": "done"}, {"status": "all"}, {"status": "later"}, {"status": 5}],
}


def seed_all(mem: LayeredMemory) -> None:
    """The shared history, its topics and three tasks (two of u1's, one of u2's)."""
    seed(mem)
    mem.process()  # threads the messages into topics
    mem.flush()  # and the writer has indexed them whole: the tools compare the same index
    u1 = mem.for_user("u1")
    u1.create_task(None, "Renew the TLS certificate", task_id="t1", due="2024-02-01T00:00:00Z")
    u1.create_task(None, "Call the landlord", "about the river flat", task_id="t2")
    u1.complete_task(None, "t2")
    mem.for_user("u2").create_task(None, "Secret of u2", task_id="t3")


@pytest.fixture(scope="module")
def memories(tmp_path_factory) -> Iterator[dict[str, LayeredMemory]]:
    """A seeded memory and an empty one (same embedder), shared by the module."""
    out = {name: LayeredMemory.embedded(tmp_path_factory.mktemp(name), embedder=HashEmbedding()) for name in ("seeded", "empty")}
    seed_all(out["seeded"])
    yield out
    for m in out.values():
        m.close()


@pytest.fixture
def seeded(memories) -> LayeredMemory:
    return memories["seeded"]


def both(mem: LayeredMemory | None, user_id: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """``({name: LangChain tool}, {name: LlamaIndex tool})`` over the same handle, all four tools."""
    if mem is None:
        lc = [QdrantSearchMemoryTool(), MemorySearchTool(), TopicSearchTool(), ListTasksTool()]
    else:
        lc = create_memory_tools(mem, user_id=user_id, include={"list_tasks": True})
    li = LayeredMemoryToolSpec(mem, user_id).to_tool_list()
    return {t.name: t for t in lc}, {t.metadata.name: t for t in li}


def ties_unordered(name: str, content: str) -> Any:
    """What must be equal: for ``search`` the parsed JSON with hits of equal score as a set, for the
    seed 000 text the blocks as a set (hits with equal fused scores may swap between two calls)."""
    if name == "search":
        out = json.loads(content)
        out["hits"] = sorted(out["hits"], key=lambda h: (-h["score"], h["id"]))
        return out
    if name == "qdrant_search_memory" and content.startswith("Found "):
        head, _, rest = content.partition("\n\n")
        return head, sorted(re.sub(r"^### Message \d+\n", "", b) for b in rest.split("\n\n---\n\n"))
    return content


def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": "call_1", "name": name, "args": args}


CASES = [(name, args) for name, calls in CALLS.items() for args in calls]
IDS = [f"{name}-{json.dumps(args)}" for name, args in CASES]
MEMORIES = ["seeded-u1", "seeded-unbound", "empty-u1", "unconfigured"]


@pytest.fixture(params=MEMORIES)
def tools(request, memories) -> tuple[dict[str, Any], dict[str, Any]]:
    seeded, empty = memories["seeded"], memories["empty"]
    mem, user = {"seeded-u1": (seeded, "u1"), "seeded-unbound": (seeded, None), "empty-u1": (empty, "u1"),
                 "unconfigured": (None, None)}[request.param]
    return both(mem, user)


@pytest.mark.parametrize(("name", "args"), CASES, ids=IDS)
def test_same_output_sync(tools, name: str, args: dict[str, Any]) -> None:
    lc, li = tools
    message = lc[name].invoke(call(name, dict(args)))  # a ToolCall, as an agent sends it: never raises
    out = li[name].call(**args)
    assert message.status == "success"
    assert ties_unordered(name, message.content) == ties_unordered(name, out.content)
    if name == "search":
        assert ties_unordered(name, json.dumps(message.artifact)) == ties_unordered(name, json.dumps(out.raw_output))
    plain = lc[name].invoke(dict(args))  # a plain args dict: the content only
    assert ties_unordered(name, plain) == ties_unordered(name, out.content)


@pytest.mark.parametrize(("name", "args"), CASES, ids=IDS)
async def test_same_output_async(tools, name: str, args: dict[str, Any]) -> None:
    lc, li = tools
    message = await lc[name].ainvoke(call(name, dict(args)))
    out = await li[name].acall(**args)
    assert ties_unordered(name, message.content) == ties_unordered(name, out.content)


def test_errors_and_edges_are_the_shared_texts(seeded) -> None:
    """A few outputs spelled out, so parity cannot hold by both adapters being wrong the same way."""
    lc, li = both(seeded, "u1")
    q = lc["qdrant_search_memory"]
    assert q.invoke({"query_text": "docker", "limit": 0}).startswith("Error searching memory: limit=0: must be from 1 to 20")
    assert q.invoke({"query_text": "docker", "limit": 25}).startswith("Found 5 relevant message(s):")  # capped at 20; u1 has 5
    assert q.invoke({}) == q.invoke({"query_text": " "}) == shared.QUERY_TEXT_REQUIRED
    assert q.invoke({"query_text": "docker", "filters": {"timestamp_from": "yesterday"}}).startswith(
        "Error searching memory: filters.timestamp_from='yesterday'")
    assert q.invoke({"query_text": "nothing like this zzqx", "filters": {"session_key": "none"}}) == shared.NO_RELEVANT_MESSAGES
    fuzzy = json.loads(lc["search"].invoke({"queries": "docker", "route": "fuzzy"}))
    assert fuzzy["hits"] == [] and fuzzy["error"].startswith("Error searching memory: route='fuzzy'")
    tasks = lc["list_tasks"].invoke({})
    assert tasks == li["list_tasks"].call().content == (
        "Found 2 task(s):\n1. [open] Renew the TLS certificate (id: t1, due: 2024-02-01T00:00:00Z)\n"
        "2. [done] Call the landlord (id: t2)\n   about the river flat"
    )
    assert lc["topic_search"].invoke({"query": ""}).startswith(shared.TOPIC_SEARCH_ERROR_PREFIX + "query='': is required")
    lc_none, _ = both(None, None)
    assert lc_none["qdrant_search_memory"].invoke({"query_text": "x"}) == shared.QDRANT_NOT_CONFIGURED
    assert json.loads(lc_none["search"].invoke({"queries": "x"}))["error"] == shared.QDRANT_NOT_CONFIGURED


def test_same_names_descriptions_and_schemas(seeded) -> None:
    lc, li = both(seeded, "u1")
    assert list(lc) == list(li) == list(shared.TOOL_NAMES)
    for name in shared.TOOL_NAMES:
        assert lc[name].description == li[name].metadata.description
        assert lc[name].args_schema is li[name].metadata.fn_schema
        lc_params = lc[name].tool_call_schema.model_json_schema()
        li_params = li[name].metadata.get_parameters_dict()
        assert lc_params["properties"] == li_params["properties"]
        assert lc_params.get("required", []) == li_params.get("required", [])
    assert lc["qdrant_search_memory"].tool_call_schema.model_json_schema()["required"] == ["query_text"]


def test_artifacts_carry_the_data(seeded) -> None:
    lc, _ = both(seeded, "u1")
    topics = lc["topic_search"].invoke(call("topic_search", {"query": "docker permission"}))
    assert topics.content == shared.topic_search_tool(seeded.for_user("u1"), "docker permission")
    assert topics.artifact["total_found"] >= 1
    tasks = lc["list_tasks"].invoke(call("list_tasks", {"status": "open"}))
    assert [t["task_id"] for t in tasks.artifact] == ["t1"]
    bad = lc["list_tasks"].invoke(call("list_tasks", {"status": "later"}))
    assert bad.content.startswith(shared.LIST_TASKS_ERROR_PREFIX) and bad.artifact == []
