"""The learned reranker of the second stage (``retrieval.reranker="learned"``): a logistic model.

Coefficients written by ``benchmarks/train_reranker.py`` from synthetic en/ru/zh conversations
(``benchmarks/synthconv.py``, seed 1): neither LoCoMo nor LongMemEval, which judge it. Features, one
row per candidate (:meth:`.rerank.SecondStage.features`): the fused score rescaled to 0..1, each
side's z-score (the side's minimum when it lacks the candidate), each side's reciprocal rank (0 when
absent), whether both sides returned it, and the second-stage signals (0 when switched off).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FEATURES", "MODEL", "score"]

FEATURES = ("fused", "dense_z", "sparse_z", "dense_rr", "sparse_rr", "both", "neighbour", "session", "speaker", "phrase", "time")

# -- written by benchmarks/train_reranker.py ------------------------------------------------------
MODEL = {
    "trained_on": "synthconv.py --seed 1 --per-style 3 (train.json): 216 questions, l2=1.0, non-negative",
    "coef": [0, 1.44394, 0, 0, 1.65957, 0.758589, 5.41888, 1.00573, 0.953326, 0, 0],
    "intercept": -5.79056,
}
# -------------------------------------------------------------------------------------------------

_COEF = np.asarray(MODEL["coef"], dtype=float)


def score(x: np.ndarray) -> np.ndarray:
    """The model's logit per row of ``x`` (rank order is all the second stage needs)."""
    return x @ _COEF + float(MODEL["intercept"])  # type: ignore[arg-type]
