"""RecordStore latency, P50/P95 in ms: put_messages (one message per call), window(limit=10), a scan page
(scan_messages of the session from a random seq, limit=100) and one outbox step (pending_index(limit=10)
then mark_indexed of those 10).

One scope (one user, one session) grows to 10k, then 100k messages; each size is measured on
SQLite (WAL file), Redis and PostgreSQL. Baselines from the same run: a bare sqlite3 INSERT+COMMIT of
one row, a Redis PING and a PostgreSQL ``SELECT 1`` on a pooled connection: the floors each backend
cannot beat.

    python benchmarks/record_stores.py [--redis-url redis://...] [--postgres-url postgresql://...]
        [--sizes 10000,100000] [--n 500] [--backends sqlite,redis,postgres]

Without --redis-url a private redis-server (no persistence) is started on a free port; without
--postgres-url a throwaway PostgreSQL cluster (tests/postgres_server.py: initdb in a temp dir, fsync
off, synchronous_commit on) is started and removed at the end. PostgreSQL's table is ANALYZEd after
each fill, as autovacuum does within a minute of a bulk load.
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
        outbox = timed(lambda i: store.mark_indexed(TENANT, store.pending_index(TENANT, limit=10)), n)
        rows.append((name, size, "put_messages x1", *put))
        rows.append((name, size, "window(limit=10)", *win))
        rows.append((name, size, "scan page (limit=100)", *scan))
        rows.append((name, size, "outbox pending+mark (10)", *outbox))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--postgres-url")
    parser.add_argument("--n", type=int, default=500, help="timed calls per cell")
    parser.add_argument("--backends", default="sqlite,redis,postgres")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = set(args.backends.split(","))
    rows: list[tuple] = []

    if "sqlite" in backends:
        bench_sqlite(sizes, args.n, rows)
    if "redis" in backends:
        bench_redis(args.redis_url, sizes, args.n, rows)
    if "postgres" in backends:
        bench_postgres(args.postgres_url, sizes, args.n, rows)

    print(f"{'backend':9} {'messages':>9}  {'operation':26} {'p50 ms':>8} {'p95 ms':>8}")
    for name, size, op, p50, p95 in rows:
        print(f"{name:9} {size:>9,}  {op:26} {p50:8.3f} {p95:8.3f}")


def bench_postgres(url: str | None, sizes: list[int], n: int, rows: list[tuple]) -> None:
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


def bench_redis(redis_url: str | None, sizes: list[int], n: int, rows: list[tuple]) -> None:
    with redis_server(redis_url) as url:
        store = RedisRecordStore.from_url(url, prefix=f"bench{uuid.uuid4().hex[:8]}")
        store.setup()
        rows.append(("baseline", 0, "redis PING", *timed(lambda i: store.client.ping(), n)))
        try:
            bench_store("redis", store, sizes, n, rows)
        finally:
            keys = list(store.client.scan_iter(match=f"{{{store.prefix}:*", count=1000))
            if keys:
                store.client.delete(*keys)
            store.close()


if __name__ == "__main__":
    main()
