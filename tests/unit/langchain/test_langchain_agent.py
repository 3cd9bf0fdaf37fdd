"""create_agent + LayeredMemoryMiddleware + memory tools, driven by a fake tool-calling chat model over
several turns; asserts what reached the model, what was stored, and user isolation of the tools."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_layered_memory import LayeredMemoryMiddleware, create_memory_tools
from layered_memory import LayeredMemory


class ToolCallingFake(FakeMessagesListChatModel):
    """Scripted replies; accepts tools (the script already holds the tool calls)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:  # noqa: ARG002
        return self


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.calls: list[list] = []

    def on_chat_model_start(self, serialized, messages, **kwargs):  # noqa: ANN001
        self.calls.append(list(messages[0]))


def dense_memory(path) -> LayeredMemory:  # noqa: ANN001
    from layered_memory.providers.local import USEEmbedder

    return LayeredMemory.embedded(path, embedder=USEEmbedder())


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path, embedder="none")
    yield m
    m.close()


def call(name: str, args: dict, cid: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": cid}])


def test_agent_sees_layered_context_and_turns_are_saved(mem):
    mem.set_user_data("u1", {"name": "Ann"})
    mem.add_messages([
        {"message_id": "old1", "chat_id": "tg:old", "user_id": "u1", "content": "I moved to Kazan last spring"},
        {"message_id": "bob1", "chat_id": "tg:bob", "user_id": "u2", "content": "Bob lives in Kazan too, secret address 221B"},
    ])
    model = ToolCallingFake(responses=[
        call("qdrant_search_memory", {"query_text": "Kazan"}, "c1"),
        AIMessage("You live in Kazan."),
        AIMessage("You are welcome, Ann."),
    ])
    rec = Recorder()
    agent = create_agent(model, tools=create_memory_tools(mem, user_id="u1"), system_prompt="You are a bot.",
                         middleware=[LayeredMemoryMiddleware(mem, save_tool_messages=True)])
    cfg = {"configurable": {"thread_id": "tg:new", "user_id": "u1"}, "callbacks": [rec]}
    out1 = agent.invoke({"messages": [HumanMessage("Where do I live?")]}, config=cfg)
    tool_msg = next(m for m in out1["messages"] if isinstance(m, ToolMessage))
    assert "I moved to Kazan last spring" in tool_msg.content and "221B" not in tool_msg.content
    # no checkpointer: turn 2 gets turn 1 back from the memory, behind the system prompt + user data
    agent.invoke({"messages": [HumanMessage("Thanks!")]}, config=cfg)
    assert len(rec.calls) == 3
    first, _, third = rec.calls
    assert isinstance(first[0], SystemMessage) and first[0].content.startswith("You are a bot.") and "name: Ann" in first[0].content
    assert [type(m).__name__ for m in third] == ["SystemMessage", "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "HumanMessage"]
    assert third[1].content == "Where do I live?" and third[4].content == "You live in Kazan." and third[5].content == "Thanks!"
    stored = mem.get_session_messages("u1", "tg:new")
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    assert stored[-1].content == "You are welcome, Ann."


def test_with_checkpointer_nothing_is_repeated(mem):
    model = ToolCallingFake(responses=[AIMessage("one"), AIMessage("two"), AIMessage("three")])
    rec = Recorder()
    agent = create_agent(model, tools=[], checkpointer=InMemorySaver(),
                         middleware=[LayeredMemoryMiddleware(mem, user_id="u1")])
    cfg = {"configurable": {"thread_id": "t1"}, "callbacks": [rec]}
    for text in ("a", "b", "c"):
        agent.invoke({"messages": [HumanMessage(text)]}, config=cfg)
    assert [m.content for m in rec.calls[-1]] == ["a", "one", "b", "two", "c"]
    assert [m.content for m in mem.get_session_messages("u1", "t1")] == ["a", "one", "b", "two", "c", "three"]


async def test_async_agent_with_context_from_runtime(mem):
    from dataclasses import dataclass

    @dataclass
    class Ctx:
        user_id: str
        session_id: str

    mem.create_task("u7", "Pay the electricity bill")
    model = ToolCallingFake(responses=[call("list_tasks", {}, "c1"), AIMessage("You have one task.")])
    rec = Recorder()
    agent = create_agent(model, tools=create_memory_tools(mem, user_id="u7"), context_schema=Ctx,
                         middleware=[LayeredMemoryMiddleware(mem)])
    out = await agent.ainvoke({"messages": [HumanMessage("What are my tasks?")]}, context=Ctx("u7", "web:1"),
                              config={"callbacks": [rec]})
    tool_msg = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert "Pay the electricity bill" in tool_msg.content
    # by default tool calls and results are not stored (a memory tool's output would be found again)
    assert [(m.role, m.content) for m in await mem.aget_session_messages("u7", "web:1")] == [
        ("user", "What are my tasks?"), ("assistant", "You have one task.")]


def test_relevant_memory_from_other_sessions_reaches_the_model(tmp_path):
    mem = dense_memory(tmp_path)
    try:
        mem.add_messages([
            {"message_id": "p1", "chat_id": "tg:2023", "user_id": "u1", "content": "I adopted a grey cat, her name is Luna"},
            {"message_id": "q1", "chat_id": "tg:2025", "user_id": "u2", "content": "My dog is called Rex, he is a husky"},  # u2's own chat
        ])
        rec = Recorder()
        agent = create_agent(ToolCallingFake(responses=[AIMessage("Luna")]), tools=[],
                             middleware=[LayeredMemoryMiddleware(mem, user_id="u1", session_id="tg:2024")])
        agent.invoke({"messages": [HumanMessage("What is the name of my cat?")]}, config={"callbacks": [rec]})
        system = rec.calls[0][0]
        assert isinstance(system, SystemMessage)
        assert "Relevant conversation memory" in system.content and "Luna" in system.content
        assert "Rex" not in system.content
    finally:
        mem.close()


def test_missing_user_is_a_clear_error(mem):
    agent = create_agent(ToolCallingFake(responses=[AIMessage("x")]), tools=[], middleware=[LayeredMemoryMiddleware(mem)])
    with pytest.raises(ValueError, match="no user for this run"):
        agent.invoke({"messages": [HumanMessage("hi")]}, config={"configurable": {"thread_id": "t"}})


def test_tools_bound_to_a_user_never_see_another_user(mem):
    mem.add_messages([
        {"message_id": f"a{i}", "chat_id": "tg:a", "user_id": "alice", "content": f"alice note {i} about the launch plan"}
        for i in range(3)
    ] + [
        {"message_id": f"b{i}", "chat_id": "tg:b", "user_id": "bob", "content": f"bob secret {i} about the launch plan"}
        for i in range(3)
    ])
    mem.create_task("bob", "bob's private task")
    tools = {t.name: t for t in create_memory_tools(mem, user_id="alice")}
    attempts = [
        {"query_text": "bob secret launch plan", "limit": 20},
        {"query_text": "bob secret", "filters": {"session_key": "tg:b"}},
        {"query_text": "launch", "filters": {"role": "user"}},
    ]
    for args in attempts:
        text = tools["qdrant_search_memory"].invoke(args)
        assert "bob" not in text
    for args in ({"queries": ["bob secret"]}, {"queries": "launch", "filters": {"user_id": "bob"}},
                 {"query": "launch plan", "filters": {"chat_id": "tg:b"}, "route": "bm25"}):
        msg = tools["search"].invoke({"type": "tool_call", "id": "x", "name": "search", "args": args})
        assert all(h["meta"]["user_id"] == "alice" for h in msg.artifact["hits"])
        assert "bob" not in msg.content
    assert "bob" not in tools["list_tasks"].invoke({})
    # the unbound tool does see bob: the binding is what isolates
    assert "bob secret" in create_memory_tools(mem)[0].invoke({"query_text": "bob secret"})


def test_tenant_binding(mem):
    mem.tenant("acme").add_message(message_id="t1", chat_id="c", user_id="u1", content="acme roadmap for widgets")
    mem.add_message(message_id="t2", chat_id="c", user_id="u1", content="default tenant roadmap for widgets")
    acme = create_memory_tools(mem, tenant="acme", user_id="u1")[0].invoke({"query_text": "roadmap widgets"})
    assert "acme roadmap" in acme and "default tenant" not in acme


def test_topic_search_tool_is_bound_to_the_user(tmp_path):
    mem = dense_memory(tmp_path)
    try:
        texts = ["I want to plan a trip to Lisbon in May", "What hotels are good in Lisbon?",
                 "Alfama district has nice small hotels", "Book flights for May 3rd to Lisbon"]
        mem.add_messages(
            {"message_id": f"l{i}", "chat_id": "c1", "user_id": "alice", "content": t,
             "role": "user" if i % 2 == 0 else "assistant", "create_time": f"2024-01-15T10:{i:02d}:00Z"}
            for i, t in enumerate(texts)
        )
        mem.add_message(message_id="b1", chat_id="c2", user_id="bob", content="Bob's secret trip to Lisbon",
                        create_time="2024-01-15T11:00:00Z")
        mem.process()  # topic threading runs off the write path
        topic_search = next(t for t in create_memory_tools(mem, user_id="alice") if t.name == "topic_search")
        msg = topic_search.invoke({"type": "tool_call", "id": "t1", "name": "topic_search", "args": {"query": "Lisbon trip"}})
        assert "Alfama district has nice small hotels" in msg.content and "Bob" not in msg.content
        assert msg.artifact["total_found"] >= 1
    finally:
        mem.close()
