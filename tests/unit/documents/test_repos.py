"""``mem.documents.index_repo`` / ``search_repos``: git trees chunked by syntax, incremental by blob id (issue 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from documents_support import CountingEmbedder, git, make_repo, write

from layered_memory import LayeredMemory
from layered_memory.documents.syntax import chunk_code, parser_name
from layered_memory.errors import InvalidInputError
from layered_memory.retrieval.analyzer import Analyzer

USERS_PY = '''"""User lookups."""

import db


def getUserById(user_id):
    """Load one user by its id from the primary database."""
    return db.users.get(user_id)


class UserCache:
    """An LRU cache in front of the users table."""

    def __init__(self, size=128):
        self.size = size

    def invalidate(self, user_id):
        """Drop one cached user after an update."""
        self.entries.pop(user_id, None)
'''
ROUTES_TS = '''import { Router } from "express";

export function registerRoutes(router: Router) {
  router.get("/health", (req, res) => res.send("ok"));
}

export const parseToken = (header: string) => header.replace("Bearer ", "");
'''
README = "# Shop\n\nA demo shop.\n\n## Setup\n\nRun `make dev` to start the stack.\n"


@pytest.fixture
def emb() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def mem(tmp_path: Path, emb: CountingEmbedder):
    m = LayeredMemory.embedded(tmp_path / "mem", embedder=emb)
    yield m
    m.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "shop", {
        "src/users.py": USERS_PY, "web/routes.ts": ROUTES_TS, "README.md": README, "assets/logo.png": b"\x89PNG\r\n\x00\x00",
        "data/blob.txt": "x" * 3000, ".gitignore": "*.log\n", "debug.log": "untracked secret",
    })


def test_python_chunks_by_definition_with_symbols() -> None:
    chunks = chunk_code(USERS_PY, "python", 2400)
    got = [(c.symbol, c.kind, c.line_start, c.line_end) for c in chunks]
    assert got == [(None, "module", 1, 3), ("getUserById", "function", 6, 8), ("UserCache", "class", 11, 19)]
    small = chunk_code(USERS_PY, "python", 200)  # the class is too big: header + one chunk per method
    assert [(c.symbol, c.kind) for c in small][2:] == [("UserCache", "class"), ("UserCache.__init__", "method"), ("UserCache.invalidate", "method")]
    assert parser_name("python") in ("tree-sitter", "ast")


def test_typescript_and_unknown_languages() -> None:
    chunks = chunk_code(ROUTES_TS, "typescript", 2400)
    assert [(c.symbol, c.kind) for c in chunks if c.symbol] == [("registerRoutes", "function"), ("parseToken", "function")]
    lines = chunk_code("key: value\n" * 400, "yaml", 500)
    assert all(c.kind == "lines" and len(c.text) <= 500 for c in lines)
    assert lines[0].line_start == 1 and lines[-1].line_end == 400


def test_index_search_and_cite_path_lines(mem: LayeredMemory, repo: Path, tmp_path: Path) -> None:
    report = mem.documents.index_repo(repo)
    assert (report.repo, report.files, report.indexed) == ("shop", 6, 5)  # debug.log is ignored (untracked)
    assert report.skipped["binary"] == 1 and report.chunks >= 6
    res = mem.documents.search_repos("load a user by id from the database", k=3)
    top = res.hits[0]
    assert top.meta["citation"] == "src/users.py:6-8" and top.meta["symbol"] == "getUserById"
    assert (top.meta["repo"], top.meta["language"], top.meta["symbol_kind"]) == ("shop", "python", "function")
    assert res.route_used == "hybrid"
    ts = mem.documents.search_repos("parse bearer token header", language="typescript", k=1).hits[0]
    assert ts.meta["citation"] == "web/routes.ts:7" and ts.meta["symbol"] == "parseToken"
    md = mem.documents.search_repos("start the stack", path="README.md", k=1).hits[0]
    assert md.meta["language"] == "markdown" and md.meta["symbol"] == "Shop > Setup"
    assert {h.meta["path"] for h in mem.documents.search_repos("user", path="src", k=10).hits} == {"src/users.py"}
    assert mem.documents.search_repos("user", repo="other", k=10).hits == []
    assert mem.documents.list_repos()[0]["files"] == 5
    assert not any("untracked" in h.text for h in mem.documents.search_repos("untracked secret", k=20).hits)


def test_identifier_parts_match(mem: LayeredMemory, repo: Path) -> None:
    mem.documents.index_repo(repo)
    res = mem.documents.search_repos("get user", k=5)
    assert res.hits[0].meta["symbol"] == "getUserById"
    assert mem.documents.search_repos("getUserById", k=1).hits[0].meta["symbol"] == "getUserById"
    terms = Analyzer().terms("getUserById")
    assert terms[0] == "getuserbyid" and {"get", "user", "id"} <= set(terms)


def test_incremental_reindex_by_blob_id(mem: LayeredMemory, emb: CountingEmbedder, repo: Path) -> None:
    mem.documents.index_repo(repo)
    before = len(emb.texts)
    again = mem.documents.index_repo(repo)
    assert (again.indexed, again.unchanged, again.removed, len(emb.texts)) == (0, 5, 0, before)
    write(repo, {"src/users.py": USERS_PY.replace("primary database", "read replica")})  # modified, not staged
    changed = mem.documents.index_repo(repo)
    assert (changed.indexed, changed.unchanged) == (1, 4)
    embedded = emb.texts[before:]
    assert embedded and all("src/users.py" in t for t in embedded)  # only the changed file was embedded
    assert "read replica" in mem.documents.search_repos("read replica", k=1).hits[0].text
    assert not any("primary database" in h.text for h in mem.documents.search_repos("primary database", k=10).hits)
    git(repo, "rm", "-q", "web/routes.ts")
    gone = mem.documents.index_repo(repo)
    assert gone.removed == 1
    assert mem.documents.search_repos("parse token", language="typescript").hits == []


def test_include_exclude_and_size_limit(tmp_path: Path, repo: Path) -> None:
    from layered_memory.config import LayeredMemorySettings

    settings = LayeredMemorySettings()
    settings.documents.max_file_bytes = 2000
    mem = LayeredMemory.embedded(tmp_path / "m2", embedder=CountingEmbedder(), settings=settings)
    try:
        only_py = mem.documents.index_repo(repo, include=["*.py"])
        assert (only_py.files, only_py.indexed) == (1, 1)
        full = mem.documents.index_repo(repo, exclude=["web/*"])
        assert full.skipped["too_large"] == 1 and full.indexed == 2 and full.unchanged == 1  # README, .gitignore new; users.py kept
        assert {h.meta["path"] for h in mem.documents.search_repos("router health", k=20).hits} == {"src/users.py", "README.md", ".gitignore"}
        narrowed = mem.documents.index_repo(repo, include=["*.md"])
        assert narrowed.removed == 2  # users.py and .gitignore no longer included: their chunks go
    finally:
        mem.close()


def test_bad_repo_paths(mem: LayeredMemory, tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    for path, match in [(tmp_path / "nope", "does not exist"), (plain, "is not a git working tree"),
                        (repo / "README.md", "is not a directory"), ("", "must be the path")]:
        with pytest.raises(InvalidInputError, match=match) as err:
            mem.documents.index_repo(path)
        assert err.value.field == "path"
    with pytest.raises(InvalidInputError, match="glob patterns"):
        mem.documents.index_repo(repo, include=[1])
    with pytest.raises(InvalidInputError, match="query"):
        mem.documents.search_repos("  ")
    other = make_repo(tmp_path / "x" / "shop", {"a.py": "x = 1\n"})
    mem.documents.index_repo(repo)
    with pytest.raises(InvalidInputError, match="already indexed from"):
        mem.documents.index_repo(other)
    assert mem.documents.index_repo(other, name="shop2").indexed == 1


def test_private_repos_and_tenants(mem: LayeredMemory, repo: Path) -> None:
    mem.for_user("alice").documents.index_repo(repo)
    assert mem.for_user("alice").documents.search_repos("user by id", k=1).hits
    assert mem.for_user("bob").documents.search_repos("user by id", k=10).hits == []
    assert mem.documents.search_repos("user by id", k=10).hits == []
    assert mem.tenant("t2").for_user("alice").documents.search_repos("user by id", k=10).hits == []
    assert mem.for_user("bob").documents.delete_repo("shop") == 0
    assert mem.for_user("alice").documents.search_repos("user by id", k=1).hits
    assert mem.for_user("alice").documents.delete_repo("shop") == 5
    assert mem.for_user("alice").documents.search_repos("user by id", k=10).hits == []
