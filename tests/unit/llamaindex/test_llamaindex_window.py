"""``_window``: the conversation window fitted with ChatMemoryBuffer's count and drop rule, checked
against ChatMemoryBuffer itself on seeded random histories (roles, lengths, budgets)."""

from __future__ import annotations

import random

import pytest
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.utils import get_tokenizer

from llamaindex_layered_memory._window import CUT_MARK, buffer_counter, pack

TOKENIZE = get_tokenizer()
COUNT = buffer_counter(TOKENIZE)
WORDS = "the garden tomatoes river Kazan cat fish moved flat week question answer".split()


def random_history(rng: random.Random) -> list[ChatMessage]:
    out = []
    for _ in range(rng.randint(1, 12)):
        role = rng.choice(["user", "user", "assistant", "assistant", "tool", "system", "model"])
        if role == "assistant" and rng.random() < 0.2:  # a turn that only calls a tool: content is None
            out.append(ChatMessage(role=role, blocks=[ToolCallBlock(tool_call_id="c", tool_name="t", tool_kwargs={})]))
            continue
        out.append(ChatMessage(role=role, content=" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 9)))))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_window_alone_equals_chat_memory_buffer(seed) -> None:
    rng = random.Random(seed)
    history = random_history(rng)
    for budget in (1, 2, 3, 5, 8, 13, 21, 34, 55, 200):
        expected = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=budget).get()
        assert pack([], history, [], budget, COUNT) == expected, (seed, budget)


def test_blocks_share_the_budget_in_priority_order() -> None:
    head = [ChatMessage(role="system", content="User data:\n- name: Ann\n- city: Kazan on the Volga river")]
    window = [ChatMessage(role="user", content="hello there"), ChatMessage(role="assistant", content="hi Ann"),
              ChatMessage(role="user", content="what is my city")]
    tail = [ChatMessage(role="system", content="Relevant memory:\n- moved to Kazan last spring\n- likes the river walk")]
    everything = [*head, *tail, *window]  # system blocks first: the conversation ends with its newest message
    assert pack(head, window, tail, COUNT(everything), COUNT) == everything
    for budget in range(1, COUNT(everything)):
        got = pack(head, window, tail, budget, COUNT)
        assert got[-1] == window[-1]  # the newest message is always there, whole, and last
        first_convo = next(i for i, m in enumerate(got) if m.role != "system")
        assert all(m.role != "system" for m in got[first_convo:])
        if len(got) > 1:
            assert COUNT(got) <= budget
        for m in got:  # head and tail are kept whole, cut with a mark, or line by line
            assert m in everything or m.content.endswith(CUT_MARK) or m.content.startswith("Relevant memory:\n- ")
        kept_window = [m for m in got if m in window]
        assert kept_window == window[len(window) - len(kept_window):]  # a contiguous suffix


def test_trimmed_window_never_opens_with_a_reply() -> None:
    window = [ChatMessage(role="assistant", content="an answer to a question we no longer have"),
              ChatMessage(role="user", content="next question"), ChatMessage(role="assistant", content="next answer")]
    assert pack([], window, [], 1000, COUNT) == window  # the whole session: kept as the buffer keeps it
    assert pack([], window, [], 1000, COUNT, trimmed=True) == window[1:]
