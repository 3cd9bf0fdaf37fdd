"""The write path of one handle: ``add_message(s)``, their checks and ``clear_session`` (the facade
delegates here; the edit and delete of a single message are ``edits.py``).

    writes = MessageWrites(core, scope)        # what LayeredMemory builds on first use
    writes.add_messages([{"message_id": "m1", "chat_id": "c1", "user_id": "u1", "content": "Hi"}])

A batch, under the engine's write lock: every message validated before the first write -> a
``(chat_id, message_id)`` stored for another user refused -> ``chats.admit`` (a private chat refuses a
second human) -> ``sessions.register`` -> ``records.put_messages`` (durable; pending for the index) ->
the sessions' summary jobs -> ``index_new_messages`` (the BM25 points) -> ``topics.on_write`` (the
recent cache); after the lock, ``notify_writer`` (the dense vectors). Nothing is written when a check
fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .edits import after_clear
from .errors import InvalidInputError
from .index.intents import INTENTS, drop_intent, put_intent
from .models import Message, MessageRef, check_id, iso

if TYPE_CHECKING:
    from .index import Scope
    from .kernel import Kernel


class MessageWrites:
    """The message writes of one handle (``scope``: its tenant and bound user)."""

    def __init__(self, core: Kernel, scope: Scope) -> None:
        self.core = core
        self.scope = scope
        self.tenant_id = scope.tenant

    def check_messages(self, messages: Iterable[Mapping[str, Any] | Message]) -> list[Message]:
        """Validate as ``add_messages`` does (fields, scope, ``max_content_chars``; raises ``InvalidInputError``),
        writing nothing: adapters call it before the model answers, so a refused turn costs no model call."""
        if isinstance(messages, (str, bytes, Mapping, Message)) or not isinstance(messages, Iterable):
            raise InvalidInputError("messages", messages, "must be a list of dicts or Messages", "wrap one message in a list")
        return [self.validate(m) for m in messages]

    def validate(self, data: Mapping[str, Any] | Message) -> Message:
        """One message as this handle would store it (its tenant, its bound user by default), or ``InvalidInputError``."""
        if not isinstance(data, (Mapping, Message)):
            raise InvalidInputError("message", data, "must be a dict or a Message", "pass the seed 001 message fields")
        raw = data.model_dump() if isinstance(data, Message) else dict(data)
        if raw.get("tenant") not in (None, self.tenant_id):
            raise InvalidInputError("tenant", raw["tenant"], f"this handle writes tenant {self.tenant_id!r}", "use mem.tenant(...)")
        raw["tenant"] = self.tenant_id
        if self.scope.bound_user and raw.get("user_id") is None:
            raw["user_id"] = self.scope.bound_user
        raw.pop("seq", None)
        msg = Message.build(raw)
        self.scope.user(msg.user_id)
        limit = self.core.settings.memory.max_content_chars
        if len(msg.content) > limit:
            raise InvalidInputError(
                "content", msg.content[:40] + "…", f"has {len(msg.content)} characters, over max_content_chars={limit}",
                "split the message or raise LAYERED_MEMORY_MEMORY__MAX_CONTENT_CHARS",
            )
        return msg

    def add_message(self, message: Mapping[str, Any] | Message | None = None, /, **fields: Any) -> Message:
        """Store one message (seed 001 fields + session_key + metadata); idempotent by (chat_id, message_id).

        Message ids are unique per chat (as Telegram numbers them): the same id in another chat is
        another message. Adding a stored message again returns the stored copy unchanged, even when the
        new call carries another text (a retry never overwrites): to change a stored message's content use
        ``edit_message``, to remove it ``delete_message`` (docs/edits.md).

        Durable in the RecordStore before it returns, then indexed (BM25 + dense).

        Raises:
            InvalidInputError: a field breaks a rule; nothing is written.
        """
        if message is not None and fields:
            raise InvalidInputError("message", "both", "pass a message or keyword fields, not both", "pick one")
        return self.add_messages([message if message is not None else fields])[0]

    def add_messages(self, messages: Iterable[Mapping[str, Any] | Message], *, chat_kind: str | None = None) -> list[Message]:
        """Store a batch atomically (all or nothing); embeddings are computed in one batch.

        Every message is validated before the first write (session registrations included).
        ``chat_kind``: the kind a chat no one wrote in yet starts as (``mem.chats``; the adapters pass
        ``"personal"``: their sessions are keyed by user, so two users' sessions named alike stay apart).
        A write that raised ``BackendTimeout`` may still have been applied: retrying is safe, it
        returns the stored messages (idempotent by message_id)."""
        if isinstance(messages, (str, bytes, Mapping, Message)) or not isinstance(messages, Iterable):
            raise InvalidInputError("messages", messages, "must be a list of dicts or Messages", "use add_message for one message")
        msgs = [self.validate(m) for m in messages]
        unique: dict[MessageRef, Message] = {}
        for m in msgs:
            unique.setdefault(m.ref, m)
        batch = list(unique.values())
        core, tenant = self.core, self.tenant_id
        # A stored (chat_id, message_id) of another user is a collision, not a retry: refused before
        # anything is written, and that user's message is never handed back. One message in a registered
        # session skips the read: put_messages writes nothing for a stored ref, so the check can follow it.
        single = len(batch) == 1 and core.sessions.known(tenant, batch[0].user_id, batch[0].session_key)
        with core.write_lock:
            existing = {} if single else {m.ref: m for m in core.records.get_messages(tenant, [m.ref for m in batch]) if m is not None}
            _refuse_foreign(batch, existing)
            core.chats.admit(tenant, batch, kind=chat_kind)  # a private chat refuses a second human before any write
            core.sessions.register(tenant, {(m.user_id, m.session_key) for m in batch})
            flags = core.records.put_messages(tenant, batch)
            new = [m for m, is_new in zip(batch, flags) if is_new]
            if new:
                sessions = {(m.user_id, m.session_key) for m in new}
                # Summaries are derived data: the job list lives in memory (a lost job comes back with the
                # session's next message), which spares the write path one store round trip.
                core.summary_jobs.update((tenant, u, s) for u, s in sessions)
                core.index_new_messages(tenant, new)
                core.topics.on_write(tenant, new)  # the recent cache (the log is the threading queue)
            stored = {**existing, **{m.ref: m for m in new}}  # already stored: the stored record (idempotent)
            raced = [m.ref for m in batch if m.ref not in stored]  # written by another process since the read
            if raced:
                stored.update({m.ref: m for m in core.records.get_messages(tenant, raced) if m is not None})
                _refuse_foreign(batch, stored)
        core.notify_writer(tenant, new)
        return [stored[m.ref] for m in msgs]

    def clear_session(self, user_id: str | None, session_id: str | None = None) -> int:
        """Delete a user's messages of one session (or all sessions), their summary and what was derived from
        them: they leave their topics (a topic made only of them goes with its summaries; one that keeps other
        messages has its summary marked stale and rewritten by the next ``process()``), and the facts extracted
        from them are marked stale, as ``delete_message`` does for one message. Returns the count."""
        user_id = self.scope.user(user_id)
        if session_id is not None:
            session_id = check_id("session_id", session_id)  # "" is no session: refused, never "every session"
        core, tenant = self.core, self.tenant_id
        with core.write_lock:
            # An intent first, naming what the derived tiers hold of the messages: if the process dies after the
            # record delete, the next clear_session, sync_index, process() or open removes the points whose records
            # are gone and finishes the summaries, topics and facts (doctor.drain_intents).
            self.drain_intents()
            gone, chats = cleared(core, tenant, user_id, session_id)
            intent = put_intent(core.records, tenant, "clear", user_id=user_id, session_key=session_id, gone=gone, chats=chats)
            ids = core.records.delete_messages(tenant, user_id=user_id, session_key=session_id)
            core.sessions.drop(tenant, user_id, session_id)
            core.indexer.delete_messages(tenant, ids)
            after_clear(core, tenant, user_id, gone, chats)
            drop_intent(core.records, tenant, intent)
        return len(ids)

    def drain_intents(self) -> int:
        """Finish the tenant's interrupted deletes and edits (``doctor.drain_intents``); a read when there are none."""
        return drain_intents(self.core, self.tenant_id)


def cleared(core: Kernel, tenant: str, user_id: str, session_key: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What a clear of a user's messages (of one session, or all) must take out of the derived tiers once the
    records are gone: the chat_id, message_id, seq, topic_id and create_time of each threaded message, and per chat and
    session the first seq (a group chat's summary of everyone's messages covers them)."""
    threaded: list[dict[str, Any]] = []
    first: dict[tuple[str, str], int] = {}
    after = 0
    while batch := core.records.scan_messages(tenant, user_id=user_id, session_key=session_key, after_seq=after, limit=1000):
        threaded += [{"chat_id": m.chat_id, "message_id": m.message_id, "seq": m.seq, "topic_id": m.topic_id,
                      "create_time": iso(m.create_time)} for m in batch if m.topic_id]
        for m in batch:
            first.setdefault((m.chat_id, m.session_key), int(m.seq or 0))
        after = int(batch[-1].seq or 0)
    return threaded, [{"chat_id": c, "session_key": s, "seq": seq} for (c, s), seq in first.items()]


def drain_intents(core: Kernel, tenant: str) -> int:
    """Finish ``tenant``'s interrupted deletes and edits (their delete intents); one count when there are none."""
    if not core.records.count_docs(tenant, INTENTS):
        return 0
    from .doctor import Tenant
    from .doctor import drain_intents as drain

    return drain(Tenant(core, tenant))


def _refuse_foreign(msgs: Sequence[Message], stored: Mapping[Any, Message]) -> None:
    """A (chat_id, message_id) already stored for another user is a collision, not a retry: the stored
    message is never handed back (it is someone else's)."""
    for m in msgs:
        other = stored.get(m.ref)
        if other is not None and other.user_id != m.user_id:
            raise InvalidInputError(
                "message_id", f"{m.chat_id}/{m.message_id}",
                "is already stored in this chat as another user's message (ids are unique per chat)",
                "give this message its own id; a retry of the same message carries the same user_id",
            )


__all__ = ["MessageWrites", "cleared", "drain_intents"]
