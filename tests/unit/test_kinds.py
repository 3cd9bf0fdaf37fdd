"""A kind of derived state is added in one place (``runtime._kinds``) and the doctor, the drain of the
delete intents, ``reindex`` and ``recreate_index`` take it up with no code of their own for it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import layered_memory.runtime as runtime
from layered_memory import LayeredMemory
from layered_memory.index.intents import INTENTS, put_intent
from layered_memory.kinds import BaseKind, report
from layered_memory.testing import HashEmbedder

CALLS: list[tuple[Any, ...]] = []


class NoteKind(BaseKind):
    name = "notes"
    intents = ("note",)

    @classmethod
    def collections(cls, records: Any, settings: Any) -> set[str]:
        return {settings.qdrant.collection_prefix + "notes"}

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        CALLS.append(("check", tenant, repair))
        return report(2, 1, 1, 0, pending=5)  # not the writer's: not in the top-level pending

    def reindex(self, tenant: str) -> int:
        CALLS.append(("reindex", tenant))
        return 7

    def drain(self, tenant: str, intent: Mapping[str, Any]) -> None:
        CALLS.append(("drain", tenant, intent["note"]))


@pytest.fixture
def with_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    registered = runtime._kinds
    monkeypatch.setattr(runtime, "_kinds", lambda: (*registered(), NoteKind))
    CALLS.clear()


def test_a_registered_kind_is_checked_drained_and_reindexed(tmp_path: Path, with_notes: None) -> None:
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder()) as mem:
        mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content="hello")
        mem.flush()
        CALLS.clear()
        found = mem.doctor()
        assert found["notes"] == {"records": 2, "points": 1, "missing": 1, "orphans": 0, "pending": 5}
        assert found["ok"] is False and found["pending"] == 0  # its missing point is drift; its pending is no index lag
        assert list(found)[-6:] == ["topics", "notes", "pending", "upgrade", "bm25", "ok"]  # in the registry's order
        assert CALLS == [("check", "default", False)]

        put_intent(mem.records, "default", "note", note="n1")
        mem.sync_index()  # drains the delete intents first: the intent goes to the kind that wrote it
        assert ("drain", "default", "n1") in CALLS and mem.records.count_docs("default", INTENTS) == 0

        CALLS.clear()
        assert mem.reindex() >= 7 + 1  # the notes and the one message
        assert CALLS[0] == ("reindex", "default") and ("check", "default", True) in CALLS


def test_recreate_index_drops_the_collections_of_every_kind(tmp_path: Path, with_notes: None) -> None:
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder()) as mem:
        mem.index.ensure_collection("lm_notes", dense_dim=None)
        assert mem.index.has_collection("lm_notes")
    with LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(), recreate_index=True) as mem:
        assert not mem.index.has_collection("lm_notes")
