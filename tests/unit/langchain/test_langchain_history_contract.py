"""LayeredChatMessageHistory under RunnableWithMessageHistory, checked the way LangChain checks its own
InMemoryChatMessageHistory there (langchain-core's tests/unit_tests/runnables/test_history.py, in our
words): what the wrapped runnable sees and returns, what the history stores (ids, order, metadata),
sync, streaming and async, custom history factories."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.runnables.utils import ConfigurableFieldSpec

from langchain_layered_memory import LayeredChatMessageHistory
from layered_memory import LayeredMemory


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path, embedder="none")
    yield m
    m.close()


def wrap(runnable, get_history, **kwargs) -> RunnableWithMessageHistory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RunnableWithMessageHistory is deprecated in favour of LangGraph
        return RunnableWithMessageHistory(runnable, get_history, **kwargs)


def histories(mem):
    """A session factory over the engine (user u1), as apps write it."""
    return lambda session_id: LayeredChatMessageHistory(mem, user_id="u1", session_id=session_id)


def said(messages) -> str:
    return "you said: " + "\n".join(str(m.content) for m in messages if isinstance(m, HumanMessage))


def stored(mem, session: str, user: str = "u1") -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in mem.get_session_messages(user, session)]


def conversation(*pairs: str) -> list[tuple[str, str]]:
    return [("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(pairs)]


class CountingChatModel(BaseChatModel):
    """Answers with the number of messages it received."""

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=str(len(messages))))])

    @property
    def _llm_type(self) -> str:
        return "counting-chat-model"


# -- ids (issue 13, item 4) -----------------------------------------------------------------------
def test_add_messages_leaves_the_callers_messages_unchanged(mem) -> None:
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    sent = [HumanMessage("no id yet"), AIMessage("no id either", response_metadata={"model_name": "fake"})]
    before = [m.model_copy(deep=True) for m in sent]
    hist.add_messages(sent)
    assert sent == before and sent[0].id is None and sent[1].id is None
    got = hist.messages
    assert [m.content for m in got] == ["no id yet", "no id either"]
    assert got[0].id and got[1].id and got[0].id != got[1].id  # the stored copies carry generated ids


async def test_aadd_messages_leaves_the_callers_messages_unchanged(mem) -> None:
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    msg = HumanMessage("async, no id")
    await hist.aadd_messages([msg])
    assert msg.id is None and (await hist.aget_messages())[0].id


def test_runnable_with_message_history_returns_the_models_message_unchanged(mem) -> None:
    chain = wrap(RunnableLambda(lambda p: AIMessage(content=said(p["history"]) + "|" + p["input"])), histories(mem),
                 input_messages_key="input", history_messages_key="history")
    cfg = {"configurable": {"session_id": "s1"}}
    assert chain.invoke({"input": "hello"}, cfg) == AIMessage(content="you said: |hello")
    assert chain.invoke({"input": "good bye"}, cfg) == AIMessage(content="you said: hello|good bye")
    assert stored(mem, "s1") == conversation("hello", "you said: |hello", "good bye", "you said: hello|good bye")


async def test_async_runnable_with_message_history_returns_the_models_message_unchanged(mem) -> None:
    chain = wrap(RunnableLambda(lambda p: [AIMessage(content=said(p["history"]) + "|" + p["input"])]), histories(mem),
                 input_messages_key="input", history_messages_key="history")
    cfg = {"configurable": {"session_id": "s1"}}
    assert await chain.ainvoke({"input": "hello"}, cfg) == [AIMessage(content="you said: |hello")]
    assert await chain.ainvoke({"input": "bye"}, cfg) == [AIMessage(content="you said: hello|bye")]
    assert stored(mem, "s1") == conversation("hello", "you said: |hello", "bye", "you said: hello|bye")


def test_given_ids_are_kept_and_a_repeated_id_is_stored_once(mem) -> None:
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    msg = HumanMessage("with an id", id="m-1")
    hist.add_messages([msg])
    hist.add_messages([msg])  # a retry of the same message
    hist.add_messages([HumanMessage("same text, no id"), HumanMessage("same text, no id")])
    assert [(m.id, m.content) for m in hist.messages][0] == ("m-1", "with an id")
    assert [m.content for m in hist.messages] == ["with an id", "same text, no id", "same text, no id"]


# -- what the runnable sees and what is stored ----------------------------------------------------
def test_list_input_sees_the_whole_history_and_streams(mem) -> None:
    chain = wrap(RunnableLambda(said), histories(mem))
    cfg = {"configurable": {"session_id": "s1"}}
    assert chain.invoke([HumanMessage("hello")], cfg) == "you said: hello"
    assert chain.invoke([HumanMessage("good bye")], cfg) == "you said: hello\ngood bye"
    assert list(chain.stream([HumanMessage("hi again")], cfg)) == ["you said: hello\ngood bye\nhi again"]
    assert stored(mem, "s1") == conversation(
        "hello", "you said: hello", "good bye", "you said: hello\ngood bye", "hi again", "you said: hello\ngood bye\nhi again"
    )


async def test_list_input_async_and_astream(mem) -> None:
    chain = wrap(RunnableLambda(said), histories(mem))
    cfg = {"configurable": {"session_id": "a1"}}
    assert await chain.ainvoke([HumanMessage("hello")], cfg) == "you said: hello"
    assert await chain.ainvoke([HumanMessage("good bye")], cfg) == "you said: hello\ngood bye"
    assert [c async for c in chain.astream([HumanMessage("hi again")], cfg)] == ["you said: hello\ngood bye\nhi again"]
    assert [r for r, _ in stored(mem, "a1")] == ["user", "assistant"] * 3


def test_dict_input_with_messages_key(mem) -> None:
    chain = wrap(RunnableLambda(lambda p: said(p["messages"])), histories(mem), input_messages_key="messages")
    cfg = {"configurable": {"session_id": "s2"}}
    assert chain.invoke({"messages": [HumanMessage("hello")]}, cfg) == "you said: hello"
    assert chain.invoke({"messages": [HumanMessage("good bye")]}, cfg) == "you said: hello\ngood bye"


def test_dict_output_with_output_messages_key(mem) -> None:
    chain = wrap(RunnableLambda(lambda p: {"output": [AIMessage(content=said(p["history"]) + "|" + p["input"])]}), histories(mem),
                 input_messages_key="input", history_messages_key="history", output_messages_key="output")
    cfg = {"configurable": {"session_id": "s3"}}
    assert chain.invoke({"input": "hello"}, cfg) == {"output": [AIMessage(content="you said: |hello")]}
    assert chain.invoke({"input": "bye"}, cfg) == {"output": [AIMessage(content="you said: hello|bye")]}


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_chat_model_sees_the_history_before_the_new_message(mem, asynchronous) -> None:
    chain = wrap(CountingChatModel(), histories(mem))
    cfg = {"configurable": {"session_id": f"count-{asynchronous}"}}
    run = chain.ainvoke if asynchronous else None
    for expected in ("1", "3", "5"):
        out = await run([HumanMessage("hi")], cfg) if run else chain.invoke([HumanMessage("hi")], cfg)
        assert out.content == expected and out.id is not None  # the model's own run id, not ours
    assert [c for _, c in stored(mem, f"count-{asynchronous}")] == ["hi", "1", "hi", "3", "hi", "5"]


def test_history_factory_without_session_id(mem) -> None:
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="only")
    chain = wrap(RunnableLambda(lambda msgs: [AIMessage(content=said(msgs))]), lambda: hist)
    chain.invoke("hello")
    chain.invoke("hello again")
    assert stored(mem, "only") == conversation("hello", "you said: hello", "hello again", "you said: hello\nhello again")


def test_custom_history_factory_fields_keep_users_apart(mem) -> None:
    chain = wrap(
        RunnableLambda(lambda p: [AIMessage(content=said(p["messages"]))]),
        lambda user_id, conversation_id: LayeredChatMessageHistory(mem, user_id=user_id, session_id=conversation_id),
        input_messages_key="messages", history_messages_key="history",
        history_factory_config=[
            ConfigurableFieldSpec(id="user_id", annotation=str, name="User ID", default="", is_shared=True),
            ConfigurableFieldSpec(id="conversation_id", annotation=str, name="Conversation ID", default=None, is_shared=True),
        ],
    )
    u1 = {"configurable": {"user_id": "user1", "conversation_id": "1"}}
    assert chain.invoke({"messages": [HumanMessage("hello")]}, u1) == [AIMessage(content="you said: hello")]
    assert chain.invoke({"messages": [HumanMessage("goodbye")]}, u1) == [AIMessage(content="you said: goodbye")]
    assert chain.invoke({"messages": [HumanMessage("meow")]}, {"configurable": {"user_id": "user2", "conversation_id": "1"}}) \
        == [AIMessage(content="you said: meow")]
    assert stored(mem, "1", "user1") == conversation("hello", "you said: hello", "goodbye", "you said: goodbye")
    assert stored(mem, "1", "user2") == conversation("meow", "you said: meow")


def test_metadata_and_several_output_messages_are_stored_in_order(mem) -> None:
    def model(p):
        return [AIMessage(content="part one", id="ai-1", response_metadata={"model_name": "fake", "finish_reason": "stop"}),
                AIMessage(content="part two", additional_kwargs={"metadata": {"channel": "web"}})]

    chain = wrap(RunnableLambda(model), histories(mem), input_messages_key="input", history_messages_key="history")
    question = HumanMessage("question", name="Ann", additional_kwargs={"create_time": "2024-05-01T10:00:00Z"})
    out = chain.invoke({"input": [SystemMessage("be brief"), question]}, {"configurable": {"session_id": "m1"}})
    assert out[1].id is None and question.id is None  # nothing written into the caller's objects
    got = LayeredChatMessageHistory(mem, user_id="u1", session_id="m1").messages
    assert [(type(m).__name__, m.content) for m in got] == [
        ("SystemMessage", "be brief"), ("HumanMessage", "question"), ("AIMessage", "part one"), ("AIMessage", "part two"),
    ]
    assert got[1].name == "Ann" and got[1].response_metadata["layered_memory"]["create_time"] == "2024-05-01T10:00:00Z"
    assert got[2].id == "ai-1" and got[2].response_metadata["model_name"] == "fake"
    assert got[2].response_metadata["finish_reason"] == "stop"
    assert mem.get_messages([got[3].id], chat_id="m1")[0].metadata["channel"] == "web"
