"""The runnable LlamaIndex examples run end to end (BM25 only here, so no model download or load)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def run_example(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    module = runpy.run_path(str(EXAMPLES / name), run_name="example")
    module["main"](["--path", str(tmp_path / "memory"), "--embedder", "none"])
    return capsys.readouterr().out


def test_chat_engine_example(tmp_path, capsys) -> None:
    out = run_example("llamaindex_chat_engine.py", tmp_path, capsys)
    assert "[system] You are a friendly assistant.\n  [system] User data:\n- name: Ann" in out
    assert "[user] What should I pack for the trip?" in out
    assert "Stored in layered-memory (session web:1): 4 messages" in out


def test_agent_example(tmp_path, capsys) -> None:
    out = run_example("llamaindex_agent.py", tmp_path, capsys)
    first = out.split("### Message 1", 1)[1].split("---", 1)[0]
    assert "**Content:** My passport expires in June" in first  # not the question being answered (issue 24)
    assert "**Content:** When does my passport expire?" not in out
    assert "passport number is 123" not in out  # the tools are bound to Ann
    assert "1. [open] Renew passport" in out
    assert "Stored turn roles: user assistant user assistant" in out
