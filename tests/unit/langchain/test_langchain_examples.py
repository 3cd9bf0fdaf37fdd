"""Every examples/langchain_*.py runs as a script (subprocess, offline) and prints what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
EXPECTED = {
    "langchain_chat_history.py": ["assistant: You told me you live in Kazan.", "retrieved: ["],
    "langchain_agent.py": ["Book a hotel in Lisbon", "My flight to Lisbon is on May 3rd", "messages saved in session web:7"],
    "langchain_store.py": ["('memories', 'u1') tea: drinks green tea", "namespaces: [('memories', 'u1'), ('memories', 'u2')]"],
}


def test_every_langchain_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("langchain_*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs(name, tmp_path):
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), str(tmp_path / "data")],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    for needle in EXPECTED[name]:
        assert needle in proc.stdout, proc.stdout
