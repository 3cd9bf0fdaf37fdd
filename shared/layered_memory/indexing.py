"""The write side of the vector index: payloads, BM25 sparse vectors, dense embeddings, the outbox.

The RecordStore is written first (durable); messages stay ``pending`` there until the index has
them. ``Indexer.flush`` indexes whatever is pending, so a crash between the two writes is repaired
on the next start or by ``reindex``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
import uuid
from collections.abc import Sequence
from typing import Any

from .models import Message, iso
from .providers.base import Embedder
from .retrieval.analyzer import Analyzer
from .retrieval.bm25 import BM25Encoder
from .stores.base import RecordStore, VectorIndex, VectorPoint

logger = logging.getLogger(__name__)

_POINT_NS = uuid.UUID("6f1c7a52-3c1e-4a53-9d0e-52a3b1e0c0de")
_URL = re.compile(r"https?://[^\s<>\"')\]]+")
MESSAGES = "messages"


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
        "author": msg.user_name or msg.user_id,
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
    ) -> None:
        self.records = records
        self.index = index
        self.embedder = embedder
        self.analyzer = analyzer
        self.encoder = encoder
        self.collection = collection
        self.embed_seconds = 0.0  # total time spent in the embedder (reported apart in benchmarks)
        if index is not None:
            index.ensure_collection(collection, dense_dim=embedder.dim if embedder else None)

    def points(self, messages: Sequence[Message]) -> list[VectorPoint]:
        dense: list[list[float]] | None = None
        if self.embedder is not None and messages:
            t0 = time.perf_counter()
            dense = self.embedder.embed_documents([m.content for m in messages])
            self.embed_seconds += time.perf_counter() - t0
        out = []
        for i, msg in enumerate(messages):
            terms = self.analyzer.terms(msg.content)
            out.append(
                VectorPoint(
                    id=point_id(msg.tenant, "message", msg.message_id),
                    payload=message_payload(msg, self.analyzer.detect_lang(msg.content)),
                    dense=dense[i] if dense is not None else None,
                    sparse=self.encoder.document(terms),
                )
            )
        return out

    def index_messages(self, tenant: str, messages: Sequence[Message]) -> None:
        """Upsert the points of stored messages and clear them from the outbox."""
        if self.index is None or not messages:
            return
        self.index.upsert(self.collection, self.points(messages))
        self.records.mark_indexed(tenant, [m.message_id for m in messages])

    def flush(self, tenant: str, *, batch: int = 256) -> int:
        """Index every pending message of a tenant. Returns how many were indexed."""
        if self.index is None:
            return 0
        done = 0
        while True:
            ids = self.records.pending_index(tenant, limit=batch)
            if not ids:
                return done
            msgs = [m for m in self.records.get_messages(tenant, ids) if m is not None]
            missing = set(ids) - {m.message_id for m in msgs}
            if missing:  # deleted after being queued: nothing to index
                self.records.mark_indexed(tenant, sorted(missing))
            self.index_messages(tenant, msgs)
            done += len(msgs)

    def delete_messages(self, tenant: str, message_ids: Sequence[str]) -> None:
        if self.index is not None and message_ids:
            self.index.delete(self.collection, ids=[point_id(tenant, "message", i) for i in message_ids])
