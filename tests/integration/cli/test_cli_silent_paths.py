"""Issue 18.5: no silent wrong paths in the CLI. A Qdrant URL without a Redis URL goes to that Qdrant server
(records stay embedded under --path), a read-only command refuses a path that holds no store, a misspelt
LAYERED_MEMORY_* variable and a bad value are one `error:` line with exit code 2, never a traceback."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from layered_memory.cli import main

ROW = {"message_id": "m1", "chat_id": "c1", "user_id": "u1", "content": "payments pod crash"}


@pytest.fixture
def runner(monkeypatch):
    for var in [v for v in os.environ if v.startswith("LAYERED_MEMORY_") and not v.startswith("LAYERED_MEMORY_TEST_")]:
        monkeypatch.delenv(var)
    return CliRunner()


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.stderr
    return lines[0]


def test_read_only_commands_refuse_a_path_without_a_store(runner, tmp_path):
    missing = tmp_path / "stroe"  # a typo of "store"
    for args in (["search", "crash"], ["context", "u1", "c1"], ["doctor"], ["reindex"], ["optimize"],
                 ["agent", "list"], ["agent", "search", "u1", "coder", "x"]):
        line = one_error_line(runner.invoke(main, ["--path", str(missing), "--embedder", "none", *args]))
        assert f"--path {missing}: no layered-memory store there" in line and "ingest" in line
    assert not missing.exists()  # nothing was created


def test_writing_commands_create_the_store(runner, tmp_path):
    data = tmp_path / "chat.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    store = tmp_path / "store"
    assert runner.invoke(main, ["--path", str(store), "--embedder", "none", "ingest", str(data)]).exit_code == 0
    found = runner.invoke(main, ["--path", str(store), "--embedder", "none", "search", "payments", "--json"])
    assert json.loads(found.output)["hits"][0]["id"] == "m1"


def test_qdrant_url_without_redis_url_uses_that_server_not_the_embedded_index(runner, tmp_path):
    data = tmp_path / "chat.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    store = tmp_path / "store"
    result = runner.invoke(main, ["--path", str(store), "--embedder", "none", "--qdrant-url", "http://127.0.0.1:9",
                                  "ingest", str(data)])
    line = one_error_line(result)
    assert "127.0.0.1:9" in line or "Qdrant" in line
    assert not (store / "vectors").exists()  # no silent fallback to the embedded Qdrant Edge


@pytest.mark.parametrize("url, hint", [("htp://localhost:6333", "did you mean http://localhost:6333?"),
                                       ("httsp://q.example:6333", "did you mean https://q.example:6333?"),
                                       ("ftp://localhost:6333", "did you mean http://localhost:6333?"),
                                       ("redis://localhost:6333", "e.g. http://localhost:6333")])
def test_a_misspelt_qdrant_scheme_is_one_line_and_creates_nothing(runner, tmp_path, url, hint):
    """Issue 24: qdrant-client's bare "ValueError: Unknown scheme: htp" reached the shell as a traceback."""
    from layered_memory import LayeredMemory
    from layered_memory.errors import ConfigurationError
    from layered_memory.stores.qdrant_server import QdrantVectorIndex

    data = tmp_path / "chat.jsonl"
    data.write_text(json.dumps(ROW) + "\n")
    store = tmp_path / "store"
    line = one_error_line(runner.invoke(main, ["--path", str(store), "--embedder", "none", "--qdrant-url", url, "ingest", str(data)]))
    assert f"qdrant url {url!r}: unknown scheme" in line and "starts with http:// or https://" in line and hint in line
    assert not store.exists()  # refused before the records opened
    for make in (lambda: QdrantVectorIndex.from_url(url),
                 lambda: LayeredMemory.from_urls(redis_url="redis://127.0.0.1:9/0", qdrant_url=url)):
        with pytest.raises(ConfigurationError, match=f"unknown scheme .*{hint.replace('?', '[?]')}"):
            make()


def test_a_misspelt_variable_is_named_with_the_right_spelling(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("LAYERED_MEMORY_MEMROY__SHORT_TERM_WINDOW", "5")
    line = one_error_line(runner.invoke(main, ["--path", str(tmp_path), "--embedder", "none", "search", "x"]))
    assert "LAYERED_MEMORY_MEMROY__SHORT_TERM_WINDOW is not a layered-memory setting" in line
    assert "did you mean LAYERED_MEMORY_MEMORY__SHORT_TERM_WINDOW" in line


@pytest.mark.parametrize("var, value, words", [
    ("LAYERED_MEMORY_MEMORY__SHORT_TERM_WINDOW", "ten", "valid integer"),
    ("LAYERED_MEMORY_SQLITE__SYNCHRONOUS", "sometimes", "NORMAL"),
])
def test_a_bad_value_is_one_error_line(runner, tmp_path, monkeypatch, var, value, words):
    monkeypatch.setenv(var, value)
    line = one_error_line(runner.invoke(main, ["--path", str(tmp_path), "--embedder", "none", "search", "x"]))
    assert line.startswith(f"error: {var}={value!r}: ") and words in line and "unset" in line
