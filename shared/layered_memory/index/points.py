"""The payload schema and point ids of the index: one deterministic point per record, the payload
every message point carries (filter fields plus the seed 003 meta fields), and reading a collection's
points page by page.

Both sides use them: the write side (``index.indexer.Indexer``, the tiers' upserts) builds points, the
read side (``index.search``, the doctor and the kinds' checks) names, filters and scrolls them.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from .._lazy import qdrant_models as models

from ..models import Message, MessageRef, iso
from ..retrieval.analyzer import text_key
from ..stores.base import VectorIndex

MESSAGES = "messages"  # the message collection's name (after the configured collection prefix)
SCROLL_PAGE = 512

_POINT_NS = uuid.UUID("6f1c7a52-3c1e-4a53-9d0e-52a3b1e0c0de")
_URL = re.compile(r"https?://[^\s<>\"')\]]+")


def speaker(msg: Message) -> str:
    """The label of a turn: the user's name for user turns, the role otherwise."""
    return (msg.user_name or msg.user_id) if msg.role == "user" else msg.role


@lru_cache(maxsize=65_536)
def point_id(tenant: str, kind: str, record_id: str) -> str:
    """Deterministic UUID of a record's point: re-indexing overwrites instead of duplicating (cached:
    a context computes it for every recalled message, call after call)."""
    return str(uuid.uuid5(_POINT_NS, f"{tenant}\x00{kind}\x00{record_id}"))


def message_point_id(tenant: str, ref: MessageRef | tuple[str, str]) -> str:
    """The point of a message: its identity is (chat_id, message_id), message ids repeat across chats."""
    return point_id(tenant, "message", f"{ref[0]}|{ref[1]}")


def legacy_message_point_id(tenant: str, message_id: str) -> str:
    """The point id schema 1 gave a message (by message_id alone); only the v2 upgrade reads it."""
    return point_id(tenant, "message", message_id)


def scope_filter(tenant: str, kind: str, **fields: str | None) -> models.Filter:
    """Index filter for the points of one kind of one tenant, narrowed by the given payload fields."""
    must: list[Any] = [
        models.FieldCondition(key="tenant", match=models.MatchValue(value=tenant)),
        models.FieldCondition(key="kind", match=models.MatchValue(value=kind)),
    ]
    for key, value in fields.items():
        if value is not None:
            must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))
    return models.Filter(must=must)


SENTENCES_KEY = "sentences"  # payload: how many sentence vectors a message point has (absent: none), so a search reads only those


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
        "text_key": text_key(msg.content),
        "text": msg.content,
    }


def scroll_all(index: VectorIndex, collection: str, flt: Any, page: int = SCROLL_PAGE) -> Iterator[list[Any]]:
    """Every point of ``collection`` matching ``flt``, page by page (nothing when the collection is missing)."""
    if not index.has_collection(collection):
        return
    offset = None
    while True:
        hits, offset = index.scroll(collection, filter=flt, limit=page, offset=offset)
        if hits:
            yield hits
        if offset is None or not hits:
            return


__all__ = [
    "MESSAGES", "SENTENCES_KEY", "legacy_message_point_id", "message_payload", "message_point_id", "point_id", "scope_filter", "scroll_all",
    "speaker", "text_key",
]
