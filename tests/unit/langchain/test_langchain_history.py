"""LayeredChatMessageHistory: round trip, metadata, stable ids, async twins, context mode, and a
RunnableWithMessageHistory chain driven by a fake chat model over several turns."""

from __future__ import annotations

import warnings
from datetime import datetime, timezone

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from langchain_layered_memory import LayeredChatMessageHistory
from layered_memory import LayeredMemory


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path, embedder="none")
    yield m
    m.close()


class Recorder(BaseCallbackHandler):
    """Records the messages each chat model call received."""

    def __init__(self) -> None:
        self.calls: list[list] = []

    def on_chat_model_start(self, serialized, messages, **kwargs):  # noqa: ANN001
        self.calls.append(list(messages[0]))


def test_round_trip_keeps_types_ids_and_metadata(mem):
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="telegram:1")
    sent = [
        HumanMessage("I live in Kazan", id="h1", name="Ann",
                     additional_kwargs={"create_time": "2024-01-15T10:30:00Z", "reply_message_id": "h0", "metadata": {"channel": "tg"}}),
        AIMessage("", id="a1", tool_calls=[{"name": "geo", "args": {"city": "Kazan"}, "id": "call_1"}],
                  response_metadata={"model_name": "fake"}),
        ToolMessage("Kazan is in Russia", tool_call_id="call_1", id="t1"),
        AIMessage([{"type": "text", "text": "Nice city!"}], id="id with spaces"),
    ]
    hist.add_messages(sent)
    got = hist.messages
    assert [type(m) for m in got] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert [m.id for m in got] == ["h1", "a1", "t1", "id with spaces"]
    human, call, tool, answer = got
    assert human.name == "Ann"
    assert human.additional_kwargs["create_time"] == "2024-01-15T10:30:00Z"
    engine = human.response_metadata["layered_memory"]
    assert engine["create_time"] == "2024-01-15T10:30:00Z"
    assert engine["reply_message_id"] == "h0" and engine["user_name"] == "Ann" and engine["session_key"] == "telegram:1"
    assert mem.get_messages(["h1"], chat_id="telegram:1")[0].metadata["channel"] == "tg"
    assert call.tool_calls[0]["args"] == {"city": "Kazan"} and call.content == ""
    assert call.response_metadata["model_name"] == "fake"
    assert tool.tool_call_id == "call_1"
    assert answer.content == [{"type": "text", "text": "Nice city!"}]
    # the engine holds searchable text for the tool call, and the messages are searchable
    assert "geo" in mem.get_messages(["a1"], chat_id="telegram:1")[0].content
    assert mem.search("Kazan", k=5).total_found >= 2


def test_ids_are_stable_and_writes_idempotent(mem):
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    msg = HumanMessage("has an id", id="fixed-1")
    hist.add_messages([msg])
    hist.add_messages([msg])  # a retry of a message with an id is a no-op
    hist.add_user_message("second")
    assert [m.content for m in hist.messages] == ["has an id", "second"]
    assert hist.messages[0].id == "fixed-1" and hist.messages[1].id  # the stored copy got a generated id


def test_sessions_and_users_are_separate_and_clear(mem):
    a = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    b = LayeredChatMessageHistory(mem, user_id="u1", session_id="s2")
    c = LayeredChatMessageHistory(mem, user_id="u2", session_id="s1")
    a.add_user_message("a")
    b.add_user_message("b")
    c.add_user_message("c")
    assert [m.content for m in a.messages] == ["a"]
    assert [m.content for m in c.messages] == ["c"]
    a.clear()
    assert a.messages == [] and [m.content for m in b.messages] == ["b"]


def test_window_limits_messages(mem):
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1", window=2)
    hist.add_messages([HumanMessage(f"m{i}") for i in range(5)])
    assert [m.content for m in hist.messages] == ["m3", "m4"]


async def test_async_twins(mem):
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    await hist.aadd_messages([HumanMessage("hello", id="x1"), AIMessage("hi", id="x2")])
    got = await hist.aget_messages()
    assert [m.id for m in got] == ["x1", "x2"]
    await hist.aclear()
    assert await hist.aget_messages() == []


def test_context_mode_returns_assembled_context(mem):
    mem.set_user_data("u1", {"name": "Ann", "city": "Kazan"})
    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1", mode="context")
    hist.add_messages([HumanMessage("hi", id="c1"), AIMessage("hello Ann", id="c2")])
    got = hist.messages
    assert isinstance(got[0], SystemMessage) and "User data" in got[0].content and "Kazan" in got[0].content
    assert [m.id for m in got[1:]] == ["c1", "c2"]


def test_bad_arguments_name_the_fix(mem):
    with pytest.raises(ValueError, match="user_id=None.*for_user"):
        LayeredChatMessageHistory(mem, session_id="s1")
    with pytest.raises(ValueError, match="mode='raw'"):
        LayeredChatMessageHistory(mem, user_id="u1", session_id="s1", mode="raw")  # type: ignore[arg-type]
    bound = LayeredChatMessageHistory(mem.for_user("u9"), session_id="s1")
    bound.add_user_message("bound works")
    assert mem.get_session_messages("u9", "s1")[0].content == "bound works"


@pytest.mark.parametrize("mode", ["messages", "context"])
def test_runnable_with_message_history_multi_turn(mem, mode):
    model = FakeMessagesListChatModel(responses=[AIMessage("Nice to meet you, Ann"), AIMessage("You live in Kazan"), AIMessage("Bye")])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a helpful bot."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chain = RunnableWithMessageHistory(
            prompt | model,
            lambda session_id: LayeredChatMessageHistory(mem, user_id="u1", session_id=session_id, mode=mode),
            input_messages_key="question",
            history_messages_key="history",
        )
    rec = Recorder()
    cfg = {"configurable": {"session_id": "s1"}, "callbacks": [rec]}
    chain.invoke({"question": "I am Ann and I live in Kazan"}, config=cfg)
    chain.invoke({"question": "Where do I live?"}, config=cfg)
    chain.invoke({"question": "Thanks"}, config=cfg)
    third = rec.calls[2]
    contents = [m.content for m in third]
    assert contents == [
        "You are a helpful bot.", "I am Ann and I live in Kazan", "Nice to meet you, Ann",
        "Where do I live?", "You live in Kazan", "Thanks",
    ]
    stored = mem.get_session_messages("u1", "s1")
    assert [(m.role, m.content) for m in stored] == [
        ("user", "I am Ann and I live in Kazan"), ("assistant", "Nice to meet you, Ann"),
        ("user", "Where do I live?"), ("assistant", "You live in Kazan"), ("user", "Thanks"), ("assistant", "Bye"),
    ]


def test_context_mode_brings_summary_once_the_session_outgrows_the_window(tmp_path):
    from layered_memory import LayeredMemorySettings

    settings = LayeredMemorySettings()
    settings.memory.short_term_window = 4
    settings.memory.summary_threshold_messages = 6
    mem = LayeredMemory.embedded(tmp_path, embedder="none", settings=settings)
    try:
        hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1", mode="context")
        t0 = datetime(2024, 1, 1, tzinfo=timezone.utc).timestamp()
        hist.add_messages([
            (HumanMessage if i % 2 == 0 else AIMessage)(f"turn {i} about the garden and tomatoes", id=f"g{i}",
                                                        additional_kwargs={"create_time": t0 + i})
            for i in range(12)
        ])
        got = hist.messages
        assert isinstance(got[0], SystemMessage) and got[0].content.startswith("Previous context summary:")
        assert [m.id for m in got if not isinstance(m, SystemMessage)] == ["g8", "g9", "g10", "g11"]
    finally:
        mem.close()


def test_a_platform_edit_and_delete_through_the_history(mem):
    """Issue 24: re-adding a message with the same id keeps the stored copy; edit_message changes it (the
    search follows), delete_message removes it; a history bound to another user cannot touch it."""
    import asyncio

    from layered_memory import InvalidInputError, NotFoundError

    hist = LayeredChatMessageHistory(mem, user_id="u1", session_id="telegram:1")
    hist.add_messages([HumanMessage("the meeting is on Mondy", id="42"), AIMessage("noted", id="43"),
                       HumanMessage([{"type": "text", "text": "see the agenda"}], id="id with spaces")])
    hist.add_messages([HumanMessage("the meeting is on Monday", id="42")])  # a re-add: the stored copy stays
    assert hist.messages[0].content == "the meeting is on Mondy"
    edited = hist.edit_message(HumanMessage("the meeting is on Monday", id="42", name="Ann"))
    assert edited.content == "the meeting is on Monday" and edited.id == "42" and edited.name == "Ann"
    assert [m.content for m in hist.messages][:2] == ["the meeting is on Monday", "noted"]
    assert [h.id for h in mem.search("Monday", route="bm25").hits][0] == "42"
    blocks = asyncio.run(hist.aedit_message(HumanMessage([{"type": "text", "text": "see the new agenda"}], id="id with spaces")))
    assert blocks.content == [{"type": "text", "text": "see the new agenda"}] and blocks.id == "id with spaces"
    other = LayeredChatMessageHistory(mem, user_id="u2", session_id="telegram:1")
    with pytest.raises(InvalidInputError, match="another user's message"):
        other.edit_message(HumanMessage("hijacked", id="42"))
    with pytest.raises(InvalidInputError, match="another user's message"):
        other.delete_message("42")
    with pytest.raises(NotFoundError):
        hist.edit_message(HumanMessage("never stored", id="99"))
    with pytest.raises(ValueError, match="message.id=None"):
        hist.edit_message(HumanMessage("no id"))
    assert hist.delete_message("43") and not hist.delete_message("43")
    assert asyncio.run(hist.adelete_message("id with spaces"))
    assert [m.id for m in hist.messages] == ["42"]
