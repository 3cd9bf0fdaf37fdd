"""Kinds of state derived from the records (the ``kernel.Kind`` protocol): base classes and helpers.
The doctor, the index writer, ``reindex`` and ``recreate_index`` loop over the engine's kinds
(``Kernel.kinds``) with no code of their own per kind.

A kind lives in its tier's folder (``message_health``, ``topics/health``, ``items/health``,
``agents/health``, ``documents/health``) and is registered once, in ``runtime._kinds``:

    class NoteKind(BaseKind):
        name = "notes"                          # the doctor's report key, the writer's source name
        intents = ("note",)                     # the delete intents it finishes (index.intents)

        def check(self, tenant, repair):        # records against points; repaired with ``repair``
            return report(records=3, points=3, missing=0, orphans=0, pending=0)

Each method takes the tenant it works on; a kind holds the kernel it was built with.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .index.pending import PendingRecords, Target
from .index.points import scope_filter
from .kernel import Kind

if TYPE_CHECKING:
    from .config import LayeredMemorySettings
    from .index.pending import PendingSource
    from .kernel import Kernel
    from .models import Message
    from .stores.base import RecordStore

DRIFT = ("missing", "orphans", "stale")  # report keys that are drift (what no running part will fix)


class Suspect(Exception):
    """Raised by ``at_open`` when the records look lost or wrong (e.g. points but not a single record):
    the report is shown and nothing is repaired on a guess."""

    def __init__(self, report: dict[str, int]) -> None:
        super().__init__(report)
        self.report = report


class BaseKind:
    """Defaults for a kind: no collections, no pending source, no intents, nothing checked at open, nothing to reindex."""

    name = ""
    writer = False
    intents: tuple[str, ...] = ()
    drift = DRIFT

    def __init__(self, core: Kernel) -> None:
        self.core = core

    @classmethod
    def collections(cls, records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
        return set()

    def pending_source(self) -> PendingSource | None:
        return None

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        return {}

    def at_open(self, tenant: str, repair: bool) -> dict[str, int] | None:
        return None

    def reindex(self, tenant: str) -> int:
        return 0

    def drain(self, tenant: str, intent: Mapping[str, Any]) -> None:
        raise NotImplementedError(f"{type(self).__name__} finishes no intent (got {intent.get('op')!r})")

    def drifted(self, part: Mapping[str, int]) -> bool:
        return any(part.get(k, 0) for k in self.drift)


class RecordKind(BaseKind):
    """A kind stored as documents whose writes leave pending markers (``index.pending``): the writer's
    source is a ``PendingRecords`` over ``targets``."""

    writer = True

    def targets(self, tenant: str, refs: Sequence[Any]) -> list[Target | None]:
        """The points of the marked records as the records are now (None entry: nothing to do)."""
        raise NotImplementedError

    def pending_source(self) -> PendingSource | None:
        core = self.core
        if core.index is None:
            return None
        return PendingRecords(
            self.name, self.targets, records=core.records, index=core.index, embedder=core.embedder,
            analyzer=core.analyzer, encoder=core.indexer.encoder, lock=core.write_lock,
        )


def report(records: int, points: int, missing: int, orphans: int, **extra: int) -> dict[str, int]:
    """One kind's part of the doctor's report."""
    return {"records": records, "points": points, "missing": missing, "orphans": orphans, **extra}


def count_points(core: Kernel, collection: str, tenant: str, kind: str) -> int:
    """The tenant's points of ``kind`` in ``collection`` (0 without the collection)."""
    index = core.index
    if index is None or not index.has_collection(collection):
        return 0
    return index.count(collection, filter=scope_filter(tenant, kind))


def iter_messages(core: Kernel, tenant: str, page: int = 1000) -> Iterator[Message]:
    """Every message record of the tenant, in log order, a page at a time."""
    after = 0
    while True:
        rows = core.records.scan_messages(tenant, after_seq=after, limit=page)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1].seq or after


__all__ = ["DRIFT", "BaseKind", "Kind", "RecordKind", "Suspect", "count_points", "iter_messages", "report"]
