"""Edits and deletes of single messages, as chat platforms send them: ``mem.edit_message`` and
``mem.delete_message`` (async twins ``aedit_message`` / ``adelete_message``).

    mem.add_message(message_id="42", chat_id="tg:1", user_id="u1", content="the meeting is on Mondy")
    mem.edit_message("tg:1", "42", content="the meeting is on Monday")
    mem.delete_message("tg:1", "42")            # True; False when no such message is stored

``add_message`` is idempotent: adding a stored ``(chat_id, message_id)`` again returns the stored copy
unchanged, whatever the new content says (a retry must not duplicate or overwrite). A change of content is
an edit, and says so.

**Edit** (under the engine's write lock): the record takes the new text (``metadata["edited_at"]`` records
when) and is pending for the index again in the same atomic write (``update_messages(reindex=True)``); its
BM25 point is rewritten at once and the dense vector follows through the index writer, as for a new message
(sync mode: the full point at once). Then everything derived from the old text:

* the next turn of the chat (whoever wrote it, within ``session_gap_hours``) is indexed again: its context
  vector and BM25 terms carry the previous turn (``reindex_next``);
* the session summary that covers the message is marked stale (``session_summaries.mark_stale``);
* the topic summary that covers it is marked stale and queued for a rewrite, and the message is checked
  against its topic by the next ``process()`` (``topics/edits.py``: re-threaded when it no longer fits);
* long-term facts extracted from it are marked stale, and it is extracted again (``knowledge/stale.py``).

**Delete** cascades as ``clear_session`` does, for one message: the record (``delete_refs``), its point,
the recent cache, the session's registration and summary when it was the session's last message, else the
summary marked stale; its topic membership (a topic left empty goes); facts marked stale; the next turn
indexed again.

Both are crash-consistent like ``clear_session``: a delete intent (``index.intents``, op ``edit`` /
``delete``) is written before the record changes and removed after the derived state is updated; an intent
left by a crash is finished by the next delete, ``sync_index``, ``process()`` or open
(``doctor.drain_intents`` -> ``finish_intent``), and every step is idempotent.

Scope: a handle bound to a user edits and deletes only that user's messages (what it may write); another
user's message is refused with ``InvalidInputError`` and nothing changes. Another tenant's message is not
stored for the handle at all.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .errors import InvalidInputError, NotFoundError
from .index.intents import drop_intent, put_intent
from .models import Message, MessageRef, check_id, iso, parse_time, utcnow

if TYPE_CHECKING:
    from .index import Scope
    from .kernel import Kernel

logger = logging.getLogger(__name__)

EDITED_AT = "edited_at"  # metadata key: when the message was last edited (ISO 8601)


def content_hash(text: str) -> str:
    """The hash a message point's payload carries (``index.points.message_payload``)."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class MessageEdits:
    """``edit_message`` / ``delete_message`` of one handle (the facade delegates to it)."""

    def __init__(self, core: Kernel, scope: Scope, validate: Callable[[Mapping[str, Any]], Message], drain: Callable[[], Any]) -> None:
        self.core = core
        self.scope = scope
        self._validate = validate  # the facade's: the same rules as add_message (content, max_content_chars, metadata)
        self._drain = drain  # the facade's: finishes the tenant's interrupted deletes and edits (doctor.drain_intents)

    def _own(self, chat_id: object, message_id: object, op: str) -> Message | None:
        """The stored message (None when not stored in this tenant); another user's is refused for a bound handle."""
        ref = MessageRef(check_id("chat_id", chat_id), check_id("message_id", message_id))  # type: ignore[arg-type]
        msg = self.core.records.get_messages(self.scope.tenant, [ref])[0]
        bound = self.scope.bound_user
        if msg is not None and bound is not None and msg.user_id != bound:
            raise InvalidInputError(
                "message_id", f"{ref.chat_id}/{ref.message_id}",
                f"is another user's message; a handle bound to user {bound!r} may {op} only its own messages",
                f"{op} it through that user's handle, or the unbound engine",
            )
        return msg

    def edit_message(
        self, chat_id: str, message_id: str, *, content: str | None = None, metadata: Mapping[str, Any] | None = None,
        edit_time: datetime | str | float | None = None,
    ) -> Message:
        """Replace a stored message's text (and/or its metadata), as a platform's edit does.

        The message keeps its place (``seq``, ``create_time``, author, session); ``metadata["edited_at"]``
        records ``edit_time`` (default: now). The search index, the session and topic summaries, the topic
        and the long-term facts follow (see ``layered_memory.edits``). An edit that changes nothing returns
        the stored message and writes nothing (a repeated edit event).

        Args:
            content: the new text (same rules as ``add_message``: non-empty, at most ``max_content_chars``).
            metadata: the new metadata (replaces the old one); None keeps it.
            edit_time: when the platform says the edit happened.

        Returns:
            The stored message after the edit.

        Raises:
            InvalidInputError: neither ``content`` nor ``metadata`` given, a value breaks a rule, or (bound
                handle) the message is another user's. Nothing is written.
            NotFoundError: no such message is stored in this tenant.

        Example::

            mem.edit_message("tg:1", "42", content="the meeting is on Monday")
        """
        if content is None and metadata is None:
            raise InvalidInputError("content", None, "an edit needs the new content (or metadata)",
                                    "pass content='the new text', or metadata={...}")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError("metadata", metadata, "must be a dict", "pass the message's new metadata as a dict")
        when = iso(parse_time("edit_time", edit_time) if edit_time is not None else utcnow())
        core, tenant = self.core, self.scope.tenant
        with core.write_lock:
            old = self._own(chat_id, message_id, "edit")
            if old is None:
                raise NotFoundError(
                    f"message_id={message_id!r} of chat_id={chat_id!r} is not stored in tenant {tenant!r}; "
                    "an edit changes a stored message: add it with add_message"
                )
            meta = {k: v for k, v in (old.metadata if metadata is None else metadata).items() if k != EDITED_AT}
            text = old.content if content is None else content
            if text == old.content and meta == {k: v for k, v in old.metadata.items() if k != EDITED_AT}:
                return old
            new = self._validate({**old.model_dump(exclude={"seq"}), "content": text, "metadata": {**meta, EDITED_AT: when}})
            new.seq = old.seq
            changed = new.content != old.content
            why = {"reason": "edit", "chat_id": new.chat_id, "message_id": new.message_id, "at": when}
            # the intent first: a crash after the record changed leaves the derived state to finish_intent
            key = put_intent(core.records, tenant, "edit", chat_id=new.chat_id, message_id=new.message_id,
                             hash=content_hash(new.content), why=why) if changed else None
            _bump(core, tenant, [new.ref])
            core.records.update_messages(tenant, [new], reindex=True)
            core.index_new_messages(tenant, [new])
            touched = [new]
            if changed:
                nxt = after_edit(core, tenant, new, why)
                touched += [nxt] if nxt is not None else []
            core.topics.on_write(tenant, [new])  # the recent cache holds the new text
            if key is not None:
                drop_intent(core.records, tenant, key)
        core.notify_writer(tenant, touched)
        logger.info("edited message %s/%s of tenant %s", new.chat_id, new.message_id, tenant)
        return new

    def delete_message(self, chat_id: str, message_id: str) -> bool:
        """Delete one stored message and what was derived from it (see ``layered_memory.edits``), as a
        platform's delete does. Idempotent: deleting a message that is not stored returns False.

        Returns:
            True when the message was deleted, False when no such message is stored in this tenant.

        Raises:
            InvalidInputError: an invalid id, or (bound handle) the message is another user's; nothing changes.

        Example::

            mem.delete_message("tg:1", "42")
        """
        core, tenant = self.core, self.scope.tenant
        with core.write_lock:
            self._drain()  # earlier intents first, as clear_session does
            old = self._own(chat_id, message_id, "delete")
            if old is None:
                return False
            gone = {"chat_id": old.chat_id, "message_id": old.message_id, "user_id": old.user_id,
                    "session_key": old.session_key, "seq": old.seq, "topic_id": old.topic_id, "create_time": iso(old.create_time)}
            why = {"reason": "delete", "chat_id": old.chat_id, "message_id": old.message_id, "at": iso(utcnow())}
            key = put_intent(core.records, tenant, "delete", **gone, why=why)
            core.records.delete_refs(tenant, [old.ref])
            nxt = after_delete(core, tenant, gone, why)
            drop_intent(core.records, tenant, key)
        core.notify_writer(tenant, [nxt] if nxt is not None else [])
        logger.info("deleted message %s/%s of tenant %s", old.chat_id, old.message_id, tenant)
        return True


# -- what follows a changed record (also run again by finish_intent after a crash; each step idempotent) ----
def _bump(core: Kernel, tenant: str, refs: list[MessageRef]) -> None:
    """Tell this process's index writer that these messages are pending again (``Indexer.bump``)."""
    if core.background is not None:
        core.indexer.bump(tenant, refs)


def reindex_next(core: Kernel, tenant: str, chat_id: str, seq: int | None, when: datetime | str | None = None) -> Message | None:
    """The chat's next turn after ``seq`` (whoever wrote it), indexed again: its points carry the turn before
    it as context (``Indexer.previous_turns``: the previous turn of the same chat within ``session_gap_hours``).
    ``when``: the changed message's time; a next turn further than the gap from it never had it as context
    and is left alone. A delete has already taken the old words out (``Indexer.drop_context``); the next
    turn then gets the turn before the deleted one, when that one is within the gap."""
    ix = core.indexer
    if core.index is None or ix.context != "neighbour":
        return None
    nxt = core.records.scan_messages(tenant, chat_id=chat_id, after_seq=int(seq or 0), limit=1)
    if not nxt:
        return None
    if when is not None:
        at = parse_time("create_time", when)
        if abs((nxt[0].create_time - at).total_seconds()) > ix.context_gap:
            return None
    _bump(core, tenant, [nxt[0].ref])
    core.records.update_messages(tenant, nxt, reindex=True)
    core.index_new_messages(tenant, nxt)
    return nxt[0]


def _facts(core: Kernel, tenant: str, ref: MessageRef, user_id: str, topic_id: str | None, seq: int | None,
           why: dict[str, Any]) -> None:
    from .knowledge.stale import REEXTRACT, extracted, mark_stale, queue_reextract

    if extracted(core.records, tenant, topic_id, seq):
        mark_stale(core.records, tenant, ref, user_id, why)
        core.knowledge.forget_profile(tenant, user_id)
        if why["reason"] == "edit" and core.chat_model is not None:
            msg = core.records.get_messages(tenant, [ref])[0]
            if msg is not None:
                queue_reextract(core.records, tenant, msg)
    if why["reason"] == "delete":
        core.records.delete_docs(tenant, REEXTRACT, [f"{ref.chat_id}|{ref.message_id}"])


def _discard_cached(core: Kernel, tenant: str, refs: list[MessageRef]) -> None:
    """Deleted messages out of the recent cache; a failure is logged (an entry expires with its TTL, and reads
    fall back to the records, which are gone)."""
    cache = core.topics.cache
    if cache is not None:
        try:
            cache.discard(tenant, refs)
        except Exception as exc:
            logger.warning("recent cache discard failed (%s: %s)", type(exc).__name__, exc)


def after_edit(core: Kernel, tenant: str, msg: Message, why: dict[str, Any]) -> Message | None:
    """Derived state after a text edit: the next turn's point, summaries, topic, facts. Returns the next turn
    when it is pending for the index again (the caller wakes the writer for it)."""
    from .session_summaries import mark_stale
    from .topics.edits import on_edited

    nxt = reindex_next(core, tenant, msg.chat_id, msg.seq, msg.create_time)
    mark_stale(core.records, tenant, msg.user_id, msg.session_key, int(msg.seq or 0), why, chat_id=msg.chat_id)
    on_edited(core, tenant, msg, why)
    _facts(core, tenant, msg.ref, msg.user_id, msg.topic_id, msg.seq, why)
    return nxt


def after_delete(core: Kernel, tenant: str, gone: Mapping[str, Any], why: dict[str, Any]) -> Message | None:
    """Derived state after a delete (``gone``: the deleted record's chat_id, message_id, user_id, session_key,
    seq, topic_id, create_time): point, recent cache, session, summaries, topic, facts, the next turn's point."""
    from .session_summaries import mark_stale
    from .topics.edits import on_deleted

    ref = MessageRef(gone["chat_id"], gone["message_id"])
    user, session, seq = gone["user_id"], gone["session_key"], int(gone["seq"] or 0)
    core.indexer.delete_messages(tenant, [ref])
    _discard_cached(core, tenant, [ref])
    nxt = reindex_next(core, tenant, ref.chat_id, seq, gone.get("create_time"))
    if not core.records.count_messages(tenant, user_id=user, session_key=session):
        core.sessions.drop(tenant, user, session)  # its last message: as clear_session, registration and summary go
    # the author's summary (when it stays) and the chat's: a group's summary of everyone's messages quotes the
    # deleted text even when it was its author's last message there
    mark_stale(core.records, tenant, user, session, seq, why, chat_id=ref.chat_id)
    on_deleted(core, tenant, dict(gone), why)
    _facts(core, tenant, ref, user, gone.get("topic_id"), seq, why)
    return nxt


def after_clear(core: Kernel, tenant: str, user_id: str, gone: list[dict[str, Any]], chats: list[dict[str, Any]]) -> None:
    """Derived state after ``clear_session`` deleted a user's messages (read before the delete, ``writes.cleared``:
    ``gone`` the chat_id, message_id, seq and topic_id of each threaded one, ``chats`` the first seq per chat and
    session): a group chat's session summary that covers them is marked stale (the user's own went with the
    session); the messages leave their topics (a topic made only of them goes with its summaries; another's
    summary is marked stale); the facts extracted from them are marked stale, as a delete of each would.
    Idempotent: the clear intent runs it again after a crash."""
    from .knowledge.stale import REEXTRACT, extracted_many, mark_stale_many
    from .session_summaries import mark_stale
    from .topics.edits import on_cleared

    at = iso(utcnow())
    for c in chats:
        why = {"reason": "clear", "chat_id": c["chat_id"], "session_key": c["session_key"], "at": at}
        mark_stale(core.records, tenant, user_id, c["session_key"], int(c["seq"]), why, chat_id=c["chat_id"])
    if not gone:
        return
    refs = [MessageRef(g["chat_id"], g["message_id"]) for g in gone]
    _discard_cached(core, tenant, refs)
    on_cleared(core, tenant, gone, at)
    read = extracted_many(core.records, tenant, [(g.get("topic_id"), g.get("seq")) for g in gone])
    whys = {ref: {"reason": "delete", "chat_id": ref.chat_id, "message_id": ref.message_id, "at": at} for ref, r in zip(refs, read) if r}
    if mark_stale_many(core.records, tenant, whys, user_id):  # the tier read them: what it drew from them is marked
        core.knowledge.forget_profile(tenant, user_id)
    core.records.delete_docs(tenant, REEXTRACT, [f"{r.chat_id}|{r.message_id}" for r in refs])


def finish_intent(core: Kernel, tenant: str, intent: Mapping[str, Any]) -> None:
    """Finish an ``edit`` / ``delete`` intent left by a crash (``doctor.drain_intents``, under the write lock):
    when the record change landed, the derived state is updated (again); otherwise nothing happened."""
    ref = MessageRef(intent["chat_id"], intent["message_id"])
    msg = core.records.get_messages(tenant, [ref])[0]
    why = dict(intent.get("why") or {"reason": intent["op"], "chat_id": ref.chat_id, "message_id": ref.message_id})
    if intent["op"] == "edit" and msg is not None and content_hash(msg.content) == intent.get("hash"):
        after_edit(core, tenant, msg, why)
    elif intent["op"] == "delete" and msg is None:
        after_delete(core, tenant, intent, why)


__all__ = ["EDITED_AT", "MessageEdits", "after_clear", "after_delete", "after_edit", "content_hash", "finish_intent", "reindex_next"]
