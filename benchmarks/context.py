"""What the model gets: ``get_context_for_user`` end to end, beside the baselines, in one run.

    python benchmarks/context.py --locomo /work/data/locomo10.json            # LoCoMo, all 10 conversations
    python benchmarks/context.py --synth 0                                    # synthetic en/ru/zh, seed 0
    python benchmarks/context.py --set longmemeval_s.json --framings private   # a set from its file (also synthconv.py output)
    python benchmarks/context.py --locomo PATH --synth 0 --floor-study        # the relevance floor: evidence kept vs noise shown
    python benchmarks/context.py --calibrate --synth 1                        # value of a hit / neighbour by rank (dev set)
    python benchmarks/context.py --latency --baseline-ref main --depths 0 40  # P95 at 100k messages, this code (per search_depth) and the ref's
    python benchmarks/context.py --latency --store /tmp/lm_latency_store      # one optimized store, reopened by each code; the codes in lockstep
    python benchmarks/context.py --read-your-writes --baseline-ref main       # a context right after 20 writes == after flush()

Quality (see ``_context_sets``): every conversation ingested in two framings (``private``: one user_id;
``group``: a user_id per speaker), every question asked as the last turn of the last session; a
question's evidence turn is in the prompt when at least half of its 5-word shingles appear in the
prompt text. Methods, per budget (500 / 1,000 / 2,000 / 4,000 tokens, counted with the engine's
tiktoken counter, 4 tokens per message):

- ``buffer``: the last turns of the conversation that fit (a plain chat buffer);
- ``search``: the engine's hybrid ``search`` over the asker's messages (k=100), hits in rank order
  packed into the budget, and into the tokens ``get_context_for_user`` actually used (``search @ same
  tokens``), each hit as the retrievers render it (``[2024-05-02 09:05] Anna: text``, one after the
  other); ``compact lines``: the same hits in the context's own rendering (time order, a repeated date
  left out, the time of day only within a day of the newest turn), to tell the ranking's share from the
  rendering's; ``window + search in the rest``: the window turns the context shows, then hits in rank
  order in the tokens it leaves (what a user would build by hand: the ranking's share when long turns
  make the window a large part of the budget);
- ``context private`` / ``context group``: ``get_context_for_user(asker, last session, query=question,
  max_tokens=budget)``; ``ctx.text`` is the prompt;
- ``context private, a perfect rerank model`` (``--rerank-ceiling``): the same with a rerank model that knows the
  question's evidence turns (``rerank_model=``, ``retrieval.rerank_depth``): the ceiling of what a rerank model can
  give the context, not a model (none runs here).

Embeddings (e5 by default) are cached outside the repo (``--cache``); data is read where it is.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import EvidenceOracle, pct, table  # noqa: E402
from _context_latency import alternated_rows, child_latency, child_serve, child_store, latency_lockstep  # noqa: E402
from _context_sets import (  # noqa: E402
    OFF_TOPIC, Conv, PromptText, asker, evidence_scores, load_assistant, load_file, load_locomo, load_synth, records,
)

BUDGETS = (500, 1000, 2000, 4000)
FRAMINGS = ("private", "group")
ROOT = Path(__file__).resolve().parent.parent


def _engine():
    from layered_memory import LayeredMemory, LayeredMemorySettings

    return LayeredMemory, LayeredMemorySettings


def ingest(mem, convs: list[Conv], framings=FRAMINGS, process: bool = False) -> None:
    for framing in framings:
        h = mem.tenant(framing)
        for c in convs:
            recs = records(c, framing)
            for s in range(0, len(recs), 256):
                h.add_messages(recs[s : s + 256])
        mem.flush()
        if process:
            h.process()


def prewarm(convs: list[Conv], emb, framings=FRAMINGS) -> None:
    """Embed what the engine will embed (each turn after the previous turn of its user's session, as
    ``index.indexer.Indexer.indexed_text`` writes it; the questions) in large cached batches first: the
    writer's batches of 16 are slow on a busy machine. Only a warm-up: a text missed here is embedded
    by the engine itself."""
    texts: list[str] = []
    for c in convs:
        for framing in framings:
            prev: dict[tuple[str, str], dict] = {}
            for r in records(c, framing):
                me = (r["user_name"] or r["user_id"]) if r["role"] == "user" else r["role"]
                key = (r["user_id"], r["session_key"])
                line = f"{me}: {r['content']}"
                p = prev.get(key)
                if p is not None:
                    pt = p["content"] if len(p["content"]) <= 300 else p["content"][:300] + "…"
                    pme = (p["user_name"] or p["user_id"]) if p["role"] == "user" else p["role"]
                    line = f"{pme}: {pt}\n{line}"
                texts.append(line)
                prev[key] = r
    emb.cache.get(list(dict.fromkeys(texts)), "passage")
    emb.cache.get(list(dict.fromkeys(q for c in convs for q in c.questions)), "query")
    emb.cache.save()


def line_pack(lines: list, count, budget: int, compact: bool = True, newest=None) -> tuple[str, int]:
    """Lines (``MemoryLine``) taken in the given order while they fit ``budget`` tokens, as one block:
    ``compact`` in the context's rendering (time order, a repeated date left out, the time of day only within
    a day of ``newest``), else in rank order with the full date and time on every line (the retrievers'
    documents, one after the other)."""
    from layered_memory.context.lines import PER_MESSAGE_TOKENS, block_text, counted_line, recent_from

    recent = recent_from(newest) if compact else None
    chosen: list = []
    used = count("Relevant memory:") + PER_MESSAGE_TOKENS
    for ln in lines:
        cost = count(counted_line(ln, recent)) + 1
        if used + cost <= budget:
            chosen.append(ln)
            used += cost
    if not chosen:
        return "", 0
    text = block_text("memory", chosen, recent) if compact else "Relevant memory:\n" + "\n".join("- " + ln.render() for ln in chosen)
    return text, count(text) + PER_MESSAGE_TOKENS


def hit_lines(hits) -> list:
    from layered_memory.context.candidates import _when
    from layered_memory.context.lines import MemoryLine

    return [MemoryLine(h.text, h.id, _when(h.meta.get("date")), str(h.meta.get("author") or h.meta.get("role"))) for h in hits]


def buffer_text(conv: Conv, count, budget: int) -> tuple[str, int]:
    from layered_memory.context.lines import PER_MESSAGE_TOKENS, line

    out, used = [], 0
    for t in reversed(conv.turns):
        text = line(t.time, t.speaker, t.text)
        cost = count(text) + PER_MESSAGE_TOKENS
        if used + cost > budget:
            break
        out.append(text)
        used += cost
    return "\n".join(reversed(out)), used


def run_quality(name: str, convs: list[Conv], emb, budgets, framings, process: bool, rerank_ceiling: bool = False) -> list[list[object]]:
    from layered_memory.context.lines import PER_MESSAGE_TOKENS

    LayeredMemory, _ = _engine()
    scores: dict[tuple[str, int], list[tuple[float, float, int]]] = defaultdict(list)
    lat: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=emb)
        oracle = EvidenceOracle()
        t0 = time.perf_counter()
        ingest(mem, convs, framings, process)
        print(f"  {name}: ingested in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        count = mem.count_tokens
        for c in convs:
            for q, ev in zip(c.questions, c.evidence):
                for framing in framings:
                    h = mem.tenant(framing)
                    user = asker(c, framing)
                    used, windows = {}, {}
                    for b in budgets:
                        ctx = h.get_context_for_user(user, c.last_session, query=q, max_tokens=b)
                        lat.append(ctx.timings.get("total", 0.0))
                        share, every = evidence_scores(ctx.text, c, ev)
                        scores[(f"context {framing}", b)].append((share, every, ctx.tokens))
                        used[b] = ctx.tokens
                        window = [m.content for m in ctx if m.kind == "window"]
                        windows[b] = ("\n".join(window), sum(count(t) + PER_MESSAGE_TOKENS for t in window))
                    if framing != "private":
                        continue
                    if rerank_ceiling:
                        oracle.evidence = {c.turns[i].text for i in ev}
                        mem._core.searcher.rerank_model = oracle  # a benchmark's reach-in: one store, with and without
                        for b in budgets:
                            ctx = h.get_context_for_user(user, c.last_session, query=q, max_tokens=b)
                            scores[("context private, a perfect rerank model", b)].append((*evidence_scores(ctx.text, c, ev), ctx.tokens))
                        mem._core.searcher.rerank_model = None
                    hits = hit_lines(h.search(q, filters={"user_id": user}, k=100).hits)
                    for b in budgets:
                        for label, target, compact in (("search", b, False), ("search @ same tokens", used[b], False),
                                                       ("search @ same tokens, compact lines", used[b], True)):
                            text, n = line_pack(hits, count, target, compact, c.turns[-1].time)
                            scores[(label, b)].append((*evidence_scores(text, c, ev), n))
                        # what a user would build by hand: the context's own window, search hits in the tokens left
                        window, wt = windows[b]
                        text, n = line_pack(hits, count, used[b] - wt, False, c.turns[-1].time)
                        scores[("window + search in the rest", b)].append((*evidence_scores(window + "\n" + text, c, ev), n + wt))
                        text, n = buffer_text(c, count, b)
                        scores[("buffer", b)].append((*evidence_scores(text, c, ev), n))
        mem.close()
    print(f"  {name}: get_context_for_user P50 {pct(lat, 50):.1f} ms, P95 {pct(lat, 95):.1f} ms (query embedding included)", file=sys.stderr)
    order = ["buffer", "search", "search @ same tokens", "search @ same tokens, compact lines", "window + search in the rest",
             *(f"context {f}" for f in framings), "context private, a perfect rerank model"]
    rows = []
    for b in budgets:
        for label in order:
            v = scores.get((label, b))
            if v:
                a = np.array(v, dtype=float)
                rows.append([name, b, label, float(a[:, 0].mean()), float(a[:, 1].mean()), f"{a[:, 2].mean():,.0f}"])
    return rows


def cached_embedder(model: str, cache: str, also: list[str] = ()):
    """The model behind a per-string cache in ``cache``; ``also``: other caches of the same model read
    first (never written)."""
    from retrieval import CachedEmbedder

    os.makedirs(cache, exist_ok=True)
    emb = CachedEmbedder(model, cache)
    for path in also:
        if os.path.exists(path):
            z = np.load(path, allow_pickle=False)
            for k, v in zip(z["keys"], z["vecs"]):
                emb.cache.rows.setdefault(str(k), v)
    return emb


def sets(args) -> list[tuple[str, list[Conv]]]:
    out = []
    if args.locomo:
        out.append((f"LoCoMo ({args.conversations or 10} conv.)", load_locomo(args.locomo, args.conversations)))
    if args.synth is not None:
        langs = tuple(args.langs.split(",")) if args.langs else None
        out.append((f"synth {'/'.join(langs or ('en', 'ru', 'zh'))} (seed {args.synth})", load_synth(args.synth, langs=langs)))
    for seed in args.assistant:
        out.append((f"long assistant chats (seed {seed})", load_assistant(seed)))
    for path in args.set:
        out.append((Path(path).stem, load_file(path)))
    return out


# -- the relevance floor and the value shares (dev sets) ---------------------------------------------------
def candidate_study(convs: list[Conv], emb) -> dict:
    """Per candidate kind and rank bucket: how often it holds evidence; the relevance of every candidate
    (evidence or not) and the best relevance per question, for the conversation's questions and for
    questions no conversation answers (``OFF_TOPIC``)."""
    LayeredMemory, _ = _engine()
    from layered_memory.context.build import recall

    buckets = ((0, 1), (1, 3), (3, 6), (6, 10), (10, 20), (20, 40), (40, 100))
    hits: dict[tuple[str, int], list[int]] = defaultdict(list)
    rel_ev, rel_other, top_on, top_off = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=emb)
        ingest(mem, convs, ("private",))
        h = mem.tenant("private")
        for c in convs:
            key_of = {f"{t.session}|t{i}": i for i, t in enumerate(c.turns)}
            window = h.get_session_messages(c.cid, c.last_session, limit=h.settings.memory.short_term_window)
            for q, ev in zip(c.questions, c.evidence):
                cands = recall(h._core, h, c.cid, c.last_session, [q], window, False, 4000)
                top = max((x.relevance for x in cands), default=0.0)
                top_on.append(top)
                evs = set(ev)
                ranks: dict[int, int] = {}
                for cand in cands:
                    if cand.kind == "message":
                        ranks[id(cand)] = len(ranks)
                per_kind: dict[str, int] = defaultdict(int)
                for cand in cands:
                    idx = key_of.get(cand.key)
                    is_ev = idx in evs if idx is not None else PromptText(cand.item.text).holds(" ".join(c.turns[i].text for i in ev))
                    if cand.parent is not None:  # a neighbour: the rank of its hit
                        r = ranks.get(id(cand.parent), 99)
                    elif cand.kind == "message":
                        r = ranks[id(cand)]
                    else:  # topic summaries, facts: their rank in their tier
                        r = per_kind[cand.kind]
                        per_kind[cand.kind] += 1
                    b = next((i for i, (lo, hi) in enumerate(buckets) if lo <= r < hi), len(buckets) - 1)
                    hits[(cand.kind, b)].append(int(is_ev))
                    (rel_ev if is_ev else rel_other).append((top, cand.relevance))
            for q in OFF_TOPIC:
                top_off.append(max((x.relevance for x in recall(h._core, h, c.cid, c.last_session, [q], window, False, 4000)), default=0.0))
        mem.close()
    return {"hits": hits, "buckets": buckets, "rel_ev": rel_ev, "rel_other": rel_other, "top_on": top_on, "top_off": top_off}


def print_calibration(name: str, st: dict) -> None:
    rows = []
    for (kind, b), v in sorted(st["hits"].items()):
        lo, hi = st["buckets"][b]
        rows.append([name, kind, f"{lo}-{hi - 1}", len(v), float(np.mean(v))])
    print(table(["set", "candidate", "rank (a neighbour: its hit's)", "n", "P(evidence)"], rows))


def print_floor(name: str, st: dict) -> None:
    from layered_memory import LayeredMemorySettings

    floor = LayeredMemorySettings().context.relevance_floor
    ev, other = np.asarray(st["rel_ev"] or [(0.0, 0.0)]), np.asarray(st["rel_other"] or [(0.0, 0.0)])
    on, off = np.asarray(st["top_on"] or [0.0]), np.asarray(st["top_off"] or [0.0])
    rows = [[name, f, float((ev[:, 1] >= f).mean()), float((other[:, 1] >= f).mean())] for f in (0.0, 0.1, 0.15, 0.18, 0.2, 0.25, 0.3, 0.4, 0.5)]
    print(table(["set", "line floor", "evidence candidates kept", "other candidates kept"], rows))
    rows = []
    for g in (0.0, 0.25, 0.27, 0.29, 0.3, 0.32, 0.35, 0.4, 0.5):
        kept = float(((ev[:, 0] >= g) & (ev[:, 1] >= floor)).mean())
        rows.append([name, g, float((on < g).mean()), kept, float((off >= g).mean())])
    print(table(["set", f"question gate (line floor {floor})", "questions left without recalled lines", "evidence candidates kept",
                 "off-topic questions shown anything"], rows))


def off_topic_lines(convs: list[Conv], emb, configs=((0.0, 0.0), (0.2, 0.0), (0.18, 0.29), (0.2, 0.29), (0.2, 0.35))) -> list[list[object]]:
    """Recalled lines ``get_context_for_user`` shows at 2,000 tokens for questions no conversation answers
    (``OFF_TOPIC``), per (line floor, question gate): every one of them is noise. The defaults are
    (0.18, 0.29); the others are what they were chosen against."""
    LayeredMemory, _ = _engine()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=emb)
        ingest(mem, convs, ("private",))
        h = mem.tenant("private")
        saved = (h.settings.context.relevance_floor, h.settings.context.relevance_gate)
        for floor, gate in configs:
            h.settings.context.relevance_floor, h.settings.context.relevance_gate = floor, gate
            lines, shown = [], 0
            for c in convs:
                for q in OFF_TOPIC:
                    ctx = h.get_context_for_user(c.cid, c.last_session, query=q, max_tokens=2000)
                    n = sum(m.content.count("\n- ") for m in ctx if m.kind in ("memory", "conversation_memory"))
                    lines.append(n)
                    shown += n > 0
            rows.append([floor, gate, float(np.mean(lines)), shown / len(lines)])
        h.settings.context.relevance_floor, h.settings.context.relevance_gate = saved
        mem.close()
    return rows


# -- latency and read-your-writes, for this code and a baseline ref ----------------------------------------
def code_at(ref: str, where: str) -> str:
    """``shared/`` of git ``ref`` extracted under ``where`` (a PYTHONPATH root)."""
    subprocess.run(f"git -C {ROOT} archive {ref} shared | tar -x -C {where}", shell=True, check=True)
    return os.path.join(where, "shared")


def in_code(path: str, mode: str, args) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{path}:{ROOT}"}
    cmd = [sys.executable, __file__, "--child", mode, "--sizes", *map(str, args.sizes), "--samples", str(args.samples), "--runs", str(args.runs),
           "--depths", *map(str, args.depths)] + (["--store", args.store] if args.store else [])
    if mode == "quality":
        cmd += ["--budgets", *map(str, args.budgets), "--embedder", args.embedder, "--cache", args.cache, "--also-cache", *args.also_cache]
        cmd += ["--locomo", args.locomo] if args.locomo else []
        cmd += ["--conversations", str(args.conversations)] + (["--synth", str(args.synth)] if args.synth is not None else [])
        cmd += ["--assistant", *map(str, args.assistant)] if args.assistant else []
        cmd += [arg for path in args.set for arg in ("--set", path)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def child_quality(args) -> dict:
    """The context of the code on PYTHONPATH (a baseline ref), private framing: its text is the messages'
    contents joined (what an older ``get_context_for_user`` returned carries no ``text``)."""
    LayeredMemory, _ = _engine()
    emb = cached_embedder(args.embedder, args.cache, args.also_cache)
    out: dict[str, list[float]] = {}
    for name, convs in sets(args):
        acc: dict[int, list[tuple[float, float, int]]] = defaultdict(list)
        with tempfile.TemporaryDirectory() as tmp:
            mem = LayeredMemory.embedded(tmp, embedder=emb)
            ingest(mem, convs, ("private",))
            h = mem.tenant("private")
            for c in convs:
                for q, ev in zip(c.questions, c.evidence):
                    for b in args.budgets:
                        ctx = h.get_context_for_user(c.cid, c.last_session, query=q, max_tokens=b)
                        text = "\n\n".join(m.content for m in ctx)
                        acc[b].append((*evidence_scores(text, c, ev), sum(mem.count_tokens(m.content) + 4 for m in ctx)))
            mem.close()
        for b, v in acc.items():
            a = np.array(v, dtype=float)
            out[f"{name}|{b}"] = [float(a[:, 0].mean()), float(a[:, 1].mean()), float(a[:, 2].mean())]
    return out


def child_read_your_writes(args) -> dict:
    """``args.runs`` rounds in one store: 20 ``add_message`` calls (the next turns of a synthetic chat, over
    several sessions), a context right away and again after ``flush()``, compared whole. The real default
    embedder, so the writer lags behind the writes as it does in a bot."""
    from layered_memory.providers.local import default_embedder

    LayeredMemory, _ = _engine()
    recs = [r for c in load_synth(7, per_style=1) for r in records(c, "private")]  # 534 turns, en / ru / zh
    same = 0
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=default_embedder())
        mem.add_messages(recs[:20])
        mem.flush()
        for run in range(args.runs):
            batch = recs[20 + 20 * run : 40 + 20 * run]
            if len(batch) < 20:
                break
            for r in batch:
                mem.add_message(r)
            user, session, query = batch[-1]["user_id"], batch[-1]["session_key"], batch[3]["content"]
            before = [(m.kind, m.content) for m in mem.get_context_for_user(user, session, query=query)]
            mem.flush()
            after = [(m.kind, m.content) for m in mem.get_context_for_user(user, session, query=query)]
            same += before == after
        mem.close()
    return {"same": same, "runs": args.runs}


def compare(args, mode: str) -> None:
    rows: list[list[object]] = []
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        base_code = code_at(args.baseline_ref, tmp)
        if mode == "latency" and args.store:  # one index for every code, built by this one; the two codes in lockstep
            in_code(str(ROOT / "shared"), "store", args)
            rows = latency_lockstep(args, base_code)
        else:
            for _ in range(args.repeat if mode == "latency" else 1):  # alternated: the machine's load moves
                runs.append((in_code(base_code, mode, args), in_code(str(ROOT / "shared"), mode, args), os.getloadavg()[0]))
    if mode == "latency":
        rows += alternated_rows(runs)
        print(table(["messages, index", "this branch: context.search_depth", "load", f"{args.baseline_ref}: P50 / P95 ms", "this branch: P50 / P95 ms", "P95 delta",
                     f"{args.baseline_ref}: CPU P50 / P95 ms", "this branch: CPU P50 / P95 ms", "CPU P95 delta"], rows))
        print("\nget_context_for_user(query=...) at the default budget on the embedded default (one scope), query embedding "
              "excluded (pool vectors); CPU: the calling thread's. 'fresh': right after flush(), no HNSW yet (exact search); 'optimized': "
              "after optimize(), the steady state the writer reaches by itself (it builds HNSW once 20,000 points are outside it); "
              "'reopened' (--store): a copy of one optimized store built by this code, opened from disk by each code. "
              "Bar: P95 within +10 ms of the baseline")
        return
    base, ours, load = runs[0]
    print(table(["code", "context right after 20 writes == after flush()"],
                [[args.baseline_ref, f"{base['same']} / {base['runs']}"], ["this branch", f"{ours['same']} / {ours['runs']}"]]))
    print(f"\nreal default embedder (the writer lags behind the writes); load {load:.2f}; bar: {args.runs} / {args.runs}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", help="path to locomo10.json (CC BY-NC; read in place)")
    ap.add_argument("--conversations", type=int, default=0, help="LoCoMo: only the first N (0: all 10)")
    ap.add_argument("--synth", type=int, default=None, help="the synthetic en/ru/zh set of this seed (benchmarks/synthconv.py)")
    ap.add_argument("--langs", default=None, help="the synthetic set's languages (synthconv.py --langs), e.g. es,de")
    ap.add_argument("--assistant", type=int, nargs="*", default=[], help="the long assistant chats of these seeds (benchmarks/assistantchat.py)")
    ap.add_argument("--set", action="append", default=[], help="a set's file (repeatable): synthconv.py / assistantchat.py output, "
                    "or LongMemEval's own format (e.g. longmemeval_s.json; one user per instance, so the private framing only)")
    ap.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    ap.add_argument("--framings", nargs="+", default=list(FRAMINGS))
    ap.add_argument("--process", action="store_true", help="run mem.process() after ingesting (session and topic summaries)")
    ap.add_argument("--embedder", default="e5", choices=["e5", "use"])
    ap.add_argument("--cache", default="/tmp/lm_context_cache", help="embedding cache directory (outside the repo)")
    ap.add_argument("--also-cache", nargs="*", default=[], help="other .npz caches of the same model to read (never written)")
    ap.add_argument("--prewarm", action="store_true", help="only fill the embedding cache for the chosen sets")
    ap.add_argument("--calibrate", action="store_true", help="P(evidence) per candidate kind and rank")
    ap.add_argument("--floor-study", action="store_true", help="relevance of evidence, other and off-topic candidates per floor")
    ap.add_argument("--rerank-ceiling", action="store_true", help="quality: also the context with a rerank model that knows the answer")
    ap.add_argument("--latency", action="store_true")
    ap.add_argument("--read-your-writes", action="store_true")
    ap.add_argument("--baseline-ref", default="main", help="git ref measured beside this code (latency, read-your-writes)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--depths", type=int, nargs="+", default=[0], help="latency: context.search_depth values of this code (0: default)")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=2, help="latency: baseline and this code alternated this many times")
    ap.add_argument("--before", action="store_true", help="quality: also the context of --baseline-ref (private framing)")
    ap.add_argument("--store", help="latency: measure every code on a copy of one optimized store kept in this directory "
                    "(built by this code when missing; outside the repo), reopened from disk, the two codes asked the "
                    "same queries in turn (--samples x --repeat)")
    ap.add_argument("--child", choices=["latency", "read-your-writes", "quality", "store", "serve"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "serve":
        return child_serve(args)
    if args.child:
        run = {"latency": child_latency, "read-your-writes": child_read_your_writes, "quality": child_quality, "store": child_store}[args.child]
        print(json.dumps(run(args)))
        return
    if args.latency:
        compare(args, "latency")
    if args.read_your_writes:
        compare(args, "read-your-writes")
    chosen = sets(args)
    if not chosen:
        return
    emb = cached_embedder(args.embedder, args.cache, args.also_cache)
    if args.prewarm:
        for _, convs in chosen:
            prewarm(convs, emb, args.framings)
        return
    if args.calibrate or args.floor_study:
        for name, convs in chosen:
            st = candidate_study(convs, emb)
            if args.calibrate:
                print_calibration(name, st)
            if args.floor_study:
                print_floor(name, st)
                print(table(["line floor", "question gate", "off-topic question at 2,000 tokens: recalled lines",
                             "share of off-topic questions shown any line"], off_topic_lines(convs, emb)))
        emb.cache.save()
        return
    before = {}
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            before = in_code(code_at(args.baseline_ref, tmp), "quality", args)
    rows = []
    for name, convs in chosen:
        n_q = sum(len(c.questions) for c in convs)
        print(f"{name}: {len(convs)} conversations, {sum(len(c.turns) for c in convs)} turns, {n_q} questions", file=sys.stderr)
        emb.cache.save()
        rows += run_quality(name, convs, emb, args.budgets, args.framings, args.process, args.rerank_ceiling)
        for b in args.budgets:
            if f"{name}|{b}" in before:
                share, every, tokens = before[f"{name}|{b}"]
                rows.append([name, b, f"context private ({args.baseline_ref})", share, every, f"{tokens:,.0f}"])
    order = {name: i for i, (name, _) in enumerate(chosen)}
    rows.sort(key=lambda r: (order[r[0]], r[1]))  # stable: each budget's rows stay in their order
    print(table(["set", "budget", "what the model gets", "evidence in the prompt", "every evidence turn", "tokens used"], rows))
    print(f"\nload {os.getloadavg()[0]:.2f}; bars at 2,000 tokens: context private >= 0.90 and >= search @ same tokens + 0.03")


if __name__ == "__main__":
    main()
