"""RecordStore latency, P50/P95 in ms: put_messages (one message per call), window(limit=10), a scan page
(scan_messages of the session from a random seq, limit=100) and one step of the index writer (pending_index(limit=10)
then mark_indexed of those 10); then async throughput of the server backends.

One scope (one user, one session) grows to 10k, then 100k messages; each size is measured on
SQLite (WAL file), Redis, a Redis Cluster (three masters, ``redis+cluster://``) and PostgreSQL.
Baselines from the same run: a bare sqlite3 INSERT+COMMIT of one row, a Redis PING (single server and
cluster) and a PostgreSQL ``SELECT 1`` on a pooled connection: the floors each backend cannot beat.

Async throughput (second table): requests/s and P50/P95 latency of ``aget_context_for_user`` with 100
in flight on one event loop, per server backend, native (the engine on the loop, its store I/O on
redis.asyncio / psycopg's AsyncConnectionPool) against the worker-thread twin (``asyncio.to_thread``,
what every async twin did before), on the same engine and data; the baseline is the same calls made
one after another in sync code. The engine has no vector index here (records only: the summary, user
data, the window), so the table measures the record store's I/O path, not an embedder or local-mode
numpy. ``--rtt-ms 0,2`` repeats it (not on the cluster, whose client follows the nodes' own addresses)
through benchmarks/latency_proxy.py, which delays every chunk by half of 2 ms each way: a server across
a network, where a thread per call waits and the loop does not.

    python benchmarks/record_stores.py [--redis-url redis://...] [--redis-cluster-url redis+cluster://...]
        [--postgres-url postgresql://...] [--sizes 10000,100000] [--n 500]
        [--backends sqlite,redis,cluster,postgres] [--async-requests 3000] [--rtt-ms 0,2]

Without --redis-url a private redis-server (no persistence) is started on a free port; without
--redis-cluster-url three cluster-enabled redis-servers are joined by redis-cli (tests/redis_server.py);
without --postgres-url a throwaway PostgreSQL cluster (tests/postgres_server.py: initdb in a temp dir,
fsync off, synchronous_commit on) is started. All are removed at the end. PostgreSQL's table is
ANALYZEd after each fill, as autovacuum does within a minute of a bulk load.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

from layered_memory.models import Message
from layered_memory.stores.base import RecordStore
from layered_memory.stores.redis import RedisRecordStore
from layered_memory.stores.sqlite import SQLiteRecordStore

TENANT, USER, SESSION = "bench", "u1", "s1"
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
TEXT = "The quick brown fox jumps over the lazy dog; Быстрая лиса, 敏捷的狐狸 🦊. " * 3


def make(i: int) -> Message:
    return Message(message_id=f"m{i}", chat_id=SESSION, user_id=USER, session_key=SESSION, content=TEXT,
                   role="user" if i % 2 else "assistant", create_time=T0 + timedelta(seconds=i))


def percentiles(samples: list[float]) -> tuple[float, float]:
    samples = sorted(samples)
    return samples[len(samples) // 2] * 1e3, samples[int(len(samples) * 0.95)] * 1e3


def timed(fn: Callable[[int], object], n: int) -> tuple[float, float]:
    samples = []
    for i in range(n):
        start = time.perf_counter()
        fn(i)
        samples.append(time.perf_counter() - start)
    return percentiles(samples)


@contextmanager
def redis_server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on PATH: install it or pass --redis-url")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--daemonize", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(5)


@contextmanager
def postgres_server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from postgres_server import PostgresServer, find_bin_dir

    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise SystemExit("PostgreSQL's initdb is not on PATH nor in /usr/lib/postgresql/*/bin: install it or pass --postgres-url")
    server = PostgresServer(bin_dir)
    try:
        yield server.url
    finally:
        server.destroy()


def bench_store(
    name: str, store: RecordStore, sizes: list[int], n: int, rows: list[tuple], after_fill: Callable[[], None] | None = None
) -> None:
    filled, extra = 0, 0
    rng = random.Random(7)
    for size in sizes:
        while filled < size:
            batch = [make(i) for i in range(filled, min(size, filled + 1000))]
            store.put_messages(TENANT, batch)
            filled += len(batch)
        if after_fill is not None:
            after_fill()
        base = 10_000_000 + extra
        put = timed(lambda i: store.put_messages(TENANT, [make(base + i)]), n)
        extra += n
        win = timed(lambda i: store.window(TENANT, user_id=USER, session_key=SESSION, limit=10), n)
        scan = timed(lambda i: store.scan_messages(
            TENANT, user_id=USER, session_key=SESSION, after_seq=rng.randrange(size), limit=100), n)
        pending = timed(lambda i: store.mark_indexed(TENANT, store.pending_index(TENANT, limit=10)), n)
        rows.append((name, size, "put_messages x1", *put))
        rows.append((name, size, "window(limit=10)", *win))
        rows.append((name, size, "scan page (limit=100)", *scan))
        rows.append((name, size, "pending+mark (10)", *pending))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--postgres-url")
    parser.add_argument("--n", type=int, default=500, help="timed calls per cell")
    parser.add_argument("--redis-cluster-url")
    parser.add_argument("--backends", default="sqlite,redis,cluster,postgres")
    parser.add_argument("--async-requests", type=int, default=3000, help="aget_context_for_user calls per async cell (0: no async table)")
    parser.add_argument("--rtt-ms", default="0,2", help="async table: round trips added by a delaying proxy (0: direct)")
    args = parser.parse_args()
    RTTS[:] = [float(x) for x in args.rtt_ms.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = set(args.backends.split(","))
    rows: list[tuple] = []
    arows: list[tuple] = []
    requests = args.async_requests

    if "sqlite" in backends:
        bench_sqlite(sizes, args.n, rows)
    if "redis" in backends:
        bench_redis(args.redis_url, sizes, args.n, rows, arows, requests)
    if "cluster" in backends:
        bench_cluster(args.redis_cluster_url, sizes, args.n, rows, arows, requests)
    if "postgres" in backends:
        bench_postgres(args.postgres_url, sizes, args.n, rows, arows, requests)

    print(f"{'backend':9} {'messages':>9}  {'operation':26} {'p50 ms':>8} {'p95 ms':>8}")
    for name, size, op, p50, p95 in rows:
        print(f"{name:9} {size:>9,}  {op:26} {p50:8.3f} {p95:8.3f}")
    if arows:
        print(f"\naget_context_for_user, {CONCURRENCY} in flight on one event loop ({requests} calls per row)")
        print(f"{'backend':16} {'mode':36} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8}")
        for name, mode, rps, p50, p95 in arows:
            print(f"{name:16} {mode:36} {rps:8.0f} {p50:8.2f} {p95:8.2f}")


def bench_postgres(url: str | None, sizes: list[int], n: int, rows: list[tuple], arows: list[tuple], requests: int) -> None:
    from psycopg_pool import ConnectionPool

    from layered_memory.stores.postgres import PostgresRecordStore

    with postgres_server(url) as pg_url:
        schema = f"bench{uuid.uuid4().hex[:8]}"
        store = PostgresRecordStore(pg_url, schema=schema)
        store.setup()
        # the baseline takes a connection the way the store does: a pool checking it at checkout
        pool = ConnectionPool(pg_url, min_size=1, max_size=1, check=ConnectionPool.check_connection)

        def select_one(i: int) -> None:
            with pool.connection() as conn:
                conn.execute("SELECT 1").fetchone()

        def analyze() -> None:
            # what autovacuum does within a minute of a bulk load: without statistics the planner may
            # look a message up through the chat index and scan the whole chat (puts of 5-10 ms at 10k)
            with pool.connection() as conn:
                conn.execute(f'ANALYZE "{schema}".lm_messages')

        rows.append(("baseline", 0, "postgres SELECT 1 (pool)", *timed(select_one, n)))
        try:
            bench_store("postgres", store, sizes, n, rows, after_fill=analyze)
            if requests:
                bench_async("postgres", pg_url, lambda u: PostgresRecordStore(u, schema=schema + "a", max_size=10), requests, arows, RTTS)
        finally:
            with pool.connection() as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
            pool.close()
            store.close()


def bench_sqlite(sizes: list[int], n: int, rows: list[tuple]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        raw = sqlite3.connect(os.path.join(tmp, "raw.sqlite3"), isolation_level=None)
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute("PRAGMA synchronous = NORMAL")
        raw.execute("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT)")
        rows.append(("baseline", 0, "sqlite3 INSERT+COMMIT", *timed(
            lambda i: raw.execute("INSERT INTO t VALUES (?, ?)", (str(i), TEXT)), n)))
        raw.close()
        with SQLiteRecordStore(os.path.join(tmp, "records.sqlite3")) as store:
            store.setup()
            bench_store("sqlite", store, sizes, n, rows)


def bench_redis(redis_url: str | None, sizes: list[int], n: int, rows: list[tuple], arows: list[tuple], requests: int) -> None:
    with redis_server(redis_url) as url:
        bench_redis_store("redis", url, sizes, n, rows, arows, requests)


def bench_cluster(url: str | None, sizes: list[int], n: int, rows: list[tuple], arows: list[tuple], requests: int) -> None:
    if url:
        bench_redis_store("cluster", url, sizes, n, rows, arows, requests)
        return
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
    from redis_server import RedisCluster

    binary, cli = shutil.which("redis-server"), shutil.which("redis-cli")
    if binary is None or cli is None:
        raise SystemExit("redis-server and redis-cli are not on PATH: install them or pass --redis-cluster-url")
    with tempfile.TemporaryDirectory() as tmp:
        cluster = RedisCluster(binary, cli, tmp)
        try:
            bench_redis_store("cluster", cluster.url, sizes, n, rows, arows, requests)
        finally:
            cluster.stop()


def bench_redis_store(name: str, url: str, sizes: list[int], n: int, rows: list[tuple], arows: list[tuple], requests: int) -> None:
    prefixes = [f"bench{uuid.uuid4().hex[:8]}", f"bench{uuid.uuid4().hex[:8]}"]
    store = RedisRecordStore.from_url(url, prefix=prefixes[0])
    store.setup()
    rows.append(("baseline", 0, f"{name} PING", *timed(lambda i: store.client.ping(), n)))
    try:
        bench_store(name, store, sizes, n, rows)
        if requests:
            rtts = [0.0] if name == "cluster" else RTTS  # a cluster client follows the nodes' own addresses: no proxy
            bench_async(name, url, lambda u: RedisRecordStore.from_url(u, prefix=prefixes[1]), requests, arows, rtts)
    finally:
        for prefix in prefixes:  # one DEL per key: a cluster spreads them over slots
            for key in list(store.client.scan_iter(match=f"{{{prefix}:*", count=1000)):
                store.client.delete(key)
        store.close()


CONCURRENCY = 100
USERS_ASYNC = 200


RTTS = [0.0]  # set by --rtt-ms


@contextmanager
def delayed(url: str, rtt_ms: float) -> Iterator[str]:
    """``url`` through benchmarks/latency_proxy.py (``rtt_ms`` added per round trip), or ``url`` itself at 0."""
    if not rtt_ms:
        yield url
        return
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proxy = subprocess.Popen([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "latency_proxy.py"),
                              str(port), parts.hostname or "127.0.0.1", str(parts.port), str(rtt_ms)], stdout=subprocess.PIPE)
    try:
        assert proxy.stdout is not None and proxy.stdout.readline().strip() == b"ready"
        yield url.replace(f":{parts.port}", f":{port}", 1)
    finally:
        proxy.terminate()
        proxy.wait(5)


def bench_async(name: str, url: str, make: Callable[[str], RecordStore], requests: int, arows: list[tuple], rtts: list[float]) -> None:
    """aget_context_for_user with CONCURRENCY in flight: native vs the worker-thread twin (see the docstring),
    on loopback and through the latency proxy at each ``rtts`` value."""
    import asyncio

    from layered_memory import LayeredMemory

    for n, rtt in enumerate(rtts):
        with delayed(url, rtt) as target:
            mem = LayeredMemory.from_stores(make(target), None, embedder=None)
            try:
                if n == 0:
                    for u in range(USERS_ASYNC):  # 200 users, one session of 12 messages each, and user data
                        mem.add_messages([{"message_id": f"a{u}.{i}", "chat_id": f"c{u}", "user_id": f"u{u}", "session_key": f"s{u}",
                                           "role": "user" if i % 2 == 0 else "assistant", "content": f"{TEXT[:80]} {i}",
                                           "create_time": T0 + timedelta(seconds=i)} for i in range(12)])
                        mem.set_user_data(f"u{u}", {"city": "Kazan", "plan": "pro"})

                def call(i: int) -> object:
                    u = i % USERS_ASYNC
                    return mem.get_context_for_user(f"u{u}", f"s{u}")

                for i in range(USERS_ASYNC):  # warm: every session's summary written once, pools opened
                    call(i)
                label = f"{name} +{rtt:g}ms" if rtt else name
                calls = min(requests, 300)
                t0 = time.perf_counter()
                sync = timed(call, calls)
                arows.append((label, "baseline: sync, one call at a time", calls / (time.perf_counter() - t0), *sync))
                for mode in ("native (on the loop)", "worker thread (asyncio.to_thread)"):
                    arows.append((label, mode, *asyncio.run(_throughput(mem, requests, native=mode.startswith("native")))))
            finally:
                mem.close()


async def _throughput(mem: object, requests: int, *, native: bool) -> tuple[float, float, float]:
    import asyncio

    latencies: list[float] = []

    async def one(i: int) -> None:
        u = i % USERS_ASYNC
        t0 = time.perf_counter()
        if native:
            await mem.aget_context_for_user(f"u{u}", f"s{u}")  # type: ignore[attr-defined]
        else:
            await asyncio.to_thread(mem.get_context_for_user, f"u{u}", f"s{u}")  # type: ignore[attr-defined]
        latencies.append(time.perf_counter() - t0)

    async def worker(w: int) -> None:
        for i in range(w, requests, CONCURRENCY):
            await one(i)

    await asyncio.gather(*[one(i) for i in range(CONCURRENCY)])  # warm this loop's clients / threads
    latencies.clear()
    t0 = time.perf_counter()
    await asyncio.gather(*[worker(w) for w in range(CONCURRENCY)])
    elapsed = time.perf_counter() - t0
    return (requests / elapsed, *percentiles(latencies))


if __name__ == "__main__":
    main()
