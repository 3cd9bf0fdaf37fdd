"""Issue 18.3: the memory tools leave out the session being answered (its short-term window, the current
question among it, which the context already shows) unless asked; other sessions and older turns stay."""

from __future__ import annotations

import json

import pytest

from langchain_layered_memory import create_memory_tools
from layered_memory import LayeredMemory, LayeredMemorySettings
from llamaindex_layered_memory import LayeredMemoryToolSpec

QUESTION = "what was wrong with my payments pod?"


@pytest.fixture
def mem(tmp_path):
    settings = LayeredMemorySettings()
    settings.memory.short_term_window = 3
    m = LayeredMemory.embedded(tmp_path, embedder="none", settings=settings)
    rows = [("s0", "o1", "the payments pod was OOMKilled after the deploy"),
            ("s1", "a1", "payments pod dashboards look odd since monday"),  # s1, older than its window
            ("s1", "a2", "green tea"), ("s1", "a3", "sencha please"), ("s1", "a4", QUESTION)]
    m.add_messages([{"message_id": mid, "chat_id": chat, "user_id": "u1", "content": text, "create_time": 1_700_000_000 + i}
                    for i, (chat, mid, text) in enumerate(rows)])
    yield m
    m.close()


def lc_tools(mem, **kw):
    return {t.name: t for t in create_memory_tools(mem, user_id="u1", **kw)}


def test_langchain_tools_leave_out_the_window_of_the_runs_thread(mem):
    tools = lc_tools(mem)
    cfg = {"configurable": {"thread_id": "s1"}}
    text = tools["qdrant_search_memory"].invoke({"query_text": "payments pod"}, config=cfg)
    assert "OOMKilled" in text and "dashboards" in text and QUESTION not in text
    hits = json.loads(tools["search"].invoke({"queries": ["payments pod"]}, config=cfg))["hits"]
    assert {h["id"] for h in hits} == {"o1", "a1"}
    # without a session (or with exclude_window=False) the question is a hit again
    assert QUESTION in tools["qdrant_search_memory"].invoke({"query_text": "payments pod"})
    kept = lc_tools(mem, exclude_window=False)["qdrant_search_memory"].invoke({"query_text": "payments pod"}, config=cfg)
    assert QUESTION in kept
    fixed = lc_tools(mem, session_id="s1")["qdrant_search_memory"].invoke({"query_text": "payments pod"})
    assert QUESTION not in fixed and "OOMKilled" in fixed


async def test_langchain_async_tools_leave_out_the_window(mem):
    tools = lc_tools(mem)
    text = await tools["qdrant_search_memory"].ainvoke({"query_text": "payments pod"},
                                                       config={"configurable": {"session_id": "s1"}})
    assert "OOMKilled" in text and QUESTION not in text


def test_llamaindex_tool_spec_leaves_out_its_session_window(mem):
    spec = LayeredMemoryToolSpec(mem, user_id="u1", session_id="s1")
    assert QUESTION not in spec.qdrant_search_memory("payments pod") and "OOMKilled" in spec.qdrant_search_memory("payments pod")
    assert {h["id"] for h in spec.search(["payments pod"])["hits"]} == {"o1", "a1"}
    assert QUESTION in LayeredMemoryToolSpec(mem, user_id="u1", session_id="s1", exclude_window=False).qdrant_search_memory("payments pod")


async def test_llamaindex_async_and_the_limit_counts_after_the_exclusion(mem):
    spec = LayeredMemoryToolSpec(mem, user_id="u1", session_id="s1")
    text = await spec.aqdrant_search_memory("payments pod", limit=2)
    assert text.count("---") == 1 and QUESTION not in text  # two hits, neither from the window
