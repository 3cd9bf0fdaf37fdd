"""The one line format of the context and its text rendering.

Every line the model reads says who and when, the same way in every block::

    [2024-05-02 09:05] Anna: Our payments pod fails with CrashLoopBackOff
    [09:06] assistant: Roll back the deploy and check its logs        (same date as the line above)
    [2024-04-30 18:12] topic "Trip to Kazan": Anna flies on June 3; the hotel is booked.
    [2024-04-29] fact: Kazan (place): the city Anna moves to | Anna lives_in Kazan

Times are UTC. Inside a block the lines run in time order and a line on the same date as the one
above it shows only the time (``[09:06]``): measured on LoCoMo, the full date on every line costs
about 6 tokens a line (a tenth of a 2,000-token context) and says nothing the line above did not.
The time of day is shown only on recent lines, those within ``TIME_SHOWN_WITHIN`` (a day) of the
conversation's newest message: an older line shows its date when the line above is on another date
(``[2024-04-29] Anna: ...``), and nothing more. "This morning" and "an hour ago" need the time; a
line from last month needs its date, and its time of day costs about 5 tokens a line (measured on
LoCoMo, where almost every recalled line is older than a day: 0.2 to 1 point more evidence in the
prompt at 500 to 4,000 tokens, the room going to more lines).

``Context`` is what ``get_context_for_user`` returns: the list of ``ContextMessage`` (seed 002
order) with ``text``, the whole context as the model reads it (``print(ctx)`` prints it): the
system blocks as they are, the window's turns as lines of the same format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

from ..models import ContextMessage, Message

PER_MESSAGE_TOKENS = 4  # role and separators, as chat APIs count them

SUMMARY_PREFIX = "Previous context summary: "
USER_DATA_HEADER = "User data:"
MEMORY_HEADER = "Relevant memory:"
CONVERSATION_HEADER = "Relevant conversation memory:"
DOCUMENTS_HEADER = "Relevant documents:"
HEADERS = {"memory": MEMORY_HEADER, "conversation_memory": CONVERSATION_HEADER, "documents": DOCUMENTS_HEADER}
BLOCKS = ("memory", "conversation_memory", "documents")  # seed 002 order of the recalled blocks
LINE_PREFIX = "- "
TIME_SHOWN_WITHIN = timedelta(days=1)  # a recalled line this close to the newest message shows its time of day


def stamp(when: datetime | None, *, date: bool = True) -> str:
    """``2024-05-02 09:05`` (UTC); ``09:05`` with ``date=False``; "" without a time."""
    return "" if when is None else _stamp(when, date)


@lru_cache(maxsize=20_000)
def _stamp(when: datetime, date: bool) -> str:
    t = when.astimezone(timezone.utc) if when.tzinfo is not None and when.utcoffset() else when
    hm = f"{t.hour:02d}:{t.minute:02d}"
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {hm}" if date else hm


def speaker_name(role: str, user_name: str | None, user_id: str | None) -> str:
    """Who wrote a message: the user's name (their id when the platform gave none) for user turns,
    the role otherwise ("assistant" for the bot's replies)."""
    if role == "user":
        return (user_name or user_id or "user").strip() or "user"
    return role


def line(when: datetime | None, who: str | None, text: str, *, date: bool = True, time: bool = True) -> str:
    """``[2024-05-02 09:05] Anna: text`` (the parts that are known, and asked: ``date``, ``time``)."""
    text = " ".join(text.split())
    head = time_head(when, date=date, time=time)
    return f"{head}{who}: {text}" if who else f"{head}{text}"


def time_head(when: datetime | None, *, date: bool = True, time: bool = True) -> str:
    """``[2024-05-02 09:05] ``, ``[2024-05-02] ``, ``[09:05] `` or "" (nothing known or asked)."""
    if when is None or not (date or time):
        return ""
    return f"[{stamp(when)}] " if date and time else f"[{stamp(when)[:10]}] " if date else f"[{stamp(when, date=False)}] "


def message_line(m: Message) -> str:
    return line(m.create_time, speaker_name(m.role, m.user_name, m.user_id), m.content)


def hit_line(hit: Any) -> str:
    """A search hit (``SearchHit``) in the context's line format: ``[2024-05-02 09:05] Anna: text``."""
    meta = hit.meta
    when = meta.get("date")
    if isinstance(when, str):
        try:
            when = datetime.fromisoformat(when.replace("Z", "+00:00"))
        except ValueError:
            when = None
    return line(when if isinstance(when, datetime) else None, str(meta.get("author") or meta.get("role") or "") or None, hit.text)


@dataclass(slots=True)
class MemoryLine:
    """One recalled line before ranking: its text (without time), who said it, when, a dedup ``key``
    (``chat_id|message_id``, ``topic:<id>``, ``kg:<id>``, ``doc|<id>``), the tier's own ``score`` (best
    first; only the order within a tier is used) and the keys of the messages it restates (``sources``:
    a fact and the message it came from are never both shown)."""

    text: str
    key: str = ""
    when: datetime | None = None
    who: str | None = None
    score: float = 0.0
    sources: tuple[str, ...] = ()

    def render(self, *, date: bool = True, time: bool = True) -> str:
        return line(self.when, self.who, self.text, date=date, time=time)


def dated(items: Sequence[Any], recent: datetime | None = None) -> list[tuple[Any, bool, bool]]:
    """The items of one block (``MemoryLine``, or anything with ``.item`` holding one) in time order (undated
    ones first), each with whether its line shows the date (not when the line above is on the same date) and
    the time of day (only from ``recent`` on, see ``recent_from``; on every line when ``recent`` is None)."""
    ordered = sorted(items, key=lambda x: _time_key(getattr(x, "item", x)))
    out: list[tuple[Any, bool, bool]] = []
    last_day: str | None = None
    for x in ordered:
        when = getattr(x, "item", x).when
        day = stamp(when)[:10] if when is not None else None
        out.append((x, day is None or day != last_day, shows_time(when, recent)))
        last_day = day
    return out


def shows_time(when: datetime | None, recent: datetime | None) -> bool:
    """Whether a line at ``when`` shows its time of day: from ``recent`` on (a naive time is UTC); every line
    when ``recent`` is None."""
    return recent is None or (when is not None and _utc(when) >= recent)


def counted_line(item: MemoryLine, recent: datetime | None) -> str:
    """A block's line as its cost is counted before the block is laid out: its date, and its time of day when
    it shows one (``shows_time``); laid out, it may also leave the date out (``dated``)."""
    return LINE_PREFIX + item.render(time=shows_time(item.when, recent))


def _utc(when: datetime) -> datetime:
    """``when`` comparable with every other line's: a naive time (a memory source of the caller's may give one)
    is UTC, as ``stamp`` prints it."""
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


def recent_from(newest: datetime | None) -> datetime:
    """From when a recalled line shows its time of day: ``TIME_SHOWN_WITHIN`` before the conversation's newest
    message (before now when there is none)."""
    return _utc(newest or datetime.now(timezone.utc)) - TIME_SHOWN_WITHIN


def _time_key(item: MemoryLine) -> tuple[bool, datetime]:
    return (item.when is not None, _utc(item.when) if item.when is not None else _MIN_TIME)


_MIN_TIME = datetime.min.replace(tzinfo=timezone.utc)


def render_lines(items: Sequence[MemoryLine], recent: datetime | None = None) -> list[str]:
    """Lines of one block in time order (undated ones first), the date left out when it repeats and the time of
    day before ``recent`` (``dated``; None: every line shows its time)."""
    return [item.render(date=date, time=time) for item, date, time in dated(items, recent)]


def block_text(kind: str, items: Sequence[MemoryLine], recent: datetime | None = None) -> str:
    return HEADERS[kind] + "\n" + "\n".join(LINE_PREFIX + t for t in render_lines(items, recent))


def context_line(m: ContextMessage) -> str:
    """One context message as the text rendering shows it (window turns as lines)."""
    if m.kind != "window":
        return m.content
    return line(m.create_time, speaker_name(m.role, m.name, None), m.content)


def context_tokens(messages: Sequence[ContextMessage], count: Callable[[str], int]) -> int:
    """Tokens the context costs as chat APIs take it: each message's content plus its role overhead."""
    return sum(message_tokens(count, m.content) + PER_MESSAGE_TOKENS for m in messages)


def message_tokens(count: Callable[[str], int], text: str) -> int:
    """``count(text)``, remembered for the last few hundred texts: the assembly counts its blocks after the
    fill and again after the refill (a block the refill left alone is the same text), and the caller counts
    the result once more."""
    return _remembered(count, text) if len(text) <= MAX_REMEMBERED_CHARS else count(text)


MAX_REMEMBERED_CHARS = 65_536


@lru_cache(maxsize=256)
def _remembered(count: Callable[[str], int], text: str) -> int:
    return count(text)


class Context(list):  # type: ignore[type-arg]
    """The assembled context: a list of ``ContextMessage`` in seed 002 order, plus

    - ``text``: the whole context as the model reads it (system blocks as they are, the window's turns
      as ``[time] Name: text`` lines, blocks separated by a blank line); ``str(ctx)`` and ``print(ctx)``
      give it;
    - ``tokens``: what it costs (``context_tokens``), never over ``max_tokens``; ``max_tokens``: the budget;
    - ``timings``: milliseconds per stage (``window``, ``recall``, ``rank``, ``total``);
    - ``window``: the session's last messages as read (``Message`` records), before the budget cut
      some: an adapter that trims the window by its framework's own rule starts from them.
    """

    tokens: int
    max_tokens: int
    timings: dict[str, float]
    window: list[Message]

    def __init__(self, messages: Sequence[ContextMessage] = (), *, tokens: int = 0, max_tokens: int = 0,
                 timings: dict[str, float] | None = None, window: Sequence[Message] = ()) -> None:
        super().__init__(messages)
        self.tokens = tokens
        self.max_tokens = max_tokens
        self.timings = dict(timings or {})
        self.window = list(window)

    @property
    def text(self) -> str:
        parts: list[str] = []
        window: list[str] = []
        for m in self:
            if m.kind == "window":
                window.append(context_line(m))
                continue
            if window:
                parts.append("\n".join(window))
                window = []
            parts.append(m.content)
        if window:
            parts.append("\n".join(window))
        return "\n\n".join(parts)

    def __str__(self) -> str:
        return self.text

    def to_dicts(self) -> list[dict[str, Any]]:
        """``[{"role", "content"}, ...]``: the chat-API shape of every message."""
        return [m.to_dict() for m in self]


__all__ = [
    "BLOCKS", "CONVERSATION_HEADER", "Context", "DOCUMENTS_HEADER", "HEADERS", "LINE_PREFIX", "MEMORY_HEADER", "MemoryLine",
    "PER_MESSAGE_TOKENS", "SUMMARY_PREFIX", "TIME_SHOWN_WITHIN", "USER_DATA_HEADER", "block_text", "context_line", "context_tokens", "counted_line", "dated",
    "hit_line",
    "line", "message_line", "message_tokens", "recent_from", "render_lines", "shows_time", "speaker_name", "stamp",
    "time_head",
]
