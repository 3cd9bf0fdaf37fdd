"""Delete intents: a delete (or an edit) that the index has not confirmed yet.

A delete goes the other way round from a write: an intent document is written to the RecordStore
collection ``INTENTS`` before the records are deleted, and dropped after their points are gone:

    key = put_intent(records, tenant, "clear", user_id="u1", session_key="s1")
    ...delete the records, then their points...
    drop_intent(records, tenant, key)

An intent left behind by a crash or an index fault is finished by the kind that wrote it (``Kind.intents``
names its ops; ``doctor.drain_intents`` hands each intent to its kind) on the next ``sync_index`` /
``process`` / open: the points of the intent's scope whose records no longer exist are deleted; points
of records that still exist stay. Finishing is idempotent.

Not to be confused with what is *pending* for the index (``index.pending``: records written whose
points the background writer has still to build).
"""

from __future__ import annotations

import uuid
from typing import Any

from ..stores.base import RecordStore

# The record store collection of the intents. Its stored name predates the word "intent": kept, so the
# intents an interrupted delete of an older version left behind are still finished.
INTENTS = "index_outbox"


def put_intent(records: RecordStore, tenant: str, op: str, **fields: Any) -> str:
    """Record a delete intent before the delete (durable); returns its key for ``drop_intent``."""
    key = f"{op}|{uuid.uuid4().hex}"
    records.put_docs(tenant, INTENTS, {key: {"op": op, **fields}})
    return key


def drop_intent(records: RecordStore, tenant: str, key: str) -> None:
    """The delete reached the index: forget the intent."""
    records.delete_docs(tenant, INTENTS, [key])


__all__ = ["INTENTS", "drop_intent", "put_intent"]
