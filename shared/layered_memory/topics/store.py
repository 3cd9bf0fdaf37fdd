"""Where the topic tier keeps its state: documents in the engine's RecordStore, one tenant at a time.

Collections (keys sort as strings, so zero-padded numbers keep order):

========================  =====================================  ==========================================
collection                key                                    value
========================  =====================================  ==========================================
``topics``                ``<topic_id>``                         the topic (seed 2.1.2) plus threading state
``topics_active``         ``<chat_id>|<topic_id>``               ``{"t": last message time}``
``topic_msgs``            ``<topic_id>|<seq:012d>``              ``{"id": message_id, "t": time, "u": user_id}``
``topic_queue``           ``<seq:012d>|<message_id>``            messages queued again (doctor repair)
``topic_jobs``            ``<topic_id>``                         a summary to write: ``{"trigger": ...}``
``topic_summaries``       ``<topic_id>|<version:06d>``           every summary version (seed 3.1.1)
``topic_chats``           ``<chat_id>``                          the chat's latest topic and clock
``topic_state``           ``threading``                          ``{"seq": n}``: messages up to n were threaded
========================  =====================================  ==========================================

A topic lives in one chat, so the message ids it keeps (``topic_msgs`` rows, ``recent``) resolve in
the topic's ``chat_id``: a message is ``(chat_id, message_id)``, ids repeat across chats.

The message log is the queue: every stored message with a ``seq`` above the threading cursor waits
for threading, so the write path adds nothing for this tier. ``topic_queue`` holds only messages queued
again by hand (the doctor's repair). A process that stops mid-way loses nothing: the next ``process()``
picks up at the cursor (at least once; a message already threaded is skipped).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..models import Message, MessageRef, iso, parse_time
from ..stores.base import RecordStore

TOPICS = "topics"
ACTIVE = "topics_active"
TOPIC_MSGS = "topic_msgs"
QUEUE = "topic_queue"
JOBS = "topic_jobs"
SUMMARIES = "topic_summaries"
CHATS = "topic_chats"
STATE = "topic_state"

_ALL = 10**9


def seq_key(seq: int | None) -> str:
    return f"{int(seq or 0):012d}"


class TopicStore:
    """Typed access to the topic collections of one tenant."""

    def __init__(self, records: RecordStore, tenant: str) -> None:
        self.records = records
        self.tenant = tenant

    # -- queue ------------------------------------------------------------------------------
    @staticmethod
    def queue_key(seq: int | None, message_id: str) -> str:
        return f"{seq_key(seq)}|{message_id}"

    def enqueue(self, items: Sequence[tuple[int | None, str, str]]) -> None:
        """Queue (seq, message_id, chat_id) for threading again (seq is unique in the tenant: so is the key;
        idempotent). New messages need no call: the log above the cursor is the queue."""
        if items:
            self.records.put_docs(self.tenant, QUEUE, {self.queue_key(s, mid): {"message_id": mid, "chat_id": c} for s, mid, c in items})

    def threading_cursor(self) -> int:
        """The seq up to which every stored message has been threaded; the ones above it wait."""
        doc = self.records.get_docs(self.tenant, STATE, ["threading"])[0]
        return int(doc["seq"]) if doc else 0

    def set_threading_cursor(self, seq: int) -> None:
        self.records.put_docs(self.tenant, STATE, {"threading": {"seq": int(seq)}})

    def queued(self, limit: int) -> list[tuple[str, dict[str, Any]]]:
        return self.records.list_docs(self.tenant, QUEUE, limit=limit)

    def dequeue(self, keys: Sequence[str]) -> None:
        if keys:
            self.records.delete_docs(self.tenant, QUEUE, list(keys))

    def backlog(self, limit: int) -> list[Message]:
        """The stored messages above the cursor, oldest first: the queue new messages join by being written."""
        return self.records.scan_messages(self.tenant, after_seq=self.threading_cursor(), limit=limit)

    def queue_size(self) -> int:
        """Messages waiting for threading: the log above the cursor plus the ones queued again."""
        return self.records.count_messages(self.tenant, after_seq=self.threading_cursor()) + self.records.count_docs(self.tenant, QUEUE)

    # -- topics -----------------------------------------------------------------------------
    def get(self, topic_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        return self.records.get_docs(self.tenant, TOPICS, list(topic_ids)) if topic_ids else []

    def put(self, topics: Sequence[dict[str, Any]]) -> None:
        if topics:
            self.records.put_docs(self.tenant, TOPICS, {t["topic_id"]: t for t in topics})

    def active_ids(self, chat_id: str) -> list[str]:
        rows = self.records.list_docs(self.tenant, ACTIVE, prefix=f"{chat_id}|", limit=_ALL)
        return [k.split("|", 1)[1] for k, _ in rows]

    def set_active(self, topics: Sequence[dict[str, Any]]) -> None:
        on = {f"{t['chat_id']}|{t['topic_id']}": {"t": t["update_time"]} for t in topics if t.get("is_active")}
        off = [f"{t['chat_id']}|{t['topic_id']}" for t in topics if not t.get("is_active")]
        if on:
            self.records.put_docs(self.tenant, ACTIVE, on)
        if off:
            self.records.delete_docs(self.tenant, ACTIVE, off)

    def all_topics(self, *, chat_id: str | None = None, page: int = 500) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        after = ""
        while True:
            rows = self.records.list_docs(self.tenant, TOPICS, after=after, limit=page)
            out.extend(d for _, d in rows if chat_id is None or d.get("chat_id") == chat_id)
            if len(rows) < page:
                return out
            after = rows[-1][0]

    def active_chats(self) -> list[str]:
        chats: list[str] = []
        after = ""
        while True:
            rows = self.records.list_docs(self.tenant, ACTIVE, after=after, limit=1000)
            for key, _ in rows:
                chat = key.split("|", 1)[0]
                if not chats or chats[-1] != chat:
                    chats.append(chat)
            if len(rows) < 1000:
                return chats
            after = rows[-1][0]

    # -- membership -------------------------------------------------------------------------
    def add_members(self, rows: Sequence[tuple[str, int | None, str, str, str]]) -> None:
        """(topic_id, seq, message_id, iso time, user_id)."""
        if rows:
            self.records.put_docs(
                self.tenant, TOPIC_MSGS, {f"{t}|{seq_key(s)}": {"id": mid, "t": ts, "u": u} for t, s, mid, ts, u in rows}
            )

    def members(
        self, topic_id: str, *, after_seq: int = 0, limit: int = _ALL,
        start: datetime | None = None, end: datetime | None = None,
    ) -> list[dict[str, Any]]:
        """Membership rows of a topic in message order (optionally within a time range)."""
        rows = self.records.list_docs(self.tenant, TOPIC_MSGS, prefix=f"{topic_id}|", after=f"{topic_id}|{seq_key(after_seq)}", limit=_ALL)
        out = []
        for key, row in rows:
            if start is not None or end is not None:
                t = parse_time("t", row["t"])
                if (start is not None and t < start) or (end is not None and t > end):
                    continue
            out.append({**row, "seq": int(key.rsplit("|", 1)[1])})
        return out[:limit] if limit < _ALL else out

    def member_refs(self, topic: dict[str, Any], rows: Sequence[dict[str, Any]]) -> list[MessageRef]:
        """The messages of membership rows, in the topic's chat."""
        return [MessageRef(topic["chat_id"], r["id"]) for r in rows]

    def member_count(self, topic_id: str) -> int:
        return self.records.count_docs(self.tenant, TOPIC_MSGS, prefix=f"{topic_id}|")

    # -- chat state -------------------------------------------------------------------------
    def chat_state(self, chat_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        docs = self.records.get_docs(self.tenant, CHATS, list(chat_ids)) if chat_ids else []
        return {c: d for c, d in zip(chat_ids, docs) if d}

    def put_chat_state(self, states: dict[str, dict[str, Any]]) -> None:
        if states:
            self.records.put_docs(self.tenant, CHATS, states)

    # -- summary jobs and versions ----------------------------------------------------------
    def add_jobs(self, jobs: dict[str, str]) -> None:
        """topic_id -> trigger ("idle", "count", "schedule", "manual")."""
        if jobs:
            self.records.put_docs(self.tenant, JOBS, {t: {"trigger": trig} for t, trig in jobs.items()})

    def jobs(self, limit: int = 1000) -> list[tuple[str, dict[str, Any]]]:
        return self.records.list_docs(self.tenant, JOBS, limit=limit)

    def done_jobs(self, topic_ids: Sequence[str]) -> None:
        if topic_ids:
            self.records.delete_docs(self.tenant, JOBS, list(topic_ids))

    def put_summary(self, doc: dict[str, Any]) -> None:
        self.records.put_docs(self.tenant, SUMMARIES, {f"{doc['topic_id']}|{int(doc['version']):06d}": doc})

    def summaries(self, topic_id: str) -> list[dict[str, Any]]:
        """Every version, oldest first."""
        return [d for _, d in self.records.list_docs(self.tenant, SUMMARIES, prefix=f"{topic_id}|", limit=_ALL)]

    def latest_summaries(self, topics: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        keys = [f"{t['topic_id']}|{int(t['summary_version']):06d}" for t in topics if t.get("summary_version")]
        docs = self.records.get_docs(self.tenant, SUMMARIES, keys) if keys else []
        return {d["topic_id"]: d for d in docs if d}


def now_iso(dt: datetime) -> str:
    return iso(dt)
