"""The contracts LlamaIndex applies to the classes LayeredChatMemory and LayeredMemoryBlock stand in
for: token windows equal to ChatMemoryBuffer's, to_dict / from_dict, to_string / from_string,
pickling, Context round trips of agents holding the memory, and a Memory block's flush and put."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import pickle

import pytest
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus
from llama_index.core.workflow import Context
from pydantic import SecretStr
from test_llamaindex_support import Recorder

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.errors import ConfigurationError
from llamaindex_layered_memory import LayeredChatMemory, LayeredMemoryBlock, register_memory, unregister_memory


def wide_settings(**extra) -> LayeredMemorySettings:
    """A short-term window that holds every test session (so the window is the whole history)."""
    settings = LayeredMemorySettings(**extra)
    settings.memory.short_term_window = 40
    settings.memory.summary_threshold_messages = 60
    return settings


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path / "mem", embedder="none", settings=wide_settings())
    yield m
    unregister_memory(m)
    m.close()


HISTORY = [
    ChatMessage(role="system", content="You are a terse assistant."),
    ChatMessage(role="user", content="first"),
    ChatMessage(role="assistant", content="ok"),
    ChatMessage(role="user", content="where do I live? I told you last week, it is a long story about moving"),
    ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="recall", tool_kwargs={"query": "home"})]),
    ChatMessage(role="tool", content="you live in Kazan near the river", additional_kwargs={"tool_call_id": "c1"}),
    ChatMessage(role="assistant", content="You live in Kazan."),
    ChatMessage(role="user", content="and my cat?"),
    ChatMessage(role=MessageRole.MODEL, content="Murzik, a grey one that likes fish"),
    ChatMessage(role="user", content="thanks"),
    ChatMessage(role="assistant", content="fine"),
]


# -- token windows (issue 13, item 6) -------------------------------------------------------------
@pytest.mark.parametrize("limit", [1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 3000])
def test_token_limited_window_equals_chat_memory_buffer(mem, limit) -> None:
    ours = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=HISTORY, token_limit=limit, save_tool_messages=True,
                                           include_vector=False)
    buffer = ChatMemoryBuffer.from_defaults(chat_history=HISTORY, token_limit=limit)
    assert ours.get() == buffer.get()
    for initial in (0, 1, limit // 2, limit):
        assert ours.get(initial_token_count=initial) == buffer.get(initial_token_count=initial)


def test_two_short_turns_at_token_limit_5_come_back_whole(mem) -> None:
    turns = [ChatMessage(role="user", content="first"), ChatMessage(role="assistant", content="fine"),
             ChatMessage(role="user", content="second"), ChatMessage(role="assistant", content="good")]
    ours = LayeredChatMemory.from_defaults(mem, user_id="u1", chat_history=turns, token_limit=5)
    assert [m.content for m in ours.get()] == ["first", "fine", "second", "good"]
    # the newest message alone over the limit comes back whole, never cut to a character
    long = ChatMessage(role="user", content="a rather long question that alone is over the limit")
    ours.put(long)
    assert ours.get() == [long] == ChatMemoryBuffer.from_defaults(chat_history=[*turns, long], token_limit=5).get()


def test_extra_blocks_share_the_budget_in_the_engine_order(mem) -> None:
    mem.set_user_data("u1", {"name": "Ann", "city": "Kazan"})
    ours = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=HISTORY[1:], include_vector=False,
                                           save_tool_messages=True)
    count = ours.tokenizer_fn
    full = ours.get()
    assert full[0].content.startswith("User data:") and full[1:] == HISTORY[1:]
    for limit in (3, 12, 30):
        ours.token_limit = limit
        got = ours.get()
        assert got[-1] == HISTORY[-1]  # the newest message first, whole
        if len(got) > 1:
            assert len(count(" ".join(str(m.content) for m in got))) <= limit
        data = [m for m in got if m.role == MessageRole.SYSTEM and m.content.startswith("User")]
        assert all(m.content == full[0].content or m.content.endswith("…") for m in data)  # a cut is marked


# -- serialization (issue 13, items 3 and 5) ------------------------------------------------------
def test_to_dict_is_a_reference_that_from_dict_reattaches(mem) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=HISTORY[:3], token_limit=77)
    data = memory.to_dict()
    assert data == {
        "class_name": "LayeredChatMemory", "user_id": "u1", "session_id": "s1", "token_limit": 77, "include_vector": True,
        "save_tool_messages": False, "store": "sqlite:" + str(mem.records.path), "tenant": "default",
    }
    json.dumps(data)
    again = LayeredChatMemory.from_dict(data)
    assert again.get_all() == HISTORY[:3] and again.token_limit == 77 and again.mem.bound_user == "u1"
    again.put(ChatMessage(role="user", content="written by the restored memory"))
    assert memory.get_all()[-1].content == "written by the restored memory"
    restored = LayeredChatMemory.from_string(memory.to_string())
    assert restored.to_dict() == data and restored.get_all() == memory.get_all()
    other_tenant = LayeredChatMemory.from_defaults(mem.tenant("acme"), user_id="u1", session_id="s1")
    assert LayeredChatMemory.from_dict(other_tenant.to_dict()).get_all() == []  # the tenant is part of the reference


def test_serialized_memory_holds_no_secrets(redis_server) -> None:
    import redis

    redis.Redis(port=redis_server.port).config_set("requirepass", "s3cret-pw")
    settings = wide_settings(embedder_api_key=SecretStr("sk-embedder-key"))
    m = LayeredMemory.from_urls(redis_url=f"redis://:s3cret-pw@127.0.0.1:{redis_server.port}/0", embedder="none", settings=settings)
    try:
        memory = LayeredChatMemory.from_defaults(m, user_id="u1", chat_history=HISTORY[:2])
        text = memory.to_string() + pickle.dumps(memory).decode("latin-1")
        assert "s3cret-pw" not in text and "sk-embedder-key" not in text
        assert memory.store == f"redis:127.0.0.1:{redis_server.port}/0#lm"
        assert LayeredChatMemory.from_string(memory.to_string()).get_all() == HISTORY[:2]
    finally:
        unregister_memory(m)
        m.close()


def test_restore_without_a_registered_engine_fails_and_register_memory_fixes_it(tmp_path) -> None:
    path = tmp_path / "mem"
    first = LayeredMemory.embedded(path, embedder="none")
    saved = LayeredChatMemory.from_defaults(first, user_id="u1", session_id="s1", chat_history=HISTORY[:3]).to_string()
    first.close()
    gc.collect()  # the adapter objects are gone: nothing refers to the closed engine any more
    with pytest.raises(ConfigurationError, match=r"no open LayeredMemory is registered for store 'sqlite:.*register_memory\(mem\)"):
        LayeredChatMemory.from_string(saved)
    second = LayeredMemory.embedded(path, embedder="none")  # "the next process" opens the same store
    try:
        assert register_memory(second) == json.loads(saved)["store"]
        assert LayeredChatMemory.from_string(saved).get_all() == HISTORY[:3]
        assert LayeredChatMemory.from_string(saved, mem=second).get_all() == HISTORY[:3]
    finally:
        unregister_memory(second)
        second.close()


def test_restore_prefers_the_newest_engine_of_a_store_over_a_closed_one(tmp_path) -> None:
    first = LayeredMemory.embedded(tmp_path / "mem", embedder="none")
    old = LayeredChatMemory.from_defaults(first, user_id="u1", chat_history=HISTORY[:2])  # still held somewhere
    first.close()
    second = LayeredMemory.embedded(tmp_path / "mem", embedder="none")
    try:
        live = LayeredChatMemory.from_defaults(second, user_id="u1")
        assert LayeredChatMemory.from_string(old.to_string()).get_all() == HISTORY[:2] == live.get_all()
    finally:
        second.close()


def test_restore_never_attaches_another_store(mem, tmp_path) -> None:
    saved = LayeredChatMemory.from_defaults(mem, user_id="u1", chat_history=HISTORY[:2]).to_dict()
    other = LayeredMemory.embedded(tmp_path / "other", embedder="none")
    try:
        with pytest.raises(ConfigurationError, match=r"lives in store 'sqlite:.*register_memory\(mem, store="):
            LayeredChatMemory.from_dict(saved, mem=other)
        # an explicit declaration that the saved reference is this store here (e.g. a moved directory)
        register_memory(other, store=saved["store"])
        assert LayeredChatMemory.from_dict(saved, mem=other).get_all() == []
    finally:
        unregister_memory(other)
        other.close()


def test_unpickled_memory_is_usable(mem, caplog) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=HISTORY, token_limit=8, save_tool_messages=True,
                                             include_vector=False)
    with caplog.at_level(logging.WARNING):
        payload = pickle.dumps(memory)
    assert "unpickleable" not in caplog.text
    copy = pickle.loads(payload)
    assert copy.get_all() == HISTORY and copy.get() == memory.get()
    copy.put(ChatMessage(role="user", content="after unpickling"))
    assert memory.get_all()[-1].content == "after unpickling"


def test_unpickling_without_the_engine_raises_a_clear_error(tmp_path) -> None:
    m = LayeredMemory.embedded(tmp_path / "gone", embedder="none")
    payload = pickle.dumps(LayeredChatMemory.from_defaults(m, user_id="u1"))
    m.close()
    gc.collect()
    with pytest.raises(ConfigurationError, match="no open LayeredMemory is registered"):
        pickle.loads(payload)


def test_memory_block_serializes_to_a_reference_too(mem) -> None:
    block = LayeredMemoryBlock(mem, user_id="u1", session_id="s1", priority=2)
    data = block.to_dict()
    assert data["store"] == "sqlite:" + str(mem.records.path) and data["priority"] == 2
    for copy in (LayeredMemoryBlock.from_dict(data), pickle.loads(pickle.dumps(block))):
        assert copy.to_dict() == data and copy.mem.bound_user == "u1"


# -- agent Context round trips (issue 13, item 3) -------------------------------------------------
def answer_script(messages: list[ChatMessage]) -> ChatMessage:
    users = [m.content for m in messages if m.role == MessageRole.USER]
    return ChatMessage(role="assistant", content=f"heard {len(users)} user message(s): {' | '.join(users)}")


def react_answer_script(messages: list[ChatMessage]) -> ChatMessage:
    users = [m.content for m in messages if m.role == MessageRole.USER]
    return ChatMessage(role="assistant", content=f"Thought: I can answer without using any more tools.\nAnswer: {' | '.join(users)}")


@pytest.mark.parametrize("agent_cls", [FunctionAgent, ReActAgent])
async def test_agent_context_with_layered_memory_round_trips(mem, agent_cls) -> None:
    recorder = Recorder(answer_script if agent_cls is FunctionAgent else react_answer_script)
    agent = agent_cls(tools=[], llm=MockFunctionCallingLLM(response_generator=recorder))
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="agent:1", include_vector=False)
    handler = agent.run(user_msg="my name is Ann", memory=memory)
    await handler
    saved = json.dumps(handler.ctx.to_dict())  # what an app persists between requests
    restored = Context.from_dict(agent, json.loads(saved))
    held = await restored.store.get("memory")
    assert isinstance(held, LayeredChatMemory) and held is not memory
    assert held.to_dict() == memory.to_dict() and await held.aget_all() == await memory.aget_all()
    await agent.run(user_msg="what is my name?", ctx=restored)
    last_call_users = [m.content for m in recorder.calls[-1] if m.role == MessageRole.USER]
    assert last_call_users == ["my name is Ann", "what is my name?"]  # turn 1 came back through the restored memory
    stored = mem.get_session_messages("u1", "agent:1")
    assert [(m.role, m.content) for m in stored if m.role == "user"] == [("user", "my name is Ann"), ("user", "what is my name?")]
    assert len(stored) == 4


# -- LayeredMemoryBlock inside Memory: flush and put ----------------------------------------------
async def test_memory_block_receives_every_flushed_message_once_in_order(mem) -> None:
    block = LayeredMemoryBlock(mem, user_id="u1", priority=1)
    memory = Memory.from_defaults(session_id="s1", token_limit=60, token_flush_size=10, chat_history_token_ratio=0.5,
                                  memory_blocks=[block])
    history = [ChatMessage(role="user" if i % 2 == 0 else "assistant", content=f"message {i} about the garden and tomatoes")
               for i in range(16)]
    for m in history:
        await memory.aput(m)
    queue = await memory.aget_all(status=MessageStatus.ACTIVE)
    flushed = [m.content for m in mem.get_session_messages("u1", "s1")]
    assert flushed, "the queue overflowed into the block"
    assert flushed + [m.content for m in queue] == [m.content for m in history]  # nothing lost, nothing twice
    got = await memory.aget()
    assert "message 0 about the garden" in got[0].content and got[1].role == MessageRole.USER  # queue opens with a user turn


async def test_memory_block_concurrent_puts_store_what_sequential_puts_store(mem) -> None:
    batches = [[ChatMessage(role="user", content=f"batch {b} message {i}") for i in range(3)] for b in range(4)]
    concurrent = LayeredMemoryBlock(mem, user_id="u1", session_id="c")
    await asyncio.gather(*(concurrent.aput(b) for b in batches))
    sequential = LayeredMemoryBlock(mem, user_id="u1", session_id="q")
    for b in batches:
        await sequential.aput(b)
    got_c = mem.get_session_messages("u1", "c")
    got_q = mem.get_session_messages("u1", "q")
    assert sorted(m.content for m in got_c) == sorted(m.content for m in got_q) and len(got_c) == 12
    assert len({m.message_id for m in got_c}) == 12
