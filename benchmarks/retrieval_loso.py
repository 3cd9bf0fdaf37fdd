"""Defaults chosen by leave-one-set-out: a retrieval lab over several set shapes, no engine.

    python benchmarks/retrieval_loso.py --locomo /work/data/locomo10.json \
        --synth /work/cache/synth/eval.json --assistant /work/cache/synth/assistant.json [--grid NAME]

Sets (each a different shape): LoCoMo (two friends, short turns), the synthetic chats of
``synthconv.py`` (en/ru/zh, short turns), its assistant chats (en/ru/zh, wordy turns, session
questions) and ``assistantchat.py`` (long requests to an assistant, tens of sessions, a detail said
once in passing, updates, counting questions).

Per turn it rebuilds what the engine indexes: the turn's own text ("Speaker: text"), the text after
the previous turn of its chat (the context), BM25 terms of the context plus the turn's own terms;
dense scores from cached embeddings of both texts. Each question takes each side's top
``prefetch_limit`` within its conversation and hands them to the engine's second stage
(:mod:`layered_memory.retrieval.rerank`) under a grid of settings. For every held-out set, the
setting with the best mean over the *other* sets is reported on it (leave-one-set-out), beside the
single routes and the setting picked on all sets.

A lab, not the bar: ``benchmarks/retrieval_sets.py`` measures the product path (``mem.search``).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import table  # noqa: E402
from _loso_corpus import CACHE, Conv, Corpus, candidates, load_locomo, load_synth  # noqa: E402
from retrieval_components import EmbedCache, LazyEmbedder  # noqa: E402
from retrieval_lab import top  # noqa: E402

from layered_memory.config import RetrievalSettings  # noqa: E402
from layered_memory.retrieval.rerank import SecondStage  # noqa: E402

METRICS = ("R@5", "R@10", "hit@1", "sess@5")


def question_metrics(conv: Conv, ranked: list[int], ev: list[int]) -> tuple[float, ...]:
    e = set(ev)
    gold = {conv.turns[i]["chat"] for i in ev}
    return (len(e & set(ranked[:5])) / len(e), len(e & set(ranked[:10])) / len(e), float(bool(ranked) and ranked[0] in e),
            float(gold <= {conv.turns[i]["chat"] for i in ranked[:5]}))


def setting(corpus: Corpus, over: dict) -> tuple[RetrievalSettings, SecondStage, str]:
    """A grid entry as the engine's settings, their second stage and the dense aggregation (``over["dense"]``)."""
    over = dict(over)
    dense_how = over.pop("dense", "mean")
    s = RetrievalSettings().model_copy(update=over)
    return s, SecondStage(s, corpus.analyzer), dense_how


def question_lists(corpus: Corpus, s: RetrievalSettings, dense_how: str, route: str = "hybrid"):
    """Per question of a set: its conversation, index, text and each side's top ``prefetch_limit`` as ``route`` reads them."""
    whole = not s.drop_preamble
    for ci, c in enumerate(corpus.convs):
        for qi, q in enumerate(c.questions):
            lists: dict[str, list[tuple[int, float]]] = {}
            if route in ("hybrid", "dense") and dense_how.startswith("rescore:"):  # the mean's list, rescored with the sentences
                listed = top(corpus.dense(ci, qi, "mean", whole), s.prefetch_limit)
                scored = corpus.dense(ci, qi, dense_how[8:], whole)
                lists["dense"] = sorted(((i, float(scored[i])) for i, _ in listed), key=lambda x: -x[1])
            elif route in ("hybrid", "dense"):
                lists["dense"] = top(corpus.dense(ci, qi, dense_how, whole), s.prefetch_limit)
            if route in ("hybrid", "bm25"):
                lists["sparse"] = top(corpus.bm25(ci, q), s.prefetch_limit, positive=True)
            yield c, qi, q, lists


def run(corpus: Corpus, route: str, over: dict) -> np.ndarray:
    """Mean metrics (METRICS order) of one setting on one set. ``route``: hybrid | dense | bm25."""
    corpus = corpus.for_bm25(over)
    s, stage, dense_how = setting(corpus, over)
    rows = []
    for c, qi, q, lists in question_lists(corpus, s, dense_how, route):
        if route == "hybrid":
            ranked = [cd.key for cd in stage.rank(q, candidates(c, lists), k=10)]
        else:
            ranked = [i for i, _ in next(iter(lists.values()))[:10]]
        rows.append(question_metrics(c, ranked, c.evidence[qi]))
    return np.mean(np.array(rows), axis=0)


def learned_rows(corpus: Corpus, over: dict) -> list[tuple[np.ndarray, np.ndarray, list, Conv, list[int]]]:
    """Per question of a set: the learned reranker's features (``SecondStage.feature_matrix``) under ``over``,
    the labels (an evidence turn), the candidate keys, the conversation and its evidence."""
    s, stage, dense_how = setting(corpus, over)
    out = []
    for c, qi, q, lists in question_lists(corpus, s, dense_how):
        cands = candidates(c, lists)
        ev = c.evidence[qi]
        out.append((stage.feature_matrix(q, cands), np.array([float(cd.key in ev) for cd in cands]), [cd.key for cd in cands], c, ev))
    return out


def learned_loso(corpora: dict[str, Corpus], over: dict) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The learned reranker cross-validated by set: for each held-out set, a model fitted on the other sets'
    conversations (``train_reranker.fit_monotone``), scored there beside the rules. held -> (rules, learned) metrics."""
    from train_reranker import fit_monotone

    rows = {name: learned_rows(c, over) for name, c in corpora.items()}
    out = {}
    for held in corpora:
        train = [r for name, rs in rows.items() if name != held for r in rs if r[1].any()]
        coef, intercept = fit_monotone(np.vstack([r[0] for r in train]), np.concatenate([r[1] for r in train]))
        learned = []
        for x, _, keys, c, ev in rows[held]:
            order = np.argsort(-(x @ coef + intercept), kind="stable")[:10]
            learned.append(question_metrics(c, [keys[i] for i in order], ev))
        rules = run(corpora[held], "hybrid", over)
        out[held] = (rules, np.mean(np.array(learned), axis=0))
    return out


def objective(results: dict[str, np.ndarray], sets: list[str], metric: int, best_route: dict[str, float] | None) -> tuple[float, float]:
    """What a setting is picked by on ``sets``: with ``best_route`` (each set's best single route), first the
    worst margin over it (a hybrid below its best route on any set is a bug), then the mean; else the mean."""
    mean = float(np.mean([results[s][metric] for s in sets]))
    if best_route is None:
        return (mean, 0.0)
    return (min(0.0, min(results[s][metric] - best_route[s] + 0.005 for s in sets)), mean)


def group_recall(corpus: Corpus, over: dict, how: str, ks: tuple[int, ...] = (1, 3, 5)) -> np.ndarray:
    """``search(group_by="session")`` in the lab: every candidate ranked by the second stage, grouped into
    sessions by ``retrieval.groups``; per question, whether every gold session is among the best k groups."""
    from layered_memory.retrieval.groups import group_ranked

    s, stage, dense_how = setting(corpus, over)
    rows = []
    for c, qi, q, lists in question_lists(corpus, s, dense_how):
        cands = candidates(c, lists)
        ranked = stage.rank(q, cands, k=len(cands))
        groups = group_ranked([cd.payload for cd in ranked], [cd.score for cd in ranked], how=how, gap_seconds=s.session_gap_hours * 3600)
        gold = {c.turns[i]["chat"] for i in c.evidence[qi]}
        chats = [ranked[g.members[0]].payload["chat_id"] for g in groups]
        rows.append([float(gold <= set(chats[:k])) for k in ks])
    return np.mean(np.array(rows), axis=0)


def loso(results: dict[str, dict[str, np.ndarray]], metric: int = 0, best_route: dict[str, float] | None = None) -> dict[str, tuple[str, float]]:
    """For each held-out set: the grid entry with the best ``objective`` over the other sets, and its score there."""
    sets = list(next(iter(results.values())))
    out = {}
    for held in sets:
        others = [s for s in sets if s != held]
        best = max(results, key=lambda name: (objective(results[name], others, metric, best_route), -list(results).index(name)))
        out[held] = (best, float(results[best][held][metric]))
    return out


OFF = {"fusion": "rrf", "neighbour_weight": 0.0, "session_weight": 0.0, "speaker_weight": 0.0, "phrase_weight": 0.0, "time_weight": 0.0}
TODAY = {"dense": "ctx"}  # the previous release's defaults: one context vector, adaptive fusion, signals on
GRIDS: dict[str, list[tuple[str, str, dict]]] = {
    "routes": [
        ("bm25", "bm25", {}), ("dense ctx (today)", "dense", {"dense": "ctx"}), ("dense own", "dense", {"dense": "own"}),
        ("dense max(own, ctx)", "dense", {"dense": "max"}), ("dense mean", "dense", {"dense": "mean"}),
        ("plain rrf k=60 (seed 003), ctx", "hybrid", {**OFF, "rrf_k": 60, "dense_weight": 1.0, "dense": "ctx"}),
        ("today's defaults", "hybrid", TODAY),
        ("today's defaults, dense max", "hybrid", {"dense": "max"}),
        ("today's defaults, dense mean", "hybrid", {"dense": "mean"}),
        ("today's defaults, dense own", "hybrid", {"dense": "own"}),
        ("today's defaults, dense max-0.02", "hybrid", {"dense": "max-0.02"}),
        ("today's defaults, dense max-0.04", "hybrid", {"dense": "max-0.04"}),
        ("today's defaults, dense max-0.06", "hybrid", {"dense": "max-0.06"}),
        ("dense max-0.02", "dense", {"dense": "max-0.02"}),
        ("dense max-0.04", "dense", {"dense": "max-0.04"}),
        ("rrf k=2 no signals, ctx", "hybrid", {**OFF, "dense": "ctx"}),
        ("rrf k=2 no signals, max", "hybrid", {**OFF, "dense": "max"}),
        ("rrf k=2 no signals, mean", "hybrid", {**OFF, "dense": "mean"}),
    ],
}


def _short(name: str) -> str:
    return name.replace("synth-assistant", "s-asst").replace("synth-chat", "s-chat").replace("long-assistant", "long")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo")
    ap.add_argument("--synth", action="append", default=[], help="synthconv.py output (repeatable: one set per style and file)")
    ap.add_argument("--assistant", action="append", default=[], help="assistantchat.py output (repeatable)")
    ap.add_argument("--cache", default=CACHE)
    ap.add_argument("--extra-cache", action="append", default=[], help="more cache directories to read embeddings from")
    ap.add_argument("--grid", default="routes")
    ap.add_argument("--bm25", nargs=3, type=float, metavar=("K1", "B", "AVGDL"), help="BM25's parameters for the message vectors (default: the settings')")
    ap.add_argument("--metric", default="R@5", choices=METRICS)
    ap.add_argument("--show", nargs="+", choices=METRICS, help="metrics shown per set (default: all)")
    ap.add_argument("--margin", action="store_true", help="pick by the worst margin over each set's best single route first")
    ap.add_argument("--groups", action="store_true", help="also sessions as units (group_by) under the picked setting, per aggregation")
    ap.add_argument("--learned", action="store_true", help="also the learned reranker, cross-validated by set, under the picked setting")
    args = ap.parse_args()
    cache = EmbedCache(args.cache, "e5", LazyEmbedder("e5"))
    for extra in args.extra_cache:
        cache.rows.update(EmbedCache(extra, "e5", LazyEmbedder("e5")).rows)
    base = RetrievalSettings()
    if args.bm25:
        base = base.model_copy(update=dict(zip(("message_k1", "message_b", "message_avgdl"), args.bm25)))
    sets: dict[str, list[Conv]] = {}
    if args.locomo:
        sets["locomo"] = load_locomo(args.locomo)
    for i, path in enumerate(args.synth):
        tag = f"-{i + 1}" if len(args.synth) > 1 else ""
        sets[f"synth-chat{tag}"] = load_synth(path, "chat")
        sets[f"synth-assistant{tag}"] = load_synth(path, "assistant")
    for i, path in enumerate(args.assistant):
        sets[f"long-assistant{f'-{i + 1}' if len(args.assistant) > 1 else ''}"] = load_synth(path)
    corpora = {name: Corpus(name, convs, cache, base) for name, convs in sets.items()}
    grid = GRIDS[args.grid] if args.grid in GRIDS else GRIDS_FN[args.grid]()
    results: dict[str, dict[str, np.ndarray]] = {}
    t0 = time.perf_counter()
    for name, route, over in grid:
        results[name] = {s: run(c, route, over) for s, c in corpora.items()}
    print(f"{len(grid)} settings x {len(corpora)} sets in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    m = METRICS.index(args.metric)
    show = [METRICS.index(k) for k in (args.show or METRICS)]
    heads = [f"{_short(s)} {METRICS[k]}" for s in corpora for k in show]
    print(table(["setting", *heads, f"mean {args.metric}"],
                [[name, *(float(results[name][s][k]) for s in corpora for k in show), float(np.mean([results[name][s][m] for s in corpora]))]
                 for name, _, _ in grid]))
    hybrid = {n: r for n, (n2, route, _) in zip(results, grid) for r in [results[n]] if route == "hybrid"}
    best_route = None
    if args.margin:  # each set's best single route, measured in this run
        routes = {s: max(float(run(c, "bm25", {})[m]), float(run(c, "dense", {})[m]), float(run(c, "dense", {"dense": DENSE_NOW})[m]))
                  for s, c in corpora.items()}  # dense: the mean's list, and the mean's list rescored with the sentences (the default)
        best_route = routes
        print("\nbest single route per set: " + ", ".join(f"{s} {v:.3f}" for s, v in routes.items()))
        print(table(["setting", *(f"{_short(s)} margin" for s in corpora)],
                    [[n, *(float(hybrid[n][s][m] - routes[s]) for s in corpora)] for n in hybrid]))
    if len(corpora) > 1 and hybrid:
        how = "worst margin over the best single route, then mean" if args.margin else "mean"
        print(f"\nleave-one-set-out on {args.metric}, picked by {how} over the other sets (hybrid settings only):")
        for held, (best, score) in loso(hybrid, m, best_route).items():
            print(f"  held out {held:<16} picked on the others: {best:<50} {args.metric} {score:.3f}")
        overall = max(hybrid, key=lambda n: objective(hybrid[n], list(corpora), m, best_route))
        print(f"  picked on all sets: {overall}")
        if args.groups:
            from layered_memory.retrieval.groups import AGGREGATIONS

            over = next(o for n, _, o in grid if n == overall)
            print(f"\nsessions as units (group_by=\"session\") under {overall!r}: every gold session among the best k sessions")
            rows = {how: {sname: group_recall(c, over, how) for sname, c in corpora.items()} for how in AGGREGATIONS}
            print(table(["aggregation", *(f"{_short(sname)} @{k}" for sname in corpora for k in (1, 3, 5)), "mean @3"],
                        [[how, *(float(v) for sname in corpora for v in r[sname]), float(np.mean([r[sname][1] for sname in corpora]))]
                         for how, r in rows.items()]))
            for held in corpora:
                pick = max(rows, key=lambda h: np.mean([rows[h][sname][1] for sname in corpora if sname != held]))
                print(f"  held out {held:<16} picked on the others: {pick:<6} @3 {rows[pick][held][1]:.3f}")
        if args.learned:
            over = next(o for n, _, o in grid if n == overall)
            print(f"\nlearned reranker, fitted on the other sets, under {overall!r} ({args.metric}: rules -> learned):")
            for held, (rules, learned) in learned_loso(corpora, over).items():
                print(f"  {held:<16} {rules[m]:.3f} -> {learned[m]:.3f}   (R@10 {rules[1]:.3f} -> {learned[1]:.3f})")


SIGNALS = {"neighbour_weight": 0.4, "session_weight": 0.3, "speaker_weight": 0.7, "time_weight": 0.8, "time_decay": 1.0}  # the previous release's


def _fusion_grid() -> list[tuple[str, str, dict]]:
    """Fusions without signals, then with the previous release's signals, on both dense vectors."""
    out = [("rrf k=2 dense 0.5 (previous, no signals)", "hybrid", OFF),
           ("rrf k=60 (seed 003)", "hybrid", {**OFF, "rrf_k": 60, "dense_weight": 1.0})]
    for f in ("zscore", "adaptive"):
        out.append((f, "hybrid", {**OFF, "fusion": f}))
    for p in (1.0, 2.0, 3.0):
        for m in (0.0, 1.0):
            for d in (0.0, 1.0):
                for ln in (0.0, 0.2):
                    out.append((f"confidence p={p} m={m} d={d} len={ln}", "hybrid",
                                {**OFF, "fusion": "confidence", "confidence_power": p, "confidence_margin": m,
                                 "confidence_disagreement": d, "confidence_length": ln}))
    return out


def _signal_grid(fusion: dict) -> list[tuple[str, str, dict]]:
    out = [("no signals", "hybrid", {**OFF, **fusion}), ("previous signals", "hybrid", {**OFF, **fusion, **SIGNALS})]
    for name in SIGNALS:
        for v in (0.0, 0.15, 0.3, 0.5, 0.8):
            out.append((f"previous signals, {name}={v}", "hybrid", {**OFF, **fusion, **SIGNALS, name: v}))
    return out


def _weights_grid() -> list[tuple[str, str, dict]]:
    """Fusions and the dense side's weight, with the previous release's signals."""
    out = []
    for dw in (1.0, 1.5, 2.0, 3.0):
        out.append((f"zscore dw={dw}", "hybrid", {**OFF, **SIGNALS, "fusion": "zscore", "fusion_dense_weight": dw}))
        out.append((f"adaptive dw={dw}", "hybrid", {**OFF, **SIGNALS, "fusion": "adaptive", "fusion_dense_weight": dw}))
        for p, m, d, ln in ((1.0, 1.0, 0.0, 0.0), (1.0, 1.0, 1.0, 0.0), (1.0, 0.0, 0.0, 0.1), (2.0, 1.0, 0.0, 0.0), (1.0, 1.0, 0.0, 0.1)):
            out.append((f"confidence dw={dw} p={p} m={m} d={d} len={ln}", "hybrid",
                        {**OFF, **SIGNALS, "fusion": "confidence", "fusion_dense_weight": dw, "confidence_power": p,
                         "confidence_margin": m, "confidence_disagreement": d, "confidence_length": ln}))
    for dw in (0.5, 1.0, 2.0):
        out.append((f"rrf k=2 dw={dw}", "hybrid", {**OFF, **SIGNALS, "fusion": "rrf", "dense_weight": dw}))
    return out


CONFIDENCE = {"fusion": "confidence", "fusion_dense_weight": 2.0, "confidence_power": 1.0, "confidence_margin": 1.0,
              "confidence_disagreement": 1.0, "confidence_length": 0.0}
def _combo_grid() -> list[tuple[str, str, dict]]:
    fusions = {"zscore": {"fusion": "zscore"}, "adaptive": {"fusion": "adaptive"},
               "conf p1 m1 d1": {**CONFIDENCE}, "conf p1 m1 d0": {**CONFIDENCE, "confidence_disagreement": 0.0}}
    out = []
    for fname, f in fusions.items():
        for dw in (1.5, 2.0):
            for nw in (0.15, 0.3):
                for sw in (0.1, 0.15, 0.2):
                    out.append((f"{fname} dw={dw} n={nw} s={sw}", "hybrid",
                                {**OFF, **SIGNALS, **f, "fusion_dense_weight": dw, "neighbour_weight": nw, "session_weight": sw}))
    return out


def _confidence_grid() -> list[tuple[str, str, dict]]:
    base = {**OFF, **SIGNALS, "neighbour_weight": 0.3, "session_weight": 0.15}
    out = [(f"zscore dw={dw}", "hybrid", {**base, "fusion": "zscore", "fusion_dense_weight": dw}) for dw in (1.5, 2.0)]
    for dw in (1.5, 2.0):
        for p, m, d, r, ln in itertools.product((0.5, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, 0.3), (0.0, 0.05)):
            out.append((f"conf dw={dw} p={p} m={m} d={d} rare={r} len={ln}", "hybrid",
                        {**base, "fusion": "confidence", "fusion_dense_weight": dw, "confidence_power": p, "confidence_margin": m,
                         "confidence_disagreement": d, "confidence_rare": r, "confidence_length": ln}))
    return out


def _wide_grid() -> list[tuple[str, str, dict]]:
    out = []
    for sw in (0.0, 0.15):
        base = {**OFF, **SIGNALS, "neighbour_weight": 0.3, "session_weight": sw}
        for dw in (1.5, 2.0, 2.5, 3.0):
            out.append((f"s={sw} zscore dw={dw}", "hybrid", {**base, "fusion": "zscore", "fusion_dense_weight": dw}))
            for p, d, r in itertools.product((0.5, 1.0), (0.0, 1.0), (0.0, 0.3)):
                out.append((f"s={sw} conf dw={dw} p={p} d={d} rare={r}", "hybrid",
                            {**base, "fusion": "confidence", "fusion_dense_weight": dw, "confidence_power": p, "confidence_margin": 0.0,
                             "confidence_disagreement": d, "confidence_rare": r, "confidence_length": 0.0}))
        for k, dw in itertools.product((2, 10, 60), (1.0, 2.0)):
            out.append((f"s={sw} rrf k={k} dw={dw}", "hybrid", {**base, "fusion": "rrf", "rrf_k": k, "dense_weight": dw}))
    return out


def _locomo_grid() -> list[tuple[str, str, dict]]:
    base = {**OFF, **SIGNALS, "neighbour_weight": 0.3, "session_weight": 0.0, "fusion": "confidence", "fusion_dense_weight": 1.5,
            "confidence_power": 0.5, "confidence_margin": 0.0, "confidence_disagreement": 1.0, "confidence_rare": 0.3, "confidence_length": 0.0}
    out = [("base", "hybrid", base)]
    for k, vals in (("dense", ("ctx", "max", "max-0.02")), ("speaker_weight", (1.0, 1.5)), ("time_weight", (1.2, 1.6)), ("neighbour_weight", (0.5,)),
                    ("session_weight", (0.15,)), ("prefetch_limit", (80,)), ("fusion_dense_weight", (1.0,)), ("time_decay", (0.5, 2.0))):
        for v in vals:
            out.append((f"base, {k}={v}", "hybrid", {**base, k: v}))
    return out


def _time_grid() -> list[tuple[str, str, dict]]:
    """The time signal's weight and decay around the defaults (hit@1 and R@5: a dated question's turn)."""
    return [(f"time_weight={w} time_decay={d}", "hybrid", {**PICKED, "time_weight": w, "time_decay": d})
            for w in (0.8, 1.2, 1.6, 2.0, 2.5, 3.0) for d in (0.5, 1.0)]


PICKED = {**OFF, **SIGNALS, "neighbour_weight": 0.3, "session_weight": 0.0, "fusion": "confidence", "fusion_dense_weight": 1.5,
          "confidence_power": 0.5, "confidence_margin": 0.0, "confidence_disagreement": 1.0, "confidence_rare": 0.3, "confidence_length": 0.0,
          "time_weight": 2.5, "time_decay": 0.5}  # the time signal: --grid time --metric hit@1
GRIDS["picked"] = [("picked (the defaults)", "hybrid", PICKED)]
# A long turn scored by its best sentence too (the fact said in passing among filler): --grid sentences --margin
GRIDS["sentences"] = [("picked (the defaults)", "hybrid", PICKED)] + [
    (f"picked, dense {1 - w:.1f} x mean + {w} x best sentence", "hybrid", {**PICKED, "dense": f"sent:{w}"}) for w in (0.2, 0.3, 0.4, 0.5)] + [
    (f"picked, the mean's list rescored: {1 - w:.1f} x mean + {w} x best sentence", "hybrid", {**PICKED, "dense": f"rescore:sent:{w}"}) for w in (0.3, 0.5)] + [
    (f"picked, the mean's list rescored: {1 - w:.1f} x mean + {w} x best of mean and sentences", "hybrid", {**PICKED, "dense": f"rescore:sentx:{w}"})
    for w in (0.3, 0.5)] + [
    (f"dense route, {1 - w:.1f} x mean + {w} x best sentence", "dense", {"dense": f"sent:{w}"}) for w in (0.3, 0.5)]
GRIDS["ablate"] = [("picked", "hybrid", PICKED)] + [(f"picked, {k}=0", "hybrid", {**PICKED, k: 0.0}) for k in ("neighbour_weight", "speaker_weight", "time_weight")] + [
    ("picked, confidence_rare=0", "hybrid", {**PICKED, "confidence_rare": 0.0}), ("picked, disagreement=0", "hybrid", {**PICKED, "confidence_disagreement": 0.0}),
    ("picked, zscore", "hybrid", {**PICKED, "fusion": "zscore"}), ("picked, reranker=off", "hybrid", {**PICKED, "reranker": "off"}),
    ("picked, prefetch 80", "hybrid", {**PICKED, "prefetch_limit": 80}), ("picked, prefetch 30", "hybrid", {**PICKED, "prefetch_limit": 30}),
    ("picked, confidence_top=3", "hybrid", {**PICKED, "confidence_top": 3})]
# BM25's confidence cut by how little of the query its best hits hold (a filler word or a name): --grid coverage --margin
NOW = RetrievalSettings()
DENSE_NOW = f"rescore:sentx:{NOW.sentence_weight}"  # the product's dense side: the mean's list rescored with the best sentence
_SENT = {**PICKED, "dense": DENSE_NOW, "confidence_coverage": 0.0}  # the defaults before it
GRIDS["coverage"] = [("picked + sentences, coverage off", "hybrid", _SENT)] + [
    (f"coverage^{c} top {t}, full at {f}", "hybrid", {**_SENT, "confidence_coverage": c, "confidence_coverage_top": t, "confidence_coverage_full": f})
    for c in (0.5, 1.0, 2.0) for t in (1, 3) for f in (0.2, 0.25, 0.34, 0.5, 0.67, 1.0)]
GRIDS["check"] = [("bm25", "bm25", {}), ("dense (mean)", "dense", {}), ("dense ctx (previous)", "dense", {"dense": "ctx"}),
                  ("plain rrf k=60 (seed 003)", "hybrid", {**OFF, "rrf_k": 60, "dense_weight": 1.0}),
                  ("previous release's defaults", "hybrid", {**TODAY, **SIGNALS, "fusion": "adaptive", "fusion_dense_weight": 1.0,
                                                              "neighbour_weight": 0.4, "session_weight": 0.3}),
                  ("picked (the defaults)", "hybrid", PICKED)]
# Today's defaults beside each route as the product runs it (the message vectors' BM25 from --bm25 K1 B AVGDL,
# else the settings'): --grid now --margin
DEFAULTS = {**PICKED, "dense": DENSE_NOW}
GRIDS["now"] = [("bm25", "bm25", {}), ("dense (mean + sentences)", "dense", {"dense": DENSE_NOW}), ("the defaults", "hybrid", DEFAULTS)]
# BM25's length normalisation: a long wordy turn (and a turn after one: its context is in its document) loses
# its matches to short turns; --grid bm25 --margin
GRIDS["bm25"] = [("the defaults", "hybrid", DEFAULTS)] + [
    (f"k1 {k1}, b {b}, avgdl {a}", "hybrid", {**DEFAULTS, "message_k1": k1, "message_b": b, "message_avgdl": a})
    for k1 in (0.9, 1.2, 1.6) for b in (0.1, 0.2, 0.3, 0.5, 0.75) for a in (32.0, 64.0)
    if (k1, b, a) != (NOW.message_k1, NOW.message_b, NOW.message_avgdl)]  # today's values: the row "the defaults"
# A question's short opening clause ("Remind me, ...") left out of the dense query (retrieval.drop_preamble), and the
# fusion's dense weight and power again with it, since it makes the dense side stronger; --grid preamble --margin
GRIDS["preamble"] = [("the defaults", "hybrid", DEFAULTS), ("preamble kept (embedded whole)", "hybrid", {**DEFAULTS, "drop_preamble": False})] + [
    (f"dense weight {w}, power {p}", "hybrid", {**DEFAULTS, "fusion_dense_weight": w, "confidence_power": p})
    for w in (1.25, 1.5, 2.0) for p in (0.5, 1.0) if (w, p) != (NOW.fusion_dense_weight, NOW.confidence_power)]
GRIDS_FN: dict = {"locomo": _locomo_grid, "wide": _wide_grid, "fusion": _fusion_grid, "weights": _weights_grid, "combo": _combo_grid, "time": _time_grid, "confidence": _confidence_grid,
                  "signals": lambda: _signal_grid({"fusion": "zscore", "fusion_dense_weight": 2.0}),
                  "signals_conf": lambda: _signal_grid(CONFIDENCE)}

if __name__ == "__main__":
    main()
