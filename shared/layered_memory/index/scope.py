"""The scope rule: who a call acts for, and what it may see.

A ``Scope`` is a tenant and, for a handle made by ``mem.for_user(u)``, a bound user. Every read,
write and delete asks the scope two things:

- ``scope.user(given)``: the user a call acts on. A bound scope answers with its own user and
  refuses any other; an unbound scope needs one named. An empty string is never a user: "no user"
  is ``None``, said explicitly.
- ``scope.spec(kind)``: the filter that every index query of that kind starts from, with the tenant
  and the bound user pinned; the caller's filters can only narrow it (``FilterSpec.and_``). The same
  spec runs as a Qdrant filter and as the Python predicate of the core mode, so both modes see the
  same records.

Records that belong to a user (messages, summaries, user data, tasks, task memory, topics, items
written through a bound handle, agents) carry the owner; ``scope.may_see(owner)`` is the check for
the document reads that do not go through an index.

Group chats: a user who is a member of a chat sees every message of it, whoever wrote it (``chats.py``
keeps the membership). A bound scope carries the chats its user is a member of, resolved when a call
runs (``ChatRegistry.view``); ``spec`` then admits the user's own records OR the messages (and topic
summaries) of those chats, never other kinds. The chats only widen what the user sees inside the
tenant, and only to chats the user is in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInputError
from ..models import check_id
from ..filterspec import AnyOf, Condition, Eq, FilterSpec, IsEmpty

#: the kinds a chat member sees across authors (other kinds stay their owner's)
CHAT_KINDS = ("message", "topic_summary")


def member_condition(user: str, chats: Iterable[str], *, kind: str | None = None, owner_key: str = "user_id") -> Condition:
    """What ``user`` may see: records it owns (``owner_key``), or, when it is a member of ``chats``, the
    messages of those chats (the topic summaries of them for ``kind="topic_summary"``)."""
    own = Eq(owner_key, user)
    chats = sorted(set(chats))
    if not chats or (kind is not None and kind not in CHAT_KINDS):
        return own
    return AnyOf(FilterSpec.of(own), FilterSpec.of(Eq("kind", kind or "message"), Eq("chat_id", *chats)))


def check_user_id(value: object, field: str = "user_id") -> str | None:
    """``None`` (no user) or a valid user id; an empty or blank string is refused, never read as "no user"."""
    if value is None:
        return None
    if isinstance(value, str) and not value.strip():
        raise InvalidInputError(
            field, value, "an empty user id names no user (it would reach every user's data)",
            "pass the user's id, or None to mean no user",
        )
    return check_id(field, value)


@dataclass(frozen=True, slots=True)
class Scope:
    tenant: str
    bound_user: str | None = None
    chats: frozenset[str] = frozenset()  # the bound user's member chats, resolved per call (ChatRegistry.view)

    def __post_init__(self) -> None:
        check_id("tenant", self.tenant)
        check_user_id(self.bound_user)

    def narrow(self, user_id: object) -> Scope:
        """The scope of ``user_id`` inside this one (``mem.for_user``); a bound scope only narrows to itself."""
        user = check_user_id(user_id)
        if user is None:
            raise InvalidInputError("user_id", user_id, "is required to bind a handle to a user", "pass the user's id")
        self._refuse_other(user)
        return Scope(self.tenant, user)

    def user(self, user_id: object, field: str = "user_id") -> str:
        """The user a call acts on: ``user_id``, or the bound user when it is None."""
        user = check_user_id(user_id, field)
        if user is None:
            if self.bound_user is None:
                raise InvalidInputError(field, user_id, "is required", f"pass a non-empty {field}")
            return self.bound_user
        self._refuse_other(user, field)
        return user

    def owner(self, user_id: object = None, field: str = "user_id") -> str | None:
        """Like ``user`` where "no user" is allowed on an unbound handle (tenant-wide records)."""
        user = check_user_id(user_id, field)
        if user is None:
            return self.bound_user
        self._refuse_other(user, field)
        return user

    def may_see(self, owner: str | None) -> bool:
        return self.bound_user is None or owner == self.bound_user

    def sees(self, message: Any) -> bool:
        """Whether this scope sees a stored message: unbound, its own, or one of a member chat."""
        return self.bound_user is None or message.user_id == self.bound_user or message.chat_id in self.chats

    def sees_topic(self, doc: Any) -> bool:
        """Whether this scope sees a topic (or topic summary) document: unbound, a participant, or a member of its chat."""
        if doc is None:
            return False
        return self.bound_user is None or self.bound_user in (doc.get("user_ids") or []) or doc.get("chat_id") in self.chats

    def with_chats(self, chats: Iterable[str]) -> Scope:
        """This scope with its user's member chats (what a call sees right now)."""
        return Scope(self.tenant, self.bound_user, frozenset(chats))

    def spec(self, kind: str | None = None, *, owner_key: str = "user_id") -> FilterSpec:
        """The base filter of an index query: tenant, kind and (bound) the user, or the messages of the user's
        member chats; narrow it with ``and_``."""
        conds: list = [Eq("tenant", self.tenant)]
        if kind is not None:
            conds.append(Eq("kind", kind))
        if self.bound_user is not None:
            conds.append(member_condition(self.bound_user, self.chats, kind=kind, owner_key=owner_key))
        return FilterSpec(must=tuple(conds))

    def owned_spec(self, kind: str, owner: str | None, *, owner_key: str = "user_id") -> FilterSpec:
        """The filter of records with exactly this owner (``None``: records without one)."""
        base = FilterSpec.of(Eq("tenant", self.tenant), Eq("kind", kind))
        return base.and_(Eq(owner_key, owner) if owner is not None else IsEmpty(owner_key))

    def _refuse_other(self, user: str, field: str = "user_id") -> None:
        if self.bound_user is not None and user != self.bound_user:
            raise InvalidInputError(
                field, user, f"this handle is bound to user {self.bound_user!r} and cannot reach another user",
                "use that user, or a handle bound to the other user",
            )


__all__ = ["CHAT_KINDS", "Scope", "check_user_id", "member_condition"]
