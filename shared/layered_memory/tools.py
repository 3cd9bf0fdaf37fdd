"""Agent tools over the engine: argument checks and text formats shared by every adapter.

The LangChain and LlamaIndex adapters wrap these functions, so an agent sees the same tool names,
descriptions, argument schemas and outputs whichever framework runs it:

- ``qdrant_search_memory`` (seed 000): semantic search of the message history; returns the seed's
  Markdown text and, for bad input or failures, one of the seed's four strings (never raises);
- ``search`` (seed 003): hybrid / bm25 / dense search; returns ``{"hits", "total_found",
  "route_used"}`` (falls back to bm25 when hybrid fails; ``"error"`` instead of raising);
- ``topic_search``: topic threads of the user's chats (``mem.topics.topic_search``), as text;
- ``list_tasks`` (seed 002 tasks skill): the user's tasks as text.

Every function takes an engine handle. Bind it first (``mem.tenant("acme").for_user("u1")``, or
:func:`bind`): the scope is enforced by the engine, and no tool takes a user id from the model. A
``None`` handle means memory is not configured: every tool then answers ``QDRANT_NOT_CONFIGURED``.

The argument schemas describe the arguments to the model but accept any value: the functions check
them and answer a bad one with an error text, so no framework raises a validation error into the
agent loop. The one rule for ``limit`` (seed 000): above 20 is lowered to 20 (the seed's maximum);
below 1, or not an integer, is ``Error searching memory: limit=...: must be from 1 to 20; ...``.

``topic_search_output`` / ``list_tasks_output`` return ``(text, data)`` for adapters that hand the
data back next to the text (LangChain's ``content_and_artifact``); ``search_json`` is the text of
``search_tool``'s dict.

    text = qdrant_search_memory(mem.for_user("u1"), "How do I install Docker?", limit=3)
    data = search_tool(mem.for_user("u1"), ["docker", "install"], k=5)
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .errors import InvalidInputError
from .context import message_key
from .index.scope import check_user_id
from .models import SearchHit, SearchResult, check_id
from .retrieval.plan import MAX_K
from .tool_schemas import (  # noqa: F401  (re-exported: the adapters read them from here)
    LIST_TASKS_DESCRIPTION,
    LIST_TASKS_ERROR_PREFIX,
    ListTasksArgs,
    MESSAGE_SEPARATOR,
    NO_RELEVANT_MESSAGES,
    QDRANT_NOT_CONFIGURED,
    QDRANT_SEARCH_DEFAULT_LIMIT,
    QDRANT_SEARCH_FILTERS,
    QDRANT_SEARCH_MAX_LIMIT,
    QDRANT_SEARCH_MEMORY_DESCRIPTION,
    QUERY_TEXT_REQUIRED,
    QdrantSearchFilters,
    QdrantSearchMemoryArgs,
    SEARCH_DEFAULT_K,
    SEARCH_DESCRIPTION,
    SEARCH_ERROR_PREFIX,
    SearchArgs,
    TOOL_NAMES,
    TOPIC_SEARCH_DEFAULT_K,
    TOPIC_SEARCH_DESCRIPTION,
    TOPIC_SEARCH_ERROR_PREFIX,
    TopicSearchArgs,
)

if TYPE_CHECKING:
    from .engine import LayeredMemory

logger = logging.getLogger(__name__)

# -- formatting ---------------------------------------------------------------------------------
def format_time(value: Any) -> str:
    """ISO 8601 with seconds precision and a trailing Z (``2024-01-15T10:30:00Z``), as in seed 000."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str) and value:
        try:
            dt = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value)
        except ValueError:
            return value
    else:
        return "" if value is None else str(value)
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def format_qdrant_search_memory(result: SearchResult | Sequence[SearchHit]) -> str:
    """Seed 000's answer text: ``Found N relevant message(s):`` then one block per hit, or
    ``NO_RELEVANT_MESSAGES`` when there are none."""
    hits = list(result.hits if isinstance(result, SearchResult) else result)
    if not hits:
        return NO_RELEVANT_MESSAGES
    blocks = []
    for i, hit in enumerate(hits, 1):
        meta = hit.meta or {}
        blocks.append(
            f"### Message {i}\n"
            f"**Role:** {meta.get('role') or ''}\n"
            f"**Time:** {format_time(meta.get('date'))}\n"
            f"**Content:** {hit.text}\n"
            f"**Session:** {meta.get('session_key') or meta.get('channel_id') or ''}"
        )
    return f"Found {len(hits)} relevant message(s):\n\n" + MESSAGE_SEPARATOR.join(blocks)


def search_error(error: object) -> str:
    """``Error searching memory: <description>`` (seed 000)."""
    return SEARCH_ERROR_PREFIX + str(error)


# -- qdrant_search_memory -----------------------------------------------------------------------
def _log_failure(tool: str, exc: BaseException) -> None:
    """Bad arguments are the model's business (DEBUG); backend failures are ours (WARNING). The
    message may quote the query, which is user data: only DEBUG shows it."""
    level = logging.DEBUG if isinstance(exc, InvalidInputError) else logging.WARNING
    logger.log(level, "%s failed: %s", tool, type(exc).__name__)
    logger.debug("%s failure detail: %s", tool, exc)


def _as_int(name: str, value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        try:
            value = int(value.strip())
        except ValueError:  # "²" is a digit to isdigit() but not to int()
            pass
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(name, value, "must be an integer", f"pass e.g. {name}={default}")
    return value


def _as_filters(value: Any) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, BaseModel):
        value = value.model_dump(exclude_none=True)
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise InvalidInputError("filters", value, "must be an object", 'pass e.g. {"role": "user"}') from None
    if not isinstance(value, Mapping):
        raise InvalidInputError("filters", value, "must be an object", 'pass e.g. {"role": "user"}')
    return {k: v for k, v in value.items() if v is not None}


def qdrant_search_args(query_text: Any, limit: Any = QDRANT_SEARCH_DEFAULT_LIMIT, filters: Any = None) -> tuple[str, int, dict[str, Any]] | str:
    """Check the tool arguments; return ``(query_text, limit, filters)`` or the error text to return.

    ``limit`` above 20 is lowered to 20 (the seed's maximum); below 1 or not an integer is an error.
    Only the seed's four filters are accepted.
    """
    if not isinstance(query_text, str) or not query_text.strip():
        return QUERY_TEXT_REQUIRED
    try:
        n = _as_int("limit", limit, QDRANT_SEARCH_DEFAULT_LIMIT)
        if n < 1:
            raise InvalidInputError("limit", n, f"must be from 1 to {QDRANT_SEARCH_MAX_LIMIT}", "pass e.g. limit=5")
        flt = _as_filters(filters)
        unknown = sorted(set(flt) - set(QDRANT_SEARCH_FILTERS))
        if unknown:
            raise InvalidInputError(
                f"filters.{unknown[0]}", flt[unknown[0]],
                f"is not a filter of this tool (known: {', '.join(QDRANT_SEARCH_FILTERS)})", "remove it",
            )
    except InvalidInputError as exc:
        return search_error(exc)
    return query_text.strip(), min(n, QDRANT_SEARCH_MAX_LIMIT), flt


# -- the current turn and the window are not search results ---------------------------------------
def window_keys(mem: LayeredMemory, session_id: str | None) -> set[str]:
    """``chat_id|message_id`` of the session's short-term window (the newest ``short_term_window``
    messages, the question being answered among them): the context already shows them, so a tool
    hit on them is wasted. Empty without a session or a bound user."""
    if not session_id or mem.bound_user is None:
        return set()
    n = mem.settings.memory.short_term_window
    return {message_key(m) for m in mem.get_session_messages(None, session_id, limit=n)}


async def awindow_keys(mem: LayeredMemory, session_id: str | None) -> set[str]:
    if not session_id or mem.bound_user is None:
        return set()
    n = mem.settings.memory.short_term_window
    return {message_key(m) for m in await mem.aget_session_messages(None, session_id, limit=n)}


def _wider(k: Any, skip: set[str]) -> Any:
    """``k`` plus room for the hits ``skip`` removes (a bad ``k`` is left for the search to name)."""
    if skip and isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_K:
        return min(k + len(skip), MAX_K)
    return k


def _without(result: SearchResult, skip: set[str], k: int) -> SearchResult:
    if not skip:
        return result
    hits = [h for h in result.hits if message_key(h) not in skip][:k]
    return result.model_copy(update={"hits": hits, "total_found": len(hits)})


def qdrant_search_memory(
    mem: LayeredMemory | None, query_text: Any, limit: Any = QDRANT_SEARCH_DEFAULT_LIMIT, filters: Any = None,
    *, exclude_session: str | None = None,
) -> str:
    """Seed 000's tool: search the message history; return the formatted hits or an error string.

    ``exclude_session``: leave out that session's short-term window (the current question and the
    recent turns the context already holds).

    Never raises: a missing engine gives ``QDRANT_NOT_CONFIGURED``, a blank query
    ``QUERY_TEXT_REQUIRED``, a bad argument or a failed search ``Error searching memory: ...``, no
    hits ``NO_RELEVANT_MESSAGES``.
    """
    if mem is None:
        return QDRANT_NOT_CONFIGURED
    args = qdrant_search_args(query_text, limit, filters)
    if isinstance(args, str):
        return args
    query, k, flt = args
    try:
        skip = window_keys(mem, exclude_session)
        result = _without(mem.search(query, filters=flt, k=_wider(k, skip), route="hybrid"), skip, k)
    except Exception as exc:  # the agent loop gets text, never an exception
        _log_failure("qdrant_search_memory", exc)
        return search_error(exc)
    return format_qdrant_search_memory(result)


async def aqdrant_search_memory(
    mem: LayeredMemory | None, query_text: Any, limit: Any = QDRANT_SEARCH_DEFAULT_LIMIT, filters: Any = None,
    *, exclude_session: str | None = None,
) -> str:
    """Async twin of :func:`qdrant_search_memory` (``mem.asearch``)."""
    if mem is None:
        return QDRANT_NOT_CONFIGURED
    args = qdrant_search_args(query_text, limit, filters)
    if isinstance(args, str):
        return args
    query, k, flt = args
    try:
        skip = await awindow_keys(mem, exclude_session)
        result = _without(await mem.asearch(query, filters=flt, k=_wider(k, skip), route="hybrid"), skip, k)
    except Exception as exc:
        _log_failure("qdrant_search_memory", exc)
        return search_error(exc)
    return format_qdrant_search_memory(result)


# -- search (seed 003) ---------------------------------------------------------------------------
def _search_error(route: Any, message: str) -> dict[str, Any]:
    return {"hits": [], "total_found": 0, "route_used": route if isinstance(route, str) else "hybrid", "error": message}


def _search_args(queries: Any, filters: Any, k: Any, route: Any, query: Any) -> tuple[Any, dict[str, Any], int, str]:
    if isinstance(queries, str) and queries.strip().startswith("["):
        try:
            queries = json.loads(queries)
        except ValueError:
            pass
    if query is not None:
        if not isinstance(queries, (str, list, tuple, type(None))):
            raise InvalidInputError("queries", queries, "must be a string or a list of strings", 'pass e.g. ["docker install"]')
        queries = [query] if queries in (None, "", []) else ([queries] if isinstance(queries, str) else list(queries)) + [query]
    return queries, _as_filters(filters), _as_int("k", k, SEARCH_DEFAULT_K), route or "hybrid"


def _fallback(out: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    out["fallback_reason"] = f"hybrid search failed: {type(exc).__name__}: {exc}"
    return out


def _bm25_fallback_or_raise(rt: str, exc: BaseException) -> None:
    """Re-raise ``exc`` unless a hybrid search failed for a reason other than bad input."""
    if rt != "hybrid" or isinstance(exc, InvalidInputError):
        raise exc
    logger.warning("hybrid search failed (%s); retrying with bm25", type(exc).__name__)


def search_tool(
    mem: LayeredMemory | None, queries: Any = None, filters: Any = None, k: Any = SEARCH_DEFAULT_K, route: Any = "hybrid", *,
    query: Any = None, exclude_session: str | None = None,
) -> dict[str, Any]:
    """Seed 003's tool: ``{"hits": [...], "total_found": int, "route_used": str}``.

    When a hybrid search fails (not for bad input) it is retried with bm25 and ``fallback_reason``
    says why. Bad input or a failed search give ``{"hits": [], "total_found": 0, "route_used": ...,
    "error": "Error searching memory: <field=value: rule; fix>"}`` (``"error": QDRANT_NOT_CONFIGURED``
    without an engine): never raises. ``exclude_session``: as in :func:`qdrant_search_memory`.
    """
    if mem is None:
        return _search_error(route, QDRANT_NOT_CONFIGURED)
    try:
        qs, flt, n, rt = _search_args(queries, filters, k, route, query)
        skip = window_keys(mem, exclude_session)
        try:
            return _without(mem.search(qs, filters=flt, k=_wider(n, skip), route=rt), skip, n).to_dict()
        except Exception as exc:
            _bm25_fallback_or_raise(rt, exc)
            return _fallback(_without(mem.search(qs, filters=flt, k=_wider(n, skip), route="bm25"), skip, n).to_dict(), exc)
    except Exception as exc:
        _log_failure("search", exc)
        return _search_error(route, search_error(exc))


async def asearch_tool(
    mem: LayeredMemory | None, queries: Any = None, filters: Any = None, k: Any = SEARCH_DEFAULT_K, route: Any = "hybrid", *,
    query: Any = None, exclude_session: str | None = None,
) -> dict[str, Any]:
    """Async twin of :func:`search_tool` (``mem.asearch``)."""
    if mem is None:
        return _search_error(route, QDRANT_NOT_CONFIGURED)
    try:
        qs, flt, n, rt = _search_args(queries, filters, k, route, query)
        skip = await awindow_keys(mem, exclude_session)
        try:
            return _without(await mem.asearch(qs, filters=flt, k=_wider(n, skip), route=rt), skip, n).to_dict()
        except Exception as exc:
            _bm25_fallback_or_raise(rt, exc)
            return _fallback(_without(await mem.asearch(qs, filters=flt, k=_wider(n, skip), route="bm25"), skip, n).to_dict(), exc)
    except Exception as exc:
        _log_failure("search", exc)
        return _search_error(route, search_error(exc))


def search_json(out: Mapping[str, Any]) -> str:
    """The text the model reads for :func:`search_tool`'s dict: JSON, non-ASCII kept."""
    return json.dumps(out, ensure_ascii=False, default=str)


# -- list_tasks (seed 002) -------------------------------------------------------------------------
def format_tasks(tasks: Sequence[Any], status: str | None = None) -> str:
    """Tasks as a numbered list: ``1. [open] Title (id: t1, due: 2024-01-15T10:30:00Z)``."""
    if not tasks:
        return f"No tasks with status {status}." if status else "No tasks."
    head = f"Found {len(tasks)} task(s)" + (f" with status {status}" if status else "") + ":"
    lines = [head]
    for i, t in enumerate(tasks, 1):
        extra = f"id: {t.task_id}" + (f", due: {format_time(t.due)}" if t.due else "")
        lines.append(f"{i}. [{t.status}] {t.title} ({extra})")
        if t.description:
            lines.append("   " + t.description.replace("\n", "\n   "))
    return "\n".join(lines)


def _status(status: Any) -> str | None:
    if status is None or (isinstance(status, str) and status.strip().lower() in ("", "all", "any")):
        return None
    return status.strip() if isinstance(status, str) else status


def _tasks_output(tasks: Sequence[Any], status: str | None) -> tuple[str, list[dict[str, Any]]]:
    return format_tasks(tasks, status), [t.model_dump(mode="json") for t in tasks]


def _tasks_failed(exc: BaseException) -> tuple[str, list[dict[str, Any]]]:
    _log_failure("list_tasks", exc)
    return LIST_TASKS_ERROR_PREFIX + str(exc), []


def list_tasks_output(mem: LayeredMemory | None, user_id: str | None = None, status: Any = None) -> tuple[str, list[dict[str, Any]]]:
    """``(text, tasks as JSON dicts)`` of :func:`list_tasks_tool`; on an error ``(error text, [])``."""
    if mem is None:
        return QDRANT_NOT_CONFIGURED, []
    try:
        st = _status(status)
        return _tasks_output(mem.list_tasks(user_id, status=st), st)
    except Exception as exc:
        return _tasks_failed(exc)


async def alist_tasks_output(mem: LayeredMemory | None, user_id: str | None = None, status: Any = None) -> tuple[str, list[dict[str, Any]]]:
    """Async twin of :func:`list_tasks_output` (``mem.alist_tasks``)."""
    if mem is None:
        return QDRANT_NOT_CONFIGURED, []
    try:
        st = _status(status)
        return _tasks_output(await mem.alist_tasks(user_id, status=st), st)
    except Exception as exc:
        return _tasks_failed(exc)


def list_tasks_tool(mem: LayeredMemory | None, user_id: str | None = None, status: Any = None) -> str:
    """The tasks skill: the user's tasks as text (``user_id`` defaults to the handle's bound user).

    Never raises: errors come back as ``Error listing tasks: <field=value: rule; fix>``.
    """
    return list_tasks_output(mem, user_id, status)[0]


async def alist_tasks_tool(mem: LayeredMemory | None, user_id: str | None = None, status: Any = None) -> str:
    """Async twin of :func:`list_tasks_tool`."""
    return (await alist_tasks_output(mem, user_id, status))[0]


# -- topic_search ----------------------------------------------------------------------------------
def _topic_args(mem: LayeredMemory, query: Any, chat_id: Any, k: Any, user_id: str | None) -> dict[str, Any]:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query", query, "is required and must be a non-empty string", "describe the subject")
    n = _as_int("k", k, TOPIC_SEARCH_DEFAULT_K)
    if not 1 <= n <= MAX_K:  # as for qdrant_search_memory's limit: asking for no topics is an error, not "No topics found"
        raise InvalidInputError("k", n, f"must be from 1 to {MAX_K}", f"pass e.g. k={TOPIC_SEARCH_DEFAULT_K}")
    return {"chat_id": check_id("chat_id", chat_id or None, optional=True), "user_id": mem.scope.owner(user_id), "k": n}


def _topics_failed(exc: BaseException) -> tuple[str, dict[str, Any]]:
    _log_failure("topic_search", exc)
    message = TOPIC_SEARCH_ERROR_PREFIX + str(exc)
    return message, {"error": message}


def topic_search_output(
    mem: LayeredMemory | None, query: Any, chat_id: Any = None, k: Any = TOPIC_SEARCH_DEFAULT_K, user_id: str | None = None
) -> tuple[str, dict[str, Any]]:
    """``(text, result.to_dict())`` of :func:`topic_search_tool`; on an error ``(error text, {"error": text})``."""
    if mem is None:
        return QDRANT_NOT_CONFIGURED, {"error": QDRANT_NOT_CONFIGURED}
    try:
        kwargs = _topic_args(mem, query, chat_id, k, user_id)
        result = mem.topics.topic_search(query.strip(), **kwargs)
    except Exception as exc:
        return _topics_failed(exc)
    return result.to_text(), result.to_dict()


async def atopic_search_output(
    mem: LayeredMemory | None, query: Any, chat_id: Any = None, k: Any = TOPIC_SEARCH_DEFAULT_K, user_id: str | None = None
) -> tuple[str, dict[str, Any]]:
    """Async twin of :func:`topic_search_output` (``topics.atopic_search`` when the engine has it)."""
    if mem is None:
        return QDRANT_NOT_CONFIGURED, {"error": QDRANT_NOT_CONFIGURED}
    try:
        kwargs = _topic_args(mem, query, chat_id, k, user_id)
        topics = mem.topics
        native = getattr(topics, "atopic_search", None)
        if native is not None:
            result = await native(query.strip(), **kwargs)
        else:
            result = await asyncio.to_thread(topics.topic_search, query.strip(), **kwargs)
    except Exception as exc:
        return _topics_failed(exc)
    return result.to_text(), result.to_dict()


def topic_search_tool(
    mem: LayeredMemory | None, query: Any, chat_id: Any = None, k: Any = TOPIC_SEARCH_DEFAULT_K, user_id: str | None = None
) -> str:
    """Topics matching ``query`` (``mem.topics.topic_search(...).to_text()``); never raises.

    ``user_id`` defaults to the handle's bound user; errors come back as ``Error searching topics: ...``.
    """
    return topic_search_output(mem, query, chat_id, k, user_id)[0]


async def atopic_search_tool(
    mem: LayeredMemory | None, query: Any, chat_id: Any = None, k: Any = TOPIC_SEARCH_DEFAULT_K, user_id: str | None = None
) -> str:
    """Async twin of :func:`topic_search_tool`."""
    return (await atopic_search_output(mem, query, chat_id, k, user_id))[0]


# -- binding ---------------------------------------------------------------------------------------
def engine_argument(owner: str, positional: Any = None, memory: Any = None, mem: Any = None) -> LayeredMemory:
    """The engine an adapter was given: positionally, as ``memory=``, or as ``mem=`` (an older name). The
    same object twice is fine; two different ones, none, or not an engine is a ``TypeError`` naming the fix."""
    from .engine import LayeredMemory

    given = [v for v in (positional, memory, mem) if v is not None]
    if any(v is not given[0] for v in given[1:]):
        raise TypeError(f"{owner}: pass the engine once, positionally or as memory= (mem= is the same argument); got two different objects")
    if not given or not isinstance(given[0], LayeredMemory):
        got = type(given[0]).__name__ if given else "nothing"
        raise TypeError(f"{owner} needs a layered_memory.LayeredMemory, positionally or as memory=, got {got}; "
                        "build one with LayeredMemory.embedded(path)")
    return given[0]


def bind(mem: LayeredMemory | None, user_id: str | None = None, tenant: str | None = None) -> LayeredMemory | None:
    """The handle the tools run on: ``mem`` narrowed to ``tenant`` and ``user_id`` (``None`` stays
    ``None``: memory not configured). ``user_id=None`` means no binding; an empty string is refused
    (it would otherwise search every user). Raises ``InvalidInputError`` if ``mem`` is bound to another user."""
    user = check_user_id(user_id)
    if mem is None:
        return None
    if tenant is not None:
        mem = mem.tenant(tenant)
    return mem.for_user(user) if user is not None and mem.bound_user != user else mem


__all__ = [
    "LIST_TASKS_DESCRIPTION",
    "LIST_TASKS_ERROR_PREFIX",
    "NO_RELEVANT_MESSAGES",
    "QDRANT_NOT_CONFIGURED",
    "QDRANT_SEARCH_DEFAULT_LIMIT",
    "QDRANT_SEARCH_FILTERS",
    "QDRANT_SEARCH_MAX_LIMIT",
    "QDRANT_SEARCH_MEMORY_DESCRIPTION",
    "QUERY_TEXT_REQUIRED",
    "SEARCH_DESCRIPTION",
    "SEARCH_ERROR_PREFIX",
    "TOOL_NAMES",
    "TOPIC_SEARCH_DESCRIPTION",
    "TOPIC_SEARCH_ERROR_PREFIX",
    "ListTasksArgs",
    "QdrantSearchFilters",
    "QdrantSearchMemoryArgs",
    "SearchArgs",
    "TopicSearchArgs",
    "alist_tasks_output",
    "alist_tasks_tool",
    "aqdrant_search_memory",
    "asearch_tool",
    "atopic_search_output",
    "atopic_search_tool",
    "bind",
    "format_qdrant_search_memory",
    "format_tasks",
    "format_time",
    "list_tasks_output",
    "list_tasks_tool",
    "qdrant_search_args",
    "qdrant_search_memory",
    "search_error",
    "search_json",
    "search_tool",
    "topic_search_output",
    "topic_search_tool",
]
