"""``with_layered_memory``: ``RunnableWithMessageHistory`` over layered memory, recalling for the current turn.

    chain = with_layered_memory(prompt | model, mem, input_messages_key="question", history_messages_key="history")
    chain.invoke({"question": "What was wrong with my payments pod?"},
                 config={"configurable": {"user_id": "u1", "session_id": "telegram:42"}})

LangChain's ``RunnableWithMessageHistory`` reads the history before it looks at the input, so a history in
``mode="context"`` could only recall memory for the previous message. ``LayeredRunnableWithMessageHistory``
passes the turn's input messages to ``LayeredChatMessageHistory.for_input`` first; everything else (saving
the input and output, keys, streaming, async) is LangChain's own.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.runnables.utils import ConfigurableFieldSpec

from layered_memory import LayeredMemory

from .chat_history import LayeredChatMessageHistory, Mode


class LayeredRunnableWithMessageHistory(RunnableWithMessageHistory):
    """``RunnableWithMessageHistory`` whose ``LayeredChatMessageHistory`` in ``mode="context"`` recalls memory
    for the message being answered. Same arguments as ``RunnableWithMessageHistory``."""

    def _with_input(self, value: Any, config: RunnableConfig) -> RunnableConfig:
        hist = config["configurable"]["message_history"]
        if not isinstance(hist, LayeredChatMessageHistory):
            return config
        input_val = value if not self.input_messages_key else value[self.input_messages_key]
        scoped = hist.for_input(self._get_input_messages(input_val))
        return {**config, "configurable": {**config["configurable"], "message_history": scoped}}

    def _enter_history(self, value: Any, config: RunnableConfig) -> list[Any]:
        return super()._enter_history(value, self._with_input(value, config))

    async def _aenter_history(self, value: Any, config: RunnableConfig) -> list[Any]:
        return await super()._aenter_history(value, self._with_input(value, config))


USER_SESSION_FIELDS: Sequence[ConfigurableFieldSpec] = (
    ConfigurableFieldSpec(id="user_id", annotation=str, name="User ID", description="Whose memory", default="",
                          is_shared=True),
    ConfigurableFieldSpec(id="session_id", annotation=str, name="Session ID", description="The conversation",
                          default="", is_shared=True),
)


def with_layered_memory(
    runnable: Runnable[Any, Any],
    memory: LayeredMemory,
    *,
    mode: Mode = "context",
    input_messages_key: str | None = None,
    output_messages_key: str | None = None,
    history_messages_key: str | None = None,
    **history_kwargs: Any,
) -> LayeredRunnableWithMessageHistory:
    """Wrap ``runnable`` so every call reads and writes one user's session of ``memory``.

    The user and the session come from ``config={"configurable": {"user_id": ..., "session_id": ...}}``
    (one chain serves every user). ``mode="context"`` (the default) gives the model one system message with
    the summary, user data and memory recalled for this turn, then the recent window; ``mode="messages"``
    gives the stored session as it is. ``history_kwargs`` go to ``LayeredChatMessageHistory``
    (``max_tokens``, ``include_vector``, ``window``, ``chat_id``).

    Raises:
        ValueError: at call time, when ``user_id`` or ``session_id`` is missing from the config.
    """

    def history(user_id: str, session_id: str) -> LayeredChatMessageHistory:
        if not user_id or not session_id:
            raise ValueError(
                f"user_id={user_id!r}, session_id={session_id!r}: a layered-memory chain needs both; call it with "
                "config={'configurable': {'user_id': 'u1', 'session_id': 'telegram:42'}}"
            )
        return LayeredChatMessageHistory(memory, user_id=user_id, session_id=session_id, mode=mode, **history_kwargs)

    with warnings.catch_warnings():  # RunnableWithMessageHistory is marked deprecated in favour of LangGraph
        warnings.simplefilter("ignore")
        return LayeredRunnableWithMessageHistory(
            runnable,
            history,
            input_messages_key=input_messages_key,
            output_messages_key=output_messages_key,
            history_messages_key=history_messages_key,
            history_factory_config=list(USER_SESSION_FIELDS),
        )
