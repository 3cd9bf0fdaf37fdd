"""``LayeredChatMemory``: a drop-in for LlamaIndex's ``ChatMemoryBuffer`` backed by layered-memory.

    from layered_memory import LayeredMemory
    from llamaindex_layered_memory import LayeredChatMemory

    mem = LayeredMemory.embedded("./memory")
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="telegram:42", token_limit=3000)
    engine = SimpleChatEngine.from_defaults(llm=llm, memory=memory)

``get(input)`` returns the engine's assembled context (summary, user data, the recent window,
relevant memory, relevant conversation memory: seed 002's order) within ``token_limit``; ``put``
stores messages in the engine (durable, indexed, searchable by the tools and the retriever). The
async methods await the engine's async twins, never a private event loop.

``to_dict`` / ``to_string`` / pickling (and so an agent's ``Context.to_dict``) write a reference to
the store; restoring attaches the engine registered for it in this process: automatic within one
process, ``register_memory(mem)`` in a new one (see ``_registry``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from layered_memory import LayeredMemory, Message
from layered_memory.context import Context
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms.llm import LLM
from llama_index.core.memory.types import BaseMemory
from llama_index.core.utils import get_tokenizer

from ._convert import PERSONAL, context_to_chat, from_engine, to_engine, without_tools
from ._registry import Restorable, attach, bind_user
from ._window import buffer_counter, pack

logger = logging.getLogger(__name__)

DEFAULT_TOKEN_LIMIT = 3000
DEFAULT_SESSION_ID = "chat_history"  # ChatMemoryBuffer's default chat_store_key
CONTEXT_WINDOW_RATIO = 0.75  # as ChatMemoryBuffer: 3/4 of the LLM's context window
MAX_TAIL_DELETES = 50  # set(): a changed stored tail up to this long is deleted message by message, a longer one cleared
_HEAD = ("summary", "user_data")

__all__ = ["LayeredChatMemory", "bind_user"]


class LayeredChatMemory(Restorable, BaseMemory):
    """Chat memory for chat engines and agents, stored and assembled by layered-memory.

    Args:
        mem: the engine handle (a tenant handle; bound to ``user_id`` here). Omit it only when
            restoring (``store`` given): the engine registered for that store is used.
        user_id: whose memory this is (defaults to ``mem``'s bound user).
        session_id: the conversation (engine ``chat_id``/``session_key``).
        token_limit: the budget of ``get()`` (minus ``initial_token_count``), counted as
            ``ChatMemoryBuffer`` counts it.
        include_vector: add the "Relevant memory" blocks (needs an embedder).
        tokenizer_fn: counts tokens as chat engines do (default: LlamaIndex's tokenizer).
        save_tool_messages: also store tool calls and tool results. Off by default (as in the LangChain
            middleware): an agent's memory-tool result would be stored and found again by the next
            search, and tool output is rarely worth recalling; the user's words and the answers are kept.
            An agent still sees its tool calls within a run (its scratchpad holds them).

    ``to_dict()`` / ``to_string()`` and pickling write a reference (``store``, ``tenant``,
    ``user_id``, ``session_id`` and the options), never messages or secrets; restoring attaches the
    engine registered for ``store`` in this process (see ``register_memory``).
    """

    user_id: str = Field(description="The user whose memory this is.")
    session_id: str = Field(default=DEFAULT_SESSION_ID, description="The conversation (engine chat_id).")
    token_limit: int = Field(default=DEFAULT_TOKEN_LIMIT, gt=0, description="Token budget of get().")
    include_vector: bool = Field(default=True, description="Add relevant-memory blocks (needs an embedder).")
    save_tool_messages: bool = Field(default=False, description="Also store tool calls and tool results.")
    store: str | None = Field(default=None, description="Where the messages live (set from mem; no secrets).")
    tenant: str = Field(default="default", description="The engine tenant (set from mem).")
    tokenizer_fn: Callable[[str], list] = Field(default_factory=get_tokenizer, exclude=True)

    _mem: LayeredMemory = PrivateAttr()
    _count: int | None = PrivateAttr(default=None)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    def __init__(self, mem: LayeredMemory | None = None, **data: Any) -> None:
        handle = attach(mem, data, who="LayeredChatMemory")
        super().__init__(**data)
        self._mem = handle

    @classmethod
    def class_name(cls) -> str:
        return "LayeredChatMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]
        cls,
        mem: LayeredMemory | None = None,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        chat_history: list[ChatMessage] | None = None,
        llm: LLM | None = None,
        token_limit: int | None = None,
        tokenizer_fn: Callable[[str], list] | None = None,
        include_vector: bool = True,
        chat_store_key: str | None = None,
        save_tool_messages: bool = False,
        **kwargs: Any,
    ) -> LayeredChatMemory:
        """Like ``ChatMemoryBuffer.from_defaults``: ``token_limit`` defaults to 3/4 of ``llm``'s
        context window, else 3000; ``chat_history`` replaces the session's stored messages;
        ``chat_store_key`` is accepted as an alias of ``session_id``.

        Raises:
            ValueError: no engine, an unbound engine without ``user_id``, an unknown keyword.
        """
        if mem is None:
            raise ValueError(
                "LayeredChatMemory.from_defaults: mem=None; pass the engine: "
                "from_defaults(LayeredMemory.embedded('./memory'), user_id='u1')"
            )
        if kwargs:
            name = sorted(kwargs)[0]
            raise ValueError(
                f"LayeredChatMemory.from_defaults: unexpected keyword {name}={kwargs[name]!r}; the known ones are "
                "mem, user_id, session_id, chat_history, llm, token_limit, tokenizer_fn, include_vector, chat_store_key, "
                "save_tool_messages"
            )
        if session_id and chat_store_key and session_id != chat_store_key:
            raise ValueError(f"session_id={session_id!r} and chat_store_key={chat_store_key!r} differ; pass only session_id")
        if token_limit is None:
            token_limit = int(llm.metadata.context_window * CONTEXT_WINDOW_RATIO) if llm is not None else DEFAULT_TOKEN_LIMIT
        data: dict[str, Any] = {
            "user_id": user_id, "session_id": session_id or chat_store_key or DEFAULT_SESSION_ID,
            "token_limit": token_limit, "include_vector": include_vector, "save_tool_messages": save_tool_messages,
        }
        if tokenizer_fn is not None:
            data["tokenizer_fn"] = tokenizer_fn
        memory = cls(mem, **data)
        if chat_history is not None:
            memory.set(chat_history)
        return memory

    @property
    def mem(self) -> LayeredMemory:
        """The engine handle, bound to ``user_id``."""
        return self._mem

    # -- reading ------------------------------------------------------------------------------
    def _budget(self, initial_token_count: int) -> int:
        if (initial_token_count or 0) > self.token_limit:
            raise ValueError(
                f"initial_token_count={initial_token_count} exceeds token_limit={self.token_limit}; "
                "raise token_limit or shorten the prefix messages / system prompt"
            )
        return self.token_limit - (initial_token_count or 0)

    def _query(self, input: str | None, budget: int) -> dict[str, Any]:
        return {"query": input or None, "include_vector": self.include_vector, "max_tokens": max(1, budget)}

    def _fit(self, context: Context, budget: int) -> list[ChatMessage]:
        """The context within ``budget``, counted and trimmed as ChatMemoryBuffer does (see ``_window``): the
        engine fills ``budget`` by value (its own count); the window is then cut from the session's last
        messages (``context.window``, the originals) by the buffer's rule, and the blocks share what is left."""
        blocks = [c for c in context if c.kind != "window"]
        chat = context_to_chat(blocks, {})
        head = [m for item, m in zip(blocks, chat) if item.kind in _HEAD]
        tail = [m for item, m in zip(blocks, chat) if item.kind not in _HEAD]
        window = [from_engine(m) for m in context.window]
        # a window as long as short_term_window may be a cut of a longer session: never open it with a reply
        trimmed = len(window) >= self._mem.settings.memory.short_term_window
        return pack(head, window, tail, budget, buffer_counter(self.tokenizer_fn), trimmed=trimmed)

    def get(self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any) -> list[ChatMessage]:
        """The assembled context for the next LLM call, within ``token_limit - initial_token_count``.

        The conversation window is trimmed exactly as ``ChatMemoryBuffer.get`` trims its history
        (same tokenizer, same count, same drop rule; the newest message is returned whole even when
        it alone is over the limit); summary, user data and relevant memory share the budget.
        ``input`` (the pending user message, as CondensePlusContextChatEngine passes it) is the
        query of the relevant-memory blocks; otherwise the last user message is. Other keyword
        arguments chat engines and ``Memory`` pass are accepted and ignored.
        """
        budget = self._budget(initial_token_count)
        return self._fit(self._mem.get_context_for_user(None, self.session_id, **self._query(input, budget)), budget)

    async def aget(self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any) -> list[ChatMessage]:
        """Async :meth:`get` over the engine's async twins."""
        budget = self._budget(initial_token_count)
        return self._fit(await self._mem.aget_context_for_user(None, self.session_id, **self._query(input, budget)), budget)

    def get_all(self) -> list[ChatMessage]:
        """Every stored message of the session, oldest first, as they were put."""
        return [from_engine(m) for m in self._mem.get_session_messages(None, self.session_id)]

    async def aget_all(self) -> list[ChatMessage]:
        return [from_engine(m) for m in await self._mem.aget_session_messages(None, self.session_id)]

    # -- writing ------------------------------------------------------------------------------
    def _kept(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        return list(messages) if self.save_tool_messages else without_tools(messages)

    def _reserve(self, messages: Sequence[ChatMessage], stored_count: int | None) -> list[dict[str, Any]]:
        messages = self._kept(messages)
        with self._lock:
            if self._count is None:
                self._count = stored_count or 0
            rows = to_engine(messages, user_id=self.user_id, session_id=self.session_id, start=self._count)
            self._count += len(rows)
            return rows

    def _needs_count(self) -> bool:
        return self._count is None

    def put(self, message: ChatMessage) -> None:
        self.put_messages([message])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Store messages in one engine batch (atomic, embedded together)."""
        count = len(self._mem.get_session_messages(None, self.session_id)) if self._needs_count() else None
        rows = self._reserve(messages, count)
        if rows:
            self._mem.add_messages(rows, chat_kind=PERSONAL)

    async def aput(self, message: ChatMessage) -> None:
        await self.aput_messages([message])

    async def aput_messages(self, messages: list[ChatMessage]) -> None:
        count = len(await self._mem.aget_session_messages(None, self.session_id)) if self._needs_count() else None
        rows = self._reserve(messages, count)
        if rows:
            await self._mem.aadd_messages(rows, chat_kind=PERSONAL)

    def _plan_set(self, messages: Sequence[ChatMessage], existing: Sequence[Message]) -> tuple[bool, list[tuple[str, str]], list[dict[str, Any]]]:
        """(clear first?, stored (chat_id, message_id) to delete, rows to add): the stored history's part the new one shares
        (ids name a message's position and text) stays; a changed tail of at most ``MAX_TAIL_DELETES``
        messages is deleted one by one (newest first), a longer one clears the session."""
        rows = to_engine(self._kept(messages), user_id=self.user_id, session_id=self.session_id, start=0)
        have = [m.message_id for m in existing]
        same = 0
        while same < min(len(have), len(rows)) and have[same] == rows[same]["message_id"]:
            same += 1
        if same == len(have):
            return False, [], rows[same:]
        if same == 0 or len(have) - same > MAX_TAIL_DELETES:
            return True, [], rows
        return False, [m.ref for m in existing[same:]][::-1], rows[same:]

    def set(self, messages: list[ChatMessage]) -> None:
        """Make the session's history ``messages``: the stored messages it shares stay (a history that
        extends the stored one only appends), an edited or dropped tail is deleted and stored anew (with
        ``delete_message``: the summaries and facts that quoted it are marked stale); a history with nothing
        in common clears the session (and its summary) first."""
        clear, deletes, rows = self._plan_set(messages, self._mem.get_session_messages(None, self.session_id))
        if clear:
            self._mem.clear_session(None, self.session_id)
        for chat_id, message_id in deletes:
            self._mem.delete_message(chat_id, message_id)
        if rows:
            self._mem.add_messages(rows, chat_kind=PERSONAL)
        with self._lock:
            self._count = None  # recounted at the next put

    async def aset(self, messages: list[ChatMessage]) -> None:
        clear, deletes, rows = self._plan_set(messages, await self._mem.aget_session_messages(None, self.session_id))
        if clear:
            await self._mem.aclear_session(None, self.session_id)
        for chat_id, message_id in deletes:
            await self._mem.adelete_message(chat_id, message_id)
        if rows:
            await self._mem.aadd_messages(rows, chat_kind=PERSONAL)
        with self._lock:
            self._count = None

    def reset(self) -> None:
        """Delete the session's messages and summary (other sessions and user data stay)."""
        self._mem.clear_session(None, self.session_id)
        with self._lock:
            self._count = 0

    async def areset(self) -> None:
        await self._mem.aclear_session(None, self.session_id)
        with self._lock:
            self._count = 0

