"""``benchmarks/summaries.py`` runs end to end on a few LoCoMo sessions (heavy: ``-m slow``; needs the data
outside the repo at ``$LOCOMO_PATH``, /work/cache/locomo10.json or /work/data/locomo10.json, skipped without it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = Path(os.environ.get("LOCOMO_PATH") or next(
    (p for p in ("/work/cache/locomo10.json", "/work/data/locomo10.json") if Path(p).exists()), "/work/cache/locomo10.json"))


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO} (set LOCOMO_PATH)")
def test_summary_benchmark_prints_its_tables():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "summaries.py"), "--locomo", str(LOCOMO),
                          "--embedder", "none", "--limit", "12"], capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "12 LoCoMo sessions" in text and "| extractive" in text and "| lead-8" in text
    assert "Spearman vs ROUGE-L" in text and "interleaved with another session" in text


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO} (set LOCOMO_PATH)")
def test_same_chat_pairs_benchmark_prints_its_tables():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "summaries.py"), "--pairs", "--locomo", str(LOCOMO),
                          "--embedder", "none", "--conversations", "2"], capture_output=True, text=True, env=env, timeout=900)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for name in ("locomo-session", "locomo-events", "locomo-facts", "synth-en", "synth-ru", "synth-zh"):
        assert f"| {name}" in text
    assert "leave-one-set-out" in text and "| adjacent" in text and "replaced by the extractive one" in text
