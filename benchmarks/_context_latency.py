"""The latency half of ``benchmarks/context.py``: ``get_context_for_user`` at 100k messages in one scope,
query embedding excluded (pool vectors). Without ``--store`` each code builds its own store in a child and
measures it fresh and optimized, the codes one after the other (``child_latency``, ``alternated_rows``);
with ``--store`` both codes open copies of one optimized store and are asked the same queries in turn
(``child_serve``, ``latency_lockstep``; ``_lockstep``), which is what a +10 ms bar can be read from on a
machine whose speed drifts."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from _common import pct
from _lockstep import Peer, lockstep, serve

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = Path(__file__).with_name("context.py")  # the CLI the children run (``--child``)


def child_latency(args) -> dict:
    """P50/P95 per state and depth on a store of ``--sizes`` messages built here, measured right after
    ``flush()`` ("fresh") and after ``optimize()`` ("optimized"). (``--store`` runs ``child_serve`` instead.)"""
    from engine import sentence

    LayeredMemory, emb, rng = _latency_engine()
    out = {}
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            mem = _filled(LayeredMemory.embedded(tmp, embedder=emb), n, rng)
            for state in ("fresh", "optimized"):
                if state == "optimized":  # the steady state: the writer builds HNSW once 20,000 points are outside it
                    mem.optimize()
                out.update(measure_latency(mem, args, n, state, rng, sentence))
            mem.close()
    return out


def _latency_engine():
    """``LayeredMemory``, the pool embedder and the random source every latency child starts from (seed 0)."""
    import random

    from engine import PoolEmbedder, sentence
    from layered_memory.providers.local import default_embedder

    from layered_memory import LayeredMemory

    rng = random.Random(0)
    return LayeredMemory, PoolEmbedder(default_embedder(), [sentence(rng) for _ in range(256)]), rng


def _filled(mem, n: int, rng):
    """``mem`` with ``n`` benchmark messages in one scope, flushed to the index."""
    from engine import message

    for start in range(0, n, 1000):
        mem.add_messages([message(i, rng) for i in range(start, min(n, start + 1000))])
    mem.flush()
    return mem


def measure_latency(mem, args, n: int, state: str, rng, sentence) -> dict:
    out = {}
    cfg = getattr(mem.settings, "context", None)
    settable = cfg is not None and "search_depth" in type(cfg).model_fields
    for depth in args.depths:  # context.search_depth (0: the default); a code without the setting runs 0 only
        if depth and not settable:
            continue
        if settable:
            cfg.search_depth = depth or None
        for _ in range(20):  # warm: the tokenizer, the embedder's calibration
            mem.get_context_for_user("u1", "bench", query=sentence(rng))
        ms, cpu = [], []
        for _ in range(args.samples):
            q = sentence(rng)
            t0, c0 = time.perf_counter(), time.thread_time()
            mem.get_context_for_user("u1", "bench", query=q)
            ms.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
        out[f"{n} {state} {depth}"] = {"p50": pct(ms, 50), "p95": pct(ms, 95), "cpu50": pct(cpu, 50), "cpu95": pct(cpu, 95)}
    return out


def child_serve(args) -> None:
    """A copy of the ``--store`` opened by the code on PYTHONPATH, warmed like ``child_latency``, then answering
    ``[query, search_depth]`` requests in lockstep with another code (``_lockstep``); a code without
    ``context.search_depth`` runs its default."""
    import shutil

    from engine import sentence

    LayeredMemory, emb, rng = _latency_engine()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(Path(args.store) / str(args.sizes[0]), Path(tmp) / "store")
        mem = LayeredMemory.embedded(Path(tmp) / "store", embedder=emb)
        for _ in range(20):
            mem.get_context_for_user("u1", "bench", query=sentence(rng))
        cfg = getattr(mem.settings, "context", None)
        settable = cfg is not None and "search_depth" in type(cfg).model_fields

        def call(request: list) -> None:
            if settable:
                cfg.search_depth = request[1] or None
            mem.get_context_for_user("u1", "bench", query=request[0])

        serve(call)
        mem.close()


def latency_lockstep(args, base_code: str) -> list[list[object]]:
    """The baseline's and this code's reopened stores asked the same queries in turn (``_lockstep``): rows per
    ``--depths`` value, ``--samples`` x ``--repeat`` queries each."""
    import random

    from engine import sentence

    def peer(path: str) -> Peer:
        cmd = [sys.executable, str(SCRIPT), "--child", "serve", "--sizes", str(args.sizes[0]), "--store", args.store]
        return Peer(cmd, {**os.environ, "PYTHONPATH": f"{path}:{ROOT}"})

    peers = {"base": peer(base_code), "ours": peer(str(ROOT / "shared"))}
    rng = random.Random(1)
    requests = [[sentence(rng), d] for _ in range(args.samples * args.repeat) for d in args.depths]
    got = lockstep(peers, requests)
    for p in peers.values():
        p.close()
    rows = []
    for j, depth in enumerate(args.depths):
        b, o = ({k: v[j :: len(args.depths)] for k, v in got[name].items()} for name in ("base", "ours"))
        rows.append([f"{args.sizes[0]}, reopened, lockstep", depth or "default", f"{os.getloadavg()[0]:.1f}",
                     f"{pct(b['ms'], 50):.1f} / {pct(b['ms'], 95):.1f}", f"{pct(o['ms'], 50):.1f} / {pct(o['ms'], 95):.1f}",
                     f"{pct(o['ms'], 95) - pct(b['ms'], 95):+.1f}", f"{pct(b['cpu'], 50):.1f} / {pct(b['cpu'], 95):.1f}",
                     f"{pct(o['cpu'], 50):.1f} / {pct(o['cpu'], 95):.1f}", f"{pct(o['cpu'], 95) - pct(b['cpu'], 95):+.1f}"])
    return rows


def child_store(args) -> dict:
    """Build the ``--store`` of each of ``--sizes`` (this code, optimized) where it is missing."""
    for n in args.sizes:
        path = Path(args.store) / str(n)
        if not path.exists():
            LayeredMemory, emb, rng = _latency_engine()  # per size: the messages of a fresh child_latency
            with _filled(LayeredMemory.embedded(path, embedder=emb), n, rng) as mem:
                mem.optimize()
    return {}


def alternated_rows(runs: list[tuple[dict, dict, float]]) -> list[list[object]]:
    """Table rows of the alternated runs: ``(baseline, this code, load)`` per run, this code's depths each
    beside the baseline at its own default."""
    rows: list[list[object]] = []
    for base, ours, load in runs:
        for key, o in ours.items():
            n, state, depth = key.split()
            b = base[f"{n} {state} 0"]  # the baseline at its own default
            rows.append([f"{n}, {state}", depth if depth != "0" else "default", f"{load:.1f}", f"{b['p50']:.1f} / {b['p95']:.1f}", f"{o['p50']:.1f} / {o['p95']:.1f}",
                         f"{o['p95'] - b['p95']:+.1f}", f"{b['cpu50']:.1f} / {b['cpu95']:.1f}", f"{o['cpu50']:.1f} / {o['cpu95']:.1f}",
                         f"{o['cpu95'] - b['cpu95']:+.1f}"])
    return rows


__all__ = ["alternated_rows", "child_latency", "child_serve", "child_store", "latency_lockstep"]
