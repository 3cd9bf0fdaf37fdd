"""The write side of the vector index: payloads, BM25 sparse vectors, dense embeddings, the outbox.

The RecordStore is written first (durable); messages stay ``pending`` there until the index has
them. ``Indexer.flush`` indexes whatever is pending, so a crash between the two writes is repaired
on the next start or by ``reindex``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import uuid
from collections.abc import Sequence
from typing import Any

from .errors import ConfigurationError
from .models import Message, iso
from .providers.base import Embedder
from .retrieval.analyzer import Analyzer
from .retrieval.bm25 import BM25Encoder
from .stores.base import RecordStore, VectorIndex, VectorPoint

logger = logging.getLogger(__name__)

_POINT_NS = uuid.UUID("6f1c7a52-3c1e-4a53-9d0e-52a3b1e0c0de")
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
MESSAGES = "messages"
INDEX_CONTEXTS = ("neighbour", "speaker", "text")
PREVIOUS_CHARS = 300


def speaker(msg: Message) -> str:
    """The label of a turn: the user's name for user turns, the role otherwise."""
    return (msg.user_name or msg.user_id) if msg.role == "user" else msg.role


def point_id(tenant: str, kind: str, record_id: str) -> str:
    """Deterministic UUID of a record's point: re-indexing overwrites instead of duplicating."""
    return str(uuid.uuid5(_POINT_NS, f"{tenant}\x00{kind}\x00{record_id}"))


def message_payload(msg: Message, lang: str) -> dict[str, Any]:
    """Payload of a message point: filter fields plus the seed 003 meta fields."""
    meta = msg.metadata
    return {
        "tenant": msg.tenant,
        "kind": "message",
        "message_id": msg.message_id,
        "user_id": msg.user_id,
        "chat_id": msg.chat_id,
        "session_key": msg.session_key,
        "role": msg.role,
        "timestamp": iso(msg.create_time),
        "seq": msg.seq or 0,
        "author": speaker(msg),
        "channel": str(meta.get("channel") or msg.chat_id),
        "lang": lang,
        "topic_id": msg.topic_id,
        "task_id": meta.get("task_id"),
        "reply_to": msg.reply_message_id,
        "is_forward": bool(meta.get("is_forward", False)),
        "links": meta.get("links") or _URL.findall(msg.content),
        "media_types": list(meta.get("media_types") or []),
        "hash": hashlib.sha256(msg.content.encode()).hexdigest()[:16],
        "text": msg.content,
    }


class Indexer:
    """Turns records into points and keeps the index in line with the RecordStore."""

    def __init__(
        self,
        records: RecordStore,
        index: VectorIndex | None,
        embedder: Embedder | None,
        analyzer: Analyzer,
        encoder: BM25Encoder,
        collection: str,
        context: str = "neighbour",
    ) -> None:
        if context not in INDEX_CONTEXTS:
            raise ConfigurationError(f"index_context={context!r} must be one of {', '.join(INDEX_CONTEXTS)}")
        self.context = context
        self.records = records
        self.index = index
        self.embedder = embedder
        self.analyzer = analyzer
        self.encoder = encoder
        self.collection = collection
        if index is not None:
            index.ensure_collection(collection, dense_dim=embedder.dim if embedder else None, embedder=embedder.name if embedder else None)

    def indexed_text(self, msg: Message, previous: Message | None) -> str:
        """What BM25 and the embedder see: "Speaker: text", after the previous turn of the session.

        Measured on LoCoMo (share of evidence turns in the top 10, BM25): plain text 0.58,
        "Speaker: text" 0.61, with the previous turn 0.68. Hits still show the message text alone.
        """
        if self.context == "text":
            return msg.content
        line = f"{speaker(msg)}: {msg.content}"
        if self.context == "neighbour" and previous is not None:
            prev = previous.content if len(previous.content) <= PREVIOUS_CHARS else previous.content[:PREVIOUS_CHARS] + "…"
            return f"{speaker(previous)}: {prev}\n{line}"
        return line

    def sparse_terms(self, msg: Message, text: str) -> list[str]:
        """BM25 terms of the indexed text, with the turn's own words counted twice, so a turn
        outranks the next one, whose context repeats it (LoCoMo: NDCG@10 0.47 -> 0.52)."""
        terms = self.analyzer.terms(text)
        if self.context == "neighbour" and text != msg.content:
            terms += self.analyzer.terms(msg.content)
        return terms

    def points(self, messages: Sequence[Message], previous: dict[str, Message | None] | None = None) -> list[VectorPoint]:
        """Points of messages; ``previous`` maps message_id to the turn before it in its session."""
        previous = previous or {}
        texts = [self.indexed_text(m, previous.get(m.message_id)) for m in messages]
        dense: list[list[float]] | None = None
        if self.embedder is not None and messages:
            dense = self.embedder.embed_documents(texts)
        out = []
        for i, msg in enumerate(messages):
            out.append(
                VectorPoint(
                    id=point_id(msg.tenant, "message", msg.message_id),
                    payload=message_payload(msg, self.analyzer.detect_lang(msg.content)),
                    dense=dense[i] if dense is not None else None,
                    sparse=self.encoder.document(self.sparse_terms(msg, texts[i])),
                )
            )
        return out

    def previous_turns(self, tenant: str, messages: Sequence[Message], carry: dict[tuple[str, str], Message] | None = None) -> dict[str, Message | None]:
        """The turn before each message in its (user, session), from the batch, ``carry`` (the
        last message per session seen earlier in the same pass) or the store (one window read per
        session, enough when the batch is the session's tail, as on the write path)."""
        if self.context != "neighbour":
            return {}
        carry = carry if carry is not None else {}
        groups: dict[tuple[str, str], list[Message]] = {}
        for m in sorted(messages, key=lambda m: m.seq or 0):
            groups.setdefault((m.user_id, m.session_key), []).append(m)
        out: dict[str, Message | None] = {}
        for key, group in groups.items():
            prev = carry.get(key)
            if prev is None:
                first = group[0].seq or 0
                window = self.records.window(tenant, user_id=key[0], session_key=key[1], limit=len(group) + 1)
                older = [w for w in window if (w.seq or 0) < first]
                prev = older[-1] if older else None
            for m in group:
                out[m.message_id] = prev
                prev = m
            carry[key] = group[-1]
        return out

    def index_messages(self, tenant: str, messages: Sequence[Message], carry: dict[tuple[str, str], Message] | None = None) -> None:
        """Upsert the points of stored messages and clear them from the outbox."""
        if self.index is None or not messages:
            return
        self.index.upsert(self.collection, self.points(messages, self.previous_turns(tenant, messages, carry)))
        self.records.mark_indexed(tenant, [m.message_id for m in messages])

    def flush(self, tenant: str, *, batch: int = 256) -> int:
        """Index every pending message of a tenant, oldest first. Returns how many were indexed."""
        if self.index is None:
            return 0
        done = 0
        carry: dict[tuple[str, str], Message] = {}
        while True:
            ids = self.records.pending_index(tenant, limit=batch)
            if not ids:
                return done
            msgs = [m for m in self.records.get_messages(tenant, ids) if m is not None]
            missing = set(ids) - {m.message_id for m in msgs}
            if missing:  # deleted after being queued: nothing to index
                self.records.mark_indexed(tenant, sorted(missing))
            self.index_messages(tenant, msgs, carry)
            done += len(msgs)

    def delete_messages(self, tenant: str, message_ids: Sequence[str]) -> None:
        if self.index is not None and message_ids:
            self.index.delete(self.collection, ids=[point_id(tenant, "message", i) for i in message_ids])
