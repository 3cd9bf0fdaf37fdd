"""``layered-memory mcp`` through the SDK's own client: in process, over stdio (the real command in a
subprocess) and over streamable HTTP with bearer keys.

The bars: the tool list is the seed tools with the adapters' schemas; every call returns what the
Python call returns for the same scope; a bad call is a tool error (the seed's texts), never a dead server.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp", reason='the MCP SDK is in the serve extra: pip install -e ".[serve]"')

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from layered_memory import LayeredMemory  # noqa: E402
from layered_memory import tools as shared  # noqa: E402
from layered_memory.documents import tools as doc_tools  # noqa: E402
from layered_memory.serve import mcp_tools  # noqa: E402
from layered_memory.serve.keys import KeyRing  # noqa: E402
from layered_memory.serve.mcp_server import build_server, fixed_binding, http_app  # noqa: E402
from serve_support import ANNA, BORIS, BORIS_MARK, OTHER, OTHER_MARK, TENANT, open_store, rows, running, seed  # noqa: E402

SEED_TOOLS = ["qdrant_search_memory", "search", "quick_search", "topic_search", "get_context", "add_message",
              "list_tasks", "create_task", "update_task", "complete_task"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    mem = open_store(str(tmp_path_factory.mktemp("mcp")))
    seed(mem)
    yield mem
    mem.close()


def anna(mem: LayeredMemory) -> LayeredMemory:
    return mem.tenant(TENANT).for_user(ANNA)


def session(server: Any, calls: list[tuple[str, dict[str, Any]]]) -> tuple[Any, list[Any]]:
    """List the tools and make the calls in one client session; returns (tools, results)."""

    async def run() -> tuple[Any, list[Any]]:
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            return tools, [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(run)


def test_the_tools_are_the_seed_tools_with_the_adapters_schemas(store: LayeredMemory) -> None:
    from langchain_layered_memory import create_memory_tools

    tools, _ = session(build_server(fixed_binding(anna(store))), [])
    assert [t.name for t in tools] == SEED_TOOLS
    by_name = {t.name: t for t in tools}
    for lc in create_memory_tools(store.tenant(TENANT), user_id=ANNA):  # the LangChain tools' schemas, property by property
        schema = by_name[lc.name].input_schema
        assert by_name[lc.name].description == lc.description
        assert schema["properties"] == lc.args_schema.model_json_schema()["properties"], lc.name
        assert schema.get("required", []) == lc.args_schema.model_json_schema().get("required", [])
    assert by_name["qdrant_search_memory"].input_schema["required"] == ["query_text"]
    assert "user_id" not in by_name["get_context"].input_schema["properties"]  # bound: the user is the server's


def test_a_tenant_wide_server_asks_for_the_user_and_documents_add_their_tools(store: LayeredMemory) -> None:
    tools, _ = session(build_server(fixed_binding(store.tenant(TENANT)), documents=True), [])
    by_name = {t.name: t for t in tools}
    assert [t.name for t in tools] == SEED_TOOLS + ["vector_rag", "search_repos"]
    for name in mcp_tools.USER_TOOLS:
        assert "user_id" in by_name[name].input_schema["required"], name
    assert by_name["vector_rag"].input_schema["properties"] == doc_tools.VectorRagArgs.model_json_schema()["properties"]


READS: list[tuple[str, dict[str, Any]]] = [
    ("qdrant_search_memory", {"query_text": "Lisbon hotel", "limit": 3}),
    ("qdrant_search_memory", {"query_text": "payments", "filters": {"session_key": "web:7", "role": "user"}}),
    ("search", {"query": "TAP flight", "k": 4}),
    ("search", {"queries": ["Alfama", "tram"], "route": "bm25"}),
    ("search", {"query": "pod logs", "route": "dense", "filters": {"role": "assistant"}}),
    ("quick_search", {"query": "Lisbon", "chat_id": "telegram:1"}),
    ("topic_search", {"query": "Kubernetes payments"}),
    ("get_context", {"session_id": "telegram:1", "query": "where is the hotel"}),
    ("get_context", {"session_id": "web:7", "max_tokens": 60}),
    ("list_tasks", {}),
    ("list_tasks", {"status": "done"}),
]


def python_answer(h: LayeredMemory, name: str, a: dict[str, Any]) -> tuple[str | None, Any]:
    """What the Python call returns for the same handle and arguments: (text or None, data or None)."""
    if name == "qdrant_search_memory":
        return shared.qdrant_search_memory(h, a["query_text"], a.get("limit", 5), a.get("filters")), None
    if name == "search":
        out = shared.search_tool(h, a.get("queries"), a.get("filters"), a.get("k", 10), a.get("route", "hybrid"), query=a.get("query"))
        return shared.search_json(out), out
    if name == "quick_search":
        return None, h.topics.quick_search(a["query"], chat_id=a.get("chat_id"), k=a.get("k", 5)).to_dict()
    if name == "topic_search":
        return shared.topic_search_output(h, a["query"], a.get("chat_id"), a.get("k", 5))
    if name == "get_context":
        msgs = h.get_context_for_user(None, a["session_id"], query=a.get("query"), max_tokens=a.get("max_tokens"))
        return mcp_tools.format_context(msgs), {"messages": [m.model_dump(mode="json") for m in msgs]}
    if name == "list_tasks":
        text, tasks = shared.list_tasks_output(h, None, a.get("status"))
        return text, {"tasks": tasks}
    raise AssertionError(name)


def wire(data: Any) -> Any:
    return json.loads(json.dumps(data, default=str))


def test_every_read_returns_what_the_python_call_returns(store: LayeredMemory) -> None:
    h = anna(store)
    _, results = session(build_server(fixed_binding(h)), READS)
    for (name, args), got in zip(READS, results):
        text, data = python_answer(h, name, args)
        assert not got.is_error, (name, got.content[0].text)
        if text is not None:
            assert got.content[0].text == text, name
        if data is not None:
            assert got.structured_content == wire(data), name
    assert "Found 3 relevant message(s)" in results[0].content[0].text
    assert all(BORIS_MARK not in r.content[0].text and OTHER_MARK not in r.content[0].text for r in results)


def test_writes_store_what_python_reads_back(tmp_path: Any) -> None:
    mem = open_store(str(tmp_path), chat_model=False)
    h = anna(mem)
    calls = [
        ("add_message", {"message_id": "m-1", "chat_id": "telegram:9", "content": "Dinner in Porto on Friday", "create_time": "2024-06-01T18:00:00Z"}),
        ("add_message", {"message_id": "m-1", "chat_id": "telegram:9", "content": "a retry with other text"}),  # idempotent
        ("create_task", {"title": "Reserve the table", "task_id": "t-dinner", "due": "2024-06-01T17:00:00Z"}),
        ("update_task", {"task_id": "t-dinner", "status": "in_progress"}),
        ("complete_task", {"task_id": "t-dinner"}),
    ]
    _, results = session(build_server(fixed_binding(h)), calls)
    assert not any(r.is_error for r in results), [r.content[0].text for r in results]
    stored = h.get_messages(["m-1"], chat_id="telegram:9")[0]
    assert results[0].structured_content == wire({k: v for k, v in stored.model_dump(mode="json").items()})
    assert results[1].structured_content == results[0].structured_content  # the stored copy, as add_message returns it
    assert stored.user_id == ANNA and stored.content == "Dinner in Porto on Friday"
    task = h.get_task(None, "t-dinner")
    assert task.status == "done" and results[4].structured_content == wire(task.model_dump(mode="json"))
    mem.close()


ERRORS: list[tuple[str, dict[str, Any], str]] = [
    ("qdrant_search_memory", {}, shared.QUERY_TEXT_REQUIRED),
    ("qdrant_search_memory", {"query_text": "   "}, shared.QUERY_TEXT_REQUIRED),
    ("qdrant_search_memory", {"query_text": "x", "limit": 0}, "Error searching memory: limit=0: must be from 1 to 20"),
    ("qdrant_search_memory", {"query_text": "x", "filters": {"user_id": BORIS}}, "Error searching memory: filters.user_id="),
    ("search", {"query": "x", "k": 0}, '"error": "Error searching memory: '),
    ("search", {"query": "x", "route": "sideways"}, '"error": "Error searching memory: route='),
    ("topic_search", {"query": ""}, "Error searching topics: query="),
    ("quick_search", {"query": "Lisbon", "k": "many"}, "Error searching memory: k='many': must be an integer"),
    ("get_context", {}, "Error getting context: session_id="),
    ("get_context", {"session_id": "telegram:1", "include_vector": "yes"}, "Error getting context: include_vector="),
    ("add_message", {"message_id": "x", "chat_id": "c", "content": "hi", "user_id": BORIS}, "Error storing message: user_id='boris'"),
    ("add_message", {"chat_id": "c", "content": "hi"}, "Error storing message: message_id="),
    ("create_task", {}, "Error creating task: title="),
    ("complete_task", {"task_id": "t-earplugs"}, "Error completing task: "),  # boris's task: not anna's
    ("list_tasks", {"status": "someday"}, "Error listing tasks: status="),
    ("search", {"query": "x", "user_id": BORIS}, "Error: search has no argument 'user_id'"),
    ("nope", {}, "Error: unknown tool 'nope'"),
]


def test_bad_calls_are_tool_errors_and_the_server_keeps_serving(store: LayeredMemory) -> None:
    calls = [(name, args) for name, args, _ in ERRORS] + [("qdrant_search_memory", {"query_text": "Lisbon"})]
    _, results = session(build_server(fixed_binding(anna(store))), calls)
    for (name, args, expected), got in zip(ERRORS, results):
        assert got.is_error, (name, args, got.content[0].text)
        assert expected in got.content[0].text, (name, args, got.content[0].text)
    assert not results[-1].is_error and "Lisbon" in results[-1].content[0].text
    assert all(BORIS_MARK not in r.content[0].text for r in results)


def test_a_failing_tool_is_an_error_result_not_a_crash(store: LayeredMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(h: Any, a: Any) -> Any:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(mcp_tools, "_quick_search", broken)
    _, results = session(build_server(fixed_binding(anna(store))), [("quick_search", {"query": "x"}), ("list_tasks", {})])
    assert results[0].is_error and results[0].content[0].text == "Error: quick_search failed: RuntimeError"
    assert not results[1].is_error and "Print the boarding passes" in results[1].content[0].text


def test_stdio_server_started_as_a_desktop_agent_would(tmp_path: Any) -> None:
    """The real command in a subprocess (BM25 only: no model files), then the same calls in Python."""
    path = str(tmp_path / "store")
    with LayeredMemory.embedded(path, embedder="none") as mem:
        mem.tenant(TENANT).for_user(ANNA).add_messages(rows(TENANT, ANNA, "telegram:1", [
            ("user", "We fly to Lisbon on May 3"), ("assistant", "Noted: the Lisbon flight"), ("user", "Hotel in Alfama please")]))
        mem.tenant(TENANT).for_user(BORIS).add_messages(rows(TENANT, BORIS, "telegram:2", [("user", f"Berlin {BORIS_MARK} Lisbon")]))
        mem.tenant(OTHER).for_user(ANNA).add_messages(rows(OTHER, ANNA, "telegram:1", [("user", f"Lisbon {OTHER_MARK}")]))
        expected_search = shared.qdrant_search_memory(anna(mem), "Lisbon")  # the Python answers, before the server runs
        expected_context = [m.model_dump(mode="json") for m in anna(mem).get_context_for_user(None, "telegram:1")]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "layered_memory.cli", "--path", path, "--tenant", TENANT, "--embedder", "none", "mcp", "--user", ANNA],
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
    )
    calls = [("qdrant_search_memory", {"query_text": "Lisbon"}), ("get_context", {"session_id": "telegram:1"}),
             ("add_message", {"message_id": "m9", "chat_id": "telegram:1", "content": "Also a tram pass"}),
             ("qdrant_search_memory", {"query_text": ""})]
    tools, results = session(params, calls)
    assert [t.name for t in tools] == SEED_TOOLS
    assert [r.is_error for r in results] == [False, False, False, True]
    assert results[0].content[0].text == expected_search and expected_search.startswith("Found 3 relevant message(s)")
    assert results[1].structured_content == wire({"messages": expected_context})
    assert results[3].content[0].text == shared.QUERY_TEXT_REQUIRED
    assert all(BORIS_MARK not in r.content[0].text and OTHER_MARK not in r.content[0].text for r in results)
    with LayeredMemory.embedded(path, embedder="none") as mem:  # the server has exited: its write is in the store
        assert anna(mem).get_messages(["m9"], chat_id="telegram:1")[0].content == "Also a tram pass"


def test_streamable_http_maps_each_bearer_key_to_its_scope(store: LayeredMemory) -> None:
    import httpx
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    tokens = {"anna": "anna-key-0123456789abc", "other": "other-key-0123456789abc"}
    keys = KeyRing.parse({"keys": [{"key": tokens["anna"], "tenant": TENANT, "user": ANNA},
                                   {"key": tokens["other"], "tenant": OTHER}]})

    async def search(url: str, token: str) -> str:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                res = await client.call_tool("search", {"query": "Lisbon", "k": 20})
                return res.content[0].text

    with running(http_app(store, keys)) as base:
        as_anna = anyio.run(search, base + "/mcp", tokens["anna"])
        as_other = anyio.run(search, base + "/mcp", tokens["other"])
        refused = httpx.post(base + "/mcp", headers={"Authorization": "Bearer not-a-key-0123456789"}, json={})
    assert "Lisbon" in as_anna and OTHER_MARK not in as_anna and BORIS_MARK not in as_anna
    assert OTHER_MARK in as_other and "Alfama" not in as_other
    assert refused.status_code == 401 and refused.json()["error"]["type"] == "Unauthorized"


def test_document_tools_answer_as_the_adapters_do(tmp_path: Any) -> None:
    mem = open_store(str(tmp_path), chat_model=False)
    anna_docs = anna(mem)
    anna_docs.documents.index_document("# Runbook\n\nRoll back the payments deploy with helm rollback payments.\n", name="runbook.md")
    mem.flush()
    calls = [("vector_rag", {"query": "how to roll back payments", "k": 3}), ("vector_rag", {"query": ""}),
             ("search_repos", {"query": "rollback", "k": 0})]
    _, results = session(build_server(fixed_binding(anna_docs), documents=True), calls)
    assert results[0].content[0].text == doc_tools.vector_rag_tool(anna_docs, "how to roll back payments", 3) and not results[0].is_error
    assert "helm rollback payments" in results[0].content[0].text
    assert results[1].is_error and results[1].content[0].text == doc_tools.QUERY_REQUIRED
    assert results[2].is_error and results[2].content[0].text.startswith("Error searching repositories: k=0")
    mem.close()
