"""Facts whose source message was edited or deleted (``mem.edit_message`` / ``mem.delete_message``).

Facts keep their provenance (``graph.py``): entities and relations carry ``sources`` (message ids),
``chat_ids`` and ``source_refs`` (``[chat_id, message_id]`` pairs: ids repeat across chats), a profile and its
preferences their ``sources`` and ``source_refs``; a fact written before ``source_refs`` is matched by id
within its chats. When a message the tier extracted from
changes, every fact naming it gets a ``stale`` entry ``{"reason": "edit"|"delete", "chat_id", "message_id",
"at"}``; nothing is rewritten or deleted, so the history stays readable.

* The context's long tier leaves out an entity, relation or preference that only stale messages support
  (``unsupported``: every source edited or deleted since).
* An edited message is extracted again by the next ``process()`` (with a chat model): what its new text
  still says confirms the facts (their ``stale`` entry for it goes), what it says now is added.

A message was extracted from when it was threaded into a topic whose extraction cursor passed it, so
messages the tier never read cost nothing here; the marking itself reads the tenant's entities and
relations once (edits are rare, extraction keeps a few hundred facts per chat).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..models import Message, MessageRef
from ..stores.base import RecordStore, iter_docs
from .graph import ENTITIES, PROFILES, RELATIONS, confirm, unsupported  # noqa: F401  (re-exported)

KG_STATE = "kg_state"  # the extraction cursor per topic (knowledge.api)
REEXTRACT = "kg_reextract"  # <chat_id>|<message_id> of edited messages to extract again
MAX_STALE = 50


def extracted(records: RecordStore, tenant: str, topic_id: str | None, seq: int | None) -> bool:
    """Whether the tier has read the message (its topic's extraction cursor is at or past it)."""
    return extracted_many(records, tenant, [(topic_id, seq)])[0]


def extracted_many(records: RecordStore, tenant: str, messages: Sequence[tuple[str | None, int | None]]) -> list[bool]:
    """``extracted`` for many messages (``(topic_id, seq)`` each), one read of their topics' cursors."""
    topics = sorted({t for t, _ in messages if t})
    cursor = {t: int((d or {}).get("extracted_seq") or 0) for t, d in zip(topics, records.get_docs(tenant, KG_STATE, topics)) if d} if topics else {}
    return [t in cursor and cursor[t] >= int(seq or 0) for t, seq in messages]


def _add(doc: dict[str, Any], why: dict[str, Any]) -> dict[str, Any]:
    doc["stale"] = ([w for w in doc.get("stale") or [] if w != why] + [why])[-MAX_STALE:]
    return doc


def mark_stale(records: RecordStore, tenant: str, ref: MessageRef, user_id: str, why: dict[str, Any]) -> int:
    """Mark every fact extracted from the message at ``ref`` (written by ``user_id``). Idempotent. Returns
    how many facts (entities, relations, the profile) were marked."""
    return mark_stale_many(records, tenant, {ref: why}, user_id)


def mark_stale_many(records: RecordStore, tenant: str, whys: dict[MessageRef, dict[str, Any]], user_id: str) -> int:
    """``mark_stale`` for many messages of one user (a cleared session) in one read of the facts: each fact
    gets the ``why`` of every listed message it names. Idempotent. Returns how many facts were marked."""
    if not whys:
        return 0
    marked = 0
    for collection in (ENTITIES, RELATIONS):
        hits = {k: d for k, d in iter_docs(records, tenant, collection) if _mark(d, whys)}
        if hits:
            records.put_docs(tenant, collection, hits)
            marked += len(hits)
    profile = records.get_docs(tenant, PROFILES, [user_id])[0]
    if profile and _mark(profile, whys, chats=None):
        for pref in profile.get("preferences") or []:
            _mark(pref, whys, chats=None)
        records.put_docs(tenant, PROFILES, {user_id: profile})
        marked += 1
    return marked


def _mark(doc: dict[str, Any], whys: dict[MessageRef, dict[str, Any]], chats: str | None = "chat_ids") -> bool:
    """Add the ``why`` of each listed message the fact names; whether it named one. By ``source_refs`` (chat
    and id) when the fact has them; else by id, within the fact's ``chats`` field (None: any chat of the
    user's, as a profile's sources are)."""
    refs = doc.get("source_refs")
    if refs:
        named = [whys[MessageRef(c, m)] for c, m in refs if MessageRef(c, m) in whys]
    else:
        ids = set(doc.get("sources") or [])
        within = set(doc.get(chats) or []) if chats is not None else None
        named = [w for ref, w in whys.items() if ref.message_id in ids and (within is None or ref.chat_id in within)]
    for why in named:
        _add(doc, why)
    return bool(named)


def queue_reextract(records: RecordStore, tenant: str, msg: Message) -> None:
    records.put_docs(tenant, REEXTRACT, {f"{msg.chat_id}|{msg.message_id}": {"chat_id": msg.chat_id, "message_id": msg.message_id}})


def reextract_batch(records: RecordStore, tenant: str, limit: int = 50) -> tuple[list[str], dict[str, list[Message]]]:
    """The queued keys and the stored messages behind them, by chat (one extraction per chat)."""
    rows = records.list_docs(tenant, REEXTRACT, limit=limit)
    found = records.get_messages(tenant, [MessageRef(d["chat_id"], d["message_id"]) for _, d in rows]) if rows else []
    by_chat: dict[str, list[Message]] = {}
    for m in found:
        if m is not None:
            by_chat.setdefault(m.chat_id, []).append(m)
    return [k for k, _ in rows], by_chat


__all__ = ["KG_STATE", "REEXTRACT", "confirm", "extracted", "extracted_many", "mark_stale", "mark_stale_many", "queue_reextract",
           "reextract_batch", "unsupported"]
