"""Who is in a chat: private chats (one human and the bot) and group chats (several humans).

Seed 001 threads a Feishu chat across everyone in it; seed 002 keys a private assistant by user and
session. Both are chats here, told apart by their members:

- A message in a chat makes its author a member (learned from the messages), unless the chat was
  declared. ``declare(chat, "private")``: one human; a second human's message is refused and nothing
  is stored. ``declare(chat, "group", members=[...])``: exactly those humans (the platform knows them);
  another human's message is refused. ``declare(chat, "group")`` without members: open, learned.
- Humans are the authors of ``role="user"`` messages that are not the bot's (``memory.bot_user_ids``).
  The bot's replies (``role="assistant"``, or any message of a bot id) belong to the chat they were
  written in and make no one a member.
- A member sees every message of the chat, whoever wrote it: its window, its topics and summaries,
  its older messages (``index.scope.member_condition``; ``view`` resolves a scope's member chats). A
  non-member sees nothing of it; a private chat's messages stay its human's.

The platform authenticates who writes where: a bot that passes a user's claimed ``chat_id`` through
unchecked should declare its chats (private for a personal assistant) so a message cannot join one.

Documents per tenant (keys joined by ``|``, which no id contains)::

    chats          chat_id        -> {chat_id, kind, members}     declarations only
    chat_members   "chat|user"    -> {chat_id, user_id}
    user_chats     "user|chat"    -> {user_id, chat_id}           the same membership, by user
    session_chats  "session|chat" -> {session_key, chat_id}       which chats carry a session key
    chat_sessions  "chat|session" -> {chat_id, session_key}
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Literal

from ._async import async_twins
from .errors import InvalidInputError, NotFoundError
from .index.scope import Scope
from .models import Message, check_id
from .stores.base import RecordStore

CHATS = "chats"
MEMBERS = "chat_members"
USER_CHATS = "user_chats"
SESSION_CHATS = "session_chats"
CHAT_SESSIONS = "chat_sessions"
META = "chats_meta"
MARKER = "learned_v1"  # in META: the tenant's memberships were learned from the messages stored before chats were tracked
KINDS = ("private", "group", "personal")
MAX_CHATS = 10_000  # member chats read per call (a user in more sees the first 10,000 by id)

ChatKind = Literal["private", "group", "personal"]


class ChatRegistry:
    """Membership of every chat of one record store, with a per-process memo of what is registered
    (the write path checks it without a store round trip, as ``SessionRegistry`` does)."""

    def __init__(self, records: RecordStore, memory: Any = None) -> None:
        self.records = records
        self._memory = memory  # MemorySettings: bot_user_ids is read at each call (settings may change after open)
        self._members: set[tuple[str, str, str]] = set()  # (tenant, chat, user)
        self._pairs: set[tuple[str, str, str]] = set()  # (tenant, chat, session)
        self._lock = threading.Lock()
        self._reads: ContextVar[dict[tuple[str, ...], Any] | None] = ContextVar("chat_reads", default=None)  # ``snapshot``'s memo

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Within the block each membership document is read once: one consistent view of who is in which
        chat for a whole request (a context reads the same memberships for its window, its summary and each
        recalled turn's neighbour). Per thread and per asyncio task; a nested block shares the outer view."""
        if self._reads.get() is not None:
            yield
            return
        token = self._reads.set({})
        try:
            yield
        finally:
            self._reads.reset(token)

    def _read(self, key: tuple[str, ...], read: Callable[[], Any]) -> Any:
        """``read()``, once per ``key`` inside a ``snapshot`` block."""
        memo = self._reads.get()
        if memo is None:
            return read()
        if key not in memo:
            memo[key] = read()
        return memo[key]

    def _list(self, tenant: str, collection: str, prefix: str) -> list[dict[str, Any]]:
        return self._read(("list", tenant, collection, prefix),
                          lambda: [d for _, d in self.records.list_docs(tenant, collection, prefix=prefix, limit=MAX_CHATS)])

    @property
    def bots(self) -> frozenset[str]:
        return frozenset(getattr(self._memory, "bot_user_ids", None) or ())

    # -- the write path ----------------------------------------------------------------------------
    def is_human(self, m: Message) -> bool:
        return m.role == "user" and m.user_id not in self.bots

    def admit(self, tenant: str, messages: Sequence[Message], *, kind: ChatKind | None = None) -> None:
        """Check that every human author may write in its chat and register the new members and
        (chat, session) pairs; runs before the messages are written. ``kind`` is the kind a chat that
        no one wrote in yet starts as (the adapters pass ``"personal"``: their sessions are keyed by
        user); a declared or already learned chat keeps its own.

        Raises:
            InvalidInputError: a second human in a chat declared private, or a human outside a group's
                declared members; nothing is written then.
        """
        if kind is not None and kind not in KINDS:
            raise InvalidInputError("chat_kind", kind, f"must be one of {', '.join(KINDS)}", "pass chat_kind='personal' or None")
        new = sorted({(m.chat_id, m.user_id) for m in messages if self.is_human(m) and (tenant, m.chat_id, m.user_id) not in self._members})
        pairs = {(m.chat_id, m.session_key) for m in messages if (tenant, m.chat_id, m.session_key) not in self._pairs}
        joins: list[tuple[str, str]] = []
        if new:
            chats = sorted({c for c, _ in new})
            declared = dict(zip(chats, self.records.get_docs(tenant, CHATS, chats)))
            starts = {c: {"chat_id": c, "kind": kind, "members": []} for c in chats
                      if kind is not None and not declared.get(c) and not self.members(tenant, c)}
            declared.update(starts)
            for chat, user in new:
                self._check_join(tenant, declared.get(chat), chat, user, new)
            if starts:
                self.records.put_docs(tenant, CHATS, starts)
            joins = [(c, u) for c, u in new if (declared.get(c) or {}).get("kind") != "personal"]
            if joins:
                self.records.put_docs(tenant, MEMBERS, {f"{c}|{u}": {"chat_id": c, "user_id": u} for c, u in joins})
                self.records.put_docs(tenant, USER_CHATS, {f"{u}|{c}": {"user_id": u, "chat_id": c} for c, u in joins})
        if pairs:
            self.records.put_docs(tenant, SESSION_CHATS, {f"{s}|{c}": {"session_key": s, "chat_id": c} for c, s in pairs})
            self.records.put_docs(tenant, CHAT_SESSIONS, {f"{c}|{s}": {"chat_id": c, "session_key": s} for c, s in pairs})
        with self._lock:
            self._members.update((tenant, c, u) for c, u in new)  # a personal chat's writer: checked, nothing to register
            self._pairs.update((tenant, c, s) for c, s in pairs)

    def _check_join(self, tenant: str, decl: dict[str, Any] | None, chat: str, user: str, joins: Sequence[tuple[str, str]]) -> None:
        if not decl:
            return
        members = list(decl.get("members") or [])
        if decl.get("kind") == "private":
            others = sorted({*members, *self.members(tenant, chat), *(u for c, u in joins if c == chat)} - {user})
            if others:
                raise InvalidInputError(
                    "user_id", user, f"chat {chat!r} is declared private to {others[0]!r}: a second human cannot write in it",
                    f"store this message in the user's own chat, or declare the chat a group: mem.chats.declare({chat!r}, 'group')",
                )
        elif decl.get("kind") == "group" and members and user not in members:
            raise InvalidInputError(
                "user_id", user, f"is not a declared member of group chat {chat!r}",
                f"add the user: mem.chats.declare({chat!r}, 'group', members=[..., {user!r}])",
            )

    # -- declarations ----------------------------------------------------------------------------
    def declare(self, tenant: str, chat_id: str, kind: str, members: Iterable[str] | None = None) -> dict[str, Any]:
        """Declare a chat's kind (and, when the platform knows them, its human members).

        Raises:
            InvalidInputError: an unknown kind, a private chat with more than one human (declared or
                already written), members for a personal chat, or invalid ids.
        """
        chat_id = check_id("chat_id", chat_id)  # type: ignore[assignment]
        if kind not in KINDS:
            raise InvalidInputError("kind", kind, f"must be one of {', '.join(KINDS)}", "pass kind='private' for a one-human chat")
        if members is not None and (isinstance(members, (str, bytes)) or not isinstance(members, Iterable)):
            raise InvalidInputError("members", members, "must be a list of user ids", 'pass e.g. members=["u1", "u2"]')
        declared = sorted({check_id("members", u) for u in members}) if members is not None else []  # type: ignore[misc]
        if kind == "personal" and declared:
            raise InvalidInputError("members", declared, "a personal chat has no members (each user sees only their own messages)",
                                    "drop members=, or declare the chat a group")
        bots = sorted(set(declared) & self.bots)
        if bots:
            raise InvalidInputError("members", bots[0], "is a bot id (memory.bot_user_ids): the bot is never a member",
                                    "list the humans of the chat only")
        current = self.members(tenant, chat_id)
        if kind == "private":
            humans = sorted(set(declared) | (set(current) if not declared else set()))
            if len(humans) > 1:
                raise InvalidInputError(
                    "kind", "private", f"chat {chat_id!r} has {len(humans)} human members ({', '.join(humans[:5])})",
                    "declare it a group, or declare private with the one member: members=['u1']",
                )
        doc = {"chat_id": chat_id, "kind": kind, "members": declared}
        self.records.put_docs(tenant, CHATS, {chat_id: doc})
        if members is not None or kind == "personal":  # the platform's list is the membership: add the new, drop the gone
            gone = [u for u in current if u not in declared]
            if gone:
                self.records.delete_docs(tenant, MEMBERS, [f"{chat_id}|{u}" for u in gone])
                self.records.delete_docs(tenant, USER_CHATS, [f"{u}|{chat_id}" for u in gone])
            fresh = [u for u in declared if u not in current]
            if fresh:
                self.records.put_docs(tenant, MEMBERS, {f"{chat_id}|{u}": {"chat_id": chat_id, "user_id": u} for u in fresh})
                self.records.put_docs(tenant, USER_CHATS, {f"{u}|{chat_id}": {"user_id": u, "chat_id": chat_id} for u in fresh})
        with self._lock:  # the next message of each writer is checked against the declaration again
            self._members = {k for k in self._members if k[:2] != (tenant, chat_id)}
        return self.info(tenant, chat_id)

    # -- reads -----------------------------------------------------------------------------------
    def info(self, tenant: str, chat_id: str) -> dict[str, Any]:
        """``{chat_id, kind, declared, members}``: an undeclared chat is a group once two humans wrote in it."""
        decl = self._read(("chat", tenant, chat_id), lambda: self.records.get_docs(tenant, CHATS, [chat_id])[0])
        members = self.members(tenant, chat_id)
        kind = decl["kind"] if decl else ("group" if len(members) > 1 else "private")
        return {"chat_id": chat_id, "kind": kind, "declared": bool(decl), "members": members}

    def members(self, tenant: str, chat_id: str) -> list[str]:
        """The chat's human members (sorted)."""
        return [d["user_id"] for d in self._list(tenant, MEMBERS, f"{chat_id}|")]

    def member_chats(self, tenant: str, user_id: str) -> frozenset[str]:
        """The chats ``user_id`` is a member of."""
        return frozenset(d["chat_id"] for d in self._list(tenant, USER_CHATS, f"{user_id}|"))

    def chats_of_session(self, tenant: str, session_key: str) -> list[str]:
        """The chats whose messages carry ``session_key`` (usually one: the chat itself)."""
        return [d["chat_id"] for d in self._list(tenant, SESSION_CHATS, f"{session_key}|")]

    def sessions_of(self, tenant: str, chats: Iterable[str]) -> set[str]:
        """The session keys of messages in ``chats``."""
        out: set[str] = set()
        for chat in sorted(set(chats)):
            out.update(d["session_key"] for _, d in self.records.list_docs(tenant, CHAT_SESSIONS, prefix=f"{chat}|", limit=MAX_CHATS))
        return out

    def view(self, scope: Scope) -> Scope:
        """``scope`` with its bound user's member chats as they are now (an unbound scope as it is)."""
        if scope.bound_user is None:
            return scope
        return scope.with_chats(self.member_chats(scope.tenant, scope.bound_user))

    def user_view(self, scope: Scope, user_id: str) -> Scope:
        """What ``user_id`` sees in ``scope``'s tenant (the context of a user built by an unbound handle)."""
        return Scope(scope.tenant, user_id, self.member_chats(scope.tenant, user_id))

    def window(self, tenant: str, user_id: str, session_key: str, limit: int) -> list[Message]:
        """The last ``limit`` messages of session ``session_key`` that ``user_id`` sees: their own, and every
        message of the session in the chats they are a member of (the bot's replies, the other members'),
        oldest first."""
        carried, covered = self._carried(tenant, user_id, session_key)
        merged: dict[Any, Message] = {}
        if not covered:
            merged.update((m.ref, m) for m in self.records.window(tenant, user_id=user_id, session_key=session_key, limit=limit))
        for chat in carried:
            merged.update((m.ref, m) for m in self.records.chat_window(tenant, chat_id=chat, session_key=session_key, limit=limit))
        for bot in sorted(self.bots - {user_id}) if not covered else ():  # a bot id's replies in a session the user wrote in
            if merged:
                merged.update((m.ref, m) for m in self.records.window(tenant, user_id=bot, session_key=session_key, limit=limit))
        return sorted(merged.values(), key=lambda m: (m.seq or 0, m.create_time))[-limit:] if limit else []

    def _carried(self, tenant: str, user_id: str, session_key: str, member: Iterable[str] | None = None) -> tuple[list[str], bool]:
        """The member chats (``member``, read when not given) that carry the session, and whether they are all
        the chats that do: then they hold every message of the session, the user's own and the bot's too
        (every message registers its (chat, session) pair before it is written), and reading the user's or a
        bot's messages besides them finds nothing more."""
        member = self.member_chats(tenant, user_id) if member is None else member
        chats = set(self.chats_of_session(tenant, session_key))
        carried = chats & set(member)
        return sorted(carried), bool(chats) and carried == chats

    def _sources(self, tenant: str, user_id: str, session_key: str, member: Iterable[str] | None = None, *,
                 bots: bool = False) -> list[dict[str, str]]:
        """Where ``user_id``'s view of a session is read from: their own messages (and with ``bots`` each bot
        id's), and each of their member chats (``member``, read when not given) that carries the session
        (only those when they are all the session's chats: ``_carried``)."""
        carried, covered = self._carried(tenant, user_id, session_key, member)
        own = [] if covered else [{"user_id": u} for u in [user_id, *(sorted(self.bots - {user_id}) if bots else [])]]
        return [*own, *({"chat_id": c} for c in carried)]

    def after(self, tenant: str, user_id: str, session_key: str, after_seq: int, limit: int, *,
              member: Iterable[str] | None = None) -> list[Message]:
        """Up to ``limit`` messages of the session after ``after_seq`` that ``user_id`` sees (``window``'s rule:
        the member chats' messages, whoever wrote them, and the bot's replies), oldest first."""
        found: dict[Any, Message] = {}
        for where in self._sources(tenant, user_id, session_key, member, bots=True):
            page = self.records.scan_messages(tenant, session_key=session_key, after_seq=after_seq, limit=limit, **where)
            found.update((m.ref, m) for m in page)
        return sorted(found.values(), key=lambda m: (m.seq or 0, m.create_time))[:limit]

    def session_messages(self, tenant: str, user_id: str, session_key: str) -> list[Message]:
        """Every message of the session that ``user_id`` sees (``window`` without a limit), oldest first."""
        found: dict[Any, Message] = {}
        for where in self._sources(tenant, user_id, session_key):
            after = 0
            while True:
                page = self.records.scan_messages(tenant, session_key=session_key, after_seq=after, limit=1000, **where)
                found.update((m.ref, m) for m in page)
                if len(page) < 1000:
                    break
                after = page[-1].seq or 0
        return sorted(found.values(), key=lambda m: m.seq or 0)

    # -- migration -------------------------------------------------------------------------------
    def backfill(self, tenant: str, *, page: int = 2000) -> int:
        """Learn the memberships of a tenant written before chats were tracked (once: a marker
        document records it). Returns how many messages were read.

        Messages the adapters wrote (``metadata["lc"]``: LangChain; ``metadata["source"] == "llamaindex"``)
        were keyed by user and session: they make no one a member, and a chat holding only such
        messages is declared personal (two users' sessions named alike stay two conversations)."""
        if self.records.get_docs(tenant, META, [MARKER])[0]:
            return 0
        seen, after = 0, 0
        adapter_chats: set[str] = set()
        learned: set[str] = set()
        while True:
            batch = self.records.scan_messages(tenant, after_seq=after, limit=page)
            if not batch:
                break
            seen += len(batch)
            after = batch[-1].seq or after + len(batch)
            joins = {(m.chat_id, m.user_id) for m in batch if self.is_human(m) and not _from_adapter(m)}
            adapter_chats.update(m.chat_id for m in batch if _from_adapter(m))
            learned.update(c for c, _ in joins)
            pairs = {(m.chat_id, m.session_key) for m in batch}
            if joins:
                self.records.put_docs(tenant, MEMBERS, {f"{c}|{u}": {"chat_id": c, "user_id": u} for c, u in joins})
                self.records.put_docs(tenant, USER_CHATS, {f"{u}|{c}": {"user_id": u, "chat_id": c} for c, u in joins})
            self.records.put_docs(tenant, SESSION_CHATS, {f"{s}|{c}": {"session_key": s, "chat_id": c} for c, s in pairs})
            self.records.put_docs(tenant, CHAT_SESSIONS, {f"{c}|{s}": {"chat_id": c, "session_key": s} for c, s in pairs})
        personal = sorted(adapter_chats - learned)
        if personal:
            found = self.records.get_docs(tenant, CHATS, personal)
            starts = {c: {"chat_id": c, "kind": "personal", "members": []} for c, d in zip(personal, found) if not d}
            if starts:
                self.records.put_docs(tenant, CHATS, starts)
        if seen:  # an empty tenant has nothing to learn (and is not created by the marker)
            self.records.put_docs(tenant, META, {MARKER: {"messages": seen}})
        return seen


def _from_adapter(m: Message) -> bool:
    """Written by the LangChain or LlamaIndex adapter (their own metadata marks), keyed by user and session."""
    md = m.metadata or {}
    return isinstance(md.get("lc"), dict) or md.get("source") == "llamaindex"


@async_twins
class Chats:
    """``mem.chats``: who is in each chat of a handle's tenant.

    Example::

        mem.chats.declare("tg:-1001", "group", members=["anna", "boris"])   # the platform's member list
        mem.chats.declare("tg:42", "private")          # one human: another human's message is refused
        mem.chats.get("tg:-1001")      # {"chat_id", "kind": "group", "declared": True, "members": [...]}
        mem.chats.list("anna")         # the chats anna is a member of

    A handle bound to a user reads only the chats it is a member of and declares nothing (a declaration
    changes who sees a chat: it is the platform's, through an unbound handle)."""

    _ASYNC = ("declare", "get", "list")

    def __init__(self, registry: ChatRegistry, scope: Scope, write_lock: Any) -> None:
        self.registry = registry
        self.scope = scope
        self._lock = write_lock

    def declare(self, chat_id: str, kind: ChatKind, *, members: Iterable[str] | None = None) -> dict[str, Any]:
        """Declare a chat private (one human) or a group; ``members`` (the humans, when the platform knows
        them) replaces the learned membership. Returns ``get(chat_id)``.

        Raises:
            InvalidInputError: on a bound handle, an unknown kind, or a private chat with two humans.
        """
        if self.scope.bound_user is not None:
            raise InvalidInputError(
                "chats.declare", self.scope.bound_user, "changes who sees a chat; a handle bound to a user cannot declare",
                "declare chats on the unbound engine (mem or mem.tenant(name)), as the platform that knows the members",
            )
        with self._lock:
            return self.registry.declare(self.scope.tenant, chat_id, kind, members)

    def get(self, chat_id: str) -> dict[str, Any]:
        """``{chat_id, kind, declared, members}``; an undeclared chat is a group once two humans wrote in it.

        Raises:
            NotFoundError: a bound handle asking about a chat it is not a member of.
        """
        chat_id = check_id("chat_id", chat_id)  # type: ignore[assignment]
        info = self.registry.info(self.scope.tenant, chat_id)
        if self.scope.bound_user is not None and self.scope.bound_user not in info["members"]:
            raise NotFoundError(f"chat_id={chat_id!r}: this handle's user is not a member of it")
        return info

    def list(self, user_id: str | None = None) -> list[str]:
        """The chats ``user_id`` (a bound handle: its user) is a member of, sorted."""
        return sorted(self.registry.member_chats(self.scope.tenant, self.scope.user(user_id)))


__all__ = ["CHATS", "ChatKind", "ChatRegistry", "Chats", "KINDS", "MEMBERS", "USER_CHATS"]
