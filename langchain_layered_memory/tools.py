"""Agent tools over the engine: ``qdrant_search_memory`` (seed 000), ``search`` (seed 003),
``topic_search`` (seed 001 deep search) and ``list_tasks`` (seed 002 tasks skill).

    tools = create_memory_tools(mem, user_id="u1")      # bound: they only see u1's memory
    agent = create_agent(model, tools=tools)

Tools never raise into the agent loop: bad input and failures come back as the seeds' error strings.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForToolRun, CallbackManagerForToolRun
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from layered_memory import LayeredMemory, SearchResult, Task
from layered_memory.models import parse_time

NOT_CONFIGURED = "Qdrant memory search is not configured. Enable it in config to search long-term memory."
QUERY_REQUIRED = "Error: query_text is required and must be a non-empty string"
SEARCH_ERROR = "Error searching memory: {}"
NOTHING_FOUND = "No relevant messages found in memory."
TOPIC_QUERY_REQUIRED = "Error: query is required and must be a non-empty string"
MAX_LIMIT = 20


class _MemoryTool(BaseTool):
    """Base: holds the (tenant / user bound) engine handle."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    memory: LayeredMemory | None = None
    user_id: str | None = None

    def _handle(self) -> LayeredMemory | None:
        if self.memory is None:
            return None
        return self.memory.for_user(self.user_id) if self.user_id else self.memory


# -- qdrant_search_memory (seed 000) ----------------------------------------------------------------------


class MessageFilters(BaseModel):
    """Filters of ``qdrant_search_memory``; applied inside the index, not on the results."""

    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant", "system"] | None = Field(default=None, description="Only messages of this role: user, assistant or system")
    session_key: str | None = Field(default=None, description="Only this session, e.g. telegram:123456")
    timestamp_from: str | None = Field(default=None, description="Messages from this time on (ISO 8601, e.g. 2024-01-01T00:00:00Z)")
    timestamp_to: str | None = Field(default=None, description="Messages up to this time (ISO 8601)")


class QdrantSearchMemoryInput(BaseModel):
    query_text: str = Field(description="What to look for, in natural language (describe it, not just keywords)")
    limit: int = Field(default=5, description=f"Maximum number of results (default 5, maximum {MAX_LIMIT})")
    filters: MessageFilters | None = Field(default=None, description="Optional filters: role, session_key, timestamp_from, timestamp_to")


def _time(value: Any) -> str:
    if not value:
        return ""
    try:
        return parse_time("date", value).strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return str(value)


def format_messages(result: SearchResult) -> str:
    """Seed 000's answer: "Found N relevant message(s):" then ### Message blocks split by ``---``."""
    if not result.hits:
        return NOTHING_FOUND
    blocks = [
        f"### Message {i}\n**Role:** {h.meta.get('role', '')}\n**Time:** {_time(h.meta.get('date'))}\n"
        f"**Content:** {h.text}\n**Session:** {h.meta.get('session_key', '')}"
        for i, h in enumerate(result.hits, 1)
    ]
    return f"Found {len(result.hits)} relevant message(s):\n\n" + "\n\n---\n\n".join(blocks)


def _validation_message(exc: ValidationError) -> str:
    for err in exc.errors():
        if err.get("loc", ())[:1] == ("query_text",):
            return QUERY_REQUIRED
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "input"
    return SEARCH_ERROR.format(f"{where}: {first.get('msg')}")


class QdrantSearchMemoryTool(_MemoryTool):
    """Seed 000: semantic search over the long-term message history, formatted for the model."""

    name: str = "qdrant_search_memory"
    description: str = (
        "Search long-term conversation memory for messages relevant to a natural-language query. "
        "Optional filters: role (user|assistant|system), session_key, timestamp_from / timestamp_to (ISO 8601). "
        f"Returns up to `limit` messages (default 5, max {MAX_LIMIT}) with role, time, content and session."
    )
    args_schema: type[BaseModel] = QdrantSearchMemoryInput
    handle_validation_error: Any = _validation_message

    def _prepare(self, query_text: Any, limit: Any, filters: Any) -> tuple[LayeredMemory | None, dict[str, Any] | str]:
        mem = self._handle()
        if mem is None:
            return None, NOT_CONFIGURED
        if not isinstance(query_text, str) or not query_text.strip():
            return None, QUERY_REQUIRED
        try:
            k = max(1, min(int(limit if limit is not None else 5), MAX_LIMIT))
        except (TypeError, ValueError):
            return None, SEARCH_ERROR.format(f"limit={limit!r} must be an integer from 1 to {MAX_LIMIT}")
        if isinstance(filters, BaseModel):
            filters = filters.model_dump(exclude_none=True)
        return mem, {"queries": query_text, "k": k, "filters": dict(filters or {})}

    def _run(self, query_text: str = "", limit: int = 5, filters: Any = None, run_manager: CallbackManagerForToolRun | None = None) -> str:
        mem, args = self._prepare(query_text, limit, filters)
        if mem is None:
            return args  # type: ignore[return-value]
        try:
            return format_messages(mem.search(**args))  # type: ignore[arg-type]
        except Exception as exc:  # the seed's contract: an error string, never an exception
            return SEARCH_ERROR.format(exc)

    async def _arun(self, query_text: str = "", limit: int = 5, filters: Any = None, run_manager: AsyncCallbackManagerForToolRun | None = None) -> str:
        mem, args = self._prepare(query_text, limit, filters)
        if mem is None:
            return args  # type: ignore[return-value]
        try:
            return format_messages(await mem.asearch(**args))  # type: ignore[arg-type]
        except Exception as exc:
            return SEARCH_ERROR.format(exc)


# -- search (seed 003) --------------------------------------------------------------------------------------


class SearchInput(BaseModel):
    queries: list[str] | str | None = Field(default=None, description="One query or a list of queries (deduplicated, fused with RRF)")
    query: str | None = Field(default=None, description="A single query (alternative to queries)")
    filters: dict[str, Any] | None = Field(
        default=None,
        description="Metadata filters: role, session_key, chat_id, channel, author, lang, topic_id, task_id, timestamp_from, timestamp_to (ISO 8601)",
    )
    k: int = Field(default=10, description="Number of results (1-100)")
    route: Literal["hybrid", "bm25", "dense"] = Field(default="hybrid", description="hybrid (BM25 + dense, RRF), bm25 or dense")


def _search_payload(result: SearchResult) -> dict[str, Any]:
    return json.loads(json.dumps(result.to_dict(), default=str, ensure_ascii=False))


class MemorySearchTool(_MemoryTool):
    """Seed 003: hybrid search returning JSON ``{hits, total_found, route_used}`` (artifact: the same dict)."""

    name: str = "search"
    description: str = (
        "Hybrid search (BM25 + dense, fused with RRF) over stored messages. Give one query or several, optional "
        "metadata filters, k and route. Returns JSON with hits (id, score, text, snippet, meta), total_found, route_used."
    )
    args_schema: type[BaseModel] = SearchInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    def _error(self, route: str, message: str) -> tuple[str, dict[str, Any]]:
        payload = {"hits": [], "total_found": 0, "route_used": route, "error": message}
        return json.dumps(payload, ensure_ascii=False), payload

    def _done(self, result: SearchResult) -> tuple[str, dict[str, Any]]:
        payload = _search_payload(result)
        return json.dumps(payload, ensure_ascii=False), payload

    def _run(
        self, queries: list[str] | str | None = None, query: str | None = None, filters: dict[str, Any] | None = None,
        k: int = 10, route: str = "hybrid", run_manager: CallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        mem = self._handle()
        if mem is None:
            return self._error(route, NOT_CONFIGURED)
        try:
            return self._done(mem.search(queries, filters=filters, k=k, route=route, query=query))
        except Exception as exc:  # seed 003: an empty result on errors, with the reason
            return self._error(route, SEARCH_ERROR.format(exc))

    async def _arun(
        self, queries: list[str] | str | None = None, query: str | None = None, filters: dict[str, Any] | None = None,
        k: int = 10, route: str = "hybrid", run_manager: AsyncCallbackManagerForToolRun | None = None,
    ) -> tuple[str, dict[str, Any]]:
        mem = self._handle()
        if mem is None:
            return self._error(route, NOT_CONFIGURED)
        try:
            return self._done(await mem.asearch(queries, filters=filters, k=k, route=route, query=query))
        except Exception as exc:
            return self._error(route, SEARCH_ERROR.format(exc))


# -- topic_search (seed 001 deep search) ----------------------------------------------------------------------


class TopicSearchInput(BaseModel):
    query: str = Field(description="What to look for in past conversation topics")
    chat_id: str | None = Field(default=None, description="Only topics of this chat")
    k: int = Field(default=5, description="Number of topics (1-20)")


class TopicSearchTool(_MemoryTool):
    """Seed 001's deep search: topics (titles, summaries, keywords) and their messages (artifact: ``to_dict()``)."""

    name: str = "topic_search"
    description: str = (
        "Deep search over past conversation topics: returns the best-matching topics with their summaries and "
        "key messages. Use it when the recent context is not enough to answer about something discussed before."
    )
    args_schema: type[BaseModel] = TopicSearchInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    def _run(self, query: str = "", chat_id: str | None = None, k: int = 5, run_manager: CallbackManagerForToolRun | None = None) -> tuple[str, dict[str, Any]]:
        mem = self._handle()
        if mem is None:
            return NOT_CONFIGURED, {"error": NOT_CONFIGURED}
        if not isinstance(query, str) or not query.strip():
            return TOPIC_QUERY_REQUIRED, {"error": TOPIC_QUERY_REQUIRED}
        try:
            result = mem.topics.topic_search(query, chat_id=chat_id, user_id=mem.bound_user, k=max(1, min(int(k), MAX_LIMIT)))
            return result.to_text(), result.to_dict()
        except Exception as exc:
            message = SEARCH_ERROR.format(exc)
            return message, {"error": message}

    async def _arun(self, query: str = "", chat_id: str | None = None, k: int = 5, run_manager: AsyncCallbackManagerForToolRun | None = None) -> tuple[str, dict[str, Any]]:
        return await asyncio.to_thread(self._run, query, chat_id, k)


# -- list_tasks (seed 002 tasks skill) --------------------------------------------------------------------------


class ListTasksInput(BaseModel):
    status: Literal["open", "in_progress", "done", "cancelled"] | None = Field(
        default=None, description="Only tasks with this status (open, in_progress, done, cancelled); all when omitted"
    )


def format_tasks(tasks: list[Task], status: str | None) -> str:
    if not tasks:
        return f"No {status} tasks." if status else "No tasks."
    lines = [f"Tasks ({len(tasks)}):"]
    for i, t in enumerate(tasks, 1):
        due = f", due {t.due.strftime('%Y-%m-%dT%H:%M:%SZ')}" if t.due else ""
        desc = f": {t.description}" if t.description else ""
        lines.append(f"{i}. [{t.status}] {t.title}{desc} (id {t.task_id}{due})")
    return "\n".join(lines)


class ListTasksTool(_MemoryTool):
    """Seed 002's tasks skill: the user's tasks, which are never put into the context automatically."""

    name: str = "list_tasks"
    description: str = "List the user's tasks (title, status, due date), optionally only those with one status."
    args_schema: type[BaseModel] = ListTasksInput
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"

    def _run(self, status: str | None = None, run_manager: CallbackManagerForToolRun | None = None) -> tuple[str, list[dict[str, Any]]]:
        mem = self._handle()
        if mem is None:
            return NOT_CONFIGURED, []
        if mem.bound_user is None:
            return "Error: list_tasks needs a user; create the tool with create_memory_tools(mem, user_id=...)", []
        try:
            tasks = mem.list_tasks(None, status)
        except Exception as exc:
            return f"Error listing tasks: {exc}", []
        return format_tasks(tasks, status), [t.model_dump(mode="json") for t in tasks]

    async def _arun(self, status: str | None = None, run_manager: AsyncCallbackManagerForToolRun | None = None) -> tuple[str, list[dict[str, Any]]]:
        mem = self._handle()
        if mem is None or mem.bound_user is None:
            return self._run(status)
        try:
            tasks = await mem.alist_tasks(None, status)
        except Exception as exc:
            return f"Error listing tasks: {exc}", []
        return format_tasks(tasks, status), [t.model_dump(mode="json") for t in tasks]


def create_memory_tools(
    memory: LayeredMemory, *, user_id: str | None = None, tenant: str | None = None,
    include: Mapping[str, bool] | None = None,
) -> list[BaseTool]:
    """The memory tools for an agent, bound to a tenant and optionally one user.

    Args:
        memory: the engine (or a tenant handle).
        user_id: bind every tool to this user (``memory.for_user``): they can only see that user's
            messages, topics and tasks, whatever filters the model passes.
        tenant: bind to this tenant (``memory.tenant``); default: ``memory``'s.
        include: switch tools off by name, e.g. ``{"topic_search": False}``. ``list_tasks`` is only
            included when a user is bound.

    Returns:
        ``[qdrant_search_memory, search, topic_search, list_tasks]`` (as configured).
    """
    mem = memory.tenant(tenant) if tenant else memory
    if user_id is not None:
        mem = mem.for_user(user_id)
    wanted = {"qdrant_search_memory": True, "search": True, "topic_search": True, "list_tasks": mem.bound_user is not None}
    for name, on in (include or {}).items():
        if name not in wanted:
            raise ValueError(f"include[{name!r}]: not a memory tool; use one of {', '.join(wanted)}")
        wanted[name] = bool(on)
    classes = {
        "qdrant_search_memory": QdrantSearchMemoryTool, "search": MemorySearchTool,
        "topic_search": TopicSearchTool, "list_tasks": ListTasksTool,
    }
    return [classes[name](memory=mem) for name, on in wanted.items() if on]
