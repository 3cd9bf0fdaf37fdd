"""``LayeredChatMessageHistory``: a LangChain chat history over one (user, session) of the engine.

    history = LayeredChatMessageHistory(mem, user_id="u1", session_id="s1")
    history.add_messages([HumanMessage("I live in Kazan"), AIMessage("Nice city!")])
    history.messages                      # the stored session, oldest first

``mode="context"`` returns the assembled prompt context instead (``get_context_for_user``: summary,
user data, the short-term window, relevant memory) as one leading ``SystemMessage`` followed by the
window, the shape OpenAI, Anthropic and Google all accept. Memory is recalled for the message being
answered: wrap the chain with ``with_layered_memory`` (or ``LayeredRunnableWithMessageHistory``),
which hands the turn's input to the history; a plain ``RunnableWithMessageHistory`` reads the history
before it sees the input, so there ``query`` falls back to the last stored user message.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from layered_memory import LayeredMemory

from ._convert import context_refs, context_to_messages, personal_kind, safe_id, text_of, to_message, to_record

Mode = Literal["messages", "context"]
MODES = ("messages", "context")


class LayeredChatMessageHistory(BaseChatMessageHistory):
    """Chat history of one user's session, stored (and searchable) in a ``LayeredMemory``.

    Args:
        memory: the engine (or a tenant / user handle of it).
        session_id: the session (the engine's ``session_key``; also the ``chat_id`` unless given).
        user_id: whose session; optional when ``memory`` is bound with ``for_user``.
        chat_id: the chat the messages belong to (default: ``session_id``).
        mode: ``"messages"`` = the stored messages (``window`` = only the last N); ``"context"`` = the
            assembled context of ``get_context_for_user`` (with ``query``, ``include_vector``, ``max_tokens``).

    Messages keep their ``id``, so adding the same message twice stores it once; a message without
    an id is stored with a generated one, and the caller's object is never changed. Engine fields
    come back in ``response_metadata["layered_memory"]``; ``create_time``, ``user_name``,
    ``reply_message_id``, ``root_message_id`` and ``metadata`` are read from a message's
    ``additional_kwargs`` (or ``response_metadata``) when it is written.

    Raises:
        ValueError: an unknown mode, or no user (neither ``user_id`` nor a user-bound ``memory``).
    """

    def __init__(
        self,
        memory: LayeredMemory,
        *,
        session_id: str,
        user_id: str | None = None,
        chat_id: str | None = None,
        mode: Mode = "messages",
        window: int | None = None,
        query: str | None = None,
        include_vector: bool = True,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is not a history mode; use one of {', '.join(MODES)}")
        if user_id is None and memory.bound_user is None:
            raise ValueError(
                "user_id=None: a chat history belongs to one user; pass user_id=... or a handle from memory.for_user(user_id)"
            )
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
            raise ValueError(f"window={window!r} must be a positive int (the last N messages) or None for all")
        self.memory = memory.for_user(user_id) if user_id is not None else memory
        self.user_id = user_id or memory.bound_user
        self.session_id = session_id
        self.chat_id = chat_id
        self.mode: Mode = mode
        self.window = window
        self.query = query
        self.include_vector = include_vector
        self.max_tokens = max_tokens

    def __repr__(self) -> str:
        return f"LayeredChatMessageHistory(user_id={self.user_id!r}, session_id={self.session_id!r}, mode={self.mode!r})"

    def for_input(self, messages: Sequence[BaseMessage]) -> LayeredChatMessageHistory:
        """A copy whose context recalls memory for ``messages`` (the turn being answered: the text of its
        last human message, else of all of them); ``self`` when a fixed ``query`` was given or the mode is
        ``"messages"``."""
        if self.mode != "context" or self.query is not None:
            return self
        humans = [m for m in messages if m.type == "human"] or list(messages)
        text = text_of(humans[-1].content).strip() if humans else ""
        if not text:
            return self
        clone = copy.copy(self)
        clone.query = text
        return clone

    # -- reading ------------------------------------------------------------------------------------
    def _context_kwargs(self) -> dict[str, Any]:
        return {"query": self.query, "include_vector": self.include_vector, "max_tokens": self.max_tokens}

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """The stored messages (``mode="messages"``) or the assembled context (``mode="context"``)."""
        mem = self.memory
        if self.mode == "messages":
            return [to_message(m) for m in mem.get_session_messages(self.user_id, self.session_id, limit=self.window)]
        ctx = mem.get_context_for_user(self.user_id, self.session_id, **self._context_kwargs())
        refs = context_refs(ctx)
        stored = {m.ref: m for m in mem.get_messages(refs) if m is not None} if refs else {}
        return context_to_messages(ctx, stored)

    async def aget_messages(self) -> list[BaseMessage]:
        mem = self.memory
        if self.mode == "messages":
            msgs = await mem.aget_session_messages(self.user_id, self.session_id, limit=self.window)
            return [to_message(m) for m in msgs]
        ctx = await mem.aget_context_for_user(self.user_id, self.session_id, **self._context_kwargs())
        refs = context_refs(ctx)
        stored = {m.ref: m for m in await mem.aget_messages(refs) if m is not None} if refs else {}
        return context_to_messages(ctx, stored)

    # -- writing ------------------------------------------------------------------------------------
    def _records(self, messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
        # The caller's messages are never changed (RunnableWithMessageHistory hands us the model's own
        # output): a message without an id gets a generated one on the stored record only.
        return [to_record(m, user_id=self.user_id, session_id=self.session_id, chat_id=self.chat_id) for m in messages]

    def check_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Raise the error ``add_messages`` would raise for ``messages`` (e.g. a text over
        ``max_content_chars``), writing nothing: ``with_layered_memory`` calls it before the model."""
        self.memory.check_messages(self._records(messages))

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store messages atomically (all or none); a message whose id is already stored is skipped
        (its stored copy is kept, whatever the new content: to change it, use ``edit_message``).

        ``messages`` are left as they are; the stored copies of messages without an id get a
        generated one (``messages`` reads them back with it), so adding such a message twice stores it
        twice, as ``InMemoryChatMessageHistory`` does."""
        records = self._records(messages)
        if records:
            self.memory.add_messages(records, chat_kind=self._kind(records))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        records = self._records(messages)
        if records:
            await self.memory.aadd_messages(records, chat_kind=self._kind(records))

    def _kind(self, records: Sequence[dict[str, Any]]) -> str | None:
        """Without a ``chat_id`` the session is this user's own (``personal``); with one, a chat others may share."""
        return personal_kind(records, self.session_id) if self.chat_id is None else None

    # -- a platform's edit or delete of one stored message (``mem.edit_message`` / ``mem.delete_message``) ----
    def _edit_args(self, message: BaseMessage) -> tuple[str, str, dict[str, Any]]:
        if not message.id:
            raise ValueError("message.id=None: an edit names the stored message by its id; pass the edited message with the id it was stored with")
        rec = self._records([message])[0]
        return rec["chat_id"], rec["message_id"], {"content": rec["content"], "metadata": rec["metadata"]}

    def _ref(self, message_id: str) -> tuple[str, str]:
        if not isinstance(message_id, str) or not message_id:
            raise ValueError(f"message_id={message_id!r}: a delete names the stored message by its LangChain id; pass message.id")
        return self.chat_id or self.session_id, safe_id(message_id)[0]  # the id as to_record stored it

    def edit_message(self, message: BaseMessage) -> BaseMessage:
        """Replace the stored copy of ``message`` (found by its ``id``) with its new content, as a platform's
        edit does: re-indexed, and the summaries and facts that quoted the old text marked stale. Returns the
        stored message. Raises ``NotFoundError`` when no message with that id is stored in this session's chat."""
        chat_id, message_id, fields = self._edit_args(message)
        return to_message(self.memory.edit_message(chat_id, message_id, **fields))

    async def aedit_message(self, message: BaseMessage) -> BaseMessage:
        chat_id, message_id, fields = self._edit_args(message)
        return to_message(await self.memory.aedit_message(chat_id, message_id, **fields))

    def delete_message(self, message_id: str) -> bool:
        """Delete one stored message of this session's chat by its LangChain ``id`` (False when none is stored)."""
        return self.memory.delete_message(*self._ref(message_id))

    async def adelete_message(self, message_id: str) -> bool:
        return await self.memory.adelete_message(*self._ref(message_id))

    def clear(self) -> None:
        """Delete this session's messages (and its summary) from the engine."""
        self.memory.clear_session(self.user_id, self.session_id)

    async def aclear(self) -> None:
        await self.memory.aclear_session(self.user_id, self.session_id)
