"""`layered-memory docs ...` / `layered-memory repo ...`: index, search, errors as one line with exit code 2."""

from __future__ import annotations

import json

import pytest

from layered_memory import LayeredMemory
from click.testing import CliRunner
from documents_support import make_repo, write

from layered_memory.cli import main


@pytest.fixture
def run(tmp_path):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, ["--path", str(tmp_path / "store"), "--embedder", "none", *args], catch_exceptions=False)

    return invoke


@pytest.mark.parametrize("command", [["docs"], ["docs", "index"], ["docs", "search"], ["repo", "index"], ["repo", "search"]])
def test_help(command):
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


def test_docs_index_search_list_delete(run, tmp_path):
    folder = tmp_path / "handbook"
    write(folder, {"rollback.md": "# Runbook\n\n## Rollback\n\nUse helm rollback app.\n", "vpn.txt": "VPN host is vpn.example.com\n",
                   ".hidden/skip.md": "# Skip\n\nnot indexed\n", "image.png": b"\x89PNG"})
    first = run("docs", "index", str(folder), "--collection", "ops", "--meta", "team=ops")
    assert first.exit_code == 0, first.output
    assert "2 indexed, 0 replaced, 0 unchanged" in first.output
    again = run("docs", "index", str(folder), "--collection", "ops", "--meta", "team=ops")
    assert again.stdout.splitlines()[-1] == "0 indexed, 0 replaced, 2 unchanged; 0 chunks written"
    found = run("docs", "search", "helm rollback", "-k", "1", "--json")
    data = json.loads(found.output[: found.output.rindex("}") + 1])
    assert data["hits"][0]["meta"]["citation"] == "Runbook > Rollback (lines 3-5)" and data["route_used"] == "bm25"
    assert "Runbook > Rollback (lines 3-5)" in run("docs", "search", "helm rollback", "--collection", "ops").output
    listed = run("docs", "list").output
    assert "rollback.md" in listed and "skip.md" not in listed
    assert run("docs", "delete", str(folder / "vpn.txt"), "--collection", "ops").output.strip() == "deleted"
    assert "vpn.txt" not in run("docs", "list").output


def test_repo_index_and_search(run, tmp_path):
    repo = make_repo(tmp_path / "shop", {"users.py": "def getUserById(user_id):\n    return db.get(user_id)\n", "logo.png": b"\x89PNG\x00"})
    out = run("repo", "index", str(repo))
    assert out.exit_code == 0 and "2 files, 1 indexed, 0 unchanged" in out.output and "skipped 1 binary" in out.output
    assert "0 indexed, 1 unchanged" in run("repo", "index", str(repo)).output
    found = run("repo", "search", "get user by id", "--language", "python")
    assert "users.py:1-2  [getUserById]" in found.output


@pytest.mark.parametrize("args, message", [
    (("docs", "index", "/nonexistent/x.md"), "source='/nonexistent/x.md': does not exist"),
    (("docs", "search", " "), "' ': must be a non-empty string"),
    (("repo", "index", "/"), "is not a git working tree"),
])
def test_errors_are_one_line_exit_2(tmp_path, args, message):
    store = str(tmp_path / "store")
    LayeredMemory.embedded(store, embedder="none").close()  # a store there: read-only commands refuse a path without one
    result = CliRunner().invoke(main, ["--embedder", "none", "--path", store, *args])
    assert result.exit_code == 2 and message in result.output


def test_index_commands_draw_files_chunks_embeddings_bars(run, tmp_path):
    folder = tmp_path / "notes"
    write(folder, {"a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbeta\n"})
    shown = run("docs", "index", str(folder))
    assert all(f"{stage}:" in shown.stderr for stage in ("files", "chunks", "embeddings")) and "2/2" in shown.stderr
    assert run("docs", "index", str(folder), "--quiet").stderr == ""
    repo = make_repo(tmp_path / "shop", {"users.py": "def get_user(user_id):\n    return db.get(user_id)\n", "b.py": "X = 1\n"})
    shown = run("repo", "index", str(repo))
    assert all(f"{stage}:" in shown.stderr for stage in ("files", "chunks", "embeddings"))
    assert run("repo", "index", str(repo), "--quiet").stderr == ""


def test_progress_stages_of_the_api(tmp_path):
    from layered_memory.progress import progress_to
    from layered_memory.testing import HashEmbedder

    mem = LayeredMemory.embedded(tmp_path / "m", embedder=HashEmbedder())
    seen: dict[str, list[tuple[int, int | None]]] = {}
    with progress_to(lambda stage, done, total: seen.setdefault(stage, []).append((done, total))):
        mem.documents.index_documents(["# A\n\nalpha\n", "# B\n\nbeta\n\n## C\n\ngamma\n"], format="markdown")
    assert seen["files"] == [(1, 2), (2, 2)]
    assert seen["chunks"][-1][0] == seen["embeddings"][-1][0] >= 2
    repo = make_repo(tmp_path / "shop", {"users.py": "def get_user(user_id):\n    return db.get(user_id)\n"})
    seen.clear()
    with progress_to(lambda stage, done, total: seen.setdefault(stage, []).append((done, total))):
        mem.documents.index_repo(repo)
    assert seen["files"][-1] == (1, 1) and seen["embeddings"][-1][0] == seen["chunks"][-1][0] >= 1
    mem.close()


def test_progress_in_a_stderr_that_is_not_a_terminal_is_plain_lines(run, tmp_path):
    """Issue 24: bars redraw with carriage returns and escape codes; a pipe or a log gets one line per stage."""
    folder = tmp_path / "notes"
    write(folder, {f"{i}.md": f"# N{i}\n\nnote {i}\n" for i in range(3)})
    shown = run("docs", "index", str(folder))
    assert "\r" not in shown.stderr and "\x1b" not in shown.stderr, repr(shown.stderr)
    assert {"files: 3/3", "chunks: 3", "embeddings: 0"} <= set(shown.stderr.splitlines())  # embedder none: nothing embedded
