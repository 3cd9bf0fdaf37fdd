"""Agent tools over the engine: ``qdrant_search_memory`` (seed 000), ``search`` (seed 003),
``topic_search`` (seed 001 deep search) and ``list_tasks`` (seed 002 tasks skill).

    tools = create_memory_tools(mem, user_id="u1")      # bound: they only see u1's memory
    agent = create_agent(model, tools=tools)

A thin layer over ``layered_memory.tools``: the names, descriptions, argument schemas, texts and
error strings are the shared ones, so an agent sees the same as with the LlamaIndex adapter. The
schemas accept any value and the shared functions answer a bad one with an error text: nothing
raises into the agent loop. ``search``, ``topic_search`` and ``list_tasks`` also return their data
as the ``ToolMessage`` artifact (``response_format="content_and_artifact"``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict

from layered_memory import LayeredMemory
from layered_memory import tools as shared

_ARTIFACT: Literal["content_and_artifact"] = "content_and_artifact"


class _MemoryTool(BaseTool):
    """Base: holds the (tenant / user bound) engine handle; ``memory=None`` means not configured.

    The message searches leave out the short-term window of the session being answered (the question
    itself among it: the middleware stores the turn before the tool runs, and the context already shows
    the window): the session is ``session_id`` when given, else the run's ``configurable`` ``session_id``
    or ``thread_id``. ``exclude_window=False`` keeps them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    memory: LayeredMemory | None = None
    user_id: str | None = None
    session_id: str | None = None
    exclude_window: bool = True

    def _handle(self) -> LayeredMemory | None:
        return shared.bind(self.memory, self.user_id)

    def _skip(self, config: RunnableConfig | None) -> str | None:
        if not self.exclude_window:
            return None
        if self.session_id:
            return self.session_id
        configurable = (config or {}).get("configurable") or {}
        session = configurable.get("session_id") or configurable.get("thread_id")
        return str(session) if session else None


class QdrantSearchMemoryTool(_MemoryTool):
    """Seed 000: semantic search over the long-term message history, formatted for the model."""

    name: str = "qdrant_search_memory"
    description: str = shared.QDRANT_SEARCH_MEMORY_DESCRIPTION
    args_schema: type[BaseModel] = shared.QdrantSearchMemoryArgs

    def _run(self, query_text: Any = None, limit: Any = shared.QDRANT_SEARCH_DEFAULT_LIMIT, filters: Any = None,
             run_manager: CallbackManagerForToolRun | None = None, config: RunnableConfig = None) -> str:  # type: ignore[assignment]
        return shared.qdrant_search_memory(self._handle(), query_text, limit, filters, exclude_session=self._skip(config))

    async def _arun(self, query_text: Any = None, limit: Any = shared.QDRANT_SEARCH_DEFAULT_LIMIT, filters: Any = None,
                    run_manager: AsyncCallbackManagerForToolRun | None = None, config: RunnableConfig = None) -> str:  # type: ignore[assignment]
        return await shared.aqdrant_search_memory(self._handle(), query_text, limit, filters, exclude_session=self._skip(config))


class MemorySearchTool(_MemoryTool):
    """Seed 003: hybrid search returning JSON ``{hits, total_found, route_used}`` (artifact: the same dict)."""

    name: str = "search"
    description: str = shared.SEARCH_DESCRIPTION
    args_schema: type[BaseModel] = shared.SearchArgs
    response_format: Literal["content", "content_and_artifact"] = _ARTIFACT

    def _run(self, queries: Any = None, filters: Any = None, k: Any = shared.SEARCH_DEFAULT_K, route: Any = "hybrid",
             query: Any = None, run_manager: CallbackManagerForToolRun | None = None,
             config: RunnableConfig = None) -> tuple[str, dict[str, Any]]:  # type: ignore[assignment]
        out = shared.search_tool(self._handle(), queries, filters, k, route, query=query, exclude_session=self._skip(config))
        return shared.search_json(out), out

    async def _arun(self, queries: Any = None, filters: Any = None, k: Any = shared.SEARCH_DEFAULT_K, route: Any = "hybrid",
                    query: Any = None, run_manager: AsyncCallbackManagerForToolRun | None = None,
                    config: RunnableConfig = None) -> tuple[str, dict[str, Any]]:  # type: ignore[assignment]
        out = await shared.asearch_tool(self._handle(), queries, filters, k, route, query=query,
                                        exclude_session=self._skip(config))
        return shared.search_json(out), out


class TopicSearchTool(_MemoryTool):
    """Seed 001's deep search: topics (titles, summaries, keywords) and their messages (artifact: ``to_dict()``)."""

    name: str = "topic_search"
    description: str = shared.TOPIC_SEARCH_DESCRIPTION
    args_schema: type[BaseModel] = shared.TopicSearchArgs
    response_format: Literal["content", "content_and_artifact"] = _ARTIFACT

    def _run(self, query: Any = None, chat_id: Any = None, k: Any = shared.TOPIC_SEARCH_DEFAULT_K,
             run_manager: CallbackManagerForToolRun | None = None) -> tuple[str, dict[str, Any]]:
        return shared.topic_search_output(self._handle(), query, chat_id, k)

    async def _arun(self, query: Any = None, chat_id: Any = None, k: Any = shared.TOPIC_SEARCH_DEFAULT_K,
                    run_manager: AsyncCallbackManagerForToolRun | None = None) -> tuple[str, dict[str, Any]]:
        return await shared.atopic_search_output(self._handle(), query, chat_id, k)


class ListTasksTool(_MemoryTool):
    """Seed 002's tasks skill: the user's tasks, which are never put into the context automatically
    (artifact: the tasks as JSON dicts)."""

    name: str = "list_tasks"
    description: str = shared.LIST_TASKS_DESCRIPTION
    args_schema: type[BaseModel] = shared.ListTasksArgs
    response_format: Literal["content", "content_and_artifact"] = _ARTIFACT

    def _run(self, status: Any = None, run_manager: CallbackManagerForToolRun | None = None) -> tuple[str, list[dict[str, Any]]]:
        return shared.list_tasks_output(self._handle(), None, status)

    async def _arun(self, status: Any = None, run_manager: AsyncCallbackManagerForToolRun | None = None) -> tuple[str, list[dict[str, Any]]]:
        return await shared.alist_tasks_output(self._handle(), None, status)


_TOOL_CLASSES: dict[str, type[_MemoryTool]] = {
    "qdrant_search_memory": QdrantSearchMemoryTool, "search": MemorySearchTool,
    "topic_search": TopicSearchTool, "list_tasks": ListTasksTool,
}


def create_memory_tools(
    memory: LayeredMemory, *, user_id: str | None = None, tenant: str | None = None,
    include: Mapping[str, bool] | None = None, session_id: str | None = None, exclude_window: bool = True,
) -> list[BaseTool]:
    """The memory tools for an agent, bound to a tenant and optionally one user.

    Args:
        memory: the engine (or a tenant handle).
        user_id: bind every tool to this user (``memory.for_user``): they can only see that user's
            messages, topics and tasks, whatever filters the model passes.
        tenant: bind to this tenant (``memory.tenant``); default: ``memory``'s.
        include: switch tools off by name, e.g. ``{"topic_search": False}``. ``list_tasks`` is only
            included when a user is bound.
        session_id: the session whose short-term window the searches leave out (default: the run's
            ``configurable`` ``session_id`` / ``thread_id``); ``exclude_window=False`` keeps it.

    Returns:
        ``[qdrant_search_memory, search, topic_search, list_tasks]`` (as configured).
    """
    mem = shared.bind(memory, user_id, tenant)
    wanted = {name: True for name in shared.TOOL_NAMES}
    wanted["list_tasks"] = mem is not None and mem.bound_user is not None
    for name, on in (include or {}).items():
        if name not in wanted:
            raise ValueError(f"include[{name!r}]: not a memory tool; use one of {', '.join(wanted)}")
        wanted[name] = bool(on)
    return [_TOOL_CLASSES[name](memory=mem, session_id=session_id, exclude_window=exclude_window)
            for name, on in wanted.items() if on]
