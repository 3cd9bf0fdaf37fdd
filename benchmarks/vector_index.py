"""Tenant-filtered hybrid query latency on the Qdrant Edge VectorIndex, with a numpy brute-force baseline.

Data: N points, 384-d random unit vectors, BM25-like sparse vectors (~20 terms from a Zipf vocabulary of 50k),
100 tenants. Query: a noisy copy of one of the tenant's vectors + 4 sparse terms; dense top-100 and sparse
top-100 fused by RRF (k=60) to top-10, filtered to the tenant. The numpy baseline does the same work by brute
force (a precomputed row list per tenant, an inverted index for the sparse side, the same RRF). No optimize():
Edge searches plain segments, as on the request path.

    python benchmarks/vector_index.py                 # 10k and 100k
    python benchmarks/vector_index.py --sizes 10000 --queries 100
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # multithreaded BLAS is slower and erratic on small hosts

import argparse
import datetime as dt
import shutil
import tempfile
import time
import uuid

import numpy as np

from layered_memory.stores import qdrant_common as qc
from layered_memory.stores.base import IndexHit, SparseVector, VectorPoint
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from qdrant_client import models

VOCAB = 50_000
TENANTS = 100
LIMIT, PREFETCH, RRF_K = 10, 100, 60


def make_data(n: int, dim: int, rng: np.random.Generator):
    X = rng.normal(size=(n, dim)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    ranks = np.arange(1, VOCAB + 1)
    p = 1.0 / ranks
    p[:50] = 0  # stop-words dropped
    p /= p.sum()
    nnz = rng.poisson(22, size=n).clip(3, 60)
    terms = [np.unique(rng.choice(VOCAB, size=k, p=p)) for k in nnz]
    # BM25 tf saturation (k1=1.2) with a length norm (b=0.75, avg length 22): continuous values, so sparse
    # scores rarely tie and the overlap with the baseline measures correctness, not tie-breaking.
    norm = 1.2 * (0.25 + 0.75 * nnz / 22.0)
    vals = [(lambda tf, k: tf * 2.2 / (tf + k))(rng.integers(1, 4, size=len(t)).astype(np.float32), norm[i])
            for i, t in enumerate(terms)]
    tenant = rng.integers(0, TENANTS, size=n)
    ts0 = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    secs = rng.integers(0, 365 * 86400, size=n)
    ids = [str(uuid.UUID(int=int(i) + 1)) for i in range(n)]
    payloads = [
        {"tenant": f"t{tenant[i]}", "role": "user" if i % 2 else "assistant", "success": int(i % 3 == 0),
         "timestamp": (ts0 + dt.timedelta(seconds=int(secs[i]))).isoformat().replace("+00:00", "Z")}
        for i in range(n)
    ]
    return ids, X, terms, vals, tenant, payloads


class NumpyBaseline:
    """Brute force: dense matvec over the tenant's rows, sparse scatter-add over an inverted index."""

    def __init__(self, ids, X, terms, vals, tenant):
        self.ids, self.X = ids, X
        n = len(ids)
        df = np.zeros(VOCAB, dtype=np.int64)
        for t in terms:
            df[t] += 1
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        docs = np.concatenate([np.full(len(t), i) for i, t in enumerate(terms)])
        tt = np.concatenate(terms)
        vv = np.concatenate(vals)
        order = np.argsort(tt, kind="stable")
        self.post_docs, self.post_vals = docs[order], vv[order]
        self.indptr = np.searchsorted(tt[order], np.arange(VOCAB + 1))
        self.rows = {t: np.flatnonzero(tenant == t) for t in range(TENANTS)}
        self.in_tenant = tenant

    def query(self, q: np.ndarray, sq: SparseVector, t: int) -> list[IndexHit]:
        rows = self.rows[t]
        d = self.X[rows] @ q
        k = min(PREFETCH, len(rows))
        top = rows[np.argpartition(-d, k - 1)[:k]] if k < len(rows) else rows
        dsc = self.X[top] @ q
        dense = [IndexHit(self.ids[i], float(s)) for i, s in sorted(zip(top, dsc), key=lambda x: -x[1])]
        scores: dict[int, float] = {}
        for term, w in zip(sq.indices, sq.values):
            a, b = self.indptr[term], self.indptr[term + 1]
            docs, vals = self.post_docs[a:b], self.post_vals[a:b]
            keep = self.in_tenant[docs] == t
            for doc, v in zip(docs[keep], vals[keep]):
                scores[int(doc)] = scores.get(int(doc), 0.0) + float(v) * w * float(self.idf[term])
        sparse = [IndexHit(self.ids[i], s) for i, s in sorted(scores.items(), key=lambda x: -x[1])[:PREFETCH]]
        return qc.rrf_fuse([dense, sparse], k=RRF_K, limit=LIMIT)


def pct(xs: list[float]) -> tuple[float, float]:
    a = np.array(xs) * 1000
    return float(np.percentile(a, 50)), float(np.percentile(a, 95))


def run(n: int, dim: int, nq: int, seed: int = 0) -> list[tuple]:
    rng = np.random.default_rng(seed)
    ids, X, terms, vals, tenant, payloads = make_data(n, dim, rng)
    root = tempfile.mkdtemp(prefix="lm-bench-")
    rows = []
    try:
        index = QdrantEdgeVectorIndex(root)
        index.ensure_collection("bench", dense_dim=dim)
        t0 = time.perf_counter()
        batch = 1024
        for s in range(0, n, batch):
            index.upsert("bench", [
                VectorPoint(ids[i], payloads[i], X[i].tolist(), SparseVector(terms[i].tolist(), vals[i].tolist()))
                for i in range(s, min(n, s + batch))
            ])
        ingest = n / (time.perf_counter() - t0)
        base = NumpyBaseline(ids, X, terms, vals, tenant)

        queries = []
        for _ in range(nq + 10):
            t = int(rng.integers(0, TENANTS))
            src = X[rng.choice(base.rows[t])]
            q = src + rng.normal(size=dim).astype(np.float32) * (1.0 / np.sqrt(dim))
            q /= np.linalg.norm(q)
            terms_q = sorted({int(x) for x in rng.choice(terms[int(rng.integers(0, n))], size=4)})
            queries.append((t, q, SparseVector(terms_q, [1.0] * len(terms_q))))

        edge_t, np_t, overlap = [], [], []
        for i, (t, q, sq) in enumerate(queries):
            flt = models.Filter(must=[models.FieldCondition(key="tenant", match=models.MatchValue(value=f"t{t}"))])
            a = time.perf_counter()
            hits = index.query("bench", dense=q.tolist(), sparse=sq, filter=flt, limit=LIMIT,
                               prefetch_limit=PREFETCH, rrf_k=RRF_K)
            b = time.perf_counter()
            ref = base.query(q, sq, t)
            c = time.perf_counter()
            if i >= 10:  # warm-up
                edge_t.append(b - a)
                np_t.append(c - b)
                overlap.append(len({h.id for h in hits} & {h.id for h in ref}) / max(1, len(ref)))
        size_mb = index.size_bytes("bench") / 1e6
        index.close()
        e50, e95 = pct(edge_t)
        n50, n95 = pct(np_t)
        rows.append((n, "qdrant-edge (no optimize)", f"{ingest:,.0f}", f"{e50:.2f}", f"{e95:.2f}",
                     f"{np.mean(overlap):.3f}", f"{size_mb:.0f}"))
        rows.append((n, "numpy brute force", "-", f"{n50:.2f}", f"{n95:.2f}", "1.000", "-"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    header = ("N", "backend", "ingest pts/s", "hybrid+tenant P50 ms", "P95 ms", "overlap@10 vs numpy", "disk MB")
    out = [header]
    for n in args.sizes:
        out += run(n, args.dim, args.queries)
    widths = [max(len(str(r[i])) for r in out) for i in range(len(header))]
    for j, r in enumerate(out):
        print(" | ".join(str(c).rjust(w) for c, w in zip(r, widths)))
        if j == 0:
            print("-+-".join("-" * w for w in widths))
    print(f"\n{args.queries} queries per size after 10 warm-ups; dim={args.dim}; {TENANTS} tenants; "
          f"dense/sparse prefetch {PREFETCH}, RRF k={RRF_K}, top-{LIMIT}; load avg {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
