"""Records of the agent context store (seed 004): names, scopes, interactions, events.

Naming rule (decided here, tested in ``tests/unit/agents/test_agents_models.py``): a ``user_id`` and an
``agent_name`` are 1-60 / 1-40 ASCII letters, digits or ``-``. No ``_``: the seed's collection name
``user{user_id}_{agent_name}_context`` then has exactly one ``_`` between the two parts, so
``user1_a_b`` can never be both (``1_a``, ``b``) and (``1``, ``a_b``). Names are case-sensitive but
must be unique case-insensitively per tenant (``Coder`` and ``coder`` would share a directory on
a case-insensitive file system); ``AgentStore.create`` refuses the second one.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import InvalidInputError
from ..models import DEFAULT_TENANT, INTERACTION_TYPES, as_input_error, check_json, iso, parse_time, utcnow

NAME_PATTERN = re.compile(r"[A-Za-z0-9-]+")  # fullmatch: "$" would accept a trailing newline
MAX_USER_ID = 60
MAX_AGENT_NAME = 40  # 13 + 14 (tenant hash prefix) + 60 + 40 = 127 <= 128, the collection-name limit
NAME_RULE = "must be {n} ASCII letters, digits or '-' at most ('_' and other characters would make collection names ambiguous)"
DEFAULT_MAX_VECTORS = 1_000_000
COLLECTION_MODES = ("per_agent", "shared")
SHARED_COLLECTION = "agent_context"  # prefixed with settings.qdrant.collection_prefix
POINT_KIND = "agent_interaction"
EVENT_KINDS = ("size_warning", "auto_pruned", "check_failed")
_POINT_NS = uuid.UUID("0b6c4f0e-6a55-4d8e-9a53-4b1f2b7c9a04")


def check_name(field_name: str, value: object) -> str:
    """Validate a user id or an agent name for use in a collection name.

    Raises:
        InvalidInputError: naming the value, the rule and the fix.
    """
    limit = MAX_USER_ID if field_name == "user_id" else MAX_AGENT_NAME
    if isinstance(value, int) and not isinstance(value, bool) and -(10**limit) < value < 10**limit:
        value = str(value)
    if not isinstance(value, str) or not value or len(value) > limit or not NAME_PATTERN.fullmatch(value):
        shown = value if isinstance(value, str) else ""
        fix = re.sub(r"[^A-Za-z0-9-]+", "-", shown).strip("-")[:limit] or "coder"
        raise InvalidInputError(field_name, value, NAME_RULE.format(n=f"1-{limit}"), f"use e.g. {fix!r}")
    return value


def ts_key(ts: datetime) -> str:
    """Fixed-width UTC timestamp (always microseconds) so document keys sort chronologically."""
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class AgentScope:
    """Who owns an interaction: (engine tenant, user_id, agent_name). Every read and write of the agent
    store carries one; it becomes the ``tenant`` payload value and the RecordStore collection."""

    tenant: str
    user_id: str
    agent_name: str

    @classmethod
    def of(cls, tenant: str, user_id: object, agent_name: object) -> AgentScope:
        return cls(tenant, check_name("user_id", user_id), check_name("agent_name", agent_name))

    @property
    def agent_id(self) -> str:
        """``user{user_id}_{agent_name}``: unique per tenant thanks to the naming rule."""
        return f"user{self.user_id}_{self.agent_name}"

    @property
    def key(self) -> str:
        """The ``tenant`` payload value of this agent's points (``|`` never occurs in a tenant id or name)."""
        return f"{self.tenant}|{self.user_id}|{self.agent_name}"

    @property
    def registry_key(self) -> str:
        """Registry key, case-folded: two names that differ only in case collide on purpose."""
        return f"{self.user_id}|{self.agent_name}".casefold()

    @property
    def docs(self) -> str:
        """RecordStore collection holding this agent's interactions (keys: ``<ts_key>|<interaction_id>``)."""
        return f"agent:{self.user_id}:{self.agent_name}"

    def collection(self, mode: str, prefix: str) -> str:
        """The vector collection: the seed's ``user{user_id}_{agent_name}_context`` per agent (prefixed
        with a hash of the tenant for tenants other than ``default``), or the shared one."""
        if mode == "shared":
            return prefix + SHARED_COLLECTION
        name = f"{self.agent_id}_context"
        if self.tenant != DEFAULT_TENANT:
            name = "t" + hashlib.sha1(self.tenant.encode()).hexdigest()[:12] + "_" + name
        return name

    def point_id(self, interaction_id: str) -> str:
        return str(uuid.uuid5(_POINT_NS, f"{self.key}\x00{interaction_id}"))


def check_mode(mode: object) -> str:
    if mode not in COLLECTION_MODES:
        raise InvalidInputError(
            "collection_mode", mode, f"must be one of {', '.join(COLLECTION_MODES)}",
            "use 'per_agent' (a collection per agent, the default) or 'shared' (one collection, a tenant index)",
        )
    return mode  # type: ignore[return-value]


def check_max_vectors(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError("max_vectors", value, "must be an int >= 1", f"e.g. max_vectors={DEFAULT_MAX_VECTORS}")
    return value


class Interaction(BaseModel):
    """One agent interaction (seed 004): what the agent did, for which task, when, and whether it worked."""

    model_config = ConfigDict(extra="forbid")

    interaction_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    text: str
    interaction_type: Literal["task_execution", "tool_call", "user_message", "agent_response"] = "task_execution"
    task_id: str | None = None
    timestamp: datetime = Field(default_factory=utcnow)
    success: bool = True
    error_details: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("interaction_id", "task_id", mode="before")
    @classmethod
    def _id(cls, v: Any, info: Any) -> Any:
        from ..models import check_id

        if v is None and info.field_name == "task_id":
            return None
        return check_id(info.field_name, v)

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        if not isinstance(v, str) or not v.strip():
            raise InvalidInputError("text", v, "must be a non-empty string", "skip empty interactions")
        return v

    @field_validator("interaction_type", mode="before")
    @classmethod
    def _type(cls, v: Any) -> str:
        if v not in INTERACTION_TYPES:
            raise InvalidInputError("interaction_type", v, f"must be one of {', '.join(INTERACTION_TYPES)}", "map your type")
        return v

    @field_validator("success", mode="before")
    @classmethod
    def _success(cls, v: Any) -> bool:
        if isinstance(v, bool) or v in (0, 1):
            return bool(v)
        raise InvalidInputError("success", v, "must be true or false", "pass a bool")

    @field_validator("timestamp", mode="before")
    @classmethod
    def _ts(cls, v: Any) -> datetime:
        return parse_time("timestamp", v)

    @classmethod
    def build(cls, data: Any) -> Interaction:
        """Validate a dict (or copy an Interaction). Raises InvalidInputError with the first broken rule."""
        if isinstance(data, Interaction):
            return data
        if not isinstance(data, dict):
            raise InvalidInputError("interaction", data, "must be a dict or an Interaction", "pass text=..., interaction_type=...")
        try:
            it = cls.model_validate(data)
        except ValidationError as exc:
            raise as_input_error(exc) from None
        check_json("metadata", it.metadata)
        if it.success and it.error_details:
            raise InvalidInputError(
                "error_details", it.error_details, "only failed interactions (success=false) carry error details",
                "set success=False or drop error_details",
            )
        return it

    @property
    def key(self) -> str:
        return f"{ts_key(self.timestamp)}|{self.interaction_id}"

    def to_doc(self) -> dict[str, Any]:
        """The RecordStore document (the source of truth)."""
        doc = self.model_dump(mode="json")
        doc["timestamp"] = iso(self.timestamp)
        return doc

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Interaction:
        return cls.model_validate(doc)


@dataclass(slots=True)
class AgentInfo:
    """A registered agent (the registry document)."""

    user_id: str
    agent_name: str
    agent_id: str
    collection: str
    collection_mode: str
    max_vectors: int
    created_at: str
    last_activity: str | None = None

    def to_doc(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.__slots__}  # type: ignore[attr-defined]

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> AgentInfo:
        return cls(**{f: doc.get(f) for f in cls.__slots__})  # type: ignore[attr-defined]


@dataclass(slots=True)
class AgentEvent:
    """What the size monitor reports; ``to_sse()`` renders it as one Server-Sent Events message."""

    kind: Literal["size_warning", "auto_pruned", "check_failed"]
    tenant: str
    user_id: str
    agent_name: str
    total_vectors: int
    max_vectors: int
    removed: int = 0
    message: str = ""
    at: str = field(default_factory=lambda: iso(utcnow()))

    @property
    def usage(self) -> float:
        return self.total_vectors / self.max_vectors if self.max_vectors else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = {f: getattr(self, f) for f in self.__slots__}  # type: ignore[attr-defined]
        out["usage"] = round(self.usage, 4)
        return out

    def to_sse(self) -> str:
        import json

        return f"event: {self.kind}\ndata: {json.dumps(self.to_dict(), ensure_ascii=False)}\n\n"
