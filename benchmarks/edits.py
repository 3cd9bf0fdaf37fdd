"""What a platform's edit or delete costs on the write path, against an add measured in the same run.

    python benchmarks/edits.py                      # SQLite + Qdrant Edge (and Redis + Edge when redis-server is on PATH)
    python benchmarks/edits.py --messages 2000

A store of ``--messages`` turns in 20 sessions, threaded and summarized (``process()``), background index
mode with a cheap deterministic embedder (HashEmbedder, dim 384: the write path never embeds). Then, paced
one at a time: ``add_message`` of new turns (the baseline), ``edit_message`` of a stored turn's text (record,
BM25 point, the next turn's point, summaries, topic, facts), a metadata-only edit, and ``delete_message``;
last, ``clear_session`` of each of the 20 sessions (about ``--messages`` / 20 threaded turns each: records,
points, summaries, topics, facts). P50/P95 in milliseconds; the last column is the P50 over the add's P50.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct, redis_server, table  # noqa: E402

from layered_memory import LayeredMemory, LayeredMemorySettings  # noqa: E402
from layered_memory.testing import HashEmbedder  # noqa: E402

WORDS = ("deploy kubernetes pod crash billing token redis cache postgres migration staging namespace error timeout "
         "config secret backup restore queue worker latency metrics alert invoice отпуск поездка Казань билет 上海 出差 会议").split()
T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))


def run(mem: LayeredMemory, n: int, ops: int, rng: random.Random) -> dict[str, list[float]]:
    rows = [{"message_id": f"m{i}", "chat_id": f"s{i % 20}", "user_id": f"u{i % 20}", "content": text(rng),
             "role": "user" if i % 2 == 0 else "assistant", "create_time": T0 + timedelta(seconds=i)} for i in range(n)]
    for start in range(0, n, 500):
        mem.add_messages(rows[start:start + 500])
    mem.flush()
    mem.process()
    for s in range(20):
        mem.get_context_for_user(f"u{s}", f"s{s}")  # session summaries
    times: dict[str, list[float]] = {"add_message": [], "edit_message (text)": [], "edit_message (metadata)": [], "delete_message": []}
    victims = rng.sample(range(n), 3 * ops)
    for k in range(ops):
        i = n + k
        t0 = time.perf_counter()
        mem.add_message(message_id=f"m{i}", chat_id=f"s{i % 20}", user_id=f"u{i % 20}", content=text(rng), create_time=T0 + timedelta(seconds=i))
        times["add_message"].append(time.perf_counter() - t0)
        j = victims[k]
        t0 = time.perf_counter()
        mem.edit_message(f"s{j % 20}", f"m{j}", content=text(rng))
        times["edit_message (text)"].append(time.perf_counter() - t0)
        j = victims[ops + k]
        t0 = time.perf_counter()
        mem.edit_message(f"s{j % 20}", f"m{j}", metadata={"channel": "tg", "k": k})
        times["edit_message (metadata)"].append(time.perf_counter() - t0)
        j = victims[2 * ops + k]
        t0 = time.perf_counter()
        mem.delete_message(f"s{j % 20}", f"m{j}")
        times["delete_message"].append(time.perf_counter() - t0)
    mem.flush()
    assert mem.doctor()["ok"]
    op = f"clear_session ({n // 20} turns)"
    times[op] = []
    for s in range(20):
        t0 = time.perf_counter()
        mem.clear_session(f"u{s}", f"s{s}")
        times[op].append(time.perf_counter() - t0)
    mem.flush()
    assert mem.doctor()["ok"] and mem.topics.list("s0") == []
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=1000)
    ap.add_argument("--ops", type=int, default=100)
    args = ap.parse_args()
    rows = []
    with redis_server() as redis_url:
        backends = ["sqlite"] + (["redis"] if redis_url else [])
        for backend in backends:
            with tempfile.TemporaryDirectory() as tmp:
                settings = LayeredMemorySettings(index_mode="background")
                settings.memory.short_term_window, settings.memory.summary_threshold_messages = 4, 8
                if backend == "sqlite":
                    mem = LayeredMemory.embedded(tmp, embedder=HashEmbedder(dim=384), settings=settings)
                else:
                    from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
                    from layered_memory.stores.redis import RedisRecordStore

                    records = RedisRecordStore.from_url(redis_url, prefix=f"bench{int(time.time())}")  # type: ignore[arg-type]
                    mem = LayeredMemory.from_stores(records, QdrantEdgeVectorIndex(str(Path(tmp) / "vectors")),
                                                    embedder=HashEmbedder(dim=384), settings=settings)
                with mem:
                    times = run(mem, args.messages, args.ops, random.Random(7))
            base = pct(times["add_message"], 50)
            for op, samples in times.items():
                ms = [s * 1000 for s in samples]
                rows.append([backend, op, len(ms), pct(ms, 50), pct(ms, 95), f"{pct(samples, 50) / base:.1f}x"])
    print(table(["records", "op (paced, one at a time)", "n", "P50 ms", "P95 ms", "P50 / add P50"], rows))


if __name__ == "__main__":
    main()
