"""What the adapters hand the model (issue 28): a window a provider accepts (never opened by the bot's
reply, also when the user wrote twice in a row), the budgeted context, and retriever documents that
say who wrote a message and when."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import RunnableLambda

from langchain_layered_memory import LayeredChatMessageHistory, LayeredMemoryMiddleware, LayeredMemoryRetriever, with_layered_memory
from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.testing import HashEmbedder
from llamaindex_layered_memory import LayeredMemoryRetriever as LlamaRetriever

T0 = datetime(2024, 3, 1, 8, 0, tzinfo=timezone.utc)
# the user wrote twice in a row (u3, u4): a window of 4 cut from this session opens with the reply a2
SESSION = [("user", "u1", "hello, I need help with my payments pod"), ("assistant", "a1", "sure, what happens?"),
           ("user", "u2", "it crashes with OOMKilled"), ("assistant", "a2", "raise the memory limit to 512Mi"),
           ("user", "u3", "done, and it restarted"), ("user", "u4", "now it is stable, thanks"),
           ("assistant", "a4", "glad it works")]
QUESTION = "what limit did you suggest?"


@pytest.fixture
def mem(tmp_path):
    s = LayeredMemorySettings()
    s.memory.short_term_window = 4
    m = LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=64), settings=s)
    m.add_messages([{"message_id": mid, "chat_id": "s1", "user_id": "u1", "user_name": "Ann", "role": role, "content": text,
                     "create_time": T0 + timedelta(minutes=i)} for i, (role, mid, text) in enumerate(SESSION)])
    yield m
    m.close()


def turns(messages: list[BaseMessage]) -> list[BaseMessage]:
    return [m for m in messages if not isinstance(m, SystemMessage)]


def test_engine_window_never_opens_with_the_reply(mem):
    window = [m for m in mem.get_context_for_user("u1", "s1") if m.kind == "window"]
    assert [m.message_id for m in window] == ["u3", "u4", "a4"]  # a2 would open it: left out


def test_chain_window_opens_with_the_user(mem):
    seen: list[list[BaseMessage]] = []

    def model(prompt_value: Any) -> AIMessage:
        seen.append(prompt_value.to_messages())
        return AIMessage("512Mi")

    prompt = ChatPromptTemplate.from_messages([("system", "Be brief."), MessagesPlaceholder("history"), ("human", "{question}")])
    chain = with_layered_memory(prompt | RunnableLambda(model), mem, input_messages_key="question", history_messages_key="history")
    chain.invoke({"question": QUESTION}, config={"configurable": {"user_id": "u1", "session_id": "s1"}})
    sent = turns(seen[0])
    assert isinstance(sent[0], HumanMessage) and [m.content for m in sent[:2]] == ["done, and it restarted", "now it is stable, thanks"]
    history = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1", mode="context").messages
    assert isinstance(history[0], SystemMessage) and isinstance(history[1], HumanMessage)


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.calls: list[list[BaseMessage]] = []

    def on_chat_model_start(self, serialized, messages, **kwargs):  # noqa: ANN001, ARG002
        self.calls.append(list(messages[0]))


def test_middleware_window_opens_with_the_user(mem):
    recorder = Recorder()
    agent = create_agent(FakeMessagesListChatModel(responses=[AIMessage("512Mi")]), tools=[],
                         middleware=[LayeredMemoryMiddleware(mem, max_tokens=300)])
    agent.invoke({"messages": [HumanMessage(QUESTION, id="q1")]},
                 config={"configurable": {"user_id": "u1", "thread_id": "s1"}, "callbacks": [recorder]})
    sent = turns(recorder.calls[0])
    assert isinstance(sent[0], HumanMessage) and sent[0].content == "done, and it restarted"
    assert sent[-1].content == QUESTION
    system = recorder.calls[0][0]
    assert isinstance(system, SystemMessage) and mem.count_tokens(system.content) <= 300


def test_retriever_documents_say_who_and_when(mem):
    mem.flush()
    doc = LayeredMemoryRetriever(mem, user_id="u1", k=1).invoke("OOMKilled crashes")[0]
    assert doc.page_content == "[2024-03-01 08:02] Ann: it crashes with OOMKilled" and doc.metadata["text"] == "it crashes with OOMKilled"
    node = LlamaRetriever(mem, user_id="u1", k=1).retrieve("OOMKilled crashes")[0]
    assert node.node.get_content() == "[2024-03-01 08:02] Ann: it crashes with OOMKilled"
    reply = LayeredMemoryRetriever(mem, user_id="u1", k=1).invoke("512Mi memory limit")[0]
    assert reply.page_content == "[2024-03-01 08:03] assistant: raise the memory limit to 512Mi"
