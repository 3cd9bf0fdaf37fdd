"""Helpers shared by the benchmark scripts: percentiles, tables, a private redis-server, the set arguments, a rerank
model that knows the answer."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence

import numpy as np


def pct(samples: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples, dtype=float), q)) if samples else float("nan")


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers]] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    line = lambda row: "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |"  # noqa: E731
    return "\n".join([line(cells[0]), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, cells[1:])])


def set_arguments(ap, cache: str) -> None:  # noqa: ANN001 - an argparse.ArgumentParser
    """The arguments that name the sets a retrieval benchmark reads (LoCoMo's file, set files, the embedding cache)."""
    ap.add_argument("--locomo", help="LoCoMo's locomo10.json")
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--set", action="append", default=[], help="synthconv.py / assistantchat.py output (repeatable)")
    ap.add_argument("--cache", default=cache, help="the embedding cache's directory (outside the repo)")


class EvidenceOracle:
    """A rerank model that knows the answer (``rerank_model=``): 1 for a text of the current question's evidence
    turns (``evidence``, set before each question), 0 otherwise; ties keep the engine's order. A ceiling, not a model."""

    name = "oracle"

    def __init__(self) -> None:
        self.evidence: set[str] = set()

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return [float(d in self.evidence) for d in documents]


@contextlib.contextmanager
def redis_server() -> Iterator[str | None]:
    """A private redis-server on a free loopback port (None when the binary is missing)."""
    binary = shutil.which("redis-server")
    if not binary:
        yield None
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tempfile.mkdtemp()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tmp],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        import redis

        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(5)
        shutil.rmtree(tmp, ignore_errors=True)


def save_set(data: dict, out: str) -> None:
    """Write a generated evaluation set (``synthconv.py``, ``assistantchat.py``) as JSON to ``out`` (outside
    the repo) and say what it holds."""
    import json
    from pathlib import Path

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    n_turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
    print(f"{len(data['conversations'])} conversations, {n_turns} turns, {len(data['questions'])} questions -> {out}")
