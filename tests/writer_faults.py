"""Run a child Python process until it reports it stored its data and has an index batch in flight,
then SIGKILL it (the fault tests of the background index writer)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kill_mid_batch(code: str, path: Path, *, guard: float = 120.0) -> None:
    """Start ``python -c code path``; once it printed both ``stored`` and ``in-flight``, kill it.
    ``guard`` bounds the wait for its exit (against a hang, never a measured bound)."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'shared'}{os.pathsep}{ROOT}"}
    child = subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        seen: set[str] = set()
        while "stored" not in seen or "in-flight" not in seen:
            line = child.stdout.readline()  # type: ignore[union-attr]
            assert line, "the child died before storing"
            seen.add(line.strip())
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(guard)
