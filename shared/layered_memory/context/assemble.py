"""The budgeted assembly: fill ``max_tokens`` with what is worth most per token, in the seed 002 order.

Blocks, in order: "Previous context summary: ..." (system), user data (system), the short-term window
(the session's last messages, chronological), "Relevant memory: ..." (this session's older messages,
their neighbours, topic summaries, facts), "Relevant conversation memory: ..." (the user's other
sessions), and when asked "Relevant documents: ...". ``max_tokens`` is a target, not a ceiling:

1. the newest message always goes in (cut with "…" only when it alone is over the budget);
2. every other item (user data, the summary, each older window message, each recalled line) has a
   value (``ranking``) and a cost in tokens (a recalled line older than a day is counted without its time
   of day, as it is shown: ``lines.TIME_SHOWN_WITHIN``); they go in by value per token while they fit. The window
   stays contiguous (an older message only after every newer one) and never opens with the bot's reply
   (providers such as Anthropic and Gemini refuse a conversation that starts with the assistant);
3. a recalled line under ``context.relevance_floor`` never goes in, however much budget is left, and
   none at all when the best candidate is under ``context.relevance_gate`` (the question is about nothing
   in memory: an empty block beats a wrong one); nor one that repeats what is already in (``ranking.Chosen``);
4. the session summary loses the sentences that a chosen line or the window already holds;
5. what rendering the blocks frees (``lines``: a line on the date of the one above leaves its date out, a line
   ending in punctuation takes the newline into its last token; the summary's dropped sentences; the
   window's leading replies) is estimated and filled again, in up to ``REFILLS`` rounds; then the whole
   is counted once with the real tokenizer, and while it is over ``max_tokens`` (the estimate is a few
   tokens off) the weakest line goes: the result is never over ``max_tokens``. Measured on LoCoMo and
   the synthetic set at 500 to 4,000 tokens: 1.005 counts of the whole per context (1.94 before), the
   same evidence in the prompt and 0.2 to 1% more of the budget used.

The ``k`` settings (``memory.relevant_memory_k``, ``memory.conversation_memory_k``) cap the message
lines of their block.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..errors import InvalidInputError
from ..models import ContextMessage, Message, check_id
from ..providers.tokens import first_grapheme, fit_to_tokens
from ..sentences import split_sentences
from ..session_summaries import join_units, summary_units
from .lines import (
    BLOCKS, HEADERS, LINE_PREFIX, PER_MESSAGE_TOKENS, SUMMARY_PREFIX, USER_DATA_HEADER, block_text, context_tokens, counted_line, dated,
    line, recent_from, time_head,
)
from .ranking import MESSAGE_KINDS, Candidate, Chosen, normalized, per_token, tokens_of
from .window import without_leading_replies

# On the scale of ``ranking`` (a top search hit is 1.0, the fifth 0.08): the turn before the newest is worth
# about as much as the best hit, each older window turn 0.6 of the next (the fifth back about the third hit,
# the ninth back about the twentieth): a tight budget keeps the last exchange and the best hits, 2,000 tokens
# the whole window; the summary is worth about what the seventh hit is per token; user data (short, given
# by the platform) goes in early.
USER_DATA_VALUE = 1.0
SUMMARY_VALUE = 0.3
WINDOW_VALUE = 0.9  # the message before the newest; each older one is worth WINDOW_DECAY of the next
WINDOW_DECAY = 0.6
REFILL_SLACK = 8
REFILLS = 3  # refill rounds on the estimated room (the whole is counted once, after them)
MAX_CHARS_PER_TOKEN = 12  # no line averages more characters a token (o200k: about 4 in English, 1-2 in CJK)  # tokens freed by rendering worth a second pass


def format_user_data(data: Mapping[str, Any]) -> str:
    lines = [USER_DATA_HEADER]
    for key, value in data.items():
        if isinstance(value, (list, tuple)):
            value = ", ".join(str(v) for v in value)
        elif isinstance(value, dict):
            value = "; ".join(f"{k}={v}" for k, v in value.items())
        lines.append(f"- {key}: {value}")
    return "\n".join(lines)


def _truncate(text: str, budget: int, count: Callable[[str], int]) -> str | None:
    """Cut text to at most ``budget`` tokens, on a grapheme boundary (never half a ZWJ emoji)."""
    return fit_to_tokens(text, budget, count)


def _summary_without(summary: str, shown: Sequence[str]) -> str:
    """The summary without the sentences a shown line or window message already holds (a sentence that
    loses the speaker named before it gets the name)."""
    held = [normalized(t) for t in shown]
    kept: list[tuple[str | None, str]] = []
    speaker: str | None = None
    for who, sent in summary_units(summary):
        speaker = who if who is not None else speaker
        key = normalized(sent).rstrip(".。")
        if key and any(key in h for h in held):
            continue
        kept.append((speaker, sent))
    return join_units(kept)


class _Fill:
    """The greedy fill: what is chosen so far and what it costs."""

    def __init__(self, budget: int, count: Callable[[str], int], caps: Mapping[str, int], recent: datetime) -> None:
        self.budget, self.count, self.caps, self.recent = budget, count, caps, recent
        self.used = 0
        self.lines: dict[str, list[Candidate]] = {b: [] for b in BLOCKS}
        self.messages: dict[str, int] = {b: 0 for b in BLOCKS}  # message lines per block (the caps)
        self.header_cost = {b: count(HEADERS[b]) + PER_MESSAGE_TOKENS for b in BLOCKS}

    def room(self) -> int:
        return self.budget - self.used

    def try_line(self, c: Candidate, chosen: Chosen) -> bool:
        block = self.lines[c.block]
        room = self.room() - (0 if block else self.header_cost[c.block])
        if not c.tokens:
            text = counted_line(c.item, self.recent)
            if len(text) > MAX_CHARS_PER_TOKEN * room:  # cannot fit whatever it counts: spare the tokenizer
                return False
            c.tokens = tokens_of(self.count, text) + 1
        if c.tokens > room or chosen.repeats(c):
            return False
        is_message = c.kind in MESSAGE_KINDS
        if is_message and self.messages[c.block] >= self.caps.get(c.block, 10**9):
            return False
        block.append(c)
        self.messages[c.block] += is_message
        chosen.take(c)
        self.used += c.tokens + (self.header_cost[c.block] if len(block) == 1 else 0)
        return True


def assemble(
    *,
    summary: str | None,
    user_data: Mapping[str, Any] | None,
    window: Sequence[Message],
    candidates: Sequence[Candidate] = (),
    max_tokens: int,
    count: Callable[[str], int],
    caps: Mapping[str, int] | None = None,
    floor: float = 0.0,
    gate: float = 0.0,
) -> list[ContextMessage]:
    """Choose and order the context (see the module docstring). ``candidates`` are scored
    (``ranking.score_relevance``); their ``tokens`` are set here. No recalled line goes in unless the best
    candidate reaches ``gate``, and none under ``floor`` (the user's profile always may)."""
    caps = caps or {}
    recent = recent_from(window[-1].create_time if window else None)
    fill = _Fill(max_tokens, count, caps, recent)
    chosen = Chosen(cross=any(c.kind not in MESSAGE_KINDS for c in candidates))
    msgs = [ContextMessage(role=m.role, content=m.content, kind="window", message_id=m.message_id, chat_id=m.chat_id,
                           name=m.user_name or (m.user_id if m.role == "user" else None), create_time=m.create_time)
            for m in window]
    newest: list[ContextMessage] = []
    if msgs:  # 1. the newest message always stays
        last = msgs[-1]
        room = max_tokens - PER_MESSAGE_TOKENS
        if count(last.content) > room:
            last = last.model_copy(update={"content": _truncate(last.content, room, count) or first_grapheme(last.content)})
        newest = [last]
        fill.used += count(last.content) + PER_MESSAGE_TOKENS
    for m in window:
        chosen.add(f"{m.chat_id}|{m.message_id}", text=m.content)
    # 2. everything else by value per token
    older = msgs[:-1]
    head_items: list[tuple[str, str, float]] = []
    if user_data:
        head_items.append(("user_data", format_user_data(user_data), USER_DATA_VALUE))
    if summary:
        head_items.append(("summary", summary, SUMMARY_VALUE))
    pool: list[tuple[float, int, Any]] = []
    for kind, text, value in head_items:
        pool.append((value / (tokens_of(count, text) + PER_MESSAGE_TOKENS), 0, (kind, text)))
    for d, m in enumerate(reversed(older), 1):
        value = WINDOW_VALUE * WINDOW_DECAY ** (d - 1)
        pool.append((value / (tokens_of(count, m.content) + PER_MESSAGE_TOKENS), 1, (d, m)))
    best = max((c.relevance for c in candidates if c.kind != "profile"), default=0.0)
    kept = [c for c in candidates if c.value > 0 and (c.kind == "profile" or (best >= gate and c.relevance >= floor))]
    for c in kept:  # message lines go by rank (``ranking.per_token``): counted when they are tried
        c.tokens = 0 if c.kind in MESSAGE_KINDS else tokens_of(count, counted_line(c.item, recent)) + 1
        pool.append((per_token(c), 2, c))
    pool.sort(key=lambda x: -x[0])
    head: dict[str, str] = {}
    window_taken = 0  # older window messages taken, newest first (contiguous)
    waiting: dict[int, Message | ContextMessage] = {}
    broken = False
    for _, tag, obj in pool:
        if tag == 0:
            kind, text = obj
            cost = count(text) + PER_MESSAGE_TOKENS
            if cost > fill.room():
                room = fill.room() - PER_MESSAGE_TOKENS
                text = _truncate(text, room, count) if kind == "user_data" else _fit_sentences(text, room, count)
                if not text:
                    continue
                cost = count(text) + PER_MESSAGE_TOKENS
            head[kind] = text
            fill.used += cost
        elif tag == 1:  # contiguous: one whose newer neighbour is not in yet waits for it
            if broken:
                continue
            waiting[obj[0]] = obj[1]
            while window_taken + 1 in waiting:
                m = waiting.pop(window_taken + 1)
                cost = tokens_of(count, m.content) + PER_MESSAGE_TOKENS
                if cost > fill.room():
                    waiting.clear()
                    broken = True  # nothing older goes in
                    break
                window_taken += 1
                fill.used += cost
        else:
            fill.try_line(obj, chosen)
    kept_window = [*older[len(older) - window_taken:], *newest]
    win = without_leading_replies(kept_window) if newest else []
    # 4-5. refill what rendering frees, count once
    freed = sum(tokens_of(count, m.content) + PER_MESSAGE_TOKENS for m in kept_window[:len(kept_window) - len(win)])
    shown = [c.item.text for b in BLOCKS for c in fill.lines[b]] + [m.content for m in win]
    if "summary" in head:
        before = count(head["summary"])
        head["summary"] = _summary_without(head["summary"], shown)
        if not head["summary"]:
            del head["summary"]
            freed += before + PER_MESSAGE_TOKENS
        else:
            freed += before - count(head["summary"])
            chosen.add(text=head["summary"], verbatim=True)
    taken = {id(c) for b in BLOCKS for c in fill.lines[b]}
    rest = [c for c in sorted(kept, key=lambda c: -per_token(c)) if id(c) not in taken]
    # the room is estimated, so the whole is counted once, after the refills; the count decides
    for _ in range(REFILLS):  # the lines a refill adds leave their dates out too: room for a few more
        saves = freed + _rendering_saves(fill.lines, count, recent)
        fill.used -= saves
        # every line left out is tried again (one a previous round took is refused as a repeat: ``Chosen``)
        added = fill.used < max_tokens - REFILL_SLACK and any([fill.try_line(c, chosen) for c in rest])
        fill.used += saves  # back to the sum of the parts
        if not added:
            break
    out, total = _counted(head, win, fill.lines, count, recent)
    while total > max_tokens and _drop_weakest(fill):  # token boundaries: a few tokens off the sum of the parts
        out, total = _counted(head, win, fill.lines, count, recent)
    return out


def _rendering_saves(lines: Mapping[str, list[Candidate]], count: Callable[[str], int], recent: datetime) -> int:
    """About the tokens rendering the chosen lines into blocks saves on the sum of their counts (``lines.counted_line``): a
    line on the same date as the one above it leaves its date out (``lines.dated``), and a line that ends in
    punctuation takes the newline after it into its last token (o200k: ".\n" is one token; the block's last
    line has none)."""
    saved = 0
    date_cost: dict[bool, int] = {}  # what leaving the date out saves, with and without the time, probed once each
    for b in BLOCKS:
        ordered = dated(lines[b], recent)
        for i, (c, shows_date, timed) in enumerate(ordered):
            if not shows_date and c.item.when is not None:
                if timed not in date_cost:
                    with_date = tokens_of(count, f"{LINE_PREFIX}{time_head(c.item.when, time=timed)}x")
                    date_cost[timed] = max(0, with_date - tokens_of(count, f"{LINE_PREFIX}{time_head(c.item.when, date=False, time=timed)}x"))
                saved += date_cost[timed]
            end = c.item.text.rstrip()[-1:]
            if i < len(ordered) - 1 and end and not end.isalnum():
                saved += min(1, max(0, tokens_of(count, "x" + end) + 1 - tokens_of(count, "x" + end + "\n")))
    return saved


def _counted(head: Mapping[str, str], win: Sequence[ContextMessage], lines: Mapping[str, list[Candidate]],
             count: Callable[[str], int], recent: datetime) -> tuple[list[ContextMessage], int]:
    out = _render(head, win, lines, recent)
    return out, context_tokens(out, count)


def _drop_weakest(fill: _Fill) -> bool:
    pairs = [(per_token(c), b, c) for b in BLOCKS for c in fill.lines[b]]
    if not pairs:
        return False
    _, b, c = min(pairs, key=lambda x: x[0])
    fill.lines[b].remove(c)
    fill.messages[b] -= c.kind in MESSAGE_KINDS
    return True


def _fit_sentences(text: str, room: int, count: Callable[[str], int]) -> str | None:
    """The leading whole sentences of ``text`` that fit ``room`` tokens (None when not even one does)."""
    kept: list[str] = []
    for s in split_sentences(text):
        if count(" ".join([*kept, s])) > room:
            break
        kept.append(s)
    return " ".join(kept) or None


def _render(head: Mapping[str, str], window: Sequence[ContextMessage], lines: Mapping[str, list[Candidate]],
            recent: datetime) -> list[ContextMessage]:
    out: list[ContextMessage] = []
    if head.get("summary"):
        out.append(ContextMessage(role="system", content=SUMMARY_PREFIX + head["summary"], kind="summary"))
    if head.get("user_data"):
        out.append(ContextMessage(role="system", content=head["user_data"], kind="user_data"))
    out.extend(window)
    for b in BLOCKS:
        if lines[b]:
            out.append(ContextMessage(role="system", content=block_text(b, [c.item for c in lines[b]], recent), kind=b))  # type: ignore[arg-type]
    return out


def check_context_args(session_id: Any, query: Any, include_vector: Any, max_tokens: Any, task_id: Any) -> tuple[str, str | None, int | None, str | None]:
    """The checked arguments of ``get_context_for_user`` (all before any read).

    Raises:
        InvalidInputError: naming the argument, the rule and the fix.
    """
    session_id = check_id("session_id", session_id)
    if query is not None and not isinstance(query, str):
        raise InvalidInputError("query", query, "must be a string or None", "pass the user's latest message text")
    if not isinstance(include_vector, bool):
        raise InvalidInputError("include_vector", include_vector, "must be True or False", "pass a bool")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1):
        raise InvalidInputError("max_tokens", max_tokens, "must be an int >= 1 or None", "pass e.g. max_tokens=2000")
    return session_id, query, max_tokens, check_id("task_id", task_id, optional=True)  # type: ignore[return-value]


__all__ = ["assemble", "check_context_args", "format_user_data", "line"]
