"""The HTTP API of ``layered-memory serve``: one table of routes, each with its parameter models and the
engine call behind it. ``api.py`` serves the table; ``openapi.py`` describes it.

Scope: every route runs on the bearer key's handle (``mem.tenant(t)``, ``.for_user(u)`` when the key is
bound to a user). Routes under ``/v1/users/{user_id}`` narrow it to that user (``handle.for_user``): a
key bound to another user gets 403, and a key's handle can only narrow, never widen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidInputError, NotFoundError
from . import access, views

if TYPE_CHECKING:
    from ..engine import LayeredMemory
    from .keys import Key


class Forbidden(Exception):
    """The key may not reach what the request names (another user)."""


# -- parameter models (query strings and JSON bodies); unknown fields are refused ------------------------
class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


Id = str | int
Role = Literal["user", "assistant", "system", "tool"]
Status = Literal["open", "in_progress", "done", "cancelled"]


class LimitQuery(Params):
    limit: int = Field(50, ge=1, le=1000, description="How many of the newest messages")


class ContextQuery(Params):
    query: str | None = Field(None, max_length=10_000, description="What the next answer is about (default: the last user message)")
    max_tokens: int | None = Field(None, ge=1, le=10_000_000, description="Token budget of the whole context")
    include_vector: bool = Field(True, description="Add the relevant-memory blocks (needs an embedder)")


class ViewerSearchQuery(Params):
    q: str = Field(min_length=1, max_length=10_000, description="The search text")
    chat_id: str | None = Field(None, description="Only this chat")
    k: int = Field(10, ge=1, le=100, description="Number of hits")


class TopicSearchQuery(Params):
    q: str = Field(min_length=1, max_length=10_000, description="The subject")
    chat_id: str | None = Field(None, description="Only this chat")
    k: int = Field(5, ge=1, le=100, description="Number of topics (topic_search) or hits (quick_search)")


class TasksQuery(Params):
    status: Status | None = Field(None, description="Only tasks with this status")


class FactsQuery(Params):
    limit: int = Field(500, ge=1, le=100_000, description="At most this many entities and relations")


class AgentsQuery(Params):
    period_days: int = Field(7, ge=1, le=3650, description="The stats' period, days back from now")


class EventsQuery(Params):
    limit: int | None = Field(None, ge=1, le=100_000, description="Close the stream after this many events")


class MessageIn(Params):
    message_id: Id
    chat_id: Id
    content: str
    user_id: Id | None = Field(None, description="The author (default: the key's user)")
    user_name: str | None = None
    role: Role = "user"
    is_mention_bot: bool = False
    root_message_id: Id | None = None
    reply_message_id: Id | None = None
    create_time: str | float | None = Field(None, description="ISO 8601 or epoch seconds (default: now)")
    session_key: str | None = Field(None, description="The session (default: chat_id)")
    metadata: dict[str, Any] | None = None


class SearchIn(Params):
    queries: list[str] | str | None = Field(None, description="One query or several (fused)")
    query: str | None = Field(None, description="A single query (alternative to queries)")
    filters: dict[str, Any] | None = Field(None, description="role, session_key, user_id, chat_id, timestamp_from/to, ...")
    k: int = Field(10, ge=1, le=100)
    route: Literal["hybrid", "bm25", "dense"] = "hybrid"


class TaskIn(Params):
    title: str
    description: str = ""
    due: str | None = Field(None, description="ISO 8601")
    task_id: Id | None = None
    metadata: dict[str, Any] | None = None


class TaskPatch(Params):
    title: str | None = None
    description: str | None = None
    status: Status | None = None
    due: str | None = None
    metadata: dict[str, Any] | None = None


# -- a request, as the handlers see it -----------------------------------------------------------------
@dataclass
class Call:
    key: Key
    handle: LayeredMemory  # the key's handle
    path: dict[str, str]
    query: Any = None
    body: Any = None
    monitor: Callable[[str], Any] | None = None  # the app's agent size monitor of a tenant


    def user(self) -> LayeredMemory:
        """The handle narrowed to the path's user (403 for a key bound to someone else)."""
        user_id = self.path["user_id"]
        check_reach(self.key, self.path)
        return self.handle if self.handle.bound_user == user_id else self.handle.for_user(user_id)

    def tenant_wide(self) -> LayeredMemory:
        if self.key.user is not None:
            raise Forbidden("this operation covers the whole tenant; a key bound to a user cannot run it")
        return self.handle


def check_reach(key: Key, path: dict[str, str]) -> None:
    """A key bound to a user reaches only paths of that user (checked before anything else of the request)."""
    user_id = path.get("user_id")
    if user_id is not None and key.user is not None and user_id != key.user:
        raise Forbidden(f"user_id={user_id!r}: this key is bound to another user and reaches only that user's memory")


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    name: str
    summary: str
    run: Callable[[Call], Any] | None = None  # None: served by api.py itself (the event stream)
    query: type[Params] | None = None
    body: type[Params] | None = None
    status: int = 200
    writes: bool = False
    tags: tuple[str, ...] = field(default=("memory",))


# -- handlers ---------------------------------------------------------------------------------------------
def _me(c: Call) -> dict[str, Any]:
    return {"tenant": c.key.tenant, "user": c.key.user, "key": c.key.name}


def _users(c: Call) -> dict[str, Any]:
    return {"users": access.users(c.handle)}


def _chats(c: Call) -> dict[str, Any]:
    return {"user_id": c.path["user_id"], "chats": access.chats(c.user())}


def _message(c: Call) -> dict[str, Any]:
    u = c.user()
    chat_id, message_id = c.path["chat_id"], c.path["message_id"]
    found = u.get_messages([message_id], chat_id=chat_id)[0]
    if found is None:
        raise NotFoundError(f"message_id={message_id!r} of chat_id={chat_id!r} is not stored for this user")
    return views.message_json(found)


def _delete_message(c: Call) -> dict[str, Any]:
    """Delete one message with the engine's cascade (``delete_message``: index, topic, summaries and facts marked stale)."""
    u = c.user()
    chat_id, message_id = c.path["chat_id"], c.path["message_id"]
    if u.get_messages([message_id], chat_id=chat_id)[0] is None or not u.delete_message(chat_id, message_id):
        raise NotFoundError(f"message_id={message_id!r} of chat_id={chat_id!r} is not stored for this user")
    return {"chat_id": chat_id, "message_id": message_id, "deleted": True}


def _add_message(c: Call) -> dict[str, Any]:
    fields = c.body.model_dump(exclude_none=True)
    return views.message_json(c.handle.add_message(fields))


def _search(c: Call) -> dict[str, Any]:
    b = c.body
    if b.queries is None and b.query is None:
        raise InvalidInputError("queries", None, "give queries or query", 'pass e.g. {"query": "payments crash"}')
    return c.handle.search(b.queries, filters=b.filters, k=b.k, route=b.route, query=b.query).to_dict()


def _quick_search(c: Call) -> dict[str, Any]:
    q = c.query
    return c.user().topics.quick_search(q.q, chat_id=q.chat_id, k=q.k).to_dict()


def _topic_search(c: Call) -> dict[str, Any]:
    q = c.query
    return c.user().topics.topic_search(q.q, chat_id=q.chat_id, k=q.k).to_dict()


def _tasks(c: Call) -> dict[str, Any]:
    return {"tasks": [t.model_dump(mode="json") for t in c.user().list_tasks(None, status=c.query.status)]}


def _create_task(c: Call) -> dict[str, Any]:
    b = c.body
    return c.user().create_task(None, b.title, b.description, due=b.due, task_id=b.task_id, metadata=b.metadata).model_dump(mode="json")


def _update_task(c: Call) -> dict[str, Any]:
    changes = c.body.model_dump(exclude_none=True)
    if not changes:
        raise InvalidInputError("body", {}, "names nothing to change", 'pass e.g. {"status": "done"}')
    return c.user().update_task(None, c.path["task_id"], **changes).model_dump(mode="json")


def _complete_task(c: Call) -> dict[str, Any]:
    return c.user().complete_task(None, c.path["task_id"]).model_dump(mode="json")


def _delete_fact(c: Call) -> dict[str, Any]:
    return c.user().knowledge.delete_fact(c.path["fact_id"])


def _check_agents(c: Call) -> dict[str, Any]:
    h = c.tenant_wide()
    monitor = c.monitor(h.tenant_id) if c.monitor is not None else h.agents.monitor()
    events = monitor.check_once()
    return {"events": [e.to_dict() for e in events]}


U = "/v1/users/{user_id}"
CHAT = U + "/chats/{chat_id}"
ROUTES: tuple[Route, ...] = (
    Route("GET", "/v1/me", "me", "The tenant and user this key reaches", _me, tags=("auth",)),
    Route("GET", "/v1/users", "list_users", "The users this key may look at", _users, tags=("viewer",)),
    Route("GET", U + "/chats", "list_chats", "The user's chats", _chats, tags=("viewer",)),
    Route("GET", CHAT + "/messages", "chat_messages", "The chat's newest messages (the window and before), oldest first",
          lambda c: views.messages_view(c.user(), c.path["chat_id"], limit=c.query.limit), query=LimitQuery, tags=("viewer",)),
    Route("GET", CHAT + "/messages/{message_id}", "get_message", "One stored message", _message),
    Route("DELETE", CHAT + "/messages/{message_id}", "delete_message", "Delete one message (with the engine's cascade)",
          _delete_message, writes=True),
    Route("GET", CHAT + "/summary", "chat_summary", "The session summary and its quality, with earlier versions' scores",
          lambda c: views.summary_view(c.user(), c.path["chat_id"]), tags=("viewer",)),
    Route("GET", CHAT + "/topics", "chat_topics", "The chat's topics, oldest first (the timeline)",
          lambda c: views.topics_view(c.user(), c.path["chat_id"]), tags=("viewer",)),
    Route("GET", CHAT + "/context", "chat_context", "Exactly what get_context_for_user hands the model, each block with its tokens",
          lambda c: views.context_view(c.user(), c.path["chat_id"], query=c.query.query, max_tokens=c.query.max_tokens,
                                       include_vector=c.query.include_vector), query=ContextQuery),
    Route("GET", U + "/topics/{topic_id}", "get_topic", "A topic with every summary version and its messages",
          lambda c: views.topic_view(c.user(), c.path["topic_id"]), tags=("viewer",)),
    Route("GET", U + "/facts", "list_facts", "Profile, entities and relations with the messages they came from",
          lambda c: views.facts_view(c.user(), limit=c.query.limit), query=FactsQuery, tags=("viewer",)),
    Route("DELETE", U + "/facts/{fact_id}", "delete_fact", "Delete a fact (an entity with its relations, or a relation)",
          _delete_fact, writes=True),
    Route("GET", U + "/search", "viewer_search", "Hybrid hits with their dense and BM25 ranks side by side, and matching facts",
          lambda c: views.search_view(c.user(), c.query.q, chat_id=c.query.chat_id, k=c.query.k), query=ViewerSearchQuery, tags=("viewer",)),
    Route("GET", U + "/quick_search", "quick_search", "Messages and topic summaries, fused (seed 001's default context source)",
          _quick_search, query=TopicSearchQuery),
    Route("GET", U + "/topic_search", "topic_search", "Topics with their summaries and messages (seed 001's deep search)",
          _topic_search, query=TopicSearchQuery),
    Route("GET", U + "/tasks", "list_tasks", "The user's tasks", _tasks, query=TasksQuery),
    Route("POST", U + "/tasks", "create_task", "Create a task", _create_task, body=TaskIn, status=201, writes=True),
    Route("PATCH", U + "/tasks/{task_id}", "update_task", "Change a task", _update_task, body=TaskPatch, writes=True),
    Route("POST", U + "/tasks/{task_id}/complete", "complete_task", "Mark a task done", _complete_task, writes=True),
    Route("GET", U + "/agents", "list_agents", "The user's agents with their stats",
          lambda c: views.agents_view(c.user(), period_days=c.query.period_days), query=AgentsQuery, tags=("agents",)),
    Route("GET", U + "/agents/events", "agent_events", "The agent size monitor's events (size_warning, auto_pruned) as Server-Sent Events",
          None, query=EventsQuery, tags=("agents",)),
    Route("POST", "/v1/agents/check", "check_agents", "Run the agent size check of the tenant now (a tenant key only)",
          _check_agents, writes=True, tags=("agents",)),
    Route("POST", "/v1/messages", "add_message", "Store a message (seed 001 fields); idempotent by chat_id + message_id",
          _add_message, body=MessageIn, status=201, writes=True),
    Route("POST", "/v1/search", "search", "Hybrid, BM25 or dense search over the messages this key may see (seed 003)",
          _search, body=SearchIn),
)

__all__ = ["Call", "Forbidden", "Params", "ROUTES", "Route", "check_reach"]
