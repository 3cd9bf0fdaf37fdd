"""The cost of SQLite durability: ``add_message`` P50/P95 in ms per ``synchronous`` setting.

Embedded store (SQLite WAL + Qdrant Edge), no embedder (BM25 only, so the fsync is not hidden behind
an embedding), topics on (the default). The settings run in interleaved rounds on one disk so load
from other processes hits each of them alike.

    python benchmarks/sqlite_synchronous.py [--n 300] [--rounds 3] [--dir /path/on/the/real/disk]

Use a directory on the disk you deploy to: on tmpfs an fsync costs nothing and FULL looks free.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import datetime, timedelta, timezone

from layered_memory import LayeredMemory
from layered_memory.config import LayeredMemorySettings

MODES = ("NORMAL", "FULL", "EXTRA")
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="add_message calls per mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=None, help="parent directory of the stores (default: the system temp dir)")
    args = parser.parse_args()
    samples: dict[str, list[float]] = {m: [] for m in MODES}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        mems = {}
        for mode in MODES:
            settings = LayeredMemorySettings(embedder="none")
            settings.sqlite.synchronous = mode  # type: ignore[assignment]
            mems[mode] = LayeredMemory.embedded(f"{tmp}/{mode}", embedder="none", settings=settings)
        for r in range(args.rounds):
            for mode, mem in mems.items():
                for i in range(args.n):
                    n = r * args.n + i
                    start = time.perf_counter()
                    mem.add_message(message_id=f"m{n}", chat_id="c1", user_id="u1", content=f"message {n} about the payments pod",
                                    create_time=T0 + timedelta(seconds=n))
                    samples[mode].append(time.perf_counter() - start)
        for mem in mems.values():
            mem.close()
    print(f"add_message, {args.rounds} x {args.n} calls per mode, ms")
    for mode, xs in samples.items():
        xs.sort()
        print(f"  synchronous={mode:<6}  P50 {xs[len(xs) // 2] * 1e3:6.2f}  P95 {xs[int(len(xs) * 0.95)] * 1e3:6.2f}")


if __name__ == "__main__":
    main()
