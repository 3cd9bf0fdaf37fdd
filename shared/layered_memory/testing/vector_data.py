"""The VectorIndex conformance suite's data and truths (``vector_index``): ``DATA``, 400 points in 4 tenants
with dense and sparse vectors and payloads, the filters the suite runs with their Python predicates, and the
helpers that compare an index's answers with numpy truths."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from qdrant_client import models

from ..stores.base import IndexHit, SparseVector, VectorIndex, VectorPoint

__all__ = [
    "COL", "DATA", "DIM", "FILTERS", "N", "TENANTS", "Dataset", "assert_ranking", "assert_same_hits", "fc", "make_dataset",
    "query_vectors", "scroll_all", "ts",
]

N = 400
DIM = 64
VOCAB = 400
TENANTS = ["t0", "t1", "t2", "t3"]
ROLES = ["user", "assistant", "tool"]
COL = "messages"
EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


# -- data and truths ------------------------------------------------------------------------------------


@dataclass
class Dataset:
    ids: list[str]
    X: np.ndarray  # unit dense vectors (N, DIM)
    S: np.ndarray  # dense form of the sparse vectors (N, VOCAB)
    payloads: list[dict[str, Any]]
    points: list[VectorPoint]

    def mask(self, pred: Callable[[dict[str, Any]], bool] | None) -> np.ndarray:
        return np.array([True if pred is None else bool(pred(p)) for p in self.payloads])

    def dense_truth(self, q: np.ndarray, pred=None, k: int = 10) -> list[tuple[str, float]]:
        scores = self.X @ (q / np.linalg.norm(q))
        return self._top(scores, self.mask(pred), k)

    def idf(self) -> np.ndarray:
        n_t = (self.S > 0).sum(axis=0)
        return np.log(1.0 + (len(self.ids) - n_t + 0.5) / (n_t + 0.5))

    def sparse_truth(self, q: SparseVector, pred=None, k: int = 10) -> list[tuple[str, float]]:
        qv = np.zeros(VOCAB)
        qv[q.indices] = q.values
        scores = self.S @ (qv * self.idf())
        return self._top(scores, self.mask(pred) & (self.S[:, q.indices] > 0).any(axis=1), k)

    def _top(self, scores: np.ndarray, mask: np.ndarray, k: int) -> list[tuple[str, float]]:
        rows = np.flatnonzero(mask)
        order = rows[np.argsort(-scores[rows], kind="stable")][:k]
        return [(self.ids[i], float(scores[i])) for i in order]


def _ts(i: int, rng: np.random.Generator) -> str:
    t = EPOCH + dt.timedelta(seconds=int(rng.integers(0, 365 * 86400)))
    s = t.strftime("%Y-%m-%dT%H:%M:%S")
    return s + ("Z" if i % 2 else "+00:00")  # both UTC spellings are stored


def make_dataset(n: int = N, seed: int = 7) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, DIM))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    S = np.zeros((n, VOCAB))
    zipf = 1.0 / np.arange(1, VOCAB + 1)
    zipf /= zipf.sum()
    ids, payloads, points = [], [], []
    for i in range(n):
        terms = np.unique(rng.choice(VOCAB, size=int(rng.integers(5, 16)), p=zipf))
        tf = rng.integers(1, 4, size=len(terms)).astype(float)
        # BM25-saturated tf (k1=1.2) times a length-norm-like jitter, so sparse scores do not tie
        S[i, terms] = tf * 2.2 / (tf + 1.2) * rng.uniform(0.8, 1.2, size=len(terms))
        pid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"msg-{seed}-{i}"))
        payload = {
            "tenant": TENANTS[i % len(TENANTS)],
            "user_id": f"u{int(rng.integers(0, 6))}",
            "role": ROLES[int(rng.integers(0, 3))],
            "success": int(rng.integers(0, 2)),
            "timestamp": _ts(i, rng),
            "session_key": f"s{i % 7}",
            "seq": i,
        }
        if i % 3 == 0:
            payload["topic_id"] = f"topic{i % 5}"
        ids.append(pid)
        payloads.append(payload)
        points.append(
            VectorPoint(
                id=pid,
                payload=payload,
                dense=X[i].tolist(),
                sparse=SparseVector(indices=terms.tolist(), values=S[i, terms].tolist()),
            )
        )
    return Dataset(ids, X, S, payloads, points)


DATA = make_dataset()


def ts(p: dict[str, Any]) -> dt.datetime:
    return dt.datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00"))


def query_vectors(seed: int) -> tuple[np.ndarray, SparseVector]:
    rng = np.random.default_rng(1000 + seed)
    src = DATA.X[int(rng.integers(0, N))]
    q = 0.7 * src + 0.3 * rng.normal(size=DIM) / math.sqrt(DIM)
    terms = sorted({int(t) for t in rng.integers(0, 60, size=4)})
    return q, SparseVector(indices=terms, values=[1.0] * len(terms))


# -- helpers ---------------------------------------------------------------------------------------------


def assert_ranking(got: list[IndexHit], want: list[tuple[str, float]], limit: int, rtol: float = 1e-4) -> None:
    """``got`` is a correct top-``limit`` of ``want`` (a longer truth list): the same score sequence, and each
    returned id has its true score. Tolerates any order among equal scores (RRF produces many ties)."""
    truth = dict(want)
    expected = [s for _, s in want[:limit]]
    assert len(got) == len(expected), (len(got), len(expected))
    np.testing.assert_allclose([h.score for h in got], expected, rtol=rtol, atol=1e-6)
    for h in got:
        assert h.id in truth, f"{h.id} is not in the truth list"
        assert math.isclose(h.score, truth[h.id], rel_tol=rtol, abs_tol=1e-6), (h.id, h.score, truth[h.id])


def assert_same_hits(a: list[IndexHit], b: list[IndexHit]) -> None:
    """Two result lists agree: equal score sequences, the same ids above the cut-off score (RRF ties at the
    cut may be broken differently), and the same score for every id both returned."""
    np.testing.assert_allclose([h.score for h in a], [h.score for h in b], rtol=1e-4, atol=1e-6)
    if a:
        cut = a[-1].score + 1e-6
        assert {h.id for h in a if h.score > cut} == {h.id for h in b if h.score > cut}
    sb = {h.id: h.score for h in b}
    for h in a:
        if h.id in sb:
            assert math.isclose(h.score, sb[h.id], rel_tol=1e-4, abs_tol=1e-6)


def scroll_all(index: VectorIndex, flt=None, page: int = 37) -> list[IndexHit]:
    out, offset = [], None
    while True:
        hits, offset = index.scroll(COL, filter=flt, limit=page, offset=offset)
        out.extend(hits)
        if offset is None:
            return out


def fc(key: str, **kw) -> models.FieldCondition:
    return models.FieldCondition(key=key, **kw)


TENANT_T1 = fc("tenant", match=models.MatchValue(value="t1"))
MAR, JUN = "2024-03-01T00:00:00Z", "2024-06-01T00:00:00+00:00"
FILTERS: dict[str, tuple[models.Filter, Callable[[dict[str, Any]], bool]]] = {
    "keyword": (models.Filter(must=[TENANT_T1]), lambda p: p["tenant"] == "t1"),
    "any": (models.Filter(must=[fc("role", match=models.MatchAny(any=["user", "tool"]))]), lambda p: p["role"] != "assistant"),
    "except": (models.Filter(must=[fc("role", match=models.MatchExcept(**{"except": ["tool"]}))]), lambda p: p["role"] != "tool"),
    "success=1": (models.Filter(must=[fc("success", match=models.MatchValue(value=1))]), lambda p: p["success"] == 1),
    "success=0": (models.Filter(must=[fc("success", match=models.MatchValue(value=0))]), lambda p: p["success"] == 0),
    "success range": (models.Filter(must=[fc("success", range=models.Range(gte=1))]), lambda p: p["success"] >= 1),
    "datetime Z/+00:00": (
        models.Filter(must=[fc("timestamp", range=models.DatetimeRange(gte=MAR, lt=JUN))]),
        lambda p: dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc) <= ts(p) < dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc),
    ),
    "datetime objects": (
        models.Filter(must=[fc("timestamp", range=models.DatetimeRange(
            gt=dt.datetime(2024, 10, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))))]),
        lambda p: ts(p) > dt.datetime(2024, 10, 1, 10, tzinfo=dt.timezone.utc),
    ),
    "combined": (
        models.Filter(
            must=[TENANT_T1, fc("success", match=models.MatchValue(value=1))],
            must_not=[fc("role", match=models.MatchValue(value="tool"))],
            should=[fc("user_id", match=models.MatchValue(value="u1")), fc("user_id", match=models.MatchValue(value="u2"))],
        ),
        lambda p: p["tenant"] == "t1" and p["success"] == 1 and p["role"] != "tool" and p["user_id"] in ("u1", "u2"),
    ),
    "nested must_not": (
        models.Filter(must_not=[models.Filter(must=[TENANT_T1, fc("role", match=models.MatchValue(value="user"))])]),
        lambda p: not (p["tenant"] == "t1" and p["role"] == "user"),
    ),
    "is_empty": (models.Filter(must=[models.IsEmptyCondition(is_empty=models.PayloadField(key="topic_id"))]),
                 lambda p: "topic_id" not in p),
    "has_id": (models.Filter(must=[models.HasIdCondition(has_id=DATA.ids[::9])]),
               lambda p: p["seq"] % 9 == 0),
}


# -- the suite ----------------------------------------------------------------------------------------------
