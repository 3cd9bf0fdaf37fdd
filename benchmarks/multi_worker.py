"""Several worker processes on one store: the supported path (Redis records, vectors on a Qdrant server or, as
here without a server, BM25 over Redis) against one process on the embedded store (the baseline, same run).

Each worker is a separate Python process (like a web worker) that opens its own engine and runs a chat loop
for its own users: ``add_message`` of a user turn, ``get_context_for_user``, ``add_message`` of the reply,
and a ``search`` every fourth turn. The table gives turns per second over all workers (wall clock from the
first worker's start to the last one's end, engine opening excluded) and the P50/P95 of one turn.

    python benchmarks/multi_worker.py [--turns 150] [--workers 1 2 4]

The embedded store cannot take a second process (Qdrant Edge's lock): its row is one worker only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from _common import pct, redis_server, table

WORKER = r"""
import json, sys, time
from layered_memory import LayeredMemory, LayeredMemorySettings

kind, where, wid, turns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
settings = LayeredMemorySettings()
if kind == "redis":
    settings.redis.prefix = "bench"
    mem = LayeredMemory.from_urls(redis_url=where, embedder="none", settings=settings)
else:
    mem = LayeredMemory.embedded(where, embedder="none", settings=settings)
print("ready", flush=True)
sys.stdin.readline()  # start together
lat = []
start = time.perf_counter()
for t in range(turns):
    user, chat = f"w{wid}u{t % 5}", f"w{wid}c{t % 5}"
    t0 = time.perf_counter()
    mem.add_message(message_id=f"w{wid}q{t}", chat_id=chat, user_id=user, content=f"question {t} about payments pod {t % 7}")
    mem.get_context_for_user(user, chat)
    mem.add_message(message_id=f"w{wid}a{t}", chat_id=chat, user_id=user, role="assistant", content=f"answer {t}")
    if t % 4 == 0:
        mem.search(f"payments pod {t % 7}", filters={"user_id": user}, k=5)
    lat.append(time.perf_counter() - t0)
end = time.perf_counter()
mem.close()
print(json.dumps({"start": start, "end": end, "lat": lat}), flush=True)
"""


def run(kind: str, where: str, workers: int, turns: int) -> tuple[float, list[float]]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, kind, where, str(w), str(turns)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env) for w in range(workers)]
    for p in procs:
        if p.stdout.readline().strip() != "ready":
            raise SystemExit(f"a {kind} worker failed to open the store")
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    out = [json.loads(p.communicate(timeout=3600)[0].strip().splitlines()[-1]) for p in procs]
    wall = max(o["end"] for o in out) - min(o["start"] for o in out)
    return workers * turns / wall, [x * 1e3 for o in out for x in o["lat"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=150, help="chat turns per worker")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rate, lat = run("embedded", f"{tmp}/embedded", 1, args.turns)
        rows.append(["baseline: embedded (SQLite + Qdrant Edge)", 1, rate, pct(lat, 50), pct(lat, 95)])
    with redis_server() as url:
        if url is None:
            raise SystemExit("redis-server is not on PATH")
        for i, w in enumerate(args.workers):
            rate, lat = run("redis", url.rsplit("/", 1)[0] + f"/{i + 1}", w, args.turns)  # a fresh db per row
            rows.append(["Redis (BM25 over Redis; a Qdrant server adds vectors)", w, rate, pct(lat, 50), pct(lat, 95)])
    print(f"{args.turns} chat turns per worker, BM25 only (no embedder), {os.cpu_count()} cores")
    print(table(["backend", "workers", "turns/s (all workers)", "turn P50 ms", "turn P95 ms"], rows))


if __name__ == "__main__":
    main()
