"""The agent tools' names, descriptions, error strings and argument schemas (seed 000 and 003 word for
word), apart from the functions in ``tools.py`` that check the arguments and format the answers.

The schemas are pydantic v2 models usable as LangChain ``args_schema`` and LlamaIndex ``fn_schema``;
every name here is also importable from ``layered_memory.tools``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, WithJsonSchema, model_validator

from .retrieval.plan import ROUTES
from .userdata import TASK_STATUSES

# -- seed 000: qdrant_search_memory -----------------------------------------------------------
#: The four error strings of seed 000, word for word.
QDRANT_NOT_CONFIGURED = "Qdrant memory search is not configured. Enable it in config to search long-term memory."
QUERY_TEXT_REQUIRED = "Error: query_text is required and must be a non-empty string"
SEARCH_ERROR_PREFIX = "Error searching memory: "
NO_RELEVANT_MESSAGES = "No relevant messages found in memory."

QDRANT_SEARCH_DEFAULT_LIMIT = 5
QDRANT_SEARCH_MAX_LIMIT = 20
QDRANT_SEARCH_FILTERS = ("role", "session_key", "timestamp_from", "timestamp_to")
MESSAGE_SEPARATOR = "\n\n---\n\n"

# -- seed 003: search ---------------------------------------------------------------------------
SEARCH_DEFAULT_K = 10
TOPIC_SEARCH_DEFAULT_K = 5
TOPIC_SEARCH_ERROR_PREFIX = "Error searching topics: "
LIST_TASKS_ERROR_PREFIX = "Error listing tasks: "

TOOL_NAMES = ("qdrant_search_memory", "search", "topic_search", "list_tasks")

QDRANT_SEARCH_MEMORY_DESCRIPTION = (
    "Search the long-term memory of past conversation messages by meaning. Use it when the answer may be in "
    "something said earlier (a preference, an instruction, a fact the user shared). Describe what you are "
    "looking for in natural language. Optional: limit (1-20, default 5) and filters: role (user | assistant | "
    "system), session_key (e.g. telegram:123456), timestamp_from / timestamp_to (ISO 8601, e.g. "
    "2024-01-01T00:00:00Z). Returns the matching messages with role, time, content and session."
)
SEARCH_DESCRIPTION = (
    "Hybrid search (BM25 keywords + dense vectors, fused with RRF) over the stored messages. Pass one query or "
    "several (queries), k results (1-100, default 10) and route: hybrid (default), bm25 or dense. Optional "
    "filters: role, session_key, chat_id, channel, author, lang, topic_id, task_id, timestamp_from, "
    "timestamp_to. Returns JSON: hits (id, score, text, snippet, meta), total_found, route_used."
)
TOPIC_SEARCH_DESCRIPTION = (
    "Search the conversation topics (threads of related messages with a title and summary) by meaning. Use it "
    "to find what was discussed about a subject and where. Optional chat_id limits it to one chat; k is the "
    "number of topics (default 5)."
)
LIST_TASKS_DESCRIPTION = (
    "List the user's tasks (title, status, due date, id). Tasks are not in the prompt: call this when the user "
    "asks about their tasks, to-dos or reminders. Optional status: open, in_progress, done or cancelled."
)


# -- argument schemas (pydantic v2; usable as LangChain args_schema and LlamaIndex fn_schema) -----
class ToolArgs(BaseModel):
    """Base of the tool schemas: a missing required argument validates as ``None`` (the schema
    still lists it as required), so the tool function answers it with its error text."""

    @model_validator(mode="before")
    @classmethod
    def _missing_is_none(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            missing = [n for n, f in cls.model_fields.items() if f.is_required() and n not in data]
            return {**data, **dict.fromkeys(missing)} if missing else data
        return data


class QdrantSearchFilters(BaseModel):
    """Filters of ``qdrant_search_memory`` (seed 000); the model sees their JSON schema."""

    role: Literal["user", "assistant", "system"] | None = Field(default=None, description="Only messages of this role: user, assistant or system")
    session_key: str | None = Field(default=None, description="Only this session, e.g. telegram:123456")
    timestamp_from: str | None = Field(default=None, description="Messages from this time, ISO 8601, e.g. 2024-01-01T00:00:00Z")
    timestamp_to: str | None = Field(default=None, description="Messages up to this time, ISO 8601")


# Fields the model sees with these JSON types (the document tools use them too) but that accept any value: the tool function checks
# it and answers a bad one with its error text (a framework validating the schema must not raise).
NULL_SCHEMA = {"type": "null"}
AnyString = Annotated[Any, WithJsonSchema({"type": "string"})]
AnyOptionalString = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "string"}, NULL_SCHEMA]})]
AnyInteger = Annotated[Any, WithJsonSchema({"type": "integer"})]
AnyObject = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "object"}, NULL_SCHEMA]})]
AnyQueries = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}, NULL_SCHEMA]})]
AnyRoute = Annotated[Any, WithJsonSchema({"type": "string", "enum": list(ROUTES)})]
AnyStatus = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "string", "enum": list(TASK_STATUSES)}, NULL_SCHEMA]})]
AnyFilters = Annotated[Any, WithJsonSchema({"anyOf": [
    {k: v for k, v in QdrantSearchFilters.model_json_schema().items() if k not in ("title", "description")}, NULL_SCHEMA,
]})]


class QdrantSearchMemoryArgs(ToolArgs):
    query_text: AnyString = Field(description="What you are looking for, in natural language")
    limit: AnyInteger = Field(
        default=QDRANT_SEARCH_DEFAULT_LIMIT, description="Maximum number of results (default 5, at most 20; a larger value gives 20)"
    )
    filters: AnyFilters = Field(default=None, description="Optional filters to narrow the search")


class SearchArgs(ToolArgs):
    queries: AnyQueries = Field(default=None, description="One search query or a list of them")
    filters: AnyObject = Field(default=None, description="Metadata filters, e.g. {\"role\": \"user\", \"timestamp_from\": \"2024-01-01T00:00:00Z\"}")
    k: AnyInteger = Field(default=SEARCH_DEFAULT_K, description="Number of results (1-100)")
    route: AnyRoute = Field(default="hybrid", description=" | ".join(ROUTES))
    query: AnyOptionalString = Field(default=None, description="A single query (alternative to queries)")


class TopicSearchArgs(ToolArgs):
    query: AnyString = Field(description="The subject to look for")
    chat_id: AnyOptionalString = Field(default=None, description="Only topics of this chat")
    k: AnyInteger = Field(default=TOPIC_SEARCH_DEFAULT_K, description="Number of topics")


class ListTasksArgs(ToolArgs):
    status: AnyStatus = Field(default=None, description=" | ".join(TASK_STATUSES) + "; omit for all")
