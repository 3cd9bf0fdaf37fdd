"""LayeredChatMemory as a ChatMemoryBuffer drop-in: storage, ids, roles, tool calls, token limit,
the context order, the async forms, isolation; LayeredMemoryBlock inside LlamaIndex's Memory."""

from __future__ import annotations

import pytest
from llama_index.core.base.llms.types import TextBlock, ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole, MockLLM
from llama_index.core.memory import Memory
from llama_index.core.utils import get_tokenizer
from test_llamaindex_support import HashEmbedding

from layered_memory import LayeredMemory
from llamaindex_layered_memory import LayeredChatMemory, LayeredMemoryBlock

TOKENIZE = get_tokenizer()


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path / "mem", embedder=HashEmbedding())
    yield m
    m.close()


def turn(i: int) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=f"question number {i} about topic {i % 3}"),
            ChatMessage(role="assistant", content=f"answer number {i} with some detail on topic {i % 3}")]


def tool_turn() -> list[ChatMessage]:
    return [
        ChatMessage(role="user", content="where do I live?"),
        ChatMessage(role="assistant", blocks=[ToolCallBlock(tool_call_id="c1", tool_name="recall", tool_kwargs={"query": "home"})]),
        ChatMessage(role="tool", content="you live in Kazan", additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(role="assistant", content="You live in Kazan."),
    ]


def tokens(messages: list[ChatMessage]) -> int:
    return len(TOKENIZE(" ".join(m.content or "" for m in messages)))


def test_put_stores_engine_messages_and_round_trips(mem) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", save_tool_messages=True)
    msgs = [ChatMessage(role="system", content="be brief"), *tool_turn(),
            ChatMessage(role=MessageRole.MODEL, content="a model reply"), ChatMessage(role="developer", content="dev note")]
    memory.put(msgs[0])
    memory.put_messages(msgs[1:])
    assert memory.get_all() == msgs  # tool calls, tool_call_id and role names come back as put
    stored = mem.get_session_messages("u1", "s1")
    assert [m.role for m in stored] == ["system", "user", "assistant", "tool", "assistant", "assistant", "system"]
    assert stored[2].content == '[tool call] recall({"query": "home"})'  # searchable text for a tool-call turn
    assert stored[3].content == "you live in Kazan"
    assert all(m.chat_id == "s1" and m.user_id == "u1" and m.message_id.startswith("li-") for m in stored)
    # ids are stable: the same history from a fresh memory object writes nothing new
    again = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=msgs,
                                             save_tool_messages=True)
    assert [m.message_id for m in mem.get_session_messages("u1", "s1")] == [m.message_id for m in stored]
    assert again.get_all() == msgs


def test_set_appends_when_history_extends_else_replaces(mem) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1")
    memory.set(turn(1))
    first_ids = [m.message_id for m in mem.get_session_messages("u1", "s1")]
    memory.set(turn(1) + turn(2))
    ids = [m.message_id for m in mem.get_session_messages("u1", "s1")]
    assert ids[:2] == first_ids and len(ids) == 4
    memory.put(ChatMessage(role="user", content="after set"))
    assert [m.content for m in memory.get_all()][-1] == "after set"
    memory.set(turn(7))
    assert memory.get_all() == turn(7)


def test_reset_clears_only_this_session(mem) -> None:
    a = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=turn(1))
    b = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s2", chat_history=turn(2))
    a.reset()
    assert a.get_all() == [] and b.get_all() == turn(2)
    a.put(ChatMessage(role="user", content="fresh start"))
    assert [m.content for m in a.get_all()] == ["fresh start"]


def test_empty_messages_are_skipped(mem) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1")
    memory.put_messages([ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="")])
    assert [m.content for m in memory.get_all()] == ["hi"]


@pytest.mark.parametrize("limit", [8, 12, 20, 33, 50, 80, 140, 400])
def test_get_fits_the_limit_and_never_starts_with_a_reply(mem, limit) -> None:
    history = [m for i in range(10) for m in turn(i)]
    history[5:5] = tool_turn()
    history.append(ChatMessage(role="user", content="and the pending question?"))  # get() runs after put(user)
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=history, token_limit=limit,
                                             save_tool_messages=True)
    got = memory.get()
    convo = [m for m in got if m.role != MessageRole.SYSTEM]
    assert convo and convo[-1].content == "and the pending question?", "the newest message is kept whole"
    if len(got) > 1:
        assert tokens(got) <= limit
    assert convo[0].role == MessageRole.USER
    assert convo[:-1] == history[len(history) - len(convo):-1]  # a contiguous suffix of the history
    for i, m in enumerate(convo):  # tool results always follow their call
        if m.role == MessageRole.TOOL:
            assert convo[i - 1].role in (MessageRole.ASSISTANT, MessageRole.TOOL)


def test_get_is_the_engine_context_in_seed_order(mem) -> None:
    mem.set_user_data("u1", {"name": "Ann", "city": "Kazan"})
    mem.add_message(message_id="old1", chat_id="other", user_id="u1", content="My cat is called Murzik and likes fish")
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", chat_history=turn(1) + turn(2))
    got = memory.get(input="what is my cat called Murzik")
    engine = mem.get_context_for_user("u1", "s1", query="what is my cat called Murzik", max_tokens=memory.token_limit)
    kinds = [c.kind for c in engine]
    assert kinds == ["user_data", "window", "window", "window", "window", "conversation_memory"]
    # the engine's blocks, with every system block first: the conversation ends with its newest message
    order = [0, 5, 1, 2, 3, 4]
    assert [(m.role.value, m.content) for m in got] == [(engine[i].role, engine[i].content) for i in order]
    assert "Murzik" in got[1].content and got[0].content.startswith("User data:")
    assert got[-1].content == turn(2)[-1].content
    # include_vector=False: no relevant-memory blocks
    plain = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1", include_vector=False)
    assert not any("Murzik" in (m.content or "") for m in plain.get(input="Murzik"))


def test_initial_token_count_and_from_defaults_rules(mem) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", token_limit=100)
    assert memory.session_id == "chat_history"  # ChatMemoryBuffer's default key
    with pytest.raises(ValueError, match=r"initial_token_count=101 exceeds token_limit=100; raise token_limit"):
        memory.get(initial_token_count=101)
    assert memory.get(initial_token_count=100) == []  # as ChatMemoryBuffer: only over the limit raises
    assert LayeredChatMemory.from_defaults(mem, user_id="u1", llm=MockLLM()).token_limit == int(MockLLM().metadata.context_window * 0.75)
    assert LayeredChatMemory.from_defaults(mem, user_id="u1", chat_store_key="k1").session_id == "k1"
    assert LayeredChatMemory.from_defaults(mem.for_user("u9")).user_id == "u9"
    with pytest.raises(ValueError, match="mem=None; pass the engine"):
        LayeredChatMemory.from_defaults(user_id="u1")
    with pytest.raises(ValueError, match="mem is not bound to a user; pass user_id"):
        LayeredChatMemory.from_defaults(mem)
    with pytest.raises(ValueError, match="unexpected keyword chat_store="):
        LayeredChatMemory.from_defaults(mem, user_id="u1", chat_store=object())
    with pytest.raises(TypeError, match="needs a layered_memory.LayeredMemory"):
        LayeredChatMemory.from_defaults("./memory", user_id="u1")  # type: ignore[arg-type]


def test_users_never_share_messages(mem) -> None:
    a = LayeredChatMemory.from_defaults(mem, user_id="alice")
    b = LayeredChatMemory.from_defaults(mem, user_id="bob")
    a.put(ChatMessage(role="user", content="hi"))
    b.put(ChatMessage(role="user", content="hi"))  # same session name, same text, same position
    a.put(ChatMessage(role="user", content="my secret is 4242"))
    assert [m.content for m in b.get_all()] == ["hi"]
    assert not any("4242" in (m.content or "") for m in b.get(input="secret 4242"))
    assert mem.get_session_messages("alice", "chat_history")[0].message_id != mem.get_session_messages("bob", "chat_history")[0].message_id


async def test_async_forms_use_the_engine_async_twins(mem, monkeypatch) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1")

    def boom(*a, **kw):
        raise AssertionError("a sync method ran on the event loop")

    for name in ("get", "get_all", "put", "put_messages", "set", "reset"):
        monkeypatch.setattr(LayeredChatMemory, name, boom)
    await memory.aset(turn(1))
    await memory.aput(ChatMessage(role="user", content="async put"))
    await memory.aput_messages(tool_turn())
    all_msgs = await memory.aget_all()
    no_tools = [tool_turn()[0], tool_turn()[-1]]  # tool calls and results are not stored by default
    assert all_msgs == [*turn(1), ChatMessage(role="user", content="async put"), *no_tools]
    got = await memory.aget(input="Kazan")
    assert got[-1].content == "You live in Kazan."
    await memory.areset()
    assert await memory.aget_all() == []


def test_memory_block_inside_llamaindex_memory(mem) -> None:
    mem.set_user_data("u1", {"name": "Ann"})
    block = LayeredMemoryBlock(mem, user_id="u1", priority=1)
    memory = Memory.from_defaults(session_id="s1", token_limit=120, token_flush_size=20, chat_history_token_ratio=0.5,
                                  memory_blocks=[block])
    history = [m for i in range(8) for m in turn(i)]
    for m in history:
        memory.put(m)
    active = memory.get_all()
    stored = mem.get_session_messages("u1", "s1")
    assert stored, "flushed messages reach the engine"
    assert [m.content for m in stored] == [m.content for m in history[: len(stored)]]
    got = memory.get(input="topic 1")
    assert got[0].role == MessageRole.SYSTEM and "<layered_memory>" in got[0].content
    text = got[0].content
    assert "User data:\n- name: Ann" in text and "Earlier in this conversation:" in text
    newest_active = [m.content for m in memory.get() if m.role != MessageRole.SYSTEM]
    assert newest_active and all(c not in text for c in newest_active)  # the queue is not repeated
    assert len(active) + len(stored) >= len(history)


async def test_memory_block_truncates_under_pressure(mem) -> None:
    block = LayeredMemoryBlock(mem, user_id="u1", session_id="s1")
    text = "User data:\n- name: Ann\n\nRelevant memory:\n- line one\n- line two\n- line three"
    assert await block.atruncate(text, 3) == "User data:\n- name: Ann\n\nRelevant memory:\n- line one\n- line two"
    assert await block.atruncate(text, 10_000) is None
    cut = await block.atruncate(text, 12)
    assert cut is not None and not cut.endswith("Relevant memory:")
    with pytest.raises(ValueError, match="no session_id"):
        await LayeredMemoryBlock(mem, user_id="u1").aget([])


def test_tool_calls_and_results_are_not_stored_or_searchable_by_default(mem) -> None:
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1")
    talk = ChatMessage(role="assistant", content="let me look that up",
                       blocks=[TextBlock(text="let me look that up"),
                               ToolCallBlock(tool_call_id="c9", tool_name="recall", tool_kwargs={"query": "zanzibar"})])
    memory.put_messages([*tool_turn(), talk, ChatMessage(role="tool", content="zanzibar trip notes",
                                                          additional_kwargs={"tool_call_id": "c9"})])
    assert [(m.role, m.content) for m in mem.get_session_messages("u1", "s1")] == [
        ("user", "where do I live?"), ("assistant", "You live in Kazan."), ("assistant", "let me look that up")]
    texts = [h.text for q in ("zanzibar trip notes", "recall home") for h in mem.search(q, filters={"user_id": "u1"}).hits]
    assert not any("zanzibar" in t or "[tool call]" in t for t in texts)


def test_set_with_an_edited_tail_keeps_the_shared_history(mem) -> None:
    """Issue 24: a history whose last messages changed (an edit, a dropped turn) deletes and re-stores only
    those (``delete_message``), so the shared part keeps its records; nothing in common clears the session."""
    import asyncio

    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1")
    memory.set(turn(1) + turn(2))
    kept = [m.message_id for m in mem.get_session_messages("u1", "s1")][:2]
    edited = turn(1) + [ChatMessage(role="user", content="question number 2, edited")]
    memory.set(edited)
    assert memory.get_all() == edited
    stored = mem.get_session_messages("u1", "s1")
    assert [m.message_id for m in stored][:2] == kept and [m.seq for m in stored][:2] == [1, 2]  # the shared part stayed
    assert [h.text for h in mem.search("answer number 2", route="bm25", k=10).hits if "answer number 2" in h.text] == []
    asyncio.run(memory.aset(turn(1)))
    assert memory.get_all() == turn(1) and [m.message_id for m in mem.get_session_messages("u1", "s1")] == kept
    memory.set(turn(5))
    assert memory.get_all() == turn(5)
