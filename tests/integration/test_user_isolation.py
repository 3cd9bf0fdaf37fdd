"""Regression tests for the isolation bugs of issue 10 (1-4, 6), each named after the behaviour it checks, on
the embedded default, on Redis + qdrant-client local mode, and in core mode (records only, no index)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from server_stores import server_records

from layered_memory import InvalidInputError, LayeredMemory, LayeredMemorySettings
from layered_memory import tools as shared_tools
from layered_memory.stores.qdrant_server import QdrantVectorIndex
from layered_memory.stores.sqlite import SQLiteRecordStore

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
CANARY = "zebracanary card PIN 4711"


def settings() -> LayeredMemorySettings:
    s = LayeredMemorySettings()
    s.memory.short_term_window = 2
    s.memory.summary_threshold_messages = 4
    return s


@pytest.fixture(params=["embedded", "embedded-core", "redis-local", "redis-core", "cluster-local", "postgres-local", "postgres-core"])
def mem(request: pytest.FixtureRequest, tmp_path) -> Iterator[LayeredMemory]:
    kind = request.param
    if kind == "embedded":
        m = LayeredMemory.embedded(tmp_path / "m", embedder="none", settings=settings())
    elif kind == "embedded-core":
        m = LayeredMemory.from_stores(SQLiteRecordStore(str(tmp_path / "r.sqlite3")), None, embedder="none", settings=settings())
    else:
        records = server_records(request, kind.split("-")[0])
        index = QdrantVectorIndex.in_memory() if kind.endswith("-local") else None
        m = LayeredMemory.from_stores(records, index, embedder="none", settings=settings())
    for i, (user, text) in enumerate([("victim", CANARY), ("victim", "zebracanary again"), ("mallory", "hello zebra")]):
        m.add_message(message_id=f"m{i}", chat_id=f"c-{user}", user_id=user, content=text, role="user",
                      create_time=T0 + timedelta(minutes=i))
    yield m
    m.close()


def _texts(obj: object) -> str:
    return repr(obj)


def test_core_mode_search_honours_the_bound_user(mem: LayeredMemory) -> None:
    mallory = mem.for_user("mallory")
    assert "4711" not in _texts(mallory.search("zebracanary card PIN"))
    assert "4711" not in _texts(mallory.search(["zebracanary", "PIN"], route="bm25"))
    assert "4711" not in shared_tools.qdrant_search_memory(mallory, "zebracanary card PIN")
    assert "4711" not in _texts(shared_tools.search_tool(mallory, "zebracanary card PIN"))
    # a filter naming the victim narrows mallory's scope to nothing; it does not widen it
    assert mallory.search("zebracanary", filters={"user_id": "victim"}).hits == []
    assert [h.meta["user_id"] for h in mallory.search("zebra").hits] == ["mallory"]
    assert "4711" in _texts(mem.for_user("victim").search("zebracanary card PIN"))  # the victim still finds it


@pytest.mark.parametrize("empty", ["", "  "])
def test_empty_user_id_is_refused_everywhere(mem: LayeredMemory, empty: str) -> None:
    from langchain_layered_memory import LayeredMemoryRetriever as LCRetriever
    from langchain_layered_memory import create_memory_tools
    from llamaindex_layered_memory import LayeredMemoryRetriever as LIRetriever
    from llamaindex_layered_memory import LayeredMemoryToolSpec

    for make in (
        lambda: shared_tools.bind(mem, empty),
        lambda: create_memory_tools(mem, user_id=empty),
        lambda: LayeredMemoryToolSpec(mem, user_id=empty),
        lambda: LIRetriever(mem, user_id=empty),
        lambda: mem.for_user(empty),
        lambda: shared_tools.bind(mem, "u1", tenant=""),
    ):
        with pytest.raises(InvalidInputError, match="user_id|tenant"):
            make()
    with pytest.raises(Exception, match="empty user id"):
        LCRetriever(memory=mem, user_id=empty)
    assert "4711" not in shared_tools.topic_search_tool(mem, "zebracanary", user_id=empty)


def test_items_and_the_langgraph_store_honour_for_user(mem: LayeredMemory) -> None:
    from langchain_layered_memory import LayeredMemoryStore

    victim = LayeredMemoryStore(mem.for_user("victim"))
    victim.put(("memories", "victim"), "pin", {"text": CANARY})
    shared = LayeredMemoryStore(mem)
    shared.put(("memories", "victim"), "shared", {"text": "tenant-wide note"})
    attacker = LayeredMemoryStore(mem.for_user("mallory"))
    assert attacker.get(("memories", "victim"), "pin") is None
    assert "4711" not in _texts(attacker.search(("memories",), query="zebracanary PIN"))
    assert "4711" not in _texts(attacker.search(("memories", "victim")))
    assert attacker.list_namespaces() == []
    attacker.put(("memories", "victim"), "pin", {"text": "overwritten"})
    attacker.delete(("memories", "victim"), "pin")
    got = victim.get(("memories", "victim"), "pin")
    assert got is not None and got.value["text"] == CANARY  # neither overwritten nor deleted
    assert "4711" in _texts(victim.search(("memories",), query="zebracanary PIN"))
    assert shared.get(("memories", "victim"), "pin") is None  # the tenant's space is not the user's either
    assert victim.get(("memories", "victim"), "shared") is None
    # a reindex keeps both spaces apart
    mem.reindex()
    assert "4711" not in _texts(attacker.search(("memories",), query="zebracanary PIN"))
    assert "4711" in _texts(victim.search(("memories",), query="zebracanary PIN"))


def test_task_memory_belongs_to_its_user(mem: LayeredMemory) -> None:
    mem.for_user("victim").add_tool_result("t-1", CANARY, tool_name="vault")
    mallory = mem.for_user("mallory")
    with pytest.raises(InvalidInputError, match="bound to user 'mallory'"):
        mallory.add_tool_result("t-1", "injected", user_id="victim")
    with pytest.raises(InvalidInputError, match="bound to user 'mallory'"):
        mallory.get_task_memory("t-1", user_id="victim")
    assert mallory.get_task_memory("t-1") == []
    assert mallory.clear_task_memory("t-1") == 0
    mallory.add_tool_result("t-1", "mallory's own result")
    ctx = mallory.get_context_for_user("mallory", "c-mallory", task_id="t-1")
    assert "4711" not in _texts(ctx)
    victim_memory = mem.for_user("victim").get_task_memory("t-1")
    assert [r["content"] for r in victim_memory] == [CANARY]
    assert mem.get_task_memory("t-1", user_id="victim") == victim_memory


def test_clear_session_deletes_that_session_only(mem: LayeredMemory) -> None:
    for session in ("telegram:1", "telegram:10"):
        mem.add_messages([
            {"message_id": f"{session}-{i}", "chat_id": session, "user_id": "u1", "content": f"msg {i} in {session}",
             "role": "user", "create_time": T0 + timedelta(minutes=i)} for i in range(6)
        ])
        mem.refresh_summary("u1", session)
    assert mem.get_summary("u1", "telegram:10") is not None
    with pytest.raises(InvalidInputError, match="session_id"):
        mem.clear_session("u1", "")
    assert mem.clear_session("u1", "telegram:1") == 6
    assert mem.get_summary("u1", "telegram:10") is not None
    assert "telegram:10" in mem.list_sessions("u1") and "telegram:1" not in mem.list_sessions("u1")
    assert len(mem.get_session_messages("u1", "telegram:10")) == 6


def test_a_colliding_id_never_returns_another_users_message(mem: LayeredMemory) -> None:
    # m0 in chat c-victim is the victim's; mallory sending the same (chat, id) is a collision, not a retry
    with pytest.raises(InvalidInputError, match="another user's message"):
        mem.for_user("mallory").add_message(message_id="m0", chat_id="c-victim", user_id="mallory", content="mine?")
    with pytest.raises(InvalidInputError, match="another user's message"):
        mem.add_message(message_id="m0", chat_id="c-victim", user_id="mallory", content="mine?")
    again = mem.for_user("victim").add_message(message_id="m0", chat_id="c-victim", user_id="victim", content=CANARY)
    assert again.content == CANARY  # a retry by the owner is still idempotent
    assert mem.get_messages([("c-victim", "m0")])[0].content == CANARY
