"""Opening an embedded store: a new one and an existing one, now and as before (the baseline, same run).

Each sample runs in a fresh Python process (imports done, then the open is timed), so per-process caches count
as a user sees them. The embedder is ``HashEmbedder`` (no model load: the store's own cost only).

- baseline: every payload index created at collection creation (one sync to disk each), tokenizer loaded at
  open: ``QdrantEdgeVectorIndex(index_at_points=0)`` plus ``get_token_counter()`` before the open.
- now: ``LayeredMemory.embedded(path)``: payload indexes wait for 1,000 points, the tokenizer for its first use.

    python benchmarks/open_store.py [--rounds 5] [--dir /path/on/the/real/disk]

Use a directory on the disk you deploy to: on tmpfs a sync costs nothing and the baseline looks cheap.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from _common import pct, table

CHILD = r"""
import json, sys, time
from layered_memory import LayeredMemory
from layered_memory.providers.tokens import get_token_counter
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from layered_memory.stores.sqlite import SQLiteRecordStore
from layered_memory.config import LayeredMemorySettings
from layered_memory.testing import HashEmbedder

path, mode, fill = sys.argv[1], sys.argv[2], int(sys.argv[3])
emb = HashEmbedder(dim=384)
t0 = time.perf_counter()
if mode == "baseline":
    get_token_counter()
    settings = LayeredMemorySettings()
    mem = LayeredMemory.from_stores(SQLiteRecordStore.from_settings(settings.sqlite, path),
                                    QdrantEdgeVectorIndex(path + "/vectors", index_at_points=0),
                                    embedder=emb, settings=settings)
else:
    mem = LayeredMemory.embedded(path, embedder=emb)
opened = time.perf_counter() - t0
for i in range(fill):
    mem.add_message(message_id=f"m{i}", chat_id="c1", user_id="u1", content=f"message {i} about the payments pod")
t1 = time.perf_counter()
mem.get_context_for_user("u1", "c1", query="payments")
first_context = time.perf_counter() - t1
mem.close()
print(json.dumps({"open": opened, "first_context": first_context}))
"""


def run(path: str, mode: str, fill: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", CHILD, path, mode, str(fill)], capture_output=True,
                         text=True, env=env)
    if out.returncode:
        raise SystemExit(f"{mode} run on {path} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--dir", default=None, help="parent directory of the stores (default: the system temp dir)")
    args = parser.parse_args()
    cases = [(mode, kind) for kind in ("new", "existing") for mode in ("baseline", "now")]
    samples: dict[tuple[str, str], list[dict[str, float]]] = {c: [] for c in cases}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for r in range(args.rounds):  # interleaved, so load from other processes hits every case alike
            for mode, kind in cases:
                path = f"{tmp}/{mode}-{r}"
                if kind == "new":
                    samples[(mode, kind)].append(run(path, mode, fill=10))
                else:  # the store made by this round's "new" run, 10 messages
                    samples[(mode, kind)].append(run(path, mode, fill=0))
    rows = []
    for (mode, kind), xs in samples.items():
        opens = [x["open"] * 1e3 for x in xs]
        ctx = [x["first_context"] * 1e3 for x in xs]
        rows.append([f"{kind} store", mode, pct(opens, 50), pct(opens, 95), pct(ctx, 50)])
    print(f"open an embedded store, {args.rounds} fresh processes per row, ms")
    print(table(["store", "code", "open P50", "open P95", "first context() P50"], rows))


if __name__ == "__main__":
    main()
