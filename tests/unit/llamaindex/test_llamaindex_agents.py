"""Chat engines and agents over several turns with LlamaIndex's mock LLMs and the layered memory:
what reached the model, what was stored, and that tools bound to one user never see another's data."""

from __future__ import annotations

import asyncio
import json

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.chat_engine import CondensePlusContextChatEngine, SimpleChatEngine
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM, MockLLMWithChatMemoryOfLastCall
from llama_index.core.memory import Memory
from test_llamaindex_support import HashEmbedding, Recorder

from layered_memory import LayeredMemory
from llamaindex_layered_memory import LayeredChatMemory, LayeredMemoryBlock, LayeredMemoryRetriever, LayeredMemoryToolSpec


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path / "mem", embedder=HashEmbedding())
    # Ann (u1) said where she lives in an earlier chat; Bob (u2) has his own secrets
    m.add_messages([
        {"message_id": "a-old-1", "chat_id": "tg:1", "user_id": "u1", "role": "user", "content": "I live in Kazan near the Kremlin",
         "create_time": "2024-03-01T10:00:00Z"},
        {"message_id": "a-old-2", "chat_id": "tg:1", "user_id": "u1", "role": "assistant", "content": "Kazan is a lovely city",
         "create_time": "2024-03-01T10:00:05Z"},
        {"message_id": "b-old-1", "chat_id": "tg:2", "user_id": "u2", "role": "user", "content": "I live in Lisbon, my PIN is 9911",
         "create_time": "2024-03-02T10:00:00Z"},
    ])
    assert m.flush(120)  # the conversation memory block searches dense vectors too
    m.set_user_data("u1", {"name": "Ann"})
    m.for_user("u1").create_task(None, "Renew passport", task_id="t1")
    m.for_user("u2").create_task(None, "Bob's secret task", task_id="t2")
    yield m
    m.close()


def roles(messages) -> list[str]:
    return [getattr(m.role, "value", m.role) for m in messages]


# -- chat engines ---------------------------------------------------------------------------------
def test_simple_chat_engine_over_turns(mem) -> None:
    llm = MockLLMWithChatMemoryOfLastCall()
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="web:1", token_limit=2000)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory, system_prompt="You are helpful.")
    engine.chat("hello, remind me where I live")
    sent = llm.last_chat_messages
    assert sent[0].role == MessageRole.SYSTEM and sent[0].content == "You are helpful."  # the engine's prefix
    assert sent[1].content == "User data:\n- name: Ann"  # then the layered context's system blocks
    assert sent[2].role == MessageRole.SYSTEM and "u1: I live in Kazan" in sent[2].content  # relevant conversation memory (tg:1)
    engine.chat("and what is my name?")
    sent = llm.last_chat_messages
    window = sent[roles(sent).index("user"):]
    assert all(m.role == MessageRole.SYSTEM for m in sent[: len(sent) - len(window)]) and sent[1].content == "User data:\n- name: Ann"
    assert window[0].content == "hello, remind me where I live"
    assert roles(window) == ["user", "assistant", "user"] and window[-1].content == "and what is my name?"
    stored = mem.get_session_messages("u1", "web:1")
    assert roles(stored) == ["user", "assistant", "user", "assistant"]
    assert engine.chat_history == memory.get_all() and len(engine.chat_history) == 4
    engine.reset()
    assert mem.get_session_messages("u1", "web:1") == [] and mem.get_session_messages("u1", "tg:1")


async def test_simple_chat_engine_async_and_streaming(mem) -> None:
    llm = MockLLMWithChatMemoryOfLastCall()
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="web:2")
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    await engine.achat("first async turn")
    streamed = await engine.astream_chat("second streamed turn")
    async for _ in streamed.async_response_gen():
        pass
    for _ in range(200):  # the engine writes the streamed reply to memory in a task
        stored = await memory.aget_all()
        if len(stored) == 4:
            break
        await asyncio.sleep(0.01)
    assert roles(stored) == ["user", "assistant", "user", "assistant"] and stored[2].content == "second streamed turn"
    assert "second streamed turn" in [m.content for m in llm.last_chat_messages]


def test_condense_plus_context_with_layered_retriever(mem) -> None:
    llm = MockLLMWithChatMemoryOfLastCall(is_chat_model=True)
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="web:3", include_vector=False)
    retriever = LayeredMemoryRetriever(mem, user_id="u1", k=3)
    engine = CondensePlusContextChatEngine.from_defaults(retriever=retriever, llm=llm, memory=memory, skip_condense=True)
    first = engine.chat("where do I live Kazan")
    assert any("Kazan near the Kremlin" in n.node.get_content() for n in first.source_nodes)
    assert all(n.node.metadata["user_id"] == "u1" for n in first.source_nodes)
    assert "Lisbon" not in str(llm.last_chat_messages)
    engine.chat("thanks, and my PIN Lisbon?")
    sent = llm.last_chat_messages
    assert sent[0].role == MessageRole.SYSTEM and "Kazan near the Kremlin" in sent[0].content  # retrieved context
    assert "9911" not in str(sent)  # u2's data never reaches u1's model
    assert roles(sent[1:]) == ["system", "user", "assistant", "user"]  # user data, then the window
    assert roles(mem.get_session_messages("u1", "web:3")) == ["user", "assistant", "user", "assistant"]


def test_simple_chat_engine_with_memory_block(mem) -> None:
    llm = MockLLMWithChatMemoryOfLastCall(max_tokens=5)  # replies are "text text text text text"
    memory = Memory.from_defaults(session_id="web:4", token_limit=200, token_flush_size=20, chat_history_token_ratio=0.3,
                                  memory_blocks=[LayeredMemoryBlock(mem, user_id="u1", priority=1)])
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)
    for i in range(8):
        engine.chat(f"turn {i}: tell me something about Kazan")
    sent = llm.last_chat_messages
    flushed = mem.get_session_messages("u1", "web:4")
    assert flushed, "Memory flushed older turns into the engine"
    assert sent[0].role == MessageRole.SYSTEM and "<layered_memory>" in sent[0].content
    block = sent[0].content
    assert "User data:\n- name: Ann" in block
    earlier = block.split("Earlier in this conversation:\n", 1)[1].splitlines()
    assert earlier[0].endswith("] u1: turn 0: tell me something about Kazan") and earlier[1].endswith("] assistant: text text text text text")
    queue = [m.content for m in sent[1:]]
    assert queue[0] == f"turn {len(flushed) // 2}: tell me something about Kazan"  # the queue picks up where the engine stops
    assert queue[0] not in block and queue[-1] == "turn 7: tell me something about Kazan"


# -- agents ---------------------------------------------------------------------------------------
def tool_results(messages) -> list[ChatMessage]:
    return [m for m in messages if m.role == MessageRole.TOOL]


def function_script(messages: list[ChatMessage]) -> ChatMessage:
    """Turn 1 asks qdrant_search_memory, turn 2 list_tasks; answers with the last tool result."""
    last_user = [m for m in messages if m.role == MessageRole.USER][-1]
    answered = messages[-1].role == MessageRole.TOOL
    if answered:
        return ChatMessage(role="assistant", content="final: " + messages[-1].content.splitlines()[0])
    if "tasks" in (last_user.content or ""):
        call = ToolCallBlock(tool_call_id="c2", tool_name="list_tasks", tool_kwargs={})
    else:
        call = ToolCallBlock(tool_call_id="c1", tool_name="qdrant_search_memory", tool_kwargs={"query_text": "where do I live", "limit": 3})
    return ChatMessage(role="assistant", blocks=[call])


async def test_function_agent_turns_with_layered_memory_and_tools(mem) -> None:
    recorder = Recorder(function_script)
    tools = LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list()
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=recorder), system_prompt="Be brief.")
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="agent:1", include_vector=False)
    first = await agent.run(user_msg="where do I live?", memory=memory)
    assert str(first) == "final: Found 1 relevant message(s):" or str(first).startswith("final: Found")
    second = await agent.run(user_msg="what are my tasks?", memory=memory)
    assert "final: Found 1 task(s):" == str(second)
    # within a run the agent sees its tool call and result (its scratchpad); turn 1 is stored without them
    # (save_tool_messages=False): the memory tool's output is never stored and found again
    turn1 = [c for c in recorder.calls if any(m.content == "where do I live?" for m in c) and c[-1].role == MessageRole.TOOL]
    assert turn1 and "Kazan near the Kremlin" in turn1[0][-1].content and "Lisbon" not in turn1[0][-1].content
    turn2 = next(c for c in recorder.calls if any(m.content == "what are my tasks?" for m in c))
    convo = [m for m in turn2 if m.role != MessageRole.SYSTEM]
    assert roles(convo) == ["user", "assistant", "user"] and convo[1].content.startswith("final: Found")
    stored = mem.get_session_messages("u1", "agent:1")
    assert roles(stored) == ["user", "assistant", "user", "assistant"]
    assert stored[3].content.startswith("final: Found 1 task(s):")
    assert not any("Kazan near the Kremlin" in m.content for m in stored)


async def test_function_agent_can_store_tool_messages_when_asked(mem) -> None:
    recorder = Recorder(function_script)
    tools = LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list()
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=recorder), system_prompt="Be brief.")
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="agent:2", include_vector=False,
                                             save_tool_messages=True)
    await agent.run(user_msg="where do I live?", memory=memory)
    await agent.run(user_msg="what are my tasks?", memory=memory)
    turn2 = next(c for c in recorder.calls if any(m.content == "what are my tasks?" for m in c))
    convo = [m for m in turn2 if m.role != MessageRole.SYSTEM]
    assert roles(convo) == ["user", "assistant", "tool", "assistant", "user"]
    assert isinstance(convo[1].blocks[0], ToolCallBlock) and convo[1].blocks[0].tool_name == "qdrant_search_memory"
    assert convo[2].additional_kwargs.get("tool_call_id") == "c1" and "Kazan near the Kremlin" in convo[2].content
    stored = mem.get_session_messages("u1", "agent:2")
    assert roles(stored) == ["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]
    assert stored[6].content.startswith("Found 1 task(s):\n1. [open] Renew passport") and "Bob" not in stored[6].content


async def test_tools_bound_to_one_user_never_return_another_users_data(mem) -> None:
    tools = {t.metadata.name: t for t in LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list()}
    text = (await tools["qdrant_search_memory"].acall(query_text="Lisbon PIN 9911", limit=20)).content
    assert "9911" not in text and "Lisbon" not in text
    out = await tools["search"].acall(queries=["Lisbon", "PIN"], filters={"user_id": "u2"}, k=50)
    assert out.raw_output["hits"] == [] and json.loads(out.content)["total_found"] == 0
    out = await tools["search"].acall(query="live", k=50, route="bm25")
    assert {h["meta"]["user_id"] for h in out.raw_output["hits"]} == {"u1"}
    assert "secret" not in (await tools["list_tasks"].acall()).content
    assert "9911" not in (await tools["topic_search"].acall(query="Lisbon PIN")).content
    assert "9911" not in tools["qdrant_search_memory"].call(query_text="PIN", filters={"session_key": "tg:2"}).content


def react_script(messages: list[ChatMessage]) -> ChatMessage:
    text = "\n".join(m.content or "" for m in messages)
    last_user = [m for m in messages if m.role == MessageRole.USER][-1].content or ""
    if "Observation:" in (messages[-1].content or ""):
        return ChatMessage(role="assistant", content="Thought: I can answer without using any more tools.\nAnswer: You live in Kazan.")
    if "Observation:" in text and "tasks" in last_user:
        return ChatMessage(role="assistant", content="Thought: I can answer without using any more tools.\nAnswer: One task.")
    tool, args = ("list_tasks", {}) if "tasks" in last_user else ("search", {"query": "Kazan", "k": 2})
    return ChatMessage(role="assistant", content=f"Thought: I need a tool.\nAction: {tool}\nAction Input: {json.dumps(args)}")


async def test_react_agent_turns_with_layered_memory(mem) -> None:
    recorder = Recorder(react_script)
    tools = LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list()
    agent = ReActAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=recorder))
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="react:1", include_vector=False)
    assert str(await agent.run(user_msg="where do I live?", memory=memory)) == "You live in Kazan."
    observed = "\n".join(m.content or "" for m in recorder.calls[1])
    assert "Observation:" in observed and "Kazan near the Kremlin" in observed  # the search tool's JSON
    await agent.run(user_msg="what are my tasks?", memory=memory)
    turn2_first = next(c for c in recorder.calls if any(m.content == "what are my tasks?" for m in c))
    assert "where do I live?" in [m.content for m in turn2_first]  # turn 1 came back from the layered memory
    assert "You live in Kazan." in "\n".join(m.content or "" for m in turn2_first)
    stored = mem.get_session_messages("u1", "react:1")
    assert stored[0].content == "where do I live?" and stored[0].role == "user"
    assert stored[-1].role == "assistant" and "tasks" in [m.content for m in stored if m.role == "user"][-1]
