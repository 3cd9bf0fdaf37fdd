"""``LayeredMemoryBlock``: layered-memory as a block of LlamaIndex's ``Memory``.

    from llama_index.core.memory import Memory
    memory = Memory.from_defaults(
        session_id="telegram:42", token_limit=4000,
        memory_blocks=[LayeredMemoryBlock(mem, user_id="u1", priority=1)],
    )

``Memory`` keeps the recent turns in its own FIFO queue; when the queue is over its share of the
budget the oldest turns are flushed to the blocks: this block stores them in the engine (``_aput``).
On ``aget`` the block returns the engine's context for the session (summary, user data, the most
recent flushed messages, relevant memory, relevant conversation memory) as one text that ``Memory``
renders into the system message. Messages still in the queue are not repeated.
"""

from __future__ import annotations

import threading
from typing import Any

from layered_memory import ContextMessage, LayeredMemory
from layered_memory.context import context_line
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.memory.memory import BaseMemoryBlock

from ._convert import PERSONAL, engine_role, message_text, to_engine
from ._registry import Restorable, attach

EARLIER_HEADER = "Earlier in this conversation:"


class LayeredMemoryBlock(Restorable, BaseMemoryBlock[str]):
    """A ``Memory`` block backed by layered-memory.

    Args:
        mem: the engine handle (bound to ``user_id`` here).
        user_id: whose memory (defaults to ``mem``'s bound user).
        session_id: the conversation; default: the ``Memory``'s ``session_id``.
        priority: ``Memory`` truncates blocks with higher numbers first; 0 = never truncated.
        max_tokens: the engine's budget for this block (None: the engine default).
        include_vector: add the relevant-memory blocks (needs an embedder).

    Serializes (``to_dict``, pickling) to a reference of the store, like ``LayeredChatMemory``.
    """

    name: str = Field(default="layered_memory", description="The block's name in the memory template.")
    description: str | None = Field(default="Summary, user data and relevant memory from layered-memory.")
    priority: int = Field(default=1, description="0 = never truncated; higher numbers are truncated first.")
    user_id: str = Field(description="The user whose memory this is.")
    session_id: str | None = Field(default=None, description="The conversation; default: the Memory's session_id.")
    max_tokens: int | None = Field(default=None, gt=0, description="Token budget of the block.")
    include_vector: bool = Field(default=True)
    store: str | None = Field(default=None, description="Where the messages live (set from mem; no secrets).")
    tenant: str = Field(default="default", description="The engine tenant (set from mem).")

    _mem: LayeredMemory = PrivateAttr()
    _counts: dict[str, int] = PrivateAttr(default_factory=dict)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, mem: LayeredMemory | None = None, **data: Any) -> None:
        handle = attach(mem, data, who="LayeredMemoryBlock")
        super().__init__(**data)
        self._mem = handle

    @property
    def mem(self) -> LayeredMemory:
        return self._mem

    def _session(self, session_id: str | None) -> str:
        sid = self.session_id or session_id
        if not sid:
            raise ValueError(
                f"LayeredMemoryBlock {self.name!r}: no session_id; use it inside Memory (which passes its session_id) "
                "or pass LayeredMemoryBlock(mem, user_id=..., session_id=...)"
            )
        return sid

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        sid = self._session(block_kwargs.get("session_id"))
        active = list(messages or [])
        query = next((message_text(m) for m in reversed(active) if engine_role(m) == "user"), None)
        context = await self._mem.aget_context_for_user(
            None, sid, query=query or None, include_vector=self.include_vector, max_tokens=self.max_tokens
        )
        queue = [(engine_role(m), message_text(m).strip()) for m in active if engine_role(m) != "system"]
        return render_context(context, active=queue)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Store messages flushed from ``Memory``'s queue (in one engine batch per session)."""
        by_session: dict[str, list[ChatMessage]] = {}
        for m in messages:
            by_session.setdefault(self._session((m.additional_kwargs or {}).get("session_id")), []).append(m)
        for sid, msgs in by_session.items():
            stored = None if sid in self._counts else len(await self._mem.aget_session_messages(None, sid))
            with self._lock:  # reserve positions before the first await, so concurrent puts never share one
                start = self._counts.setdefault(sid, stored or 0)
                rows = to_engine(msgs, user_id=self.user_id, session_id=sid, start=start)
                self._counts[sid] = start + len(rows)
            if rows:
                await self._mem.aadd_messages(rows, chat_kind=PERSONAL)

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop lines from the end (conversation memory, then relevant memory, then the oldest
        context) until ``tokens_to_truncate`` tokens are gone; None when nothing is left."""
        lines = content.split("\n")
        saved = 0
        while lines and saved < tokens_to_truncate:
            saved += self._mem.count_tokens(lines.pop()) + 1
        while lines and (not lines[-1].strip() or (lines[-1].endswith(":") and not lines[-1].startswith("- "))):
            lines.pop()  # no dangling headers
        text = "\n".join(lines).strip()
        return text or None


def _overlap(window: list[tuple[str, str]], active: list[tuple[str, str]]) -> int:
    """How many of the newest window messages are the oldest messages still in the queue."""
    for n in range(min(len(window), len(active)), 0, -1):
        if window[-n:] == active[:n]:
            return n
    return 0


def render_context(context: list[ContextMessage], *, active: list[tuple[str, str]] = ()) -> str:  # type: ignore[assignment]
    """The engine's context as one text, in seed 002's order. Window messages are listed in the context's
    line format (``- [2024-05-02 09:05] Anna: text``) under "Earlier in this conversation:", except those
    still in Memory's queue (``active``: (role, text) pairs, oldest first)."""
    window = [c for c in context if c.kind == "window"]
    keep = len(window) - _overlap([(c.role, c.content.strip()) for c in window], list(active))
    earlier_lines = [f"- {context_line(c)}" for c in window[:keep]]
    parts: list[str] = []
    for item in context:
        if item.kind == "window":
            if earlier_lines:
                parts.append(EARLIER_HEADER + "\n" + "\n".join(earlier_lines))
                earlier_lines = []
            continue
        parts.append(item.content)
    return "\n\n".join(parts)


__all__ = ["LayeredMemoryBlock", "render_context"]
