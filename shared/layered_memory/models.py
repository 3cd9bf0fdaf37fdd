"""Records and results: plain pydantic models shared by every layer.

Messages follow seed 001 (message_id, chat_id, user_id, user_name, content, role, is_mention_bot,
root_message_id, reply_message_id, topic_id, create_time) plus ``session_key`` (seed 000), the
tenant and free ``metadata``.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import InvalidInputError

ROLES = ("user", "assistant", "system", "tool")
INTERACTION_TYPES = ("task_execution", "tool_call", "user_message", "agent_response")
ID_PATTERN = re.compile(r"[A-Za-z0-9_.:@/+=\-]{1,200}")  # used with fullmatch: "$" would accept a trailing newline
ID_RULE = "ids are 1-200 characters of letters, digits and _ . : @ / + = -"
DEFAULT_TENANT = "default"


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def check_id(field: str, value: object, *, optional: bool = False) -> str | None:
    """Validate an identifier; return it as a string.

    Raises:
        InvalidInputError: naming the field, the rule and the fix.
    """
    if value is None:
        if optional:
            return None
        raise InvalidInputError(field, value, "is required", f"pass a non-empty {field}")
    if isinstance(value, int) and not isinstance(value, bool) and -(10**200) < value < 10**200:
        value = str(value)  # larger ints break the length rule below (and str() refuses > 4300 digits)
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        raise InvalidInputError(field, value, ID_RULE, f"replace spaces and other characters in {field}")
    return value


def parse_time(field: str, value: object) -> datetime:
    """Parse an aware datetime from a datetime, ISO 8601 string or epoch seconds.

    Raises:
        InvalidInputError: for naive or unparsable timestamps.
    """
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            dt = datetime.fromtimestamp(float(value), tz=timezone.utc)
        except (OverflowError, OSError, ValueError):  # nan, inf, beyond year 1..9999
            raise InvalidInputError(
                field, value, "is not an epoch time in seconds between years 1 and 9999",
                "pass seconds since 1970 (e.g. 1705314600) or an ISO string such as 2024-01-15T10:30:00Z",
            ) from None
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except (ValueError, OverflowError):
            raise InvalidInputError(
                field, value, "is not an ISO 8601 timestamp", "use e.g. 2024-01-15T10:30:00Z"
            ) from None
    else:
        raise InvalidInputError(
            field, value, "must be a datetime or an ISO 8601 string", "use e.g. 2024-01-15T10:30:00Z"
        )
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise InvalidInputError(
            field, value, "has no time zone (naive timestamps are ambiguous)",
            "pass an aware datetime (datetime.now(timezone.utc)) or an ISO string ending in Z or +00:00",
        )
    try:
        return dt.astimezone(timezone.utc)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        raise InvalidInputError(field, value, "falls outside years 1..9999 in UTC", "pass a date within that range") from None


def check_text(field: str, value: object, *, empty_fix: str = "skip empty messages") -> str:
    """A non-empty ``str`` that can be stored as UTF-8: bytes and lone surrogates are named as such.

    Raises:
        InvalidInputError: not a str (bytes: decode them), only whitespace, or a lone surrogate.
    """
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise InvalidInputError(field, bytes(value[:60]), f"is {type(value).__name__}, not text",
                                f"decode it first, e.g. {field}=data.decode('utf-8')")
    if not isinstance(value, str):
        raise InvalidInputError(field, value, f"must be a non-empty string, got {type(value).__name__}", "pass the text as a str")
    if not value.strip():
        raise InvalidInputError(field, value, "must be a non-empty string (not only whitespace)", empty_fix)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            field, value[max(0, exc.start - 20): exc.start + 20],
            f"holds a lone surrogate {value[exc.start]!r} at position {exc.start} (half of a UTF-16 pair, or bytes decoded "
            "with errors='surrogateescape'), which is not valid Unicode and cannot be stored as UTF-8",
            f"decode the source bytes as UTF-8 with errors='replace', or drop it: {field}.encode('utf-8', 'replace').decode('utf-8')",
        ) from None
    return value


MAX_JSON_DEPTH = 32


MAX_JSON_INT_BITS = 4096  # about 1,233 digits; str() of an int over 4,300 digits raises in Python


def check_json(field: str, value: object, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Check that ``value`` is plain JSON: str keys, finite numbers, at most ``max_depth`` levels.

    Walks iteratively (no RecursionError); deeper values could be written but not read back
    (pydantic's JSON parser stops at ~200 levels).

    Raises:
        InvalidInputError: naming the first offending path.
    """
    stack: list[tuple[str, object, int]] = [(field, value, 1)]
    while stack:
        path, v, depth = stack.pop()
        if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > MAX_JSON_INT_BITS:
            raise InvalidInputError(path, f"an int of {v.bit_length()} bits", f"integers are limited to {MAX_JSON_INT_BITS} bits "
                                    "(Python cannot print longer ones as JSON text)", "store it as a string")
        if v is None or isinstance(v, (str, bool, int)):
            continue
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                raise InvalidInputError(path, v, "NaN and infinity are not JSON", "store a finite number or null")
            continue
        if depth > max_depth:
            raise InvalidInputError(field, "...", f"nests deeper than {max_depth} levels", "flatten it")
        if isinstance(v, Mapping):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise InvalidInputError(f"{path} key", k, "JSON object keys must be strings", "convert the key to str")
                stack.append((f"{path}.{k}"[:200], item, depth + 1))
        elif isinstance(v, (list, tuple)):
            stack.extend((f"{path}[{i}]"[:200], item, depth + 1) for i, item in enumerate(v))
        else:
            raise InvalidInputError(
                path, v, f"a {type(v).__name__} is not JSON", "use str, numbers, bools, None, lists and dicts"
            )


def iso(dt: datetime) -> str:
    """UTC ISO 8601 with a trailing Z, seconds precision plus microseconds when present."""
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


class MessageRef(NamedTuple):
    """A message's identity inside a tenant: ``(chat_id, message_id)``.

    Message ids are unique per chat only (Telegram numbers every chat's messages from 1), so a
    message_id alone never names a message; reply ids resolve within the replying message's chat.
    A plain ``(chat_id, message_id)`` tuple works wherever a MessageRef is expected.

    Example::

        MessageRef("chat-1", "42") == ("chat-1", "42")   # True
        mem.get_messages([MessageRef("chat-1", "42")])
    """

    chat_id: str
    message_id: str


def check_refs(field: str, refs: object) -> list[MessageRef]:
    """Validate a sequence of ``(chat_id, message_id)`` pairs; return them as MessageRefs.

    Raises:
        InvalidInputError: not a sequence of pairs, a bare message_id, or an invalid id.
    """
    fix = "pass (chat_id, message_id) pairs, e.g. [MessageRef('c1', 'm1')] or [('c1', 'm1')]"
    if isinstance(refs, (str, bytes, MessageRef)) or not isinstance(refs, Iterable):
        raise InvalidInputError(field, refs, "must be a list of (chat_id, message_id) pairs", fix)
    out: list[MessageRef] = []
    for ref in refs:
        if isinstance(ref, (str, int)):
            raise InvalidInputError(
                field, ref, "is a bare message_id; message ids are unique only within their chat", fix
            )
        if not isinstance(ref, (tuple, list)) or len(ref) != 2:
            raise InvalidInputError(field, ref, "must be a (chat_id, message_id) pair", fix)
        out.append(MessageRef(check_id("chat_id", ref[0]), check_id("message_id", ref[1])))  # type: ignore[arg-type]
    return out


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=False)


class Message(_Record):
    """One chat message (seed 001, 2.1.1)."""

    message_id: str
    chat_id: str
    user_id: str
    user_name: str = ""
    content: str
    role: Literal["user", "assistant", "system", "tool"] = "user"
    is_mention_bot: bool = False
    root_message_id: str | None = None
    reply_message_id: str | None = None
    topic_id: str | None = None
    create_time: datetime = Field(default_factory=utcnow)
    session_key: str = ""
    tenant: str = DEFAULT_TENANT
    metadata: dict[str, Any] = Field(default_factory=dict)
    seq: int | None = None  # assigned by the RecordStore: insertion order within a tenant

    @property
    def ref(self) -> MessageRef:
        """The message's identity: ``(chat_id, message_id)``."""
        return MessageRef(self.chat_id, self.message_id)

    @property
    def reply_ref(self) -> MessageRef | None:
        """The message this one replies to: ``reply_message_id`` in the same chat."""
        return MessageRef(self.chat_id, self.reply_message_id) if self.reply_message_id else None

    @field_validator("message_id", "chat_id", "user_id", "tenant", mode="before")
    @classmethod
    def _id(cls, v: Any, info: Any) -> str:
        return check_id(info.field_name, v)  # type: ignore[return-value]

    @field_validator("root_message_id", "reply_message_id", "topic_id", mode="before")
    @classmethod
    def _opt_id(cls, v: Any, info: Any) -> str | None:
        return check_id(info.field_name, v or None, optional=True)

    @field_validator("session_key", mode="before")
    @classmethod
    def _session(cls, v: Any) -> str:
        if v in (None, ""):
            return ""
        return check_id("session_key", v)  # type: ignore[return-value]

    @field_validator("content", mode="before")
    @classmethod
    def _content(cls, v: Any) -> str:
        return check_text("content", v)

    @field_validator("role", mode="before")
    @classmethod
    def _role(cls, v: Any) -> str:
        if v not in ROLES:
            raise InvalidInputError("role", v, f"must be one of {', '.join(ROLES)}", "map your role names")
        return v

    @field_validator("create_time", mode="before")
    @classmethod
    def _time(cls, v: Any) -> datetime:
        return parse_time("create_time", v)

    @classmethod
    def build(cls, data: dict[str, Any] | Message) -> Message:
        """Validate a dict (or copy a Message) and fill ``session_key`` from ``chat_id``.

        Raises:
            InvalidInputError: the first rule broken, with the field, the rule and the fix.
        """
        if isinstance(data, Message):
            data = data.model_dump()
        if not isinstance(data, Mapping):
            raise InvalidInputError("message", data, "must be a dict or a Message", "pass the seed 001 message fields")
        try:
            msg = cls.model_validate(dict(data))
        except ValidationError as exc:
            raise as_input_error(exc) from None
        check_json("metadata", msg.metadata)  # here, not in the store: nothing may be written before it fails
        if not msg.session_key:
            msg.session_key = msg.chat_id
        return msg


def as_input_error(exc: ValidationError) -> InvalidInputError:
    """Turn pydantic's first error into an InvalidInputError (or unwrap ours)."""
    err = exc.errors()[0]
    ctx_err = (err.get("ctx") or {}).get("error")
    if isinstance(ctx_err, InvalidInputError):
        return ctx_err
    field = ".".join(str(p) for p in err.get("loc", ())) or "input"
    if err.get("type") == "missing":
        return InvalidInputError(field, None, "is required", f"pass {field}")
    if err.get("type") == "extra_forbidden":
        return InvalidInputError(field, err.get("input"), "is not a known field", "remove it or put it in metadata")
    return InvalidInputError(field, err.get("input"), err.get("msg", "is invalid"), f"fix {field}")


class SearchHit(_Record):
    """One search result (seed 003)."""

    id: str
    score: float
    text: str
    snippet: str = ""
    meta: dict[str, Any] = Field(default_factory=dict)


class SearchGroup(_Record):
    """One session of a grouped search (``group_by="session"``): its chat and session key, when its hits
    were written, its score (the aggregate of its hits' scores) and its best hits, best first."""

    chat_id: str
    session_key: str
    score: float
    start: str | None = None  # the earliest and latest timestamps among its hits
    end: str | None = None
    hits: list[SearchHit] = Field(default_factory=list)


class SearchResult(_Record):
    """What ``LayeredMemory.search`` returns (seed 003), plus per-stage timings in ms. With
    ``group_by="session"``, ``groups`` holds the best sessions and ``hits`` the best hit of each."""

    hits: list[SearchHit] = Field(default_factory=list)
    total_found: int = 0
    route_used: str = "hybrid"
    fallback_reason: str | None = None
    rerank_error: str | None = None  # the rerank model failed: the hits are in the engine's own order
    queries: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    groups: list[SearchGroup] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "hits": [h.model_dump() for h in self.hits],
            "total_found": self.total_found,
            "route_used": self.route_used,
            **({"fallback_reason": self.fallback_reason} if self.fallback_reason else {}),
            **({"rerank_error": self.rerank_error} if self.rerank_error else {}),
            **({"groups": [g.model_dump() for g in self.groups]} if self.groups is not None else {}),
        }


ContextKind = Literal["summary", "user_data", "window", "memory", "conversation_memory", "documents"]


class ContextMessage(_Record):
    """One message of the assembled prompt context (seed 002 order)."""

    role: Literal["user", "assistant", "system", "tool"]
    content: str
    kind: ContextKind
    message_id: str | None = None
    chat_id: str | None = None  # with message_id, the stored message's identity (window messages)
    name: str | None = None
    create_time: datetime | None = None

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


class Topic(_Record):
    """A thread of messages in one chat (seed 001, 2.1.2)."""

    topic_id: str
    title: str
    description: str | None = None
    creator_id: str
    chat_id: str
    keywords: dict[str, float] | None = None
    topic_vector: list[float] | None = None
    create_time: datetime = Field(default_factory=utcnow)
    update_time: datetime = Field(default_factory=utcnow)
    is_active: bool = True
    is_archived: bool = False
    message_count: int = 0


class TopicSummary(_Record):
    """A versioned summary of one topic (seed 001, 3.1.1)."""

    summary_id: str
    topic_id: str
    content: str
    metadata: dict[str, Any] | None = None
    create_time: datetime = Field(default_factory=utcnow)
    update_time: datetime = Field(default_factory=utcnow)
    version: int = 1


class Task(_Record):
    """A user's task (seed 002 tasks skill). Never injected into the context automatically."""

    task_id: str
    user_id: str
    title: str
    description: str = ""
    status: Literal["open", "in_progress", "done", "cancelled"] = "open"
    due: datetime | None = None
    create_time: datetime = Field(default_factory=utcnow)
    update_time: datetime = Field(default_factory=utcnow)
    metadata: dict[str, Any] = Field(default_factory=dict)
