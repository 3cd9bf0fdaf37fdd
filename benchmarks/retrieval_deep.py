"""Recall at depth (R@5 / R@10 / R@50), leave-one-set-out: pseudo-relevance feedback and session pooling.

    python benchmarks/retrieval_deep.py --locomo /work/data/locomo10.json \
        --synth /work/cache/synth/eval.json --synth /work/cache/synth/eval2.json \
        --assistant /work/cache/synth/assistant.json --assistant /work/cache/synth/assistant1.json \
        --extra-cache /work/cache/retrieval_b --extra-cache /tmp/lm_context_cache [--grid final]

The same sets, index rebuild and second stage as ``retrieval_loso.py``, but every question's whole
candidate union is ranked (not only the top 10), so the share of evidence turns in the top 50 is
measured too (the context packs the top 45 to 100 hits). On top of the engine's ranking it tries:

* ``prf``: dense pseudo-relevance feedback (Rocchio). After the first ranking, a second dense query
  ``q + beta x mean(vectors of the best prf_m hits)`` (normalised) replaces the dense side, and the
  candidates are ranked again: the best hits, often found by BM25, teach the dense side their words.
* ``rm3``: BM25 feedback. The best ``rm3_m`` hits' heaviest terms (tf share x idf, not in the query) are
  added to the BM25 query at ``rm3_alpha`` of a query term's weight.
* ``pool``: a candidate ranked below ``pool_from`` gains ``pool_w`` x the best fused score of another
  candidate of its chat and session within ``pool_span`` turns (by seq): evidence sits beside strong hits.
* ``expand``: the turns within ``exp_span`` of the best ``exp_m`` hits (same chat), candidates or not, join
  below rank ``exp_from`` with ``exp_w`` x that hit's score (``exp_delta``: a new turn needs a dense score
  within that of the dense list's last).
* ``deep_limit``: the engine's deep tail (``retrieval.deep_limit``): the first ``deep_from`` as ranked from
  the usual lists, the rest ranked again from each side's top ``deep_limit``.

``--grid final`` prints the rows of docs/retrieval.md.

A setting is picked for each held-out set on the other six, first by the worst margin (R@5) over each
set's best single route, then by the mean of R@5, R@10 and R@50.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import table  # noqa: E402
from retrieval_lab import query_ids, top  # noqa: E402
from _loso_corpus import CACHE, Conv, Corpus, candidates, load_locomo, load_synth  # noqa: E402
from retrieval_components import EmbedCache, LazyEmbedder  # noqa: E402
from retrieval_loso import _short, setting  # noqa: E402

from layered_memory.config import RetrievalSettings  # noqa: E402
from layered_memory.retrieval.rerank import sessions_of  # noqa: E402

DEPTHS = (5, 10, 20, 50, 100)
METRICS = ("R@5", "R@10", "R@20", "R@50", "R@all", "hit@1")
EXT = {"prf_m": 0, "prf_beta": 0.0, "prf_vec": "own", "prf_from": "fused",
       "rm3_m": 0, "rm3_terms": 10, "rm3_alpha": 0.0,
       "pool_w": 0.0, "pool_span": 3, "pool_from": 10,
       "exp_m": 0, "exp_span": 2, "exp_w": 1.0, "exp_from": 10, "exp_delta": -1.0,
       "deep_limit": 0, "deep_from": 10, "deep_signals": True, "deep_keep": 0}


def _metrics(ranked: list[int], ev: list[int]) -> tuple[float, ...]:
    e = set(ev)
    return (*(len(e & set(ranked[:d])) / len(e) for d in DEPTHS[:-1]), len(e & set(ranked)) / len(e), float(bool(ranked) and ranked[0] in e))


def _rm3(corpus: Corpus, ci: int, question: str, fb: list[int], terms: int, alpha: float) -> np.ndarray:
    """BM25 scores of the question expanded with the heaviest terms of the feedback turns ``fb``."""
    q_ids = {corpus.vocab.get(t) for t in query_ids(corpus.analyzer.terms(question))} - {None}
    lo = corpus.offsets[ci]
    acc = np.zeros(len(corpus.vocab))
    for d in fb:
        row = corpus.D[lo + d]
        acc[row.indices] += row.data / max(row.data.sum(), 1e-9) * corpus.idf[row.indices]
    q = np.zeros(len(corpus.vocab))
    for j in q_ids:
        acc[j] = 0
        q[j] = corpus.idf[j]
    best = np.argsort(-acc)[:terms]
    if len(best) and acc[best[0]] > 0:
        q[best] += alpha * corpus.idf[best] * acc[best] / acc[best[0]]
    return corpus.D[lo : lo + len(corpus.convs[ci].turns)] @ q


def _pool(ranked, s: RetrievalSettings, span: int, weight: float, start: int) -> list[int]:
    """Candidates below ``start`` gain ``weight`` x the best fused score within ``span`` turns of their session."""
    payloads = [c.payload for c in ranked]
    base = np.array([c.signals.get("fused", 0.0) for c in ranked])
    final = np.array([c.score for c in ranked])
    sess, _ = sessions_of(payloads, s.session_gap_hours * 3600.0)
    seq = np.array([p.get("seq") or 0 for p in payloads])
    near = (sess[:, None] == sess[None, :]) & (np.abs(seq[:, None] - seq[None, :]) <= span)
    np.fill_diagonal(near, False)
    gain = np.where(near, base[None, :], 0.0).max(axis=1)
    bonus = np.where(np.arange(len(ranked)) >= start, weight * gain, 0.0)
    # the first ``start`` stay where they are; the rest are reordered among themselves
    rest = np.arange(start, len(ranked))
    order = list(range(min(start, len(ranked)))) + rest[np.argsort(-(final[rest] + bonus[rest]), kind="stable")].tolist()
    return [ranked[i].key for i in order]


def _expand(c: Conv, ranked, m: int, span: int, weight: float, start: int, admit=None) -> list[int]:
    """The turns within ``span`` of the best ``m`` hits (same chat, by seq), candidates or not, gain
    ``weight`` x that hit's score (over its distance) below rank ``start``; a turn that was no candidate
    starts from the lowest score. The first ``start`` stay where they are."""
    keys = [cd.key for cd in ranked]
    final = {cd.key: cd.score for cd in ranked}
    floor = min(final.values())
    gain: dict[int, float] = {}
    for a in ranked[:m]:
        for d in range(-span, span + 1):
            j = a.key + d
            if d == 0 or not 0 <= j < len(c.turns) or c.turns[j]["chat"] != c.turns[a.key]["chat"]:
                continue
            if admit is not None and j not in final and not admit(j):
                continue
            gain[j] = max(gain.get(j, 0.0), weight * a.score / abs(d))
    head = keys[:start]
    seen = set(head)
    rest = [k for k in keys[start:]] + [j for j in gain if j not in final]
    rest = [k for k in dict.fromkeys(rest) if k not in seen]
    rest.sort(key=lambda k: -(final.get(k, floor) + gain.get(k, 0.0)))
    return head + rest


def run(corpus: Corpus, route: str, over: dict) -> np.ndarray:
    over = dict(over)
    ext = {k: over.pop(k, v) for k, v in EXT.items()}
    s, stage, dense_how = setting(corpus, over)
    rows = []
    for ci, c in enumerate(corpus.convs):
        for qi, q in enumerate(c.questions):
            dense = corpus.dense(ci, qi, dense_how)
            lists = {}
            if route in ("hybrid", "dense"):
                lists["dense"] = top(dense, s.prefetch_limit)
            if route in ("hybrid", "bm25"):
                lists["sparse"] = top(corpus.bm25(ci, q), s.prefetch_limit, positive=True)
            if route != "hybrid":
                rows.append(_metrics([i for i, _ in next(iter(lists.values()))], c.evidence[qi]))
                continue
            cands = candidates(c, lists)
            ranked = stage.rank(q, cands, k=len(cands))
            if ext["prf_m"] or ext["rm3_m"]:
                if ext["prf_from"] == "fused":
                    fb = [cd.key for cd in ranked[: max(ext["prf_m"], ext["rm3_m"])]]
                else:  # the dense side's own best
                    fb = [i for i, _ in lists["dense"][: ext["prf_m"]]]
                if ext["prf_m"]:
                    vecs = {"own": corpus.P_own, "ctx": corpus.P_ctx}
                    fbv = (corpus.P_own[ci][fb[: ext["prf_m"]]] + corpus.P_ctx[ci][fb[: ext["prf_m"]]]) / 2 if ext["prf_vec"] == "mean" \
                        else vecs[ext["prf_vec"]][ci][fb[: ext["prf_m"]]]
                    q2 = corpus.Q[ci][qi] + ext["prf_beta"] * fbv.mean(axis=0)
                    q2 = q2 / np.linalg.norm(q2)
                    d2 = (corpus.P_own[ci] @ q2 + corpus.P_ctx[ci] @ q2) / 2
                    lists["dense"] = top(d2, s.prefetch_limit)
                if ext["rm3_m"]:
                    lists["sparse"] = top(_rm3(corpus, ci, q, fb[: ext["rm3_m"]], ext["rm3_terms"], ext["rm3_alpha"]), s.prefetch_limit, positive=True)
                cands = candidates(c, lists)
                ranked = stage.rank(q, cands, k=len(cands))
            if ext["deep_limit"]:  # the head from the usual lists, the rest ranked again from deeper lists
                deep = {"dense": top(dense, ext["deep_limit"]), "sparse": top(corpus.bm25(ci, q), ext["deep_limit"], positive=True)}
                head = ranked[: ext["deep_from"]]
                seen = {cd.key for cd in head}
                tail_stage = stage if ext["deep_signals"] else setting(corpus, {**over, "reranker": "off"})[1]
                if ext["deep_keep"]:  # only the best deep_keep candidates beyond the usual lists (by fusion alone) join the tail
                    usual = {i for lst in lists.values() for i, _ in lst}
                    plain = setting(corpus, {**over, "reranker": "off"})[1].rank(q, candidates(c, deep), k=10**6)
                    keep = usual | {cd.key for cd in [cd for cd in plain if cd.key not in usual][: ext["deep_keep"]]}
                    deep = {side: [(i, sc) for i, sc in lst if i in keep] for side, lst in deep.items()}
                ranked = head + [cd for cd in tail_stage.rank(q, candidates(c, deep), k=10**6) if cd.key not in seen]
            if ext["exp_m"]:
                admit = None
                if ext["exp_delta"] >= 0:  # a turn that was no candidate needs a dense score near the dense list's last
                    cut = lists["dense"][-1][1] - ext["exp_delta"]
                    admit = lambda j: dense[j] >= cut  # noqa: E731
                keys = _expand(c, ranked, ext["exp_m"], ext["exp_span"], ext["exp_w"], ext["exp_from"], admit)
            elif ext["pool_w"]:
                keys = _pool(ranked, s, ext["pool_span"], ext["pool_w"], ext["pool_from"])
            else:
                keys = [cd.key for cd in ranked]
            rows.append(_metrics(keys, c.evidence[qi]))
    return np.mean(np.array(rows), axis=0)


PICKED: dict = {}  # the engine's defaults (RetrievalSettings())


def _grid(name: str) -> list[tuple[str, str, dict]]:
    out = [("the defaults", "hybrid", dict(PICKED))]
    if name in ("prf", "all"):
        for m in (3, 5, 10):
            for beta in (0.3, 0.6, 1.0):
                for vec in ("own", "mean"):
                    out.append((f"prf m={m} beta={beta} vec={vec}", "hybrid", {"prf_m": m, "prf_beta": beta, "prf_vec": vec}))
    if name in ("rm3", "all"):
        for m in (3, 5, 10):
            for t in (5, 10, 20):
                for a in (0.2, 0.5):
                    out.append((f"rm3 m={m} terms={t} alpha={a}", "hybrid", {"rm3_m": m, "rm3_terms": t, "rm3_alpha": a}))
    if name in ("pool", "all"):
        for w in (0.1, 0.2, 0.4):
            for span in (1, 3, 6):
                for start in (0, 5, 10):
                    out.append((f"pool w={w} span={span} from={start}", "hybrid", {"pool_w": w, "pool_span": span, "pool_from": start}))
    if name in ("expand", "all"):
        for m in (3, 5, 10):
            for span in (1, 2, 3):
                for w in (0.2, 0.5, 2.0):
                    for start in (5, 10, 20):
                        out.append((f"expand m={m} span={span} w={w} from={start}", "hybrid",
                                    {"exp_m": m, "exp_span": span, "exp_w": w, "exp_from": start}))
    if name in ("expand2", "all"):
        for m in (3, 5):
            for span in (2, 3):
                for w in (0.5, 2.0):
                    for delta in (0.0, 0.01, 0.02, 0.04):
                        out.append((f"expand m={m} span={span} w={w} from=10 delta={delta}", "hybrid",
                                    {"exp_m": m, "exp_span": span, "exp_w": w, "exp_from": 10, "exp_delta": delta}))
    if name == "final":  # the rows of docs/retrieval.md: the best of each idea beside the deep tail
        out += [("prf m=5 beta=0.3", "hybrid", {"prf_m": 5, "prf_beta": 0.3}),
                ("rm3 m=3 terms=10 alpha=0.2", "hybrid", {"rm3_m": 3, "rm3_terms": 10, "rm3_alpha": 0.2}),
                ("pool w=0.1 span=3 from=10", "hybrid", {"pool_w": 0.1, "pool_span": 3, "pool_from": 10}),
                ("pool w=0.2 span=3 from=5", "hybrid", {"pool_w": 0.2, "pool_span": 3, "pool_from": 5}),
                ("expand m=3 span=2 w=2 from=10 delta=0.02", "hybrid", {"exp_m": 3, "exp_span": 2, "exp_w": 2.0, "exp_from": 10, "exp_delta": 0.02}),
                ("prefetch_limit=100 (all ranks)", "hybrid", {"prefetch_limit": 100})]
        for n in (100, 150, 200, 300):
            out.append((f"deep_limit={n} from=10", "hybrid", {"deep_limit": n, "deep_from": 10}))
        out += [("deep_limit=200 from=5", "hybrid", {"deep_limit": 200, "deep_from": 5}),
                ("deep_limit=200, tail without signals", "hybrid", {"deep_limit": 200, "deep_from": 10, "deep_signals": False}),
                ("deep_limit=200, 100 deep-only kept", "hybrid", {"deep_limit": 200, "deep_from": 10, "deep_keep": 100})]
    if name in ("deep", "all"):
        for n in (80, 100, 150):
            for start in (5, 10, 20):
                out.append((f"deep_limit={n} from={start}", "hybrid", {"deep_limit": n, "deep_from": start}))
                out.append((f"deep_limit={n} from={start} + expand m=3 span=2 w=2 delta=0.02", "hybrid",
                            {"deep_limit": n, "deep_from": start, "exp_m": 3, "exp_span": 2, "exp_w": 2.0, "exp_from": 10, "exp_delta": 0.02}))
    if name in ("prefetch", "all"):
        for n in (30, 80, 100):
            out.append((f"prefetch {n}", "hybrid", {"prefetch_limit": n}))
        for k1, b in ((0.9, 0.4), (1.2, 0.5), (1.5, 0.75), (0.9, 0.75)):
            out.append((f"bm25 k1={k1} b={b}", "hybrid", {"k1": k1, "b": b}))
    return out


def pick(results: dict[str, dict[str, np.ndarray]], best_route: dict[str, float]) -> dict[str, str]:
    """Per held-out set, the setting with the best (worst R@5 margin over the best route, mean of R@5/10/50) on the others."""
    sets = list(best_route)
    out = {}
    for held in sets:
        others = [x for x in sets if x != held]

        def key(name: str) -> tuple[float, float]:
            r = results[name]
            worst = min(0.0, min(r[x][0] - best_route[x] + 0.005 for x in others))
            return (worst, float(np.mean([(r[x][0] + r[x][1] + r[x][3]) / 3 for x in others])))

        out[held] = max(results, key=lambda n: (key(n), -list(results).index(n)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo")
    ap.add_argument("--synth", action="append", default=[])
    ap.add_argument("--assistant", action="append", default=[])
    ap.add_argument("--cache", default=CACHE)
    ap.add_argument("--extra-cache", action="append", default=[])
    ap.add_argument("--grid", default="final", help="final | prf | rm3 | pool | expand | expand2 | deep | prefetch | all")
    args = ap.parse_args()
    cache = EmbedCache(args.cache, "e5", LazyEmbedder("e5"))
    for extra in args.extra_cache:
        cache.rows.update(EmbedCache(extra, "e5", LazyEmbedder("e5")).rows)
    sets: dict[str, list[Conv]] = {}
    if args.locomo:
        sets["locomo"] = load_locomo(args.locomo)
    for i, path in enumerate(args.synth):
        sets[f"synth-chat-{i + 1}"] = load_synth(path, "chat")
        sets[f"synth-assistant-{i + 1}"] = load_synth(path, "assistant")
    for i, path in enumerate(args.assistant):
        sets[f"long-assistant-{i + 1}"] = load_synth(path)
    base = RetrievalSettings()
    corpora = {name: Corpus(name, convs, cache, base) for name, convs in sets.items()}
    t0 = time.perf_counter()
    routes = {x: (run(c, "dense", {}), run(c, "bm25", {})) for x, c in corpora.items()}
    best_route = {x: max(float(d[0]), float(b[0])) for x, (d, b) in routes.items()}
    grid = _grid(args.grid)
    results = {}
    for name, route, over in grid:
        if {k for k in over if k in ("k1", "b")}:  # BM25 parameters change the index: rebuild
            s = base.model_copy(update={k: over[k] for k in ("k1", "b")})
            results[name] = {x: run(Corpus(x, sets[x], cache, s), route, {k: v for k, v in over.items() if k not in ("k1", "b")}) for x in corpora}
        else:
            results[name] = {x: run(c, route, over) for x, c in corpora.items()}
        print(f"  {name}: " + " ".join(f"{_short(x)} {r[0]:.3f}/{r[1]:.3f}/{r[3]:.3f}" for x, r in results[name].items()), file=sys.stderr, flush=True)
    print(f"{len(grid)} settings x {len(corpora)} sets in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    print("single routes (R@5 / R@10 / R@50): " + "; ".join(
        f"{_short(x)} dense {d[0]:.3f}/{d[1]:.3f}/{d[3]:.3f} bm25 {b[0]:.3f}/{b[1]:.3f}/{b[3]:.3f}" for x, (d, b) in routes.items()))
    print(table(["setting", *(f"{_short(x)} R@5/10/50" for x in corpora)],
                [[n, *(f"{r[x][0]:.3f} {r[x][1]:.3f} {r[x][3]:.3f}" for x in corpora)] for n, r in results.items()]))
    picks = pick(results, best_route)
    base_r = results["the defaults"]
    print("\nleave-one-set-out: per held-out set, the setting picked on the other six")
    print(table(["held-out set", "picked", "R@5", "R@10", "R@50", "best route R@5", "margin", "defaults R@5/10/50"],
                [[x, p, float(results[p][x][0]), float(results[p][x][1]), float(results[p][x][3]), best_route[x],
                  float(results[p][x][0] - best_route[x]), f"{base_r[x][0]:.3f} {base_r[x][1]:.3f} {base_r[x][3]:.3f}"]
                 for x, p in picks.items()]))


if __name__ == "__main__":
    main()
