"""Faults for the background index writer's tests: an embedder that rejects some batches, and a child
process killed while its writer has a batch in flight."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from layered_memory.testing import HashEmbedder

ROOT = Path(__file__).resolve().parents[1]


class FlakyEmbedder(HashEmbedder):
    """Raises for every batch holding a text with ``poison`` while ``failures`` lasts (-1: forever)."""

    def __init__(self, poison: str, failures: int) -> None:
        super().__init__()
        self.poison, self.failures, self.calls, self.raised = poison, failures, 0, 0

    def embed_documents(self, texts: Any) -> list[list[float]]:
        self.calls += 1
        if self.failures != 0 and any(self.poison in t for t in texts):
            self.failures -= 1
            self.raised += 1
            raise RuntimeError(f"embedder rejected a batch of {len(texts)}")
        return super().embed_documents(texts)


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
