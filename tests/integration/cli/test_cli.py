"""The `layered-memory` command: each subcommand, --help, and one-line errors with exit code 2."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from layered_memory.cli import main

MESSAGES = [
    {"message_id": "m1", "chat_id": "telegram:1", "user_id": "u1", "user_name": "Anna", "content": "Our payments pod fails with CrashLoopBackOff",
     "create_time": "2024-05-02T09:05:00Z"},
    {"message_id": "m2", "chat_id": "telegram:1", "user_id": "u1", "role": "assistant", "content": "Check kubectl logs --previous",
     "create_time": "2024-05-02T09:06:00Z", "reply_message_id": "m1"},
    {"message_id": "m3", "chat_id": "feishu:9", "user_id": "u1", "content": "帮我订去上海的高铁票", "create_time": "2024-05-03T08:00:00Z"},
]


@pytest.fixture
def run(tmp_path):
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(main, ["--path", str(tmp_path / "store"), "--embedder", "none", *args], catch_exceptions=False)

    return invoke


@pytest.mark.parametrize("command", [[], ["demo"], ["ingest"], ["search"], ["context"], ["reindex"], ["optimize"], ["status"], ["agent"]])
def test_help(command):
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


def test_demo_runs_on_bm25_only():
    result = CliRunner().invoke(main, ["--embedder", "none", "demo"])
    assert result.exit_code == 0, result.output
    assert "Previous context summary:" in result.output and "高铁票" in result.output


def test_ingest_search_context_reindex(run, tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m, ensure_ascii=False) for m in MESSAGES) + "\n", encoding="utf-8")
    assert "ingested 3 messages" in run("ingest", str(path)).output
    out = run("search", "payments crash", "--json", "--filter", "role=user").output
    result = json.loads(out)
    assert result["route_used"] == "bm25" and [h["id"] for h in result["hits"]] == ["m1"]
    assert result["hits"][0]["meta"]["author"] == "Anna"
    ctx = json.loads(run("context", "u1", "telegram:1", "--json").output)
    assert [c["content"] for c in ctx] == [MESSAGES[0]["content"], MESSAGES[1]["content"]]
    assert "reindexed 3 records" in run("reindex").output
    assert "recreated" in run("reindex", "--recreate").output
    assert [h["id"] for h in json.loads(run("search", "高铁票", "--json").output)["hits"]] == ["m3"]


@pytest.mark.parametrize(
    "line, words",
    [
        ('{"message_id": "x", "chat_id": "c", "user_id": "u", "content": "  "}', "content"),
        ('{"message_id": "x", "chat_id": "c", "user_id": "u", "content": "hi", "create_time": "2024-01-01T10:00:00"}', "time zone"),
        ("not json", "line 1: not JSON"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(run, tmp_path, line, words):
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["--path", str(tmp_path / "s"), "--embedder", "none", "ingest", str(path)])
    assert result.exit_code == 2 and words in result.output
    assert len([row for row in result.output.splitlines() if row.strip()]) == 1


def test_search_errors_exit_2(run, tmp_path):
    data = tmp_path / "one.jsonl"
    data.write_text(json.dumps(MESSAGES[0]) + "\n", encoding="utf-8")
    run("ingest", str(data))
    result = CliRunner().invoke(main, ["--path", str(tmp_path / "store"), "--embedder", "none", "search", "x", "--filter", "colour=red"])
    assert result.exit_code == 2 and "not a known filter" in result.output
    result = CliRunner().invoke(main, ["--redis-url", "redis://127.0.0.1:1/0", "--embedder", "none", "search", "x"])
    assert result.exit_code == 2 and "127.0.0.1:1" in result.output


@pytest.mark.postgres
def test_postgres_url_option_and_env(tmp_path, postgres_url, postgres_schema):
    """--postgres-url (or LAYERED_MEMORY_POSTGRES__URL) puts the records in PostgreSQL: what one command
    ingests, the next finds, with no store under --path."""
    data = tmp_path / "m.jsonl"
    data.write_text("".join(json.dumps(m) + "\n" for m in MESSAGES), encoding="utf-8")
    env = {"LAYERED_MEMORY_POSTGRES__SCHEMA_NAME": postgres_schema}
    result = CliRunner().invoke(main, ["--postgres-url", postgres_url, "--embedder", "none", "ingest", str(data)], env=env)
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["--embedder", "none", "search", "payments"],
                                env={**env, "LAYERED_MEMORY_POSTGRES__URL": postgres_url})
    assert result.exit_code == 0 and MESSAGES[0]["content"][:20] in result.output, result.output
    assert not (tmp_path / ".layered_memory").exists()
    result = CliRunner().invoke(main, ["--postgres-url", "postgresql://lm:wrong@127.0.0.1:1/none", "--embedder", "none", "search", "x"])
    assert result.exit_code == 2 and "127.0.0.1:1" in result.output
