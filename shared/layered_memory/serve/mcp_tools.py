"""The MCP server's tools: names, descriptions, argument schemas and the calls behind them.

The seed tools keep the schemas and answers the LangChain and LlamaIndex adapters have
(``layered_memory.tools``: ``qdrant_search_memory`` with seed 000's exact errors, ``search`` of seed
003, ``topic_search``, ``list_tasks``; ``layered_memory.documents.tools``: ``vector_rag``,
``search_repos``). The others are the engine's operations with the same rule (the arguments are
checked by the call, a bad one answers an error text, nothing raises): ``quick_search`` (seed 001's
default context source), ``get_context`` (seed 002's order), ``add_message`` and the task tools.

Every call runs on the handle the server is bound to (``mem.tenant(t)`` or ``.for_user(u)``): the
engine's scope rule decides what it can see; a tool never widens it. ``call_tool`` returns
``Outcome(text, data, is_error)``: the text the model reads, the structured result, and whether it is
an error (the seed's error strings included).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema

from .. import tools as shared
from ..documents import tools as doc_tools
from ..errors import InvalidInputError, LayeredMemoryError
from ..tool_schemas import NULL_SCHEMA, AnyInteger, AnyObject, AnyOptionalString, AnyString, ToolArgs
from ..userdata import TASK_STATUSES

if TYPE_CHECKING:
    from ..engine import LayeredMemory

logger = logging.getLogger(__name__)

AnyOptionalInteger = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "integer"}, NULL_SCHEMA]})]
AnyBool = Annotated[Any, WithJsonSchema({"type": "boolean"})]
AnyRole = Annotated[Any, WithJsonSchema({"type": "string", "enum": ["user", "assistant", "system", "tool"]})]
AnyOptionalStatus = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "string", "enum": list(TASK_STATUSES)}, NULL_SCHEMA]})]

QUICK_SEARCH_DESCRIPTION = (
    "Fast search of the conversation memory: messages and topic summaries by keywords and meaning, fused. Use it to "
    "recall what was said about something. Optional chat_id limits it to one chat; k results (1-100, default 5). "
    "Returns JSON: hits (id, score, text, meta), total_found, route_used."
)
GET_CONTEXT_DESCRIPTION = (
    "The memory context for a chat session, in the order it is given to the model: the previous context summary, "
    "the user's data, the latest messages of the session, relevant memory (older messages, topic summaries, facts) "
    "and relevant conversation memory from the user's other sessions. session_id is the chat (e.g. telegram:42); "
    "optional query (what the next answer is about), max_tokens (a budget the whole fits) and include_vector."
)
ADD_MESSAGE_DESCRIPTION = (
    "Store a message in the memory (idempotent by chat_id + message_id). Fields: message_id, chat_id, content, "
    "role (user | assistant | system | tool, default user); optional user_name, create_time (ISO 8601), "
    "reply_message_id, root_message_id, session_key (default chat_id), is_mention_bot, metadata."
)
CREATE_TASK_DESCRIPTION = "Create a task (a to-do or reminder) for the user: title, optional description, due (ISO 8601) and task_id."
UPDATE_TASK_DESCRIPTION = "Change a task of the user: task_id and any of title, description, status (open | in_progress | done | cancelled), due."
COMPLETE_TASK_DESCRIPTION = "Mark a task of the user as done: task_id."
USER_ID_DESCRIPTION = "The user (this server is not bound to one user)"


class QuickSearchArgs(ToolArgs):
    query: AnyString = Field(description="What to look for")
    chat_id: AnyOptionalString = Field(default=None, description="Only this chat")
    k: AnyInteger = Field(default=shared.TOPIC_SEARCH_DEFAULT_K, description="Number of results (1-100, default 5)")


class GetContextArgs(ToolArgs):
    session_id: AnyString = Field(description="The chat session, e.g. telegram:42")
    query: AnyOptionalString = Field(default=None, description="What the next answer is about (default: the last user message)")
    max_tokens: AnyOptionalInteger = Field(default=None, description="Token budget of the whole context")
    include_vector: AnyBool = Field(default=True, description="Add the relevant-memory blocks (needs an embedder)")


class GetContextForUserArgs(GetContextArgs):
    user_id: AnyString = Field(description=USER_ID_DESCRIPTION)


class AddMessageArgs(ToolArgs):
    message_id: AnyString = Field(description="The message's id in its chat")
    chat_id: AnyString = Field(description="The chat, e.g. telegram:42")
    content: AnyString = Field(description="The text")
    role: AnyRole = Field(default="user", description="user | assistant | system | tool")
    user_id: AnyOptionalString = Field(default=None, description="The author (default: the user this server is bound to)")
    user_name: AnyOptionalString = Field(default=None, description="The author's display name")
    create_time: AnyOptionalString = Field(default=None, description="ISO 8601 (default: now)")
    reply_message_id: AnyOptionalString = Field(default=None, description="The message this one replies to")
    root_message_id: AnyOptionalString = Field(default=None, description="The thread's first message")
    session_key: AnyOptionalString = Field(default=None, description="The session (default: chat_id)")
    is_mention_bot: AnyBool = Field(default=False, description="The message mentions the bot")
    metadata: AnyObject = Field(default=None, description="Free key -> value pairs")


class CreateTaskArgs(ToolArgs):
    title: AnyString = Field(description="The task")
    description: AnyOptionalString = Field(default=None, description="Details")
    due: AnyOptionalString = Field(default=None, description="Due time, ISO 8601")
    task_id: AnyOptionalString = Field(default=None, description="An id of your choice (default: generated)")


class UpdateTaskArgs(ToolArgs):
    task_id: AnyString = Field(description="The task's id")
    title: AnyOptionalString = Field(default=None, description="New title")
    description: AnyOptionalString = Field(default=None, description="New description")
    status: AnyOptionalStatus = Field(default=None, description=" | ".join(TASK_STATUSES))
    due: AnyOptionalString = Field(default=None, description="New due time, ISO 8601")


class CompleteTaskArgs(ToolArgs):
    task_id: AnyString = Field(description="The task's id")


def _with_user(model: type[ToolArgs]) -> type[ToolArgs]:
    """The schema of a user's tool on a server bound to no user: the same arguments plus a required user_id."""
    return type(f"{model.__name__}ForUser", (model,), {"__annotations__": {"user_id": AnyString},
                                                      "user_id": Field(description=USER_ID_DESCRIPTION)})


@dataclass(frozen=True)
class Outcome:
    text: str
    data: Any = None
    is_error: bool = False


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[LayeredMemory, dict[str, Any]], Outcome]

    def input_schema(self) -> dict[str, Any]:
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        schema.pop("description", None)
        return schema


# -- the calls ---------------------------------------------------------------------------------------
def _error(prefix: str, exc: BaseException) -> Outcome:
    if not isinstance(exc, LayeredMemoryError):
        logger.warning("%s%s: %s", prefix, type(exc).__name__, exc)
        return Outcome(f"{prefix}{type(exc).__name__}: {exc}", {"error": f"{prefix}{exc}"}, True)
    return Outcome(prefix + str(exc), {"error": prefix + str(exc)}, True)


def _qdrant_search_memory(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    text = shared.qdrant_search_memory(h, a.get("query_text"), a.get("limit", shared.QDRANT_SEARCH_DEFAULT_LIMIT), a.get("filters"))
    failed = text in (shared.QDRANT_NOT_CONFIGURED, shared.QUERY_TEXT_REQUIRED) or text.startswith(shared.SEARCH_ERROR_PREFIX)
    return Outcome(text, None, failed)


def _search(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    out = shared.search_tool(h, a.get("queries"), a.get("filters"), a.get("k", shared.SEARCH_DEFAULT_K), a.get("route", "hybrid"),
                             query=a.get("query"))
    return Outcome(shared.search_json(out), out, "error" in out)


def _topic_search(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    text, data = shared.topic_search_output(h, a.get("query"), a.get("chat_id"), a.get("k", shared.TOPIC_SEARCH_DEFAULT_K))
    return Outcome(text, data, "error" in data)


def _list_tasks(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    text, tasks = shared.list_tasks_output(h, a.get("user_id"), a.get("status"))
    failed = text.startswith(shared.LIST_TASKS_ERROR_PREFIX) or text == shared.QDRANT_NOT_CONFIGURED
    return Outcome(text, {"tasks": tasks}, failed)


def _quick_search(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    query = a.get("query")
    if not isinstance(query, str) or not query.strip():
        return Outcome("Error: query is required and must be a non-empty string", {"error": "query is required"}, True)
    try:
        k = shared._as_int("k", a.get("k"), shared.TOPIC_SEARCH_DEFAULT_K)
        out = h.topics.quick_search(query.strip(), chat_id=a.get("chat_id") or None, k=k).to_dict()
    except Exception as exc:
        return _error(shared.SEARCH_ERROR_PREFIX, exc)
    return Outcome(shared.search_json(out), out)


def format_context(messages: list[Any]) -> str:
    """The context as the model would read it: one block per message, labelled role/kind."""
    if not messages:
        return "No context for this session yet."
    return "\n\n".join(f"[{m.role}/{m.kind}] {m.content}" for m in messages)


def _get_context(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    try:
        include = a.get("include_vector", True)
        if not isinstance(include, bool):
            raise InvalidInputError("include_vector", include, "must be true or false", "pass include_vector=true")
        max_tokens = a.get("max_tokens")
        if max_tokens is not None:
            max_tokens = shared._as_int("max_tokens", max_tokens, 0)
        messages = h.get_context_for_user(a.get("user_id"), a.get("session_id"), query=a.get("query"), include_vector=include,
                                          max_tokens=max_tokens)
    except Exception as exc:
        return _error("Error getting context: ", exc)
    return Outcome(format_context(messages), {"messages": [m.model_dump(mode="json") for m in messages]})


MESSAGE_FIELDS = ("message_id", "chat_id", "content", "role", "user_id", "user_name", "create_time", "reply_message_id",
                  "root_message_id", "session_key", "is_mention_bot", "metadata")


def _add_message(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    fields = {k: a[k] for k in MESSAGE_FIELDS if a.get(k) is not None}
    try:
        stored = h.add_message(fields)
    except Exception as exc:
        return _error("Error storing message: ", exc)
    return Outcome(f"Stored message {stored.message_id} in chat {stored.chat_id}.", stored.model_dump(mode="json"))


def _task_outcome(task: Any, verb: str) -> Outcome:
    return Outcome(f"{verb} task: " + shared.format_tasks([task]).split("\n", 1)[1].removeprefix("1. "), task.model_dump(mode="json"))


def _create_task(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    try:
        task = h.create_task(a.get("user_id"), a.get("title"), a.get("description") or "", due=a.get("due"), task_id=a.get("task_id"))
    except Exception as exc:
        return _error("Error creating task: ", exc)
    return _task_outcome(task, "Created")


def _update_task(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    changes = {k: a[k] for k in ("title", "description", "status", "due") if a.get(k) is not None}
    try:
        task = h.update_task(a.get("user_id"), a.get("task_id"), **changes)
    except Exception as exc:
        return _error("Error updating task: ", exc)
    return _task_outcome(task, "Updated")


def _complete_task(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    try:
        task = h.complete_task(a.get("user_id"), a.get("task_id"))
    except Exception as exc:
        return _error("Error completing task: ", exc)
    return _task_outcome(task, "Completed")


def _vector_rag(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    text = doc_tools.vector_rag_tool(h, a.get("query"), a.get("k", 5), a.get("filters"))
    return Outcome(text, None, text.startswith("Error") or text == doc_tools.DOCUMENTS_NOT_CONFIGURED)


def _search_repos(h: LayeredMemory, a: dict[str, Any]) -> Outcome:
    text = doc_tools.search_repos_tool(h, a.get("query"), a.get("repo"), a.get("path"), a.get("language"), a.get("k", 10))
    return Outcome(text, None, text.startswith("Error") or text == doc_tools.DOCUMENTS_NOT_CONFIGURED)


USER_TOOLS = ("get_context", "list_tasks", "create_task", "update_task", "complete_task")  # act on one user's memory
TASK_TOOLS = ("list_tasks", "create_task", "update_task", "complete_task")
DOCUMENT_TOOLS = ("vector_rag", "search_repos")


def tool_specs(*, bound: bool, documents: bool = False) -> list[ToolSpec]:
    """The tools of a server bound to a user (``bound``) or to a whole tenant; the document tools with ``documents``.

    On a tenant-wide server the user's tools take a required ``user_id``; a user-bound server fills it in
    (and refuses another)."""
    specs = [
        ToolSpec("qdrant_search_memory", shared.QDRANT_SEARCH_MEMORY_DESCRIPTION, shared.QdrantSearchMemoryArgs, _qdrant_search_memory),
        ToolSpec("search", shared.SEARCH_DESCRIPTION, shared.SearchArgs, _search),
        ToolSpec("quick_search", QUICK_SEARCH_DESCRIPTION, QuickSearchArgs, _quick_search),
        ToolSpec("topic_search", shared.TOPIC_SEARCH_DESCRIPTION, shared.TopicSearchArgs, _topic_search),
        ToolSpec("get_context", GET_CONTEXT_DESCRIPTION, GetContextArgs if bound else GetContextForUserArgs, _get_context),
        ToolSpec("add_message", ADD_MESSAGE_DESCRIPTION, AddMessageArgs, _add_message),
        ToolSpec("list_tasks", shared.LIST_TASKS_DESCRIPTION, shared.ListTasksArgs if bound else _with_user(shared.ListTasksArgs), _list_tasks),
        ToolSpec("create_task", CREATE_TASK_DESCRIPTION, CreateTaskArgs if bound else _with_user(CreateTaskArgs), _create_task),
        ToolSpec("update_task", UPDATE_TASK_DESCRIPTION, UpdateTaskArgs if bound else _with_user(UpdateTaskArgs), _update_task),
        ToolSpec("complete_task", COMPLETE_TASK_DESCRIPTION, CompleteTaskArgs if bound else _with_user(CompleteTaskArgs), _complete_task),
    ]
    if documents:
        for name, run in (("vector_rag", _vector_rag), ("search_repos", _search_repos)):
            description, args, *_ = doc_tools.TOOLS[name]
            specs.append(ToolSpec(name, description, args, run))
    return specs


def call_tool(h: LayeredMemory, spec: ToolSpec, arguments: Mapping[str, Any] | None) -> Outcome:
    """Run one tool on the handle; never raises (a failure is an error outcome)."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, Mapping):
        return Outcome(f"Error: the arguments of {spec.name} must be a JSON object", {"error": "arguments must be an object"}, True)
    args = dict(arguments)
    known = set(spec.args.model_fields)
    unknown = sorted(set(args) - known)
    if unknown:
        message = f"Error: {spec.name} has no argument {unknown[0]!r} (its arguments: {', '.join(sorted(known))})"
        return Outcome(message, {"error": message}, True)
    try:
        return spec.run(h, args)
    except Exception as exc:  # a bug in a tool must not take the server down
        logger.exception("tool %s failed", spec.name)
        return Outcome(f"Error: {spec.name} failed: {type(exc).__name__}", {"error": type(exc).__name__}, True)


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


__all__ = ["DOCUMENT_TOOLS", "Outcome", "TASK_TOOLS", "ToolSpec", "call_tool", "format_context", "tool_specs"]
