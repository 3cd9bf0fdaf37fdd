"""``with_layered_memory``: ``RunnableWithMessageHistory`` over layered memory, recalling for the current turn.

    chain = with_layered_memory(prompt | model, mem, input_messages_key="question", history_messages_key="history")
    chain.invoke({"question": "What was wrong with my payments pod?"},
                 config={"configurable": {"user_id": "u1", "session_id": "telegram:42"}})

LangChain's ``RunnableWithMessageHistory`` reads the history before it looks at the input, so a history in
``mode="context"`` could only recall memory for the previous message. ``LayeredRunnableWithMessageHistory``
passes the turn's input messages to ``LayeredChatMessageHistory.for_input`` first; everything else (saving
the input and output, keys, streaming, async) is LangChain's own, with two changes so that no turn is lost
without a word:

* the input is checked before the model is called (``LayeredChatMessageHistory.check_messages``): a question the
  engine would refuse (e.g. over ``max_content_chars``) raises ``InvalidInputError`` and costs no model call;
* LangChain saves the turn in an end-of-chain listener and only logs a listener's exception; here a failed save
  (Redis down during the model call, ...) is kept for the call and raised by a last step of the chain, on every
  path (``invoke``, ``ainvoke``, ``stream``, ``astream``, ``batch``, ``abatch``), with a note that the model
  answered but the turn was not stored. A stream has yielded the answer's chunks by then.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig, RunnableGenerator
from langchain_core.runnables.history import RunnableWithMessageHistory
from langchain_core.runnables.utils import ConfigurableFieldSpec
from langchain_core.tracers.schemas import Run

from layered_memory import LayeredMemory

from .chat_history import LayeredChatMessageHistory, Mode


SAVE = "layered_memory_save"  # the configurable key of one call's save outcome
NOT_STORED = ("with_layered_memory: the model answered, but this turn was not stored in layered memory "
              "(the save after the model failed); fix the cause and call again")


class _SaveOutcome:
    """One call's save: the listener records its error here, the chain's last step raises it."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: BaseException | None = None


def _raise_failed_save(config: RunnableConfig) -> None:
    outcome = (config.get("configurable") or {}).get(SAVE)
    if outcome is not None and outcome.error is not None:
        error, outcome.error = outcome.error, None
        if NOT_STORED not in getattr(error, "__notes__", ()):
            error.add_note(NOT_STORED)
        raise error


def _pass_then_raise(chunks: Iterator[Any], config: RunnableConfig) -> Iterator[Any]:
    yield from chunks  # the listener has run once the upstream is exhausted
    _raise_failed_save(config)


async def _apass_then_raise(chunks: AsyncIterator[Any], config: RunnableConfig) -> AsyncIterator[Any]:
    async for chunk in chunks:
        yield chunk
    _raise_failed_save(config)


class LayeredRunnableWithMessageHistory(RunnableWithMessageHistory):
    """``RunnableWithMessageHistory`` whose ``LayeredChatMessageHistory`` in ``mode="context"`` recalls memory
    for the message being answered, checks the input before the model is called, and raises a failed save to
    the caller (see the module docstring). Same arguments as ``RunnableWithMessageHistory``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # LangChain's chain (load history -> runnable with the save listener) plus a last step that passes the
        # output through and raises the error the listener recorded.
        self.bound = self.bound | RunnableGenerator(_pass_then_raise, _apass_then_raise, name="raise_failed_save")

    def _merge_configs(self, *configs: RunnableConfig | None) -> RunnableConfig:
        config = super()._merge_configs(*configs)
        config["configurable"][SAVE] = _SaveOutcome()  # per call (per input of a batch)
        return config

    def _with_input(self, value: Any, config: RunnableConfig) -> RunnableConfig:
        hist = config["configurable"]["message_history"]
        if not isinstance(hist, LayeredChatMessageHistory):
            return config
        input_val = value if not self.input_messages_key else value[self.input_messages_key]
        messages = self._get_input_messages(input_val)
        hist.check_messages(messages)  # before the model: a refused turn costs no model call
        scoped = hist.for_input(messages)
        return {**config, "configurable": {**config["configurable"], "message_history": scoped}}

    def _keep(self, config: RunnableConfig, error: Exception) -> None:
        outcome = (config.get("configurable") or {}).get(SAVE)
        if outcome is None:  # not called through this class's chain: LangChain logs it
            raise error
        outcome.error = error

    def _exit_history(self, run: Run, config: RunnableConfig) -> None:
        try:
            super()._exit_history(run, config)
        except Exception as exc:  # LangChain would only log it: raised by the chain's last step instead
            self._keep(config, exc)

    async def _aexit_history(self, run: Run, config: RunnableConfig) -> None:
        try:
            await super()._aexit_history(run, config)
        except Exception as exc:
            self._keep(config, exc)

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
        InvalidInputError: at call time and before the model is called, when the engine would refuse the
            input (e.g. a question over ``max_content_chars``).
        LayeredMemoryError: at call time, after the model answered, when the turn could not be stored
            (``BackendUnavailable`` when Redis is down, ...); the error carries a note saying so.
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
