"""Retrieval routes side by side on several set shapes, through ``mem.search``, in one run.

    python benchmarks/synthconv.py --out /work/cache/synth/eval.json --seed 0 --per-style 3
    python benchmarks/assistantchat.py --out /work/cache/synth/assistant.json --seed 0
    python benchmarks/retrieval_sets.py --locomo /work/data/locomo10.json \
        --set /work/cache/synth/eval.json --set /work/cache/synth/assistant.json [--cache DIR]

Per set, the same store answers every variant (settings are read per query; the variants take turns
question by question, so a burst of load hits them alike): ``bm25``, ``dense`` (both dense vectors),
the simple RRF of seed 003 (k=60, equal weights, no second stage), the previous release's settings
(the context vector's scores, adaptive fusion, its signal weights), the previous release's query plan
(one dense query: a latency reference, its quality is not a variant anyone runs), the defaults, and the
defaults with ``confidence_coverage`` off (BM25's weight not cut when its best hit holds little of the
query: what that input moves, in the same run). Reported: R@5 and R@10 (share of evidence turns in the top k), hit@1 (the first hit is an
evidence turn), sess@5 (every gold session among the sessions of the top 5 hits: ``session
recall_all@5``), leaks (hits of another user, every search being filtered to one user) and search
P50 / P95 in ms (the query embedding comes from the cache: its cost, measured once, is printed apart).
``--baseline-tree DIR`` (a checkout of the previous release) adds its row to every table: the same set
indexed and searched by that tree with its own defaults, in its own process, in the same run.

LoCoMo runs in four framings of the same turns (one ``user_id`` per conversation or one per speaker;
one chat per session or one per conversation), each conversation in its own tenant and the search
unfiltered, so ids are the only difference. Sets are read from their paths; nothing is copied. A
LongMemEval file is a set too (``--set longmemeval_s.json``: ``retrieval_general.from_longmemeval``; its
sess@5 is the issue's session recall_all@5 of held-out long assistant chats).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import pct, set_arguments, table  # noqa: E402
from retrieval import OFF, CachedEmbedder  # noqa: E402
from _loso_corpus import CACHE, question_core  # noqa: E402

from layered_memory import LayeredMemory, LayeredMemorySettings  # noqa: E402

PLAIN_RRF = {**OFF, "rrf_k": 60, "dense_weight": 1.0, "sparse_weight": 1.0, "drop_preamble": False}  # the whole question embedded
PREVIOUS = {"dense_vectors": "context", "fusion": "adaptive", "neighbour_weight": 0.4, "session_weight": 0.3,
            "speaker_weight": 0.7, "phrase_weight": 0.0, "time_weight": 0.8, "time_decay": 1.0, "drop_preamble": False}
# The previous release's query plan (one dense query beside BM25, its fusion and signals) on this tree's index:
# what the second dense query and the confidence fusion cost, timed beside the defaults on the same store.
ONE_VECTOR = {**PREVIOUS, "dense_vectors": "text"}
VARIANTS: list[tuple[str, str, dict]] = [
    ("bm25", "bm25", OFF), ("dense", "dense", OFF), ("plain RRF (seed 003)", "hybrid", PLAIN_RRF),
    ("previous release's settings", "hybrid", PREVIOUS), ("one dense query (latency reference)", "hybrid", ONE_VECTOR),
    ("hybrid, defaults", "hybrid", {}),
    ("hybrid, defaults, coverage off", "hybrid", {"confidence_coverage": 0.0}),  # BM25's weight not cut by how little of the query it holds
    ("hybrid, defaults, preamble kept", "hybrid", {"drop_preamble": False}),  # "Remind me, ..." embedded with the question
    ("dense, preamble kept", "dense", {**OFF, "drop_preamble": False}),
    # the deep tail (opt-in): hits below the first deep_from ranked from each side's top deep_limit (k > 10 only: use --k 50)
    ("hybrid, deep tail, deep_limit=100", "hybrid", {"deep_limit": 100}), ("hybrid, deep tail, deep_limit=200", "hybrid", {"deep_limit": 200}),
]
FRAMING_VARIANTS = ("hybrid, defaults", "hybrid, deep tail, deep_limit=200")  # the rows LoCoMo's other framings repeat
FRAMINGS = {  # name -> (a user_id per speaker, a chat per session)
    "one user_id, a chat per session": (False, True),
    "one user_id, one chat": (False, False),
    "a user_id per speaker, a chat per session": (True, True),
    "a user_id per speaker, one chat": (True, False),
}


def locomo_set(path: str, n: int) -> dict:
    """LoCoMo in ``synthconv.py``'s format (sessions with dates, questions with evidence and gold sessions)."""
    from retrieval_lab import load

    convs, questions = [], []
    for c in load(path)[:n]:
        sessions: dict[str, dict] = {}
        where = []
        for t in c.turns:
            s = sessions.setdefault(t["session"], {"id": f"{c.sample_id}-{t['session']}", "date": t["date"].isoformat(), "turns": []})
            where.append((list(sessions).index(t["session"]), len(s["turns"])))
            s["turns"].append({"speaker": t["speaker"], "role": "user", "text": t["text"]})
        convs.append({"id": c.sample_id, "lang": "en", "style": "locomo", "sessions": list(sessions.values())})
        for q, ev, cat in zip(c.questions, c.evidence, c.categories):
            e = [list(where[i]) for i in ev]
            questions.append({"conv": c.sample_id, "question": q, "kind": str(cat), "evidence": e,
                              "sessions": sorted({convs[-1]["sessions"][si]["id"] for si, _ in e})})
    return {"name": "locomo", "conversations": convs, "questions": questions}


def ingest(mem: LayeredMemory, data: dict, *, per_speaker: bool = False, chat_per_session: bool = True,
           tenant_per_conv: bool = False) -> dict[str, tuple[int, int]]:
    """Every turn as a message; message id -> (session, turn)."""
    where: dict[str, tuple[int, int]] = {}
    for c in data["conversations"]:
        h = mem.tenant(c["id"]) if tenant_per_conv else mem
        msgs = []
        for si, s in enumerate(c["sessions"]):
            start = datetime.fromisoformat(s["date"])
            for ti, t in enumerate(s["turns"]):
                mid = f"{c['id']}-{si}-{ti}"
                where[mid] = (si, ti)
                user = f"{c['id']}-{t['speaker']}" if per_speaker and t.get("role") != "assistant" else c["id"]
                msgs.append({"message_id": mid, "chat_id": s["id"] if chat_per_session else c["id"], "user_id": user,
                             "user_name": t["speaker"], "role": "assistant" if t.get("role") == "assistant" else "user",
                             "content": t["text"], "create_time": start + timedelta(minutes=ti)})
        for i in range(0, len(msgs), 256):
            h.add_messages(msgs[i : i + 256])
    mem.flush()
    return where


def metrics(ranked: list[tuple[int, int]], q: dict, gold_sessions: set[int]) -> tuple[float, ...]:
    """R@5, R@10, hit@1, sess@5 and the share of evidence turns among all the hits (R@k of a search for k)."""
    ev = {tuple(e) for e in q["evidence"]}
    return (len(ev & set(ranked[:5])) / len(ev), len(ev & set(ranked[:10])) / len(ev), float(bool(ranked) and ranked[0] in ev),
            float(gold_sessions <= {s for s, _ in ranked[:5]}), len(ev & set(ranked)) / len(ev))


def run_set(data: dict, emb, variants, *, framing: tuple[bool, bool] = (False, True), tenant_per_conv: bool = False, k: int = 10) -> dict:
    """variant name -> {"m": metrics per question, "lat": ms per search, "leaks": n, "groups": {kind: [...]}}."""
    settings = LayeredMemorySettings()
    base = settings.retrieval.model_dump()
    convs = {c["id"]: c for c in data["conversations"]}
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=emb, settings=settings)
        try:
            where = ingest(mem, data, per_speaker=framing[0], chat_per_session=framing[1], tenant_per_conv=tenant_per_conv)
            out = {name: {"m": [], "lat": [], "leaks": 0, "kinds": defaultdict(list)} for name, _, _ in variants}
            if hasattr(emb, "cache"):  # the questions embedded before the clock runs (one batch): a set new to the cache times searches only
                asked = [q["question"] for q in data["questions"]]  # whole, and as the dense side embeds them (drop_preamble)
                emb.cache.get(asked + [question_core(q) or q for q in asked], "query")
            for q in data["questions"]:
                ids = [s["id"] for s in convs[q["conv"]]["sessions"]]
                gold = {ids.index(s) for s in q["sessions"]} if q.get("sessions") else {e[0] for e in q["evidence"]}
                h = mem.tenant(q["conv"]) if tenant_per_conv else mem
                flt = None if tenant_per_conv else {"user_id": q["conv"]}
                for name, route, over in variants:  # interleaved: a burst of load on this shared machine hits every variant alike
                    for key, value in {**base, **over}.items():
                        setattr(settings.retrieval, key, value)
                    res = out[name]
                    t0 = time.perf_counter()
                    hits = h.search(q["question"], filters=flt, k=k, route=route).hits
                    res["lat"].append((time.perf_counter() - t0) * 1000)
                    res["leaks"] += sum(1 for x in hits if not x.id.startswith(q["conv"] + "-"))
                    m = metrics([where[x.id] for x in hits if x.id in where], q, gold)
                    res["m"].append(m)
                    res["kinds"][f"{convs[q['conv']].get('lang', '?')}"].append(m)
        finally:
            for key, value in base.items():
                setattr(settings.retrieval, key, value)
            mem.close()
    return out


def self_find(data: dict, emb, n: int, seed: int = 0) -> list[list[object]]:
    """A sample of ``n`` turns searched by their exact text, filtered to their user, per route: the share
    found first (or behind turns of the very same text: the top 10 all copies of it when it was said more
    than 10 times), after ``flush()``."""
    import random

    settings = LayeredMemorySettings()
    rng = random.Random(seed)
    turns = [(c["id"], si, ti, t["text"]) for c in data["conversations"] for si, s in enumerate(c["sessions"]) for ti, t in enumerate(s["turns"])]
    sample = rng.sample(turns, min(n, len(turns)))
    texts: dict[str, set[str]] = defaultdict(set)
    for cid, si, ti, text in turns:
        texts[(cid, text)].add(f"{cid}-{si}-{ti}")  # type: ignore[index]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        with LayeredMemory.embedded(tmp, embedder=emb, settings=settings) as mem:
            ingest(mem, data)
            for route in ("hybrid", "dense", "bm25"):
                found = 0
                for cid, si, ti, text in sample:
                    hits = mem.search(text, filters={"user_id": cid}, k=10, route=route).hits
                    same = texts[(cid, text)]  # type: ignore[index]
                    lead = [h.id for h in hits[: min(len(same), 10)]]
                    # found first, or behind turns of the very same text (a text said more than k times fills the top k with copies)
                    found += f"{cid}-{si}-{ti}" in lead or (len(lead) == min(len(same), 10) and set(lead) <= same)
                rows.append([data["name"], route, len(sample), found, found / len(sample)])
    return rows


def rows_of(out: dict) -> list[list[object]]:
    return [[name, *np.mean(np.array(r["m"]), axis=0).tolist(), r["leaks"], pct(r["lat"], 50), pct(r["lat"], 95)] for name, r in out.items()]


HEAD = ["variant", "R@5", "R@10", "hit@1", "sess@5", "R@k", "leaks", "P50 ms", "P95 ms"]  # R@k: the search's k (--k)


def query_embedding_ms(samples: int = 20) -> float:
    from layered_memory.providers.local import default_embedder

    e = default_embedder()
    if e is None:
        return float("nan")
    e.embed_query("warm up")
    lat = []
    for i in range(samples):
        t0 = time.perf_counter()
        e.embed_query(f"what did we talk about the trip number {i} last week?")
        lat.append((time.perf_counter() - t0) * 1000)
    return pct(lat, 50)


WRITES = """
import sys, json
sys.path.insert(0, {bench!r})
from engine_writer import steady
from layered_memory.providers.local import default_embedder
emb = default_embedder(); emb.embed_documents(["warm up"])
rows = [steady("embedded", emb, {rate}, {n}, "background", None, sync) for sync in ("FULL", "NORMAL")]
print(json.dumps(rows))
"""


BASELINE = """
import sys, json
sys.path.insert(0, {bench!r})
import retrieval_sets as rs
from retrieval import CachedEmbedder
from retrieval_general import load_set
spec = json.loads({spec!r})
emb = CachedEmbedder("e5", spec["cache"])
data = rs.locomo_set(spec["locomo"], spec["n"]) if spec.get("locomo") else load_set(spec["set"])
out = rs.run_set(data, emb, [("baseline", "hybrid", {{}})], framing=tuple(spec["framing"]), tenant_per_conv=spec["tenant_per_conv"])
print(json.dumps(rs.rows_of(out)))
"""


def baseline_rows(tree: str, label: str, spec: dict) -> list[list[object]]:
    """The same set searched by another source tree (the previous release) with its own defaults, in its own
    process, on this machine in this run: its row for the table (quality and search P50/P95 beside ours)."""
    import json
    import os
    import subprocess

    env = {**os.environ, "PYTHONPATH": f"{tree}/shared:{tree}"}
    code = BASELINE.format(bench=str(Path(__file__).parent), spec=json.dumps(spec))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return [[label, *row[1:]] for row in json.loads(out.strip().splitlines()[-1])]


def write_path(n: int, rate: float, trees: list[tuple[str, str]]) -> list[list[object]]:
    """``add_message`` P50/P95 with the default embedder loaded (background writer), single adds at ``rate``/s,
    for each (label, source tree) in turn, each in its own process (``benchmarks/engine_writer.steady``)."""
    import json
    import os
    import subprocess

    rows = []
    for label, tree in trees:
        env = {**os.environ, "PYTHONPATH": f"{tree}/shared:{tree}"}
        code = WRITES.format(bench=str(Path(__file__).parent), rate=rate, n=n)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        for r in json.loads(out.strip().splitlines()[-1]):
            rows.append([label, r[0], r[4], r[5], r[6], r[7]])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    set_arguments(ap, CACHE)
    ap.add_argument("--no-framings", action="store_true", help="LoCoMo in the first framing only")
    ap.add_argument("--self-find", type=int, default=100, help="turns per set searched by their own text (0: skip)")
    ap.add_argument("--writes", type=int, default=0, help="single add_message calls at 20/s for the write-path rows (0: skip)")
    ap.add_argument("--baseline-tree", help="a checkout of the previous release: its write path, and its searches with its own defaults "
                    "(every set and LoCoMo framing, in its own process), measured beside this one")
    ap.add_argument("--only-writes", action="store_true")
    ap.add_argument("--k", type=int, default=10, help="hits per search (R@k: the share of evidence turns among them; the context asks 50 to 100)")
    ap.add_argument("--variants", help="comma list: keep the variants whose name contains one of these (default: all)")
    args = ap.parse_args()
    from retrieval_general import load_set

    t_start = time.perf_counter()
    if args.writes:
        trees = [("this tree", str(Path(__file__).resolve().parent.parent))] + ([("baseline " + args.baseline_tree, args.baseline_tree)] if args.baseline_tree else [])
        print(f"\n### add_message with the default embedder loaded (background writer), {args.writes} single adds at 20/s\n")
        print(table(["tree", "store", "add P50 ms", "add P95 ms", "index lag P50 s", "lag P95 s"], write_path(args.writes, 20.0, trees)))
        if args.only_writes:
            return
    emb = CachedEmbedder("e5", args.cache)
    variants = [v for v in VARIANTS if not args.variants or any(w.strip() in v[0] for w in args.variants.split(","))]
    head = [f"R@{args.k}" if h == "R@k" else h for h in HEAD]
    base = f"baseline tree {args.baseline_tree}, its defaults" if args.baseline_tree else ""
    sets = [load_set(p) for p in args.set]
    for path, data in zip(args.set, sets):
        n_turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
        print(f"\n## {data['name']}: {len(data['conversations'])} conversations, {n_turns} turns, {len(data['questions'])} questions\n")
        out = run_set(data, emb, variants, k=args.k)
        extra = baseline_rows(args.baseline_tree, base, {"set": path, "cache": args.cache, "framing": [False, True], "tenant_per_conv": False}) if base else []
        print(table(head, rows_of(out) + extra))
        langs = sorted(next(iter(out.values()))["kinds"])
        if len(langs) > 1:
            print()
            print(table(["variant", *(f"{lang} {m}" for lang in langs for m in ("R@5", "hit@1"))],
                        [[name, *(float(np.mean([x[j] for x in r["kinds"][lang]])) for lang in langs for j in (0, 2))] for name, r in out.items()]))
    if args.locomo:
        data = locomo_set(args.locomo, args.conversations)
        print(f"\n## LoCoMo: {len(data['conversations'])} conversations, {len(data['questions'])} questions, each conversation its own tenant, unfiltered search\n")
        framings = list(FRAMINGS.items())[:1] if args.no_framings else list(FRAMINGS.items())
        summary = []
        for i, (fname, framing) in enumerate(framings):
            again = [v for v in variants if v[0] in FRAMING_VARIANTS]
            out = run_set(data, emb, variants if i == 0 else again, framing=framing, tenant_per_conv=True, k=args.k)
            extra = baseline_rows(args.baseline_tree, base, {"locomo": args.locomo, "n": args.conversations, "cache": args.cache,
                                                            "framing": list(framing), "tenant_per_conv": True}) if base else []
            print(f"### {fname}\n")
            print(table(head, rows_of(out) + extra))
            print()
            for name, r in out.items():
                if name in FRAMING_VARIANTS:
                    m = np.mean(np.array(r["m"]), axis=0)
                    summary.append([fname, name, float(m[0]), float(m[1]), float(m[4]), *([extra[0][1], extra[0][2]] if extra else [])])
        print(table(["LoCoMo framing", "variant", "R@5", "R@10 (share of evidence turns in the top 10)", f"R@{args.k}",
                     *(["baseline R@5", "baseline R@10"] if base else [])], summary))
    if args.self_find:
        found = []
        for data in sets + ([locomo_set(args.locomo, args.conversations)] if args.locomo else []):
            found += self_find(data, emb, args.self_find)
        print("\n### A turn searched by its own exact text, after flush() (found first, or behind turns of the same text)\n")
        print(table(["set", "route", "turns", "found", "share"], found))
    print(f"\nquery embedding (multilingual-e5-small, P50 of 20): {query_embedding_ms():.1f} ms, not in the P50/P95 above (cached)")
    print(f"total {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    main()
