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
    assert not (tmp_path / "store").exists()  # not even an empty store (issue 24)


def test_duplicates_are_not_counted_as_ingested(ingest):
    assert ingest(row("a"), "", row("a"), row("b")).output.startswith("ingested 2 messages (1 already stored, skipped): stored in ")
    assert ingest(row("a"), row("b"), row("c")).output.startswith("ingested 1 message (2 already stored, skipped): stored in ")


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


# -- issue 24: smaller things seen from the CLI ---------------------------------------------------------------
def test_a_jsonl_file_with_a_byte_order_mark_is_read(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (row("a") + "\n" + row("b") + "\n").encode())  # as Windows editors save UTF-8
    result = CliRunner().invoke(main, ["--path", str(tmp_path / "store"), "--embedder", "none", "ingest", str(path)])
    assert result.exit_code == 0 and result.output.startswith("ingested 2 messages"), result.output + result.stderr


def test_a_refused_ingest_creates_no_store(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(row("a") + "\n" + json.dumps({"message_id": "b"}) + "\n")
    store = tmp_path / "store"
    result = CliRunner().invoke(main, ["--path", str(store), "--embedder", "none", "ingest", str(path)])
    assert result.exit_code == 2 and result.stderr.startswith("error: line 2: chat_id=None: is required")
    assert not store.exists()


def test_one_message_is_one_message(ingest):
    assert ingest(row("a")).output.startswith("ingested 1 message: stored in ")


def test_progress_bars_stay_out_of_a_stderr_that_is_not_a_terminal(ingest):
    result = ingest(*[row(f"m{i}", f"message number {i}") for i in range(600)])  # over the 500 rows bars start at
    assert result.exit_code == 0 and result.output.startswith("ingested 600 messages")
    assert "\x1b" not in result.stderr and "\r" not in result.stderr and "msg/s]" not in result.stderr, repr(result.stderr[:200])


def test_a_lone_hit_scores_as_the_best_candidate_not_zero(tmp_path):
    """Issue 24: one hit of a hybrid search scored 0.0000 (the fused score rescaled over one candidate)."""
    from layered_memory import LayeredMemory
    from layered_memory.testing import HashEmbedder

    with LayeredMemory.embedded(tmp_path / "store", embedder=HashEmbedder()) as mem:
        mem.add_message(message_id="a", chat_id="c1", user_id="u1", content="the payments pod crashed at noon")
        mem.flush()
        lone = mem.search("payments pod", k=5)
        assert lone.route_used == "hybrid" and [h.id for h in lone.hits] == ["a"]
        assert lone.hits[0].score >= 1.0  # as the best of many candidates is rescaled to 1 before the signals
        mem.add_message(message_id="b", chat_id="c2", user_id="u2", content="payments are due on friday")
        mem.flush()
        best = mem.search("payments pod", k=5).hits[0]
        assert best.id == "a" and best.score >= 1.0


def test_doctor_and_status_say_what_they_mean(ingest, tmp_path):
    assert ingest(row("a")).exit_code == 0
    store = ["--path", str(tmp_path / "store"), "--embedder", "none"]
    for args in (["doctor"], ["doctor", "--repair"]):
        last = CliRunner().invoke(main, [*store, *args]).output.strip().splitlines()[-1]
        assert last.endswith("ok: the vector index and the topic tier agree with the record store"), last
    status = CliRunner().invoke(main, [*store, "status"]).output
    assert "not built in this process" not in status and "state unknown (no build since this process started)" in status


def test_no_help_text_mentions_a_seed():
    """Every command and sub-command's --help (the seeds are the project's specification, not the user's)."""
    def walk(cmd, path):
        yield path
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from walk(sub, [*path, name])

    for path in walk(main, []):
        out = CliRunner().invoke(main, [*path, "--help"]).output
        assert "seed " not in out.lower(), (path, out)


def test_max_tokens_0_names_the_flag_not_none(ingest, tmp_path):
    assert ingest(row("a")).exit_code == 0
    result = CliRunner().invoke(main, ["--path", str(tmp_path / "store"), "--embedder", "none", "context", "u1", "c1", "--max-tokens", "0"])
    assert result.exit_code == 2 and "None" not in result.stderr
    assert result.stderr.strip() == "error: --max-tokens 0: must be an int >= 1 (or leave --max-tokens out); e.g. --max-tokens 2000"
