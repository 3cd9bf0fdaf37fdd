"""The shared tool texts (layered_memory.tools): seed 000's format and error strings word for word,
seed 003's dict, the tasks list. The adapters only wrap these, so this pins what every agent sees."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from layered_memory import LayeredMemory, SearchHit, SearchResult
from layered_memory import tools
from layered_memory.tools import (
    NO_RELEVANT_MESSAGES,
    QDRANT_NOT_CONFIGURED,
    QUERY_TEXT_REQUIRED,
    format_qdrant_search_memory,
    list_tasks_tool,
    qdrant_search_memory,
    search_tool,
)


def hit(i: int, role: str, date: str, text: str, session: str = "telegram:123456") -> SearchHit:
    return SearchHit(id=f"m{i}", score=1.0 / i, text=text, meta={"role": role, "date": date, "session_key": session})


def test_error_strings_are_the_seed_text_word_for_word() -> None:
    assert QDRANT_NOT_CONFIGURED == "Qdrant memory search is not configured. Enable it in config to search long-term memory."
    assert QUERY_TEXT_REQUIRED == "Error: query_text is required and must be a non-empty string"
    assert tools.search_error("boom") == "Error searching memory: boom"
    assert NO_RELEVANT_MESSAGES == "No relevant messages found in memory."


def test_format_matches_seed_example() -> None:
    result = SearchResult(hits=[
        hit(1, "user", "2024-01-15T10:30:00.123456Z", "Как установить Docker на Ubuntu?"),
        hit(2, "assistant", "2024-01-15T10:30:15Z", "Для установки Docker на Ubuntu выполните следующие команды..."),
        hit(3, "user", "2024-01-15T10:31:00+00:00", "Спасибо, помогло!"),
    ], total_found=3)
    expected = (
        "Found 3 relevant message(s):\n\n"
        "### Message 1\n**Role:** user\n**Time:** 2024-01-15T10:30:00Z\n**Content:** Как установить Docker на Ubuntu?\n"
        "**Session:** telegram:123456\n\n---\n\n"
        "### Message 2\n**Role:** assistant\n**Time:** 2024-01-15T10:30:15Z\n"
        "**Content:** Для установки Docker на Ubuntu выполните следующие команды...\n**Session:** telegram:123456\n\n---\n\n"
        "### Message 3\n**Role:** user\n**Time:** 2024-01-15T10:31:00Z\n**Content:** Спасибо, помогло!\n**Session:** telegram:123456"
    )
    assert format_qdrant_search_memory(result) == expected
    assert format_qdrant_search_memory(result.hits) == expected  # a plain list of hits too
    assert format_qdrant_search_memory(SearchResult()) == NO_RELEVANT_MESSAGES


def test_format_time() -> None:
    assert tools.format_time(datetime(2024, 1, 15, 13, 30, tzinfo=timezone.utc)) == "2024-01-15T13:30:00Z"
    assert tools.format_time("2024-01-15T13:30:00+03:00") == "2024-01-15T10:30:00Z"
    assert tools.format_time("not a date") == "not a date"
    assert tools.format_time(None) == ""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("",), QUERY_TEXT_REQUIRED),
        (("   ",), QUERY_TEXT_REQUIRED),
        ((None,), QUERY_TEXT_REQUIRED),
        ((42,), QUERY_TEXT_REQUIRED),
    ],
)
def test_query_text_required(args: tuple, expected: str) -> None:
    assert qdrant_search_args(*args) == expected


qdrant_search_args = tools.qdrant_search_args


def test_argument_rules() -> None:
    assert qdrant_search_args("docker") == ("docker", 5, {})
    assert qdrant_search_args("docker", 50) == ("docker", 20, {})  # the seed's maximum
    assert qdrant_search_args("docker", "10", '{"role": "user"}') == ("docker", 10, {"role": "user"})
    assert qdrant_search_args("docker", None, {"role": None}) == ("docker", 5, {})
    bad_limit = qdrant_search_args("docker", 0)
    assert bad_limit.startswith("Error searching memory: limit=0: must be from 1 to 20")
    assert qdrant_search_args("docker", "many").startswith("Error searching memory: limit='many': must be an integer")
    unknown = qdrant_search_args("docker", 5, {"user_id": "u2"})
    assert unknown.startswith("Error searching memory: filters.user_id='u2': is not a filter of this tool")
    assert "role, session_key, timestamp_from, timestamp_to" in unknown
    assert qdrant_search_args("docker", 5, [1]).startswith("Error searching memory: filters=[1]: must be an object")
    model = tools.QdrantSearchFilters(role="assistant")  # LangChain may hand over the parsed model
    assert qdrant_search_args("x", 5, model) == ("x", 5, {"role": "assistant"})


def test_not_configured_without_engine() -> None:
    assert qdrant_search_memory(None, "anything") == QDRANT_NOT_CONFIGURED
    assert search_tool(None, "anything", route="bm25") == {"hits": [], "total_found": 0, "route_used": "bm25", "error": QDRANT_NOT_CONFIGURED}
    assert tools.topic_search_tool(None, "anything") == list_tasks_tool(None) == QDRANT_NOT_CONFIGURED
    assert tools.topic_search_output(None, "x") == (QDRANT_NOT_CONFIGURED, {"error": QDRANT_NOT_CONFIGURED})
    assert tools.list_tasks_output(None) == (QDRANT_NOT_CONFIGURED, [])
    assert tools.bind(None, "u1") is None


def test_schemas_describe_but_never_reject() -> None:
    """The model sees typed, required arguments; any value validates, so LangChain (which validates
    before the tool runs) hands it to the function, which answers a bad one with its error text."""
    schema = tools.QdrantSearchMemoryArgs.model_json_schema()
    assert schema["required"] == ["query_text"] and schema["properties"]["limit"]["type"] == "integer"
    assert tools.SearchArgs.model_json_schema()["properties"]["route"]["enum"] == ["hybrid", "bm25", "dense"]
    assert tools.TopicSearchArgs.model_json_schema()["required"] == ["query"]
    parsed = tools.QdrantSearchMemoryArgs.model_validate({"limit": "many", "filters": "oops"})
    assert (parsed.query_text, parsed.limit, parsed.filters) == (None, "many", "oops")
    assert tools.SearchArgs.model_validate({"route": "fuzzy", "k": 0}).route == "fuzzy"
    assert tools.ListTasksArgs.model_validate({"status": 5}).status == 5


@pytest.fixture
def mem(tmp_path):  # BM25 only: the formats, not the ranking, are under test
    m = LayeredMemory.embedded(tmp_path, embedder="none")
    m.add_messages([
        {"message_id": "a1", "chat_id": "telegram:1", "user_id": "u1", "role": "user", "content": "How do I install Docker on Ubuntu?",
         "create_time": "2024-01-15T10:30:00Z"},
        {"message_id": "a2", "chat_id": "telegram:1", "user_id": "u1", "role": "assistant", "content": "Run apt install docker.io",
         "create_time": "2024-01-15T10:30:15Z"},
        {"message_id": "b1", "chat_id": "telegram:2", "user_id": "u2", "role": "user", "content": "Docker secrets of user two",
         "create_time": "2024-02-01T09:00:00Z"},
    ])
    yield m
    m.close()


def test_qdrant_search_memory_end_to_end(mem) -> None:
    text = qdrant_search_memory(mem.for_user("u1"), "docker install", limit=5, filters={"role": "user"})
    assert text == (
        "Found 1 relevant message(s):\n\n### Message 1\n**Role:** user\n**Time:** 2024-01-15T10:30:00Z\n"
        "**Content:** How do I install Docker on Ubuntu?\n**Session:** telegram:1"
    )
    assert qdrant_search_memory(mem.for_user("u1"), "docker", filters={"timestamp_from": "2025-01-01T00:00:00Z"}) == NO_RELEVANT_MESSAGES
    bad = qdrant_search_memory(mem, "docker", filters={"timestamp_from": "yesterday"})
    assert bad.startswith("Error searching memory: filters.timestamp_from='yesterday': is not an ISO 8601 timestamp")
    assert "two" not in qdrant_search_memory(mem.for_user("u1"), "docker secrets user two")


async def test_async_twins_match_sync(mem) -> None:
    u1 = mem.for_user("u1")
    a, b = await tools.aqdrant_search_memory(u1, "docker", 3), qdrant_search_memory(u1, "docker", 3)
    assert a.splitlines()[0] == b.splitlines()[0] and sorted(a.splitlines()) == sorted(b.splitlines())  # ties: any order
    a, b = await tools.asearch_tool(u1, "docker", k=3), search_tool(u1, "docker", k=3)
    assert sorted(h["id"] for h in a["hits"]) == sorted(h["id"] for h in b["hits"]) and a["total_found"] == b["total_found"]
    assert await tools.alist_tasks_tool(u1) == list_tasks_tool(u1)


def test_qdrant_search_memory_never_raises() -> None:
    class Broken:
        def search(self, *a, **kw):
            raise RuntimeError("qdrant is down")

    assert qdrant_search_memory(Broken(), "docker") == "Error searching memory: qdrant is down"  # type: ignore[arg-type]


def test_search_tool_shape_and_errors(mem) -> None:
    out = search_tool(mem.for_user("u1"), ["docker", "Docker "], k=5, route="bm25")
    assert set(out) == {"hits", "total_found", "route_used"}
    assert out["route_used"] == "bm25"
    assert {h["id"] for h in out["hits"]} == {"a1", "a2"}
    assert set(out["hits"][0]) == {"id", "score", "text", "snippet", "meta"}
    assert {"channel_id", "date", "author", "message_id"} <= set(out["hits"][0]["meta"])
    assert search_tool(mem, query="docker", k="2")["total_found"] >= 2
    assert search_tool(mem, '["docker", "ubuntu"]', k=2, route="bm25")["hits"]
    hybrid = search_tool(mem, "docker")  # no embedder: the engine falls back and says why
    assert hybrid["route_used"] == "bm25" and hybrid["fallback_reason"]
    err = search_tool(mem, "docker", k=500)
    assert err["hits"] == [] and err["total_found"] == 0 and err["error"].startswith("Error searching memory: k=500: must be an integer from 1 to 100")
    assert search_tool(mem, None)["error"].startswith("Error searching memory: queries=None")
    assert search_tool(mem, "x", route="fuzzy")["error"].startswith("Error searching memory: route='fuzzy'")


def test_search_tool_falls_back_to_bm25_when_hybrid_fails() -> None:
    class Flaky:
        def __init__(self) -> None:
            self.routes: list[str] = []

        def search(self, queries, filters=None, k=10, route="hybrid"):
            self.routes.append(route)
            if route == "hybrid":
                raise TimeoutError("dense index timed out")
            return SearchResult(hits=[hit(1, "user", "2024-01-01T00:00:00Z", "x")], total_found=1, route_used="bm25")

    flaky = Flaky()
    out = search_tool(flaky, "x")  # type: ignore[arg-type]
    assert flaky.routes == ["hybrid", "bm25"]
    assert out["route_used"] == "bm25" and out["total_found"] == 1
    assert out["fallback_reason"] == "hybrid search failed: TimeoutError: dense index timed out"


def test_list_tasks_tool(mem) -> None:
    u1 = mem.for_user("u1")
    assert list_tasks_tool(u1) == "No tasks."
    u1.create_task(None, "Buy milk", task_id="t1", due="2024-01-15T10:30:00Z")
    u1.create_task(None, "Call mom", "about the weekend", task_id="t2")
    u1.complete_task(None, "t2")
    mem.for_user("u2").create_task(None, "Secret of u2", task_id="t3")
    assert list_tasks_tool(u1) == (
        "Found 2 task(s):\n1. [open] Buy milk (id: t1, due: 2024-01-15T10:30:00Z)\n"
        "2. [done] Call mom (id: t2)\n   about the weekend"
    )
    assert list_tasks_tool(u1, status="done") == "Found 1 task(s) with status done:\n1. [done] Call mom (id: t2)\n   about the weekend"
    assert list_tasks_tool(u1, status="all").startswith("Found 2 task(s):")
    assert list_tasks_tool(u1, status="cancelled") == "No tasks with status cancelled."
    assert list_tasks_tool(u1, status="later").startswith("Error listing tasks: status='later': must be one of open, in_progress")
    assert list_tasks_tool(mem).startswith("Error listing tasks: user_id=None: is required")
    assert list_tasks_tool(u1, user_id="u2").startswith("Error listing tasks: user_id='u2': this handle is bound to user 'u1'")


def test_topic_search_tool_reports_errors_as_text(mem) -> None:
    assert tools.topic_search_tool(mem, "").startswith("Error searching topics: query='': is required")
    assert tools.topic_search_tool(mem.for_user("u1"), "docker", k="x").startswith("Error searching topics: k='x'")
    assert tools.topic_search_tool(mem.for_user("u1"), "docker", k=0).startswith("Error searching topics: k=0: must be from 1 to 100")
    assert tools.topic_search_tool(mem.for_user("u1"), None).startswith("Error searching topics: query=None: is required")
