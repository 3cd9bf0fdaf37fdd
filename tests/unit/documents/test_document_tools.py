"""The document tools (vector_rag, search_repos, index_document, index_repo): shared texts, both adapters."""

from __future__ import annotations

from pathlib import Path

import pytest
from documents_support import make_repo

from langchain_layered_memory import create_document_tools
from layered_memory import LayeredMemory
from layered_memory.documents import tools as dt
from layered_memory.testing import HashEmbedder
from llamaindex_layered_memory import layered_document_tools

RUNBOOK = "# Runbook\n\n## Rollback\n\nUse `helm rollback app` to return to the previous release.\n"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("tools")
    mem = LayeredMemory.embedded(base / "mem", embedder=HashEmbedder())
    docs = base / "docs"
    docs.mkdir()
    (docs / "runbook.md").write_text(RUNBOOK)
    (base / "secret.md").write_text("# Secret\n\nroot password hunter2\n")
    repo = make_repo(docs / "shop", {"users.py": "def getUserById(user_id):\n    return db.get(user_id)\n"})
    yield mem, docs, base, repo
    mem.close()


def _both(mem: LayeredMemory, roots: list[Path] | None, user_id: str | None = "u1"):
    lc = {t.name: t for t in create_document_tools(mem, user_id=user_id, roots=roots)}
    li = {t.metadata.name: t for t in layered_document_tools(mem, user_id, roots=roots)}
    return lc, li


def test_names_descriptions_schemas_match(world) -> None:
    mem = world[0]
    lc, li = _both(mem, None)
    assert list(lc) == list(li) == list(dt.DOCUMENT_TOOL_NAMES)
    for name in dt.DOCUMENT_TOOL_NAMES:
        assert lc[name].description == li[name].metadata.description
        assert lc[name].args_schema.model_json_schema() == li[name].metadata.fn_schema.model_json_schema()


def test_index_and_search_through_both_adapters(world) -> None:
    mem, docs, _, repo = world
    lc, li = _both(mem, [docs])
    out = lc["index_document"].invoke({"source": str(docs / "runbook.md")})
    assert out.startswith("Indexed document 'Runbook'") and "1 chunk(s)" in out
    assert "is unchanged: nothing to do." in li["index_document"].call(source=str(docs / "runbook.md")).content
    text = lc["vector_rag"].invoke({"query": "how to roll back a release"})
    assert text == li["vector_rag"].call(query="how to roll back a release").content
    assert text.startswith("Found 1 relevant passage(s):\n\n### Result 1\n**Source:** Runbook > Rollback (lines 3-5)\n")
    assert "helm rollback app" in text
    out = li["index_repo"].call(path=str(repo)).content
    assert out.startswith("Indexed repository 'shop'") and "1 file(s) indexed" in out
    code = lc["search_repos"].invoke({"query": "get user by id", "language": "python", "k": 1})
    assert code == li["search_repos"].call(query="get user by id", language="python", k=1).content
    assert "**Location:** users.py:1-2" in code and "**Symbol:** getUserById (function)" in code and "```python" in code
    # the user's uploads are private: another user's tools do not see them
    other, _ = _both(mem, None, user_id="u2")
    assert other["vector_rag"].invoke({"query": "helm rollback"}) == dt.NO_DOCUMENTS_FOUND


def test_errors_are_texts(world) -> None:
    mem, docs, base, _ = world
    lc, li = _both(mem, [docs])
    assert lc["vector_rag"].invoke({"query": "  "}) == dt.QUERY_REQUIRED == li["vector_rag"].call(query="").content
    assert lc["search_repos"].invoke({}) == dt.QUERY_REQUIRED
    assert lc["index_document"].invoke({}) == dt.SOURCE_REQUIRED
    assert lc["index_repo"].invoke({"path": ""}) == dt.PATH_REQUIRED
    assert lc["vector_rag"].invoke({"query": "x", "k": 0}).startswith(dt.RAG_ERROR_PREFIX + "k=0: must be an integer")
    assert lc["vector_rag"].invoke({"query": "x", "filters": {"user_id": "u2"}}).startswith(dt.RAG_ERROR_PREFIX + "filters='user_id': is not a document filter")
    out = lc["index_document"].invoke({"source": str(base / "secret.md")})  # outside the roots: refused, never read
    assert out.startswith(dt.INDEX_DOCUMENT_ERROR_PREFIX) and "outside the folders this agent may read" in out
    assert "../secret.md" in lc["index_document"].invoke({"source": str(docs / "../secret.md")})
    out = lc["index_document"].invoke({"source": str(docs / "missing.md")})
    missing = docs / "missing.md"
    assert out == dt.INDEX_DOCUMENT_ERROR_PREFIX + f"source='{missing}': does not exist; check the path (relative paths start at the current directory)"
    nothing, _ = _both(mem, None)
    assert "no document roots are configured" in nothing["index_repo"].invoke({"path": str(docs)})
    assert "no document roots are configured" in nothing["index_document"].invoke({"source": str(docs / "runbook.md")})
    assert nothing["index_document"].invoke({"source": "Team lunch is on Fridays.", "name": "lunch.txt"}).startswith("Indexed document")
    out = lc["index_repo"].invoke({"path": str(docs)})
    assert out.startswith(dt.INDEX_REPO_ERROR_PREFIX) and "is not a git working tree" in out
    none_lc = create_document_tools(None)
    assert all(t.invoke({"query": "x", "source": "x", "path": "x"}) == dt.DOCUMENTS_NOT_CONFIGURED for t in none_lc)
