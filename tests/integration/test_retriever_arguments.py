"""Issue 18.10: both retrievers take the engine the same way: positionally or as ``memory=`` (LlamaIndex's
old ``mem=`` keeps working, and LangChain accepts it too)."""

from __future__ import annotations

import pytest

from langchain_layered_memory import LayeredMemoryRetriever as LangChainRetriever
from layered_memory import LayeredMemory
from llamaindex_layered_memory import LayeredMemoryRetriever as LlamaIndexRetriever


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path, embedder="none")
    m.add_message(message_id="m1", chat_id="c1", user_id="u1", content="payments pod crash")
    yield m
    m.close()


@pytest.mark.parametrize("how", ["positional", "memory", "mem"])
def test_both_retrievers_take_the_engine_alike(mem, how):
    for cls, run in ((LangChainRetriever, lambda r: r.invoke("payments")), (LlamaIndexRetriever, lambda r: r.retrieve("payments"))):
        retriever = cls(mem, user_id="u1") if how == "positional" else cls(**{how: mem, "user_id": "u1"})
        assert len(run(retriever)) == 1 and retriever.memory is not None


def test_two_engines_at_once_are_refused(mem, tmp_path):
    with LayeredMemory.embedded(tmp_path / "other", embedder="none") as other:
        with pytest.raises(TypeError, match="once"):
            LlamaIndexRetriever(mem, mem=other)
        with pytest.raises(TypeError, match="once"):
            LangChainRetriever(mem, memory=other)
