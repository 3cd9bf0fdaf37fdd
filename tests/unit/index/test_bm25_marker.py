"""Every collection records what its sparse vectors were written with (``retrieval.bm25.marker``: the terms'
version and the BM25 parameters), so a store written before an analyzer change, or with other BM25 settings,
is reported at open and by the doctor, keeps answering by the terms it holds, and is recorded as current once
a re-index has rewritten every point of it."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta, timezone

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.retrieval.bm25 import TERMS_VERSION, marker, marker_change
from layered_memory.testing import HashEmbedder

T0 = datetime(2026, 3, 1, 9, tzinfo=timezone.utc)
MESSAGES = [{"message_id": f"m{i}", "chat_id": "c", "user_id": "u", "content": text, "create_time": T0 + timedelta(minutes=i)}
            for i, text in enumerate(["Where did you leave the spare key?", "Under the blue flowerpot by the door."])]


def _forget_marker(store, collection: str = "lm_messages") -> None:
    """What a release before the marker left on disk: the same collection, no ``bm25`` in its marker file."""
    path = store / "vectors" / collection / "layered_memory.json"
    data = json.loads(path.read_text())
    data.pop("bm25")
    path.write_text(json.dumps(data))


def _open(store, settings=None, **kw) -> LayeredMemory:
    return LayeredMemory.embedded(store, embedder=HashEmbedder(), settings=settings or LayeredMemorySettings(), **kw)


def test_marker_change_says_what_differs():
    current = marker(LayeredMemorySettings().retrieval)
    assert current["terms"] == TERMS_VERSION and current["message_k1"] == 0.9
    assert marker_change(dict(current), current) is None
    assert "recorded nothing" in marker_change(None, current)
    older = {**current, "terms": TERMS_VERSION - 1, "message_b": 0.75}
    change = marker_change(older, current)
    assert f"terms {TERMS_VERSION - 1} -> {TERMS_VERSION}" in change and "message_b 0.75 -> 0.2" in change and "k1 " not in change


def test_every_collection_a_store_creates_records_the_marker(tmp_path):
    with _open(tmp_path / "s") as mem:
        mem.add_messages(MESSAGES)
        mem.items.put(("notes",), "k1", {"text": "the vault code rotates on Fridays"})
        mem.agents.create("u", "bot").add_interaction("looked up the vault code", interaction_id="i1", timestamp=T0)
        assert mem.flush(60)
        want = marker(mem.settings.retrieval)
        names = [n for n in sorted(p.name for p in (tmp_path / "s" / "vectors").iterdir()) if mem.index.has_collection(n)]
        assert len(names) >= 3, names  # messages, items, the agent's
        assert {n: mem.index.info(n)["schema"]["bm25"] for n in names} == {n: want for n in names}
        assert mem.doctor()["bm25"] == {}


def test_a_store_from_before_the_marker_is_reported_and_recorded_after_a_reindex(tmp_path, caplog):
    store = tmp_path / "s"
    with _open(store) as mem:
        mem.add_messages(MESSAGES)
        assert mem.flush(60)
    _forget_marker(store)
    with caplog.at_level(logging.WARNING), _open(store) as mem:
        assert "'lm_messages'" in caplog.text and "recorded nothing" in caplog.text and "layered-memory reindex" in caplog.text
        assert list(mem.doctor()["bm25"]) == ["lm_messages"] and mem.doctor()["ok"]  # not drift
        assert mem.search("blue flowerpot", route="bm25", k=1).hits[0].id == "m1"  # the terms it holds still match
        assert mem.reindex() == 2
        assert mem.doctor()["bm25"] == {}
        assert mem.index.info("lm_messages")["schema"]["bm25"] == marker(mem.settings.retrieval)
    caplog.clear()
    with caplog.at_level(logging.WARNING), _open(store) as mem:
        assert "lm_messages" not in caplog.text
        assert mem.search("blue flowerpot", k=1).hits[0].id == "m1"


def test_one_tenants_reindex_does_not_vouch_for_another_tenants_points(tmp_path):
    store = tmp_path / "s"
    with _open(store) as mem:
        for tenant in ("a", "b"):
            mem.tenant(tenant).add_messages(MESSAGES)
        assert mem.flush(60)
    _forget_marker(store)
    with _open(store) as mem:
        mem.tenant("a").reindex()
        assert list(mem.doctor()["bm25"]) == ["lm_messages"]  # tenant b's vectors are still the old ones
        mem.tenant("b").reindex()
        assert mem.doctor()["bm25"] == {}


def test_other_bm25_settings_are_named_and_a_recreate_records_them(tmp_path):
    store = tmp_path / "s"
    with _open(store) as mem:
        mem.add_messages(MESSAGES)
        assert mem.flush(60)
    settings = LayeredMemorySettings()
    settings.retrieval.message_k1 = 1.2
    with _open(store, settings) as mem:
        assert "message_k1 0.9 -> 1.2" in mem.doctor()["bm25"]["lm_messages"]
    with _open(store, settings, recreate_index=True) as mem:
        assert mem.doctor()["bm25"] == {} and mem.index.info("lm_messages")["schema"]["bm25"]["message_k1"] == 1.2
        assert mem.search("blue flowerpot", route="bm25", k=1).hits[0].id == "m1"


def test_an_empty_collection_without_the_marker_is_recorded_without_a_warning(tmp_path, caplog):
    store = tmp_path / "s"
    with _open(store):
        pass
    _forget_marker(store)
    with caplog.at_level(logging.WARNING), _open(store) as mem:
        assert mem.index.info("lm_messages")["schema"]["bm25"] == marker(mem.settings.retrieval)
    assert "lm_messages" not in caplog.text


def test_the_cli_doctor_names_the_collection_and_reindex_clears_it(tmp_path):
    from click.testing import CliRunner

    from layered_memory.cli import main

    store = tmp_path / "s"
    with LayeredMemory.embedded(store, embedder="none") as mem:
        mem.add_messages(MESSAGES)
        assert mem.flush(60)
    _forget_marker(store)
    args = ["--path", str(store), "--embedder", "none"]
    before = CliRunner().invoke(main, [*args, "doctor"])
    assert before.exit_code == 0  # not drift
    assert "bm25: collection lm_messages: its sparse vectors were written by a release" in before.output
    assert "(run: layered-memory reindex)" in before.output
    assert CliRunner().invoke(main, [*args, "reindex", "--quiet"]).output.strip() == "reindexed 2 records"
    after = CliRunner().invoke(main, [*args, "doctor"])
    assert after.exit_code == 0 and "bm25:" not in after.output


def test_a_marker_that_cannot_be_written_does_not_stop_the_store(tmp_path, caplog, monkeypatch):
    """Recording the marker is a fact, not a repair: a vector index that refuses the write (a read-only API key
    on a Qdrant server) leaves the store opening and searching, with a warning."""
    from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex

    store = tmp_path / "s"
    with _open(store):
        pass
    _forget_marker(store)

    def refuse(self, name, bm25):
        raise PermissionError("read-only API key")

    monkeypatch.setattr(QdrantEdgeVectorIndex, "set_bm25", refuse)
    with caplog.at_level(logging.WARNING), _open(store) as mem:
        mem.add_messages(MESSAGES)
        assert mem.flush(60) and mem.search("blue flowerpot", k=1).hits[0].id == "m1"
    assert "could not record the BM25 marker of collection lm_messages" in caplog.text and "read-only API key" in caplog.text
