"""Fitting the engine's context into ``token_limit`` the way ``ChatMemoryBuffer`` counts.

``ChatMemoryBuffer.get`` counts ``len(tokenizer(" ".join(str(m.content) for m in messages)))`` over
the whole list, drops the oldest message while over the limit (then any assistant / tool messages
that would open the history), and returns the newest message alone, whole, when even that does not
fit. ``pack`` applies exactly that rule to the conversation window, so with nothing else in the
context the result equals the buffer's. The engine's other blocks share the budget in its priority
order: the newest message, then the summary and user data (cut with a "…" mark when short), then
the older window messages, then relevant-memory lines (best first). The result puts every system
block first: summary, user data, relevant memory, then the window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from llama_index.core.base.llms.types import ChatMessage, MessageRole

CUT_MARK = "…"
LINE_SEP = "\n- "
_REPLIES = (MessageRole.TOOL, MessageRole.ASSISTANT)  # the roles ChatMemoryBuffer never lets open the history

Counter = Callable[[Sequence[ChatMessage]], int]


def buffer_counter(tokenizer_fn: Callable[[str], list]) -> Counter:
    """ChatMemoryBuffer's count: one tokenization of the messages' contents joined by spaces."""

    def count(messages: Sequence[ChatMessage]) -> int:
        if not messages:
            return 0
        return len(tokenizer_fn(" ".join(str(m.content) for m in messages)))

    return count


def buffer_window(history: Sequence[ChatMessage], fits: Callable[[Sequence[ChatMessage]], bool], *, trimmed: bool = False) -> list[ChatMessage]:
    """The longest suffix of ``history`` that ``fits``, stepping as ``ChatMemoryBuffer.get`` does.

    ``trimmed``: ``history`` is already a cut of a longer session, so it may not open with a reply.
    """
    n = len(history)
    if n == 0:
        return []
    if trimmed:
        while n > 1 and history[-n].role in _REPLIES:
            n -= 1
    ok = fits(history[-n:])
    while not ok and n > 1:
        n -= 1
        while n > 1 and history[-n].role in _REPLIES:
            n -= 1
        ok = fits(history[-n:])
    return list(history[-n:]) if ok else list(history[-1:])


def _cut(message: ChatMessage, fits: Callable[[ChatMessage], bool]) -> ChatMessage | None:
    """The message with the longest text prefix (plus a cut mark) that fits; None when none does."""
    text = message.content or ""
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(ChatMessage(role=message.role, content=text[:mid] + CUT_MARK)):
            lo = mid
        else:
            hi = mid - 1
    return ChatMessage(role=message.role, content=text[:lo] + CUT_MARK) if lo else None


def pack(
    head: Sequence[ChatMessage], window: Sequence[ChatMessage], tail: Sequence[ChatMessage], budget: int, count: Counter,
    *, trimmed: bool = False,
) -> list[ChatMessage]:
    """``head`` (summary, user data) + ``tail`` (relevant-memory blocks, whose lines are ``"header" +
    "\\n- line" ...``) + the fitted window, never over ``budget`` except for the newest message. The system
    blocks lead, so the conversation ends with its newest message (every provider takes system text
    at the start; a system message after the user's question is refused or moved by some)."""
    everything = [*head, *tail, *window]
    if count(everything) <= budget and not (trimmed and window and window[0].role in _REPLIES):
        return everything
    newest = list(window[-1:])
    kept_head: list[ChatMessage] = []
    for item in head:
        if count([*kept_head, item, *newest]) <= budget:
            kept_head.append(item)
            continue
        cut = _cut(item, lambda m: count([*kept_head, m, *newest]) <= budget)
        if cut is not None:
            kept_head.append(cut)
    kept_window = buffer_window(window, lambda msgs: count([*kept_head, *msgs]) <= budget, trimmed=trimmed)
    kept_tail: list[ChatMessage] = []
    for block in tail:
        header, *lines = (block.content or "").split(LINE_SEP)
        chosen: list[str] = []
        for line in lines:
            candidate = ChatMessage(role=block.role, content=LINE_SEP.join([header, *chosen, line]))
            if count([*kept_head, *kept_tail, candidate, *kept_window]) <= budget:
                chosen.append(line)
        if chosen:
            kept_tail.append(ChatMessage(role=block.role, content=LINE_SEP.join([header, *chosen])))
    return [*kept_head, *kept_tail, *kept_window]
