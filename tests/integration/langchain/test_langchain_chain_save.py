"""``with_layered_memory`` (issue 24, "a turn lost without a word"): LangChain saves the turn in an end-of-chain
listener and only logs a listener's exception, so a failed save used to leave ``chain.invoke`` returning the
answer with the turn not stored. Now a question the engine would refuse fails before the model is called, and a
save that fails after the model answered reaches the caller, on every path (invoke, ainvoke, stream, astream,
batch, abatch).

The stores are real: a private ``redis-server`` that the test stops while the model runs (a LangChain callback
at ``on_chat_model_start``), and LangChain's own fake chat model answers.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder

from langchain_layered_memory import with_layered_memory
from layered_memory import BackendUnavailable, InvalidInputError, LayeredMemory

pytestmark = pytest.mark.redis

PROMPT = ChatPromptTemplate.from_messages([("system", "You are a bot."), MessagesPlaceholder("history"), ("human", "{question}")])
CFG = {"configurable": {"user_id": "u1", "session_id": "s1"}}
PATHS = ("invoke", "ainvoke", "stream", "astream", "batch", "abatch")


class ModelCalls(BaseCallbackHandler):
    """Counts chat model calls; ``then`` runs at the start of each (stopping Redis mid-turn)."""

    def __init__(self, then: Any = None) -> None:
        self.calls = 0
        self.then = then

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.calls += 1
        if self.then is not None:
            self.then()


def model(n: int = 3) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter(["the payments pod was OOMKilled"] * n))


def run(chain: Any, path: str, question: str, config: dict[str, Any]) -> Any:
    value = {"question": question}
    if path == "invoke":
        return chain.invoke(value, config=config)
    if path == "ainvoke":
        return asyncio.run(chain.ainvoke(value, config=config))
    if path == "stream":
        return list(chain.stream(value, config=config))
    if path == "astream":
        async def collect() -> list[Any]:
            return [c async for c in chain.astream(value, config=config)]
        return asyncio.run(collect())
    if path == "batch":
        return chain.batch([value], config=config)
    return asyncio.run(chain.abatch([value], config=config))


@pytest.fixture
def redis_mem(redis_server: Any):
    mem = LayeredMemory.from_urls(redis_url=redis_server.url, embedder=None)
    yield mem, redis_server
    mem.close()


@pytest.mark.parametrize("path", PATHS)
def test_redis_down_during_the_model_call_reaches_the_caller(redis_mem: Any, path: str) -> None:
    mem, server = redis_mem
    mem.add_message(message_id="old", chat_id="s1", user_id="u1", content="my payments pod restarts")
    calls = ModelCalls(then=server.stop)
    chain = with_layered_memory(PROMPT | model(), mem, input_messages_key="question", history_messages_key="history")
    with pytest.raises(BackendUnavailable, match=f"127.0.0.1:{server.port}") as info:
        run(chain, path, "What was wrong with my payments pod?", {**CFG, "callbacks": [calls]})
    assert calls.calls == 1  # the model answered; the save after it failed and said so
    assert any("not stored" in note for note in getattr(info.value, "__notes__", []))


@pytest.mark.parametrize("path", PATHS)
def test_an_over_long_question_fails_before_the_model_is_called(redis_mem: Any, path: str) -> None:
    mem, _ = redis_mem
    limit = mem.settings.memory.max_content_chars
    calls = ModelCalls()
    chain = with_layered_memory(PROMPT | model(), mem, input_messages_key="question", history_messages_key="history")
    with pytest.raises(InvalidInputError, match=rf"content=.*has 40000 characters, over max_content_chars={limit}.*MAX_CONTENT_CHARS"):
        run(chain, path, "x" * 40_000, {**CFG, "callbacks": [calls]})
    assert calls.calls == 0  # no model cost
    assert mem.get_session_messages("u1", "s1") == []


@pytest.mark.parametrize("path", PATHS)
def test_a_good_turn_is_stored_on_every_path(redis_mem: Any, path: str) -> None:
    mem, _ = redis_mem
    chain = with_layered_memory(PROMPT | model(), mem, input_messages_key="question", history_messages_key="history")
    out = run(chain, path, "What was wrong with my payments pod?", CFG)
    assert out
    assert [(m.role, m.content) for m in mem.get_session_messages("u1", "s1")] == [
        ("user", "What was wrong with my payments pod?"), ("assistant", "the payments pod was OOMKilled"),
    ]


def test_the_messages_form_without_keys_is_checked_and_saved_too(redis_mem: Any) -> None:
    """No input / history keys: the chain takes a list of messages and the history is prepended to it."""
    from langchain_core.messages import HumanMessage

    mem, server = redis_mem
    chain = with_layered_memory(model(), mem)
    with pytest.raises(InvalidInputError, match="max_content_chars"):
        chain.invoke([HumanMessage("y" * 40_000)], config=CFG)
    chain.invoke([HumanMessage("hello")], config=CFG)
    assert [m.content for m in mem.get_session_messages("u1", "s1")] == ["hello", "the payments pod was OOMKilled"]
    with pytest.raises(BackendUnavailable):
        chain.invoke([HumanMessage("and now?")], config={**CFG, "callbacks": [ModelCalls(then=server.stop)]})
