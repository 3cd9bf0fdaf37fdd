"""``mem.documents``: index_document / index_documents / vector_rag / delete_document (issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from documents_support import CountingEmbedder, minimal_pdf

from layered_memory import LayeredMemory
from layered_memory.documents.store import CHUNKS, SOURCES
from layered_memory.errors import InvalidInputError, LayeredMemoryError
from layered_memory.index.intents import INTENTS
from layered_memory.stores.sqlite import SQLiteRecordStore

RUNBOOK = """# Runbook

How the ops team runs the service.

## Deploy

Run `kubectl apply -f deploy.yaml` from the release branch.

### Rollback

Use `helm rollback app` to return to the previous release.

## Alerts

- CrashLoopBackOff: check the pod logs first.
"""


@pytest.fixture
def emb() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def mem(tmp_path: Path, emb: CountingEmbedder):
    m = LayeredMemory.embedded(tmp_path / "mem", embedder=emb)
    yield m
    m.close()


def _points(mem: LayeredMemory) -> int:
    name = mem.settings.qdrant.collection_prefix + "documents"
    return mem.index.count(name) if mem.index.has_collection(name) else 0


def test_markdown_chunks_keep_heading_path_lines_and_cite(mem: LayeredMemory, tmp_path: Path) -> None:
    path = tmp_path / "runbook.md"
    path.write_text(RUNBOOK)
    done = mem.documents.index_document(path, metadata={"team": "ops"})
    assert (done.status, done.title, done.format, done.chunks) == ("indexed", "Runbook", "markdown", 4)
    res = mem.documents.vector_rag("how do I roll back to the previous release", k=3)
    top = res.hits[0]
    assert top.meta["citation"] == "Runbook > Deploy > Rollback (lines 9-11)"
    assert top.meta["heading_path"] == ["Runbook", "Deploy", "Rollback"]
    assert (top.meta["line_start"], top.meta["line_end"]) == (9, 11)
    assert top.meta["source"] == str(path.resolve())
    assert top.meta["metadata"] == {"team": "ops"}
    assert "helm rollback" in top.text
    assert res.route_used == "hybrid" and "total" in res.timings
    for route in ("bm25", "dense"):
        routed = mem.documents.vector_rag("helm rollback previous release", k=1, route=route)
        assert routed.route_used == route and routed.hits[0].meta["heading_path"][-1] == "Rollback"
    lines = RUNBOOK.split("\n")
    assert "### Rollback" == lines[top.meta["line_start"] - 1]


def test_reindex_unchanged_does_nothing_changed_replaces_removed_deletes(mem: LayeredMemory, emb: CountingEmbedder, tmp_path: Path) -> None:
    path = tmp_path / "runbook.md"
    path.write_text(RUNBOOK)
    first = mem.documents.index_document(path)
    embedded = len(emb.texts)
    again = mem.documents.index_document(path)
    assert again.status == "unchanged" and again.version == first.version
    assert len(emb.texts) == embedded  # nothing embedded, nothing written
    assert _points(mem) == first.chunks
    path.write_text(RUNBOOK.replace("helm rollback app", "argo rollouts undo app"))
    changed = mem.documents.index_document(path)
    assert changed.status == "replaced" and changed.removed_chunks == first.chunks
    assert _points(mem) == changed.chunks
    texts = [h.text for h in mem.documents.vector_rag("rollback previous release", k=10).hits]
    assert any("argo rollouts undo" in t for t in texts) and not any("helm rollback" in t for t in texts)
    assert mem.documents.delete_document(path) is True
    assert mem.documents.vector_rag("rollback", k=10).hits == []
    assert _points(mem) == 0
    assert mem.records.count_docs(mem.tenant_id, CHUNKS) == 0
    assert mem.documents.delete_document(path) is False


def test_text_bytes_html_pdf(mem: LayeredMemory) -> None:
    docs = mem.documents
    t = docs.index_document("The VPN gateway lives at vpn.example.com.\n\nAsk #it-help for access.", name="vpn.txt")
    assert (t.format, t.source) == ("text", "vpn.txt")
    html = b"<html><head><title>Handbook</title></head><body><h1>Handbook</h1><p>Intro</p><h2>Leave</h2><p>Request leave in Workday.</p></body></html>"
    h = docs.index_document(html, name="handbook.html")
    assert (h.format, h.title) == ("html", "Handbook")
    p = docs.index_document(minimal_pdf(["Expense policy overview", "Receipts are required above 50 EUR"]), name="policy.pdf")
    assert p.format == "pdf" and p.chunks == 2
    hit = docs.vector_rag("receipts required", k=1).hits[0]
    assert hit.meta["page"] == 2 and hit.meta["citation"].endswith("(page 2)")
    hit = docs.vector_rag("request leave workday", k=1).hits[0]
    assert hit.meta["citation"].startswith("Handbook > Leave")
    anonymous = docs.index_document("just some text about printers")
    assert anonymous.source.startswith("text:")
    assert {d["source"] for d in docs.list_documents()} == {"vpn.txt", "handbook.html", "policy.pdf", anonymous.source}


def test_filters_collection_source_metadata(mem: LayeredMemory) -> None:
    docs = mem.documents
    docs.index_document("Deploy with kubectl apply.", name="a.md", collection="ops", metadata={"team": "ops", "year": 2024})
    docs.index_document("Deploy the website with netlify.", name="b.md", collection="web", metadata={"team": "web"})
    assert {h.meta["source"] for h in docs.vector_rag("deploy", filters={"collection": "ops"}).hits} == {"a.md"}
    assert {h.meta["source"] for h in docs.vector_rag("deploy", filters={"collection": ["ops", "web"]}).hits} == {"a.md", "b.md"}
    assert {h.meta["source"] for h in docs.vector_rag("deploy", filters={"metadata": {"team": "web"}}).hits} == {"b.md"}
    assert {h.meta["source"] for h in docs.vector_rag("deploy", filters={"metadata": {"year": 2024}}).hits} == {"a.md"}
    assert {h.meta["source"] for h in docs.vector_rag("deploy", filters={"source": "b.md"}).hits} == {"b.md"}
    with pytest.raises(InvalidInputError, match="is not a document filter"):
        docs.vector_rag("deploy", filters={"user_id": "someone"})


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory):
    """One engine for the bad-input tests (nothing may be written by any of them)."""
    from layered_memory.config import LayeredMemorySettings

    settings = LayeredMemorySettings()
    settings.documents.max_document_bytes = 4000
    m = LayeredMemory.embedded(tmp_path_factory.mktemp("tight"), embedder=CountingEmbedder(), settings=settings)
    yield m
    m.close()


@pytest.mark.parametrize("make, match", [
    (lambda d: d / "missing.md", "does not exist"),
    (lambda d: d, "is a directory"),
    (lambda d: _write(d / "x.md", b"\x00\x01binary\x00"), "is binary"),
    (lambda d: _unreadable(d / "locked.md"), "cannot be read"),
    (lambda d: _write(d / "x.docx", b"PK\x03\x04"), "unsupported type"),
    (lambda d: _write(d / "big.md", b"a" * 5000), "over the limit"),
    (lambda d: _write(d / "empty.md", b"  \n"), "is empty"),
    (lambda d: _write(d / "fake.pdf", b"hello"), "is not a PDF"),
])
def test_bad_documents_raise_one_clear_error_and_write_nothing(tight: LayeredMemory, tmp_path: Path, make, match: str) -> None:
    source = make(tmp_path)
    with pytest.raises(InvalidInputError, match=match) as err:
        tight.documents.index_document(source)
    assert err.value.field == "source" and err.value.fix  # names the value, the rule and the fix
    assert tight.records.count_docs(tight.tenant_id, CHUNKS) == 0 and tight.records.count_docs(tight.tenant_id, SOURCES) == 0


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _unreadable(path: Path) -> Path:
    """A file whose read fails: mode 000 for a normal user; as root (who reads any mode) a link to a file
    the kernel refuses to read whole."""
    import os

    if os.geteuid() != 0:
        _write(path, b"# Secret\n\ntext\n").chmod(0)
    else:
        path.symlink_to("/proc/self/mem")
    return path


def test_bulk_checks_every_source_before_writing(mem: LayeredMemory, tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_text(RUNBOOK)
    with pytest.raises(InvalidInputError, match="does not exist"):
        mem.documents.index_documents([good, tmp_path / "nope.md"])
    assert mem.documents.list_documents() == []
    seen: list[tuple[int, int]] = []
    out = mem.documents.index_documents([good, "Printers are on floor 3.\n"], progress=lambda d, t: seen.append((d, t)))
    assert [d.status for d in out] == ["indexed", "indexed"] and seen == [(1, 2), (2, 2)]


@pytest.mark.parametrize("query, kwargs, match", [
    ("", {}, "query=''"), ("   ", {}, "must be a non-empty string"), (None, {}, "query=None"),
    ("x", {"k": 0}, "k=0"), ("x", {"route": "fuzzy"}, "route='fuzzy': must be one of hybrid, bm25, dense"), ("x", {"k": 101}, "from 1 to 100"),
    ("x", {"filters": "ops"}, "filters='ops'"),
])
def test_bad_queries(tight: LayeredMemory, query, kwargs, match) -> None:
    with pytest.raises(LayeredMemoryError, match=match):
        tight.documents.vector_rag(query, **kwargs)


def test_embedder_failure_leaves_nothing_half_indexed(mem: LayeredMemory, emb: CountingEmbedder, tmp_path: Path) -> None:
    path = tmp_path / "runbook.md"
    path.write_text(RUNBOOK)
    emb.fail = True
    with pytest.raises(RuntimeError):
        mem.documents.index_document(path)
    assert mem.records.count_docs(mem.tenant_id, CHUNKS) == 0 and _points(mem) == 0
    emb.fail = False
    first = mem.documents.index_document(path)
    path.write_text(RUNBOOK + "\n## Paging\n\nPagerDuty rotates weekly.\n")
    emb.fail = True
    with pytest.raises(RuntimeError):
        mem.documents.index_document(path)
    # the old version is intact and the only one visible
    assert mem.records.count_docs(mem.tenant_id, CHUNKS) == first.chunks == _points(mem)
    assert mem.documents.list_documents()[0]["version"] == first.version


def test_index_write_failure_rolls_back_and_crash_is_repaired(mem: LayeredMemory, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "runbook.md"
    path.write_text(RUNBOOK)
    first = mem.documents.index_document(path)
    path.write_text(RUNBOOK.replace("Runbook", "Playbook"))
    store = mem.documents.store
    real = mem.records.put_docs

    def failing(tenant, collection, items):
        if collection == SOURCES:
            raise OSError("disk full")
        return real(tenant, collection, items)

    monkeypatch.setattr(mem.records, "put_docs", failing)
    with pytest.raises(OSError):
        mem.documents.index_document(path)
    monkeypatch.undo()
    assert mem.records.count_docs(mem.tenant_id, CHUNKS) == first.chunks == _points(mem)
    assert mem.records.count_docs(mem.tenant_id, INTENTS) == 0
    # a crash after the new chunks were written (before the commit): the intent's repair drops them
    from layered_memory.index.intents import put_intent

    skey = store.key("d", "docs", str(path.resolve()))
    put_intent(mem.records, mem.tenant_id, "doc", skey=skey, owner=None)
    mem.records.put_docs(mem.tenant_id, CHUNKS, {f"{skey}#deadbeef:00000": {"payload": {"kind": "doc_chunk"}, "text": "half"}})
    mem.sync_index()
    assert mem.records.count_docs(mem.tenant_id, INTENTS) == 0
    assert mem.records.count_docs(mem.tenant_id, CHUNKS) == first.chunks


def test_scope_tenant_docs_shared_private_uploads_private(mem: LayeredMemory) -> None:
    mem.documents.index_document("The office wifi password rotates monthly.", name="wifi.txt")
    mem.for_user("alice").documents.index_document("Alice's wifi note: router admin is on the shelf.", name="alice.txt")
    def sources(h: LayeredMemory) -> set[str]:
        return {x.meta["source"] for x in h.documents.vector_rag("wifi router password", k=20).hits}
    assert sources(mem.for_user("alice")) == {"wifi.txt", "alice.txt"}
    assert sources(mem.for_user("bob")) == {"wifi.txt"}
    assert sources(mem) == {"wifi.txt"}
    assert sources(mem.tenant("other")) == set()
    assert sources(mem.tenant("other").for_user("alice")) == set()
    assert [d["source"] for d in mem.for_user("bob").documents.list_documents()] == []
    assert mem.for_user("bob").documents.delete_document("alice.txt") is False
    assert sources(mem.for_user("alice")) == {"wifi.txt", "alice.txt"}


def test_core_mode_without_vector_index_is_bm25(tmp_path: Path) -> None:
    mem = LayeredMemory.from_stores(SQLiteRecordStore(str(tmp_path / "r.sqlite3")), None, embedder=CountingEmbedder())
    try:
        mem.documents.index_document(RUNBOOK, name="runbook.md")
        mem.for_user("alice").documents.index_document("alice rollback secret", name="a.txt")
        res = mem.documents.vector_rag("helm rollback", k=3)
        assert res.route_used == "bm25" and res.hits[0].meta["citation"] == "Runbook > Deploy > Rollback (lines 9-11)"
        assert all(h.meta["source"] != "a.txt" for h in mem.for_user("bob").documents.vector_rag("rollback secret", k=10).hits)
        assert any(h.meta["source"] == "a.txt" for h in mem.for_user("alice").documents.vector_rag("rollback secret", k=10).hits)
    finally:
        mem.close()


def test_recreate_index_reindexes_documents(tmp_path: Path) -> None:
    mem = LayeredMemory.embedded(tmp_path / "m", embedder=CountingEmbedder())
    mem.documents.index_document(RUNBOOK, name="runbook.md")
    mem.for_user("alice").documents.index_document("alice private doc about rollback", name="a.txt")
    mem.close()
    mem = LayeredMemory.embedded(tmp_path / "m", embedder=CountingEmbedder(), recreate_index=True)
    try:
        assert mem.documents.vector_rag("helm rollback", k=1).hits[0].meta["source"] == "runbook.md"
        assert any(h.meta["source"] == "a.txt" for h in mem.for_user("alice").documents.vector_rag("rollback", k=10).hits)
    finally:
        mem.close()


def test_embedder_missing_falls_back_to_bm25_in_the_index(tmp_path: Path) -> None:
    mem = LayeredMemory.embedded(tmp_path / "m", embedder=None)
    try:
        mem.documents.index_document(RUNBOOK, name="runbook.md")
        res = mem.documents.vector_rag("helm rollback", k=1)
        assert res.route_used == "bm25" and res.fallback_reason and res.hits[0].meta["heading_path"][-1] == "Rollback"
    finally:
        mem.close()


def test_context_includes_documents_when_asked(mem: LayeredMemory) -> None:
    mem.documents.index_document(RUNBOOK, name="runbook.md")
    mem.for_user("bob").documents.index_document("Bob's private rollback notes", name="bob.md")
    mem.add_message(message_id="1", chat_id="c1", user_id="alice", content="how do I roll back the release with helm?")
    plain = mem.get_context_for_user("alice", "c1")
    assert all(m.kind != "documents" for m in plain)
    ctx = mem.get_context_for_user("alice", "c1", include_documents=True)
    block = ctx[-1]
    assert block.kind == "documents" and block.role == "system"
    assert block.content.startswith("Relevant documents:\n- [Runbook > Deploy > Rollback (lines 9-11)] ### Rollback")
    assert "Bob's private" not in block.content
    small = mem.get_context_for_user("alice", "c1", include_documents=True, max_tokens=30)
    assert sum(mem.count_tokens(m.content) + 4 for m in small) <= 30
    with pytest.raises(InvalidInputError, match="include_documents"):
        mem.get_context_for_user("alice", "c1", include_documents="yes")


def test_one_line_text_is_text_and_path_like_strings_are_paths(tight: LayeredMemory, tmp_path: Path) -> None:
    from layered_memory.documents.parse import looks_like_path

    assert looks_like_path(str(tmp_path)) and looks_like_path("docs/guide.md") and looks_like_path("notes.md")
    assert not looks_like_path("Read README.md before you deploy") and not looks_like_path("line one\nline two.md")
    with pytest.raises(InvalidInputError, match="does not exist"):
        tight.documents.index_document("docs/missing-guide.md")
