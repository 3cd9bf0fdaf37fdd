"""The contracts LlamaIndex applies to the classes LayeredChatMemory and LayeredMemoryBlock stand in
for: token windows equal to ChatMemoryBuffer's, and a Memory block's flush and put."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer, Memory
from llama_index.core.storage.chat_store.base_db import MessageStatus

from layered_memory import LayeredMemory, LayeredMemorySettings
from llamaindex_layered_memory import LayeredChatMemory, LayeredMemoryBlock


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
def test_bug6_token_limited_window_equals_chat_memory_buffer(mem, limit) -> None:
    ours = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=HISTORY, token_limit=limit,
                                           include_vector=False)
    buffer = ChatMemoryBuffer.from_defaults(chat_history=HISTORY, token_limit=limit)
    assert ours.get() == buffer.get()
    for initial in (0, 1, limit // 2, limit):
        assert ours.get(initial_token_count=initial) == buffer.get(initial_token_count=initial)


def test_bug6_two_short_turns_at_token_limit_5_come_back_whole(mem) -> None:
    turns = [ChatMessage(role="user", content="first"), ChatMessage(role="assistant", content="fine"),
             ChatMessage(role="user", content="second"), ChatMessage(role="assistant", content="good")]
    ours = LayeredChatMemory.from_defaults(mem, user_id="u1", chat_history=turns, token_limit=5)
    assert [m.content for m in ours.get()] == ["first", "fine", "second", "good"]
    # the newest message alone over the limit comes back whole, never cut to a character
    long = ChatMessage(role="user", content="a rather long question that alone is over the limit")
    ours.put(long)
    assert ours.get() == [long] == ChatMemoryBuffer.from_defaults(chat_history=[*turns, long], token_limit=5).get()


def test_bug6_extra_blocks_share_the_budget_in_the_engine_order(mem) -> None:
    mem.set_user_data("u1", {"name": "Ann", "city": "Kazan"})
    ours = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=HISTORY[1:], include_vector=False)
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
