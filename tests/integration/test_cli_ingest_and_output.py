"""Issue 18.10: ingest errors name the right line (blank lines counted), per line, with the JSON error and the
line; duplicates are not counted as ingested; help texts describe formats, not seeds; `| head` is quiet."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from layered_memory.cli import main


def row(mid: str, content: str = "hello") -> str:
    return json.dumps({"message_id": mid, "chat_id": "c1", "user_id": "u1", "content": content})


@pytest.fixture
def ingest(tmp_path):
    def run(*lines: str):
        path = tmp_path / "chat.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return CliRunner().invoke(main, ["--path", str(tmp_path / "store"), "--embedder", "none", "ingest", str(path)])

    return run


def test_errors_name_the_line_of_the_file_counting_blank_lines(ingest, tmp_path):
    result = ingest(row("a"), "", "", row("b", "   "))
    assert result.exit_code == 2 and result.stderr.startswith("error: line 4: content=")
    bad = ingest(row("a"), "", '{"message_id": "b", "content": "x"')
    assert bad.exit_code == 2
    assert bad.stderr.startswith("error: line 3: not JSON (Expecting ',' delimiter at column 35): '{\"message_id\"")


def test_nothing_is_written_when_a_later_line_is_bad(ingest, tmp_path):
    assert ingest(*[row(f"m{i}") for i in range(5)], "[1, 2]").exit_code == 2
    result = CliRunner().invoke(main, ["--path", str(tmp_path / "store"), "--embedder", "none", "search", "hello"])
    assert result.exit_code == 0 and "total_found=0" in result.output


def test_duplicates_are_not_counted_as_ingested(ingest):
    assert ingest(row("a"), "", row("a"), row("b")).output.startswith("ingested 2 messages (1 already stored, skipped): stored in ")
    assert ingest(row("a"), row("b"), row("c")).output.startswith("ingested 1 messages (2 already stored, skipped): stored in ")


def test_help_texts_describe_the_formats_not_the_seeds():
    for command in (["ingest"], ["search"], ["agent"], ["context"], ["doctor"]):
        out = CliRunner().invoke(main, [*command, "--help"]).output
        assert "seed " not in out.lower(), (command, out)
    assert '"message_id": "m1"' in CliRunner().invoke(main, ["ingest", "--help"]).output


def test_output_into_a_closed_pipe_is_quiet(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.run(f"{sys.executable} -m layered_memory.cli --embedder none demo | head -1", shell=True,
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.stdout.startswith("Stored 20 messages") and "Broken pipe" not in proc.stderr, proc.stderr


def test_errors_name_the_flag_and_suggest_a_flag(ingest, tmp_path):
    assert ingest(row("a")).exit_code == 0
    store = ["--path", str(tmp_path / "store"), "--embedder", "none"]
    cases = [(["search", "x", "--k", "0"], "error: --k 0: must be an integer from 1 to 100; e.g. --k 10"),
             (["context", "u1", "c1", "--max-tokens", "0"], "error: --max-tokens 0: "),
             (["search", "x", "--filter", "colour=red"], "error: --filter 'colour': is not a known filter")]
    for args, start in cases:
        result = CliRunner().invoke(main, [*store, *args])
        assert result.exit_code == 2 and result.stderr.startswith(start), result.stderr
        assert "k=10" not in result.stderr and "max_tokens=" not in result.stderr
