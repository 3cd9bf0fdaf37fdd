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


@pytest.mark.parametrize("cls", [LangChainRetriever, LlamaIndexRetriever], ids=["langchain", "llamaindex"])
def test_two_engines_at_once_are_refused(mem, tmp_path, cls):
    """Issue 24: LangChain's took ``(mem, mem=other)`` and ``memory=mem, mem=other`` silently (one engine
    ignored); LlamaIndex's refused ``(mem, memory=mem)``. The same forms now behave the same in both."""
    with LayeredMemory.embedded(tmp_path / "other", embedder="none") as other:
        for args, kw in (((mem,), {"mem": other}), ((mem,), {"memory": other}), ((), {"memory": mem, "mem": other})):
            with pytest.raises(TypeError, match="pass the engine once, positionally or as memory="):
                cls(*args, **kw)
    for args, kw in (((mem,), {"memory": mem}), ((mem,), {"mem": mem}), ((), {"memory": mem, "mem": mem})):
        assert cls(*args, **kw).memory is mem  # the same engine twice is one engine


@pytest.mark.parametrize("cls", [LangChainRetriever, LlamaIndexRetriever], ids=["langchain", "llamaindex"])
def test_a_missing_or_wrong_engine_is_the_same_type_error(cls):
    for args, kw, got in (((), {}, "nothing"), (("x",), {}, "str"), ((), {"user_id": "u1"}, "nothing")):
        with pytest.raises(TypeError, match=f"needs a layered_memory.LayeredMemory, positionally or as memory=, got {got}"):
            cls(*args, **kw)
