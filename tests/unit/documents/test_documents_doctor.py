"""The doctor's documents part: counts per tenant, and the repair of lost points, orphan points and
stale chunks (an interrupted write), by ``doctor(repair=True)`` and by the check when a store opens."""

from __future__ import annotations

import logging
from pathlib import Path

from click.testing import CliRunner
from documents_support import CountingEmbedder, make_repo

from layered_memory import LayeredMemory
from layered_memory.cli import main
from layered_memory.documents.store import CHUNKS
from layered_memory.index.points import point_id
from layered_memory.stores.base import iter_docs


def _coll(mem: LayeredMemory) -> str:
    return mem.settings.qdrant.collection_prefix + "documents"


def _filled(path: Path, tmp_path: Path) -> LayeredMemory:
    mem = LayeredMemory.embedded(path, embedder=CountingEmbedder())
    mem.documents.index_document("# Runbook\n\n## Rollback\n\nUse helm rollback app.\n", name="runbook", format="markdown")
    mem.documents.index_document("VPN host is vpn.example.com\n", name="vpn", collection="it")
    mem.for_user("alice").documents.index_document("Alice's private notes on the VPN token.\n", name="alice-notes")
    mem.documents.index_repo(make_repo(tmp_path / "shop", {"users.py": "def get_user(user_id):\n    return db.get(user_id)\n"}))
    return mem


def test_counts_and_repair_of_missing_orphan_and_stale(tmp_path: Path) -> None:
    mem = _filled(tmp_path / "m", tmp_path)
    part = mem.doctor()["documents"]
    assert part["records"] == part["points"] >= 4 and part["missing"] == part["orphans"] == part["stale"] == 0
    assert (part["documents"], part["repo_files"], part["collections"], part["repos"]) == (3, 1, 2, 1)
    assert mem.doctor()["ok"]
    # lost points (one of them the user's private upload), an orphan point (its record deleted), a stale chunk
    chunks = dict(iter_docs(mem.records, mem.tenant_id, CHUNKS))
    keys = sorted(chunks)
    pid = lambda k: point_id(mem.tenant_id, chunks[k]["payload"]["kind"], k)  # noqa: E731
    alice = next(k for k in keys if k.startswith("alice!"))
    runbook = next(k for k in keys if "runbook" in k)
    mem.index.delete(_coll(mem), ids=[pid(alice), pid(runbook)])
    vpn = next(k for k in keys if "vpn" in k)
    mem.records.delete_docs(mem.tenant_id, CHUNKS, [vpn])
    stale_key = runbook.rsplit("#", 1)[0] + "#0000deadbeef:00000"
    mem.records.put_docs(mem.tenant_id, CHUNKS, {stale_key: chunks[runbook]})
    found = mem.doctor()
    part = found["documents"]
    assert (part["missing"], part["orphans"], part["stale"]) == (2, 1, 1) and not found["ok"]
    fixed = mem.doctor(repair=True)
    assert fixed["repaired"] and fixed["ok"]
    part = mem.doctor()["documents"]
    assert part["records"] == part["points"] and part["missing"] == part["orphans"] == part["stale"] == 0
    assert mem.for_user("alice").documents.vector_rag("private notes VPN token", k=1).hits[0].meta["source"] == "alice-notes"
    assert all(h.meta["source"] != "alice-notes" for h in mem.documents.vector_rag("private notes", k=5).hits)
    assert mem.documents.vector_rag("helm rollback", k=1).hits[0].meta["source"] == "runbook"
    mem.close()


def test_open_check_restores_lost_points_and_cli_reports_documents(tmp_path: Path, caplog) -> None:
    path = tmp_path / "m"
    mem = _filled(path, tmp_path)
    n = mem.doctor()["documents"]["points"]
    ids = [point_id(mem.tenant_id, d["payload"]["kind"], k) for k, d in iter_docs(mem.records, mem.tenant_id, CHUNKS)]
    mem.index.delete(_coll(mem), ids=ids[:2])
    mem.close()
    with caplog.at_level(logging.WARNING):
        mem = LayeredMemory.embedded(path, embedder=CountingEmbedder())
    assert "documents" in caplog.text and "repaired" in caplog.text
    assert mem.doctor()["documents"]["points"] == n
    mem.close()
    out = CliRunner().invoke(main, ["--path", str(path), "--embedder", "none", "doctor"])
    assert "documents: records" in out.output and "repo_files 1" in out.output
