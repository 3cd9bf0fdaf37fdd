"""RecordStore latency: put_messages (one message per call) and window(limit=10), P50/P95 in ms.

One scope (one user, one session) grows to 10k, then 100k messages; each size is measured on
SQLite (WAL file) and Redis. Baselines from the same run: a bare sqlite3 INSERT+COMMIT of one row
and a Redis PING round trip, the floors each backend cannot beat.

    python benchmarks/record_stores.py [--redis-url redis://127.0.0.1:6379/0] [--sizes 10000,100000] [--n 500]

Without --redis-url a private redis-server (no persistence) is started on a free port.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sqlite3
import subprocess
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


def bench_store(name: str, store: RecordStore, sizes: list[int], n: int, rows: list[tuple]) -> None:
    filled, extra = 0, 0
    for size in sizes:
        while filled < size:
            batch = [make(i) for i in range(filled, min(size, filled + 1000))]
            store.put_messages(TENANT, batch)
            filled += len(batch)
        base = 10_000_000 + extra
        put = timed(lambda i: store.put_messages(TENANT, [make(base + i)]), n)
        extra += n
        win = timed(lambda i: store.window(TENANT, user_id=USER, session_key=SESSION, limit=10), n)
        rows.append((name, size, "put_messages x1", *put))
        rows.append((name, size, "window(limit=10)", *win))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--n", type=int, default=500, help="timed calls per cell")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows: list[tuple] = []

    with tempfile.TemporaryDirectory() as tmp:
        raw = sqlite3.connect(os.path.join(tmp, "raw.sqlite3"), isolation_level=None)
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute("PRAGMA synchronous = NORMAL")
        raw.execute("CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT)")
        rows.append(("baseline", 0, "sqlite3 INSERT+COMMIT", *timed(
            lambda i: raw.execute("INSERT INTO t VALUES (?, ?)", (str(i), TEXT)), args.n)))
        raw.close()
        with SQLiteRecordStore(os.path.join(tmp, "records.sqlite3")) as store:
            store.setup()
            bench_store("sqlite", store, sizes, args.n, rows)

    with redis_server(args.redis_url) as url:
        store = RedisRecordStore.from_url(url, prefix=f"bench{uuid.uuid4().hex[:8]}")
        store.setup()
        rows.append(("baseline", 0, "redis PING", *timed(lambda i: store.client.ping(), args.n)))
        try:
            bench_store("redis", store, sizes, args.n, rows)
        finally:
            keys = list(store.client.scan_iter(match=f"{{{store.prefix}:*", count=1000))
            if keys:
                store.client.delete(*keys)
            store.close()

    print(f"{'backend':9} {'messages':>9}  {'operation':24} {'p50 ms':>8} {'p95 ms':>8}")
    for name, size, op, p50, p95 in rows:
        print(f"{name:9} {size:>9,}  {op:24} {p50:8.3f} {p95:8.3f}")


if __name__ == "__main__":
    main()
