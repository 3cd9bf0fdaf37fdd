"""``LayeredMemoryMiddleware``: layered memory for LangChain v1 agents (``create_agent``).

    agent = create_agent(model, tools=create_memory_tools(mem, user_id="u1"),
                         middleware=[LayeredMemoryMiddleware(mem)])
    agent.invoke({"messages": [HumanMessage("hi")]},
                 config={"configurable": {"thread_id": "s1", "user_id": "u1"}})

Before every model call it assembles ``get_context_for_user`` (seed 002 order) and gives the model:
the summary, user data and relevant-memory blocks appended to the system message, and the stored
short-term window in front of the state's messages (messages already in the state, matched by id,
are not repeated, so it works with and without a checkpointer). After every model call it stores the
current turn (from the last human message on: the input and the answers; tool calls and results
with ``save_tool_messages=True``); writes are idempotent by message id. The state itself is never modified.

The user and session of a run come from, in order: ``runtime.context`` (``user_id``, ``session_id``
attribute or key), ``config["configurable"]`` (``user_id``, ``session_id``, else ``thread_id``),
the constructor, the memory's bound user.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from layered_memory import LayeredMemory

from ._convert import context_refs, context_to_messages, drop_orphans, personal_kind, text_of, to_record, user_first


def _pick(source: Any, name: str) -> str | None:
    if source is None:
        return None
    value = source.get(name) if isinstance(source, Mapping) else getattr(source, name, None)
    return str(value) if value not in (None, "") else None


def _configurable() -> Mapping[str, Any]:
    try:
        from langgraph.config import get_config

        return get_config().get("configurable") or {}
    except RuntimeError:  # outside a runnable context
        return {}


def _turn(messages: Sequence[Any], *, tools: bool) -> list[BaseMessage]:
    """The current turn: from the last human message to the end, without system messages; without
    ``tools``, tool results are left out and AI messages keep only their text."""
    start = 0
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            start = i
            break
    out: list[BaseMessage] = []
    for m in messages[start:]:
        if not isinstance(m, BaseMessage) or isinstance(m, SystemMessage):
            continue
        if not tools and isinstance(m, ToolMessage):
            continue
        if not tools and isinstance(m, AIMessage) and m.tool_calls:
            if not text_of(m.content).strip():
                continue
            m = m.model_copy(update={"tool_calls": [], "invalid_tool_calls": []})
        out.append(m)
    return out


class LayeredMemoryMiddleware(AgentMiddleware):
    """Inject the layered context before each model call and store the turn after it.

    Args:
        memory: the engine (or a tenant / user handle).
        user_id, session_id: defaults when the run names none (see the module docstring).
        include_vector: add the relevant-memory blocks (needs an embedder).
        max_tokens: token budget of the assembled context (default: the engine's setting).
        inject_window: put the stored short-term window in front of the state's messages.
        save: store each turn after the model answers.
        save_tool_messages: also store tool calls and tool results. Off by default: a memory tool's
            result would otherwise be stored and found again by the next search (a feedback loop),
            and tool output is rarely worth recalling; the user's words and the answers are kept.

    Raises:
        ValueError: at run time, when no user or no session can be found for the run.
    """

    def __init__(
        self,
        memory: LayeredMemory,
        *,
        user_id: str | None = None,
        session_id: str | None = None,
        include_vector: bool = True,
        max_tokens: int | None = None,
        inject_window: bool = True,
        save: bool = True,
        save_tool_messages: bool = False,
    ) -> None:
        super().__init__()
        self.memory = memory
        self.user_id = user_id
        self.session_id = session_id
        self.include_vector = include_vector
        self.max_tokens = max_tokens
        self.inject_window = inject_window
        self.save = save
        self.save_tool_messages = save_tool_messages

    # -- who and where --------------------------------------------------------------------------------
    def _scope(self, runtime: Any) -> tuple[LayeredMemory, str, str]:
        ctx = getattr(runtime, "context", None)
        conf = _configurable()
        user = _pick(ctx, "user_id") or _pick(conf, "user_id") or self.user_id or self.memory.bound_user
        session = (
            _pick(ctx, "session_id") or _pick(conf, "session_id") or _pick(conf, "thread_id") or self.session_id
        )
        if user is None:
            raise ValueError(
                "LayeredMemoryMiddleware: no user for this run; pass context={'user_id': ...}, "
                "config={'configurable': {'user_id': ...}}, or LayeredMemoryMiddleware(mem, user_id=...)"
            )
        if session is None:
            raise ValueError(
                "LayeredMemoryMiddleware: no session for this run; pass config={'configurable': {'thread_id': ...}} "
                "(or session_id in the context / configurable / constructor)"
            )
        return self.memory.for_user(user), user, session

    # -- before the model -----------------------------------------------------------------------------
    def _query(self, request: ModelRequest) -> str | None:
        for m in reversed(request.messages):
            if isinstance(m, HumanMessage):
                return text_of(m.content).strip() or None
        return None

    def _inject(self, request: ModelRequest, context: list[BaseMessage]) -> ModelRequest:
        present = {m.id for m in request.messages if m.id}
        blocks = [text_of(m.content) for m in context if isinstance(m, SystemMessage)]
        history = [m for m in context if not isinstance(m, SystemMessage) and m.id not in present] if self.inject_window else []
        history = user_first(drop_orphans(history))
        overrides: dict[str, Any] = {}
        if blocks:
            base = request.system_message
            memory_text = "\n\n".join(blocks)
            if base is None:
                overrides["system_message"] = SystemMessage(content=memory_text)
            elif isinstance(base.content, str):
                overrides["system_message"] = SystemMessage(content=f"{base.content}\n\n{memory_text}" if base.content else memory_text)
            else:
                overrides["system_message"] = SystemMessage(content=[*base.content, {"type": "text", "text": memory_text}])
        if history:
            overrides["messages"] = history + list(request.messages)
        return request.override(**overrides) if overrides else request

    def _ctx_kwargs(self, request: ModelRequest) -> dict[str, Any]:
        return {"query": self._query(request), "include_vector": self.include_vector, "max_tokens": self.max_tokens}

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        mem, user, session = self._scope(request.runtime)
        ctx = mem.get_context_for_user(user, session, **self._ctx_kwargs(request))
        refs = context_refs(ctx)
        stored = {m.ref: m for m in mem.get_messages(refs) if m is not None} if refs else {}
        return handler(self._inject(request, context_to_messages(ctx, stored)))

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]) -> Any:
        mem, user, session = self._scope(request.runtime)
        ctx = await mem.aget_context_for_user(user, session, **self._ctx_kwargs(request))
        refs = context_refs(ctx)
        stored = {m.ref: m for m in await mem.aget_messages(refs) if m is not None} if refs else {}
        return await handler(self._inject(request, context_to_messages(ctx, stored)))

    # -- after the model ------------------------------------------------------------------------------
    def _records(self, state: Any, user: str, session: str) -> list[dict[str, Any]]:
        messages = state.get("messages", []) if isinstance(state, Mapping) else getattr(state, "messages", [])
        return [to_record(m, user_id=user, session_id=session) for m in _turn(messages, tools=self.save_tool_messages)]

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self.save:
            mem, user, session = self._scope(runtime)
            records = self._records(state, user, session)
            if records:
                mem.add_messages(records, chat_kind=personal_kind(records, session))
        return None

    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self.save:
            mem, user, session = self._scope(runtime)
            records = self._records(state, user, session)
            if records:
                await mem.aadd_messages(records, chat_kind=personal_kind(records, session))
        return None
