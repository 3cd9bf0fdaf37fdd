"""The messages kind (``kinds.Kind``): message records against their points, the messages pending for the index, and
the delete intents of ``clear_session``, ``edit_message`` and ``delete_message``.

    MessageKind(core).check("acme", repair=False)
    # {"records": 240, "points": 238, "missing": 2, "orphans": 0, "pending": 0, "stale": 0}

``pending`` counts messages pending for the index (written, their point not complete yet: the index
writer's lag); ``missing`` records without their point and not pending; ``orphans`` points whose record
is gone; ``stale`` points whose payload hash is not the stored text's (an edit whose re-index another
process's writer raced; repaired by indexing them again, and counted in ``missing`` too);
``stale_context`` (only when some are) context vectors built from a turn whose record is gone. A message's
point is expected with the previous turn of its chat as context (``Indexer.is_neighbour``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .edits import after_clear, content_hash, finish_intent
from .index.pending import PendingSource
from .index.indexer import PendingMessages
from .index.points import MESSAGES, message_point_id, scope_filter, scroll_all
from .kinds import DRIFT, BaseKind, Suspect, count_points, iter_messages, report
from .models import Message, MessageRef

if TYPE_CHECKING:
    from .config import LayeredMemorySettings
    from .stores.base import RecordStore


class MessageKind(BaseKind):
    name = "messages"
    writer = True
    intents = ("clear", "edit", "delete")  # clear_session; an interrupted edit_message / delete_message
    drift = (*DRIFT, "stale_context")  # a context vector from a turn whose record is gone

    @classmethod
    def collections(cls, records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
        return {settings.qdrant.collection_prefix + MESSAGES}

    def pending_source(self) -> PendingSource | None:
        return PendingMessages(self.core.indexer, self.core.write_lock)

    def drain(self, tenant: str, intent: Mapping[str, Any]) -> None:
        core = self.core
        if intent["op"] != "clear":
            finish_intent(core, tenant, intent)
            return
        user, session = intent.get("user_id"), intent.get("session_key")
        named = list(intent.get("gone") or [])  # the threaded messages it deletes (an older intent names none)
        found = core.records.get_messages(tenant, [MessageRef(g["chat_id"], g["message_id"]) for g in named]) if named else []
        if user:  # only what the delete took: the records still there were not cleared
            after_clear(core, tenant, user, [g for g, m in zip(named, found) if m is None], list(intent.get("chats") or []))
        core.indexer.orphan_messages(tenant, user_id=user, session_key=session)
        core.indexer.drop_context(tenant)  # the turns after the deleted ones (any user of their chats)
        if user and not core.records.count_messages(tenant, user_id=user, session_key=session):
            core.sessions.drop(tenant, user, session)

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        core = self.core
        pending = set(core.records.pending_index(tenant, limit=10**9))
        expected: dict[str, tuple[MessageRef, MessageRef | None]] = {}  # point id -> (ref, previous turn's ref)
        hashes: dict[str, str] = {}  # point id -> the hash of the stored text
        last: dict[str, Message] = {}  # chat -> its latest message so far (the turn before the next one)
        neighbours = core.indexer.context == "neighbour"
        for m in iter_messages(self.core, tenant):
            prev = last.get(m.chat_id) if neighbours else None
            pid = message_point_id(tenant, m.ref)
            expected[pid] = (m.ref, prev.ref if prev is not None and core.indexer.is_neighbour(prev, m) else None)
            hashes[pid] = content_hash(m.content)
            last[m.chat_id] = m
        if core.index is None:
            return report(len(expected), 0, 0, 0, pending=len(pending))
        actual: set[str] = set()
        stale: set[str] = set()  # points of an older text (an edit whose re-index was lost, e.g. raced by another process)
        for hits in scroll_all(core.index, core.indexer.collection, scope_filter(tenant, "message")):
            actual.update(h.id for h in hits)
            stale.update(h.id for h in hits if h.id in hashes and h.payload.get("hash") not in (None, hashes[h.id]))
        orphans = sorted(actual - set(expected))
        missing = [expected[p] for p in expected if (p not in actual or p in stale) and expected[p][0] not in pending]
        stale_context = core.indexer.drop_context(tenant, rewrite=False)  # a context from a turn whose record is gone
        if repair:
            with core.write_lock:
                if orphans:
                    core.index.delete(core.indexer.collection, ids=orphans)
                if stale_context:
                    core.indexer.drop_context(tenant)
                for start in range(0, len(missing), 256):
                    chunk = missing[start : start + 256]
                    ids = list({i for pair in chunk for i in pair if i})
                    found = {m.ref: m for m in core.records.get_messages(tenant, ids) if m is not None}
                    msgs = [found[mid] for mid, _ in chunk if mid in found]
                    previous = {mid: found.get(prev) if prev else None for mid, prev in chunk}
                    core.indexer.upsert_messages(tenant, msgs, previous)
                core.indexer.flush(tenant)
        extra = {"stale_context": stale_context} if stale_context else {}
        return report(len(expected), len(actual), len(missing), len(orphans), pending=len(pending),
                      stale=len([p for p in stale if expected[p][0] not in pending]), **extra)

    def at_open(self, tenant: str, repair: bool) -> dict[str, int] | None:
        core = self.core
        records = core.records
        if repair and core.deferred:  # pending messages (a crash, a close before the writer drained): the writer embeds them
            core.background.notify(tenant)  # type: ignore[union-attr]
        elif repair:
            core.indexer.flush(tenant)
        n_msgs = records.count_messages(tenant)
        n_pending = len(records.pending_index(tenant, limit=n_msgs + 1)) if n_msgs else 0
        n_points = count_points(core, core.indexer.collection, tenant, "message")
        if n_points and not n_msgs:  # no record at all: a lost or a wrong record store? never wipe on a guess
            raise Suspect(self.check(tenant, False))
        if n_points > n_msgs or n_points < n_msgs - n_pending:
            return self.check(tenant, repair)
        return None

    def reindex(self, tenant: str) -> int:
        core = self.core
        with core.write_lock:
            core.records.mark_all_pending(tenant)
            n = core.indexer.flush(tenant)
            core.indexer.orphan_messages(tenant)
        return n


__all__ = ["MessageKind"]
