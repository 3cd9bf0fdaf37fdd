"""Context assembly for the next prompt (seed 002), within a token budget.

Order: summary, user data, the short-term window (chronological), "Relevant memory: ...",
"Relevant conversation memory: ...", and when asked "Relevant documents: ..." (indexed documents,
each line with its citation). When the budget is short, what goes first is, in order: document
lines, conversation memory lines, relevant memory lines, the oldest window messages; the newest message is
always kept, and the summary and user data are cut to fit before they are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InvalidInputError
from .models import ContextMessage, Message, check_id
from .providers.tokens import first_grapheme, fit_to_tokens

PER_MESSAGE_TOKENS = 4  # role and separators, as chat APIs count them

SUMMARY_PREFIX = "Previous context summary: "
USER_DATA_HEADER = "User data:"
MEMORY_HEADER = "Relevant memory:"
CONVERSATION_HEADER = "Relevant conversation memory:"
DOCUMENTS_HEADER = "Relevant documents:"


def session_window(records: Any, tenant: str, user_id: str, session_key: str, limit: int, bots: Sequence[str]) -> list[Message]:
    """The last ``limit`` messages of the session as ``user_id`` saw it: their own messages plus the replies
    the bot stored under its own ids (``bots``; ``memory.bot_user_ids``). The bot's replies belong to the
    session, so a user who wrote in it sees them; a user who never wrote in the session sees none of them
    (the same rule as topics: participants see what was said in the chat). Other users' messages stay theirs."""
    own = records.window(tenant, user_id=user_id, session_key=session_key, limit=limit)
    if not own or not bots:
        return own
    merged = list(own)
    for bot in dict.fromkeys(bots):
        if bot != user_id:
            merged += records.window(tenant, user_id=bot, session_key=session_key, limit=limit)
    merged.sort(key=lambda m: (m.seq or 0, m.create_time))  # insertion order, as each window is
    return merged[-limit:]


@dataclass(slots=True)
class MemoryLine:
    """One line of a relevant-memory block; ``key`` deduplicates (e.g. a message_id)."""

    text: str
    key: str = ""


def message_key(item: Any) -> str:
    """The dedup key of a message in the context: ``chat_id|message_id`` (ids repeat across chats).
    Takes a Message, a ContextMessage or a SearchHit (whose meta holds ``channel_id``)."""
    if hasattr(item, "meta"):
        return f"{item.meta.get('channel_id')}|{item.id}"
    return f"{item.chat_id}|{item.message_id}"


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


def assemble_context(
    *,
    summary: str | None,
    user_data: Mapping[str, Any] | None,
    window: Sequence[Message],
    memory: Sequence[MemoryLine] = (),
    conversation: Sequence[MemoryLine] = (),
    documents: Sequence[MemoryLine] = (),
    max_tokens: int | None = None,
    count: Callable[[str], int],
) -> list[ContextMessage]:
    """Pack the blocks in the seed 002 order, never over ``max_tokens`` (counted with ``count``).

    Nothing in ``memory`` or ``conversation`` repeats a window message (the caller excludes them;
    lines with equal keys or equal text are kept once).
    """
    budget = max_tokens if max_tokens is not None else 10**12

    def cost(text: str) -> int:
        return count(text) + PER_MESSAGE_TOKENS

    window_msgs = [
        ContextMessage(
            role=m.role, content=m.content, kind="window", message_id=m.message_id, chat_id=m.chat_id,
            name=m.user_name or None, create_time=m.create_time,
        )
        for m in window
    ]
    # 1. the newest message always stays
    kept_window: list[ContextMessage] = []
    if window_msgs:
        last = window_msgs[-1]
        room = budget - PER_MESSAGE_TOKENS
        if count(last.content) > room:
            cut = _truncate(last.content, room, count) or first_grapheme(last.content)
            last = last.model_copy(update={"content": cut})
        kept_window.append(last)
        budget -= cost(last.content)
    # 2. summary and user data, cut to fit
    head: list[ContextMessage] = []
    for text, kind in ((summary and SUMMARY_PREFIX + summary, "summary"), (user_data and format_user_data(user_data), "user_data")):
        if not text:
            continue
        fitted = _truncate(text, budget - PER_MESSAGE_TOKENS, count)
        if fitted is None:
            continue
        head.append(ContextMessage(role="system", content=fitted, kind=kind))  # type: ignore[arg-type]
        budget -= cost(fitted)
    # 3. the rest of the window, newest first, contiguous
    for msg in reversed(window_msgs[:-1]):
        c = cost(msg.content)
        if c > budget:
            break
        kept_window.append(msg)
        budget -= c
    kept_window.reverse()
    # 4-5. memory blocks, best lines first
    seen_keys = {message_key(m) for m in kept_window if m.message_id}
    seen_texts = {m.content.strip() for m in kept_window}
    tail: list[ContextMessage] = []
    blocks = ((MEMORY_HEADER, memory, "memory"), (CONVERSATION_HEADER, conversation, "conversation_memory"),
              (DOCUMENTS_HEADER, documents, "documents"))
    for header, lines, kind in blocks:
        chosen: list[str] = []
        used = count(header) + PER_MESSAGE_TOKENS
        for line in lines:
            if (line.key and line.key in seen_keys) or line.text.strip() in seen_texts:
                continue
            c = count("\n- " + line.text)
            if used + c > budget:
                continue
            chosen.append(line.text)
            used += c
            if line.key:
                seen_keys.add(line.key)
            seen_texts.add(line.text.strip())
        if chosen:
            tail.append(ContextMessage(role="system", content=header + "\n" + "\n".join(f"- {t}" for t in chosen), kind=kind))  # type: ignore[arg-type]
            budget -= used
    return head + kept_window + tail


def context_tokens(messages: Sequence[ContextMessage], count: Callable[[str], int]) -> int:
    """Tokens the assembled context costs, as ``assemble_context`` counts them."""
    return sum(count(m.content) + PER_MESSAGE_TOKENS for m in messages)


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
