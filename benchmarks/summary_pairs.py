"""Does the summary evaluator prefer a session's own summary to another session's of the same chat?

    python benchmarks/summaries.py --pairs --locomo /work/data/locomo10.json --embedder none
    python benchmarks/summaries.py --pairs --locomo /work/data/locomo10.json --embedder use

Six sets (``summary_sets.py``): LoCoMo's session summaries, event summaries and observation facts, and
code-generated en / ru / zh conversations. Per session, its true summary and each candidate
(``adjacent``: the sessions right before and after; ``same-chat``: two other sessions; ``off-topic``:
a session of another conversation) are scored against the session's messages, with the rest of the
conversation as the background (``--pairs`` also reports a background of the earlier sessions only,
what a summary written as the chat goes has). Pairwise accuracy: the share of pairs where the true
summary scores strictly higher (a tie is a miss).

Printed, same run: the evaluator before issue 24 (``grounded=False``), the shipped defaults, and the
leave-one-set-out choice of the grounding's free parameters (entity share of coverage, the weight of
terms nobody said, the support level from which there is no penalty, the penalty's power and the factor
per unsupported claim, which must penalise): each set scored with the parameters that do best on the
other five. "Best" is the mean of pairwise accuracy minus the share of true summaries the retry would
throw away (scored below ``retry_below`` while the session's extractive summary scores higher): a
harsh support penalty ranks pairs well but pushes faithful abstractive summaries under the retry
threshold, where the extractive summary replaces them.
"""

from __future__ import annotations

import itertools
import random
import time
from typing import Any

import numpy as np
from _common import table
from summary_sets import KINDS, Conversation, locomo_sets, pairs, synthetic_sets

from layered_memory import evaluation as E
from layered_memory.config import SummaryQualitySettings
from layered_memory.evaluation import Background, SummaryEvaluator
from layered_memory.retrieval.analyzer import Analyzer
from layered_memory.session_summaries import extractive_summary

GRID = {"entity_share": (0.25, 0.5), "unseen_weight": (0.1, 0.3, 0.6, 1.0), "support_full": (0.3, 0.4, 0.5, 0.6, 0.8),
        "support_power": (0.5, 1.0, 2.0), "claim_factor": (0.9, 0.8, 0.65, 0.5)}
RETRY_BELOW = 0.25  # SummaryQualitySettings.retry_below


def defaults() -> dict[str, float]:
    from layered_memory import grounding as G

    return {"entity_share": E.ENTITY_SHARE, "unseen_weight": G.UNSEEN_WEIGHT, "support_full": E.SUPPORT_FULL,
            "support_power": E.SUPPORT_POWER, "claim_factor": E.CLAIM_FACTOR}


def rescore(q: dict[str, Any], p: dict[str, float], weights: dict[str, float]) -> float:
    """The overall score of one evaluation under parameters ``p`` (recomputed from its details)."""
    d = q["details"]
    cov = d["term_coverage"] if d["entity_coverage"] is None else (
        (1 - p["entity_share"]) * d["term_coverage"] + p["entity_share"] * d["entity_coverage"])
    parts = {"coverage": cov, "coherence": q["coherence"], "relevance": q["relevance"]}
    used = {c: w for c, w in weights.items() if parts.get(c) is not None and w > 0}
    mean = sum(w * parts[c] for c, w in used.items()) / sum(used.values())
    s = d["support"]
    den = s["supported"] + s["elsewhere"] + s["claims"] + p["unseen_weight"] * s["unseen"]
    support = s["supported"] / den if den else 0.0
    return mean * min(1.0, support / p["support_full"]) ** p["support_power"] * p["claim_factor"] ** len(s["unsupported"])


def score_pairs(convs: list[Conversation], ev: SummaryEvaluator, analyzer: Analyzer, *, past_only: bool = False,
                grounded: bool = True) -> tuple[list[tuple[str, Any, Any]], float]:
    """[(kind, result for the true summary, result for the candidate)], mean seconds per evaluation."""
    rng = random.Random(0)
    out, cache, seconds = [], {}, []
    for p in pairs(convs, rng):
        conv = convs[p.conv]
        s = conv.sessions[p.session]
        key = (p.conv, p.session)
        if key not in cache:
            others = conv.sessions[: p.session] if past_only else [o for j, o in enumerate(conv.sessions) if j != p.session]
            bg = Background.build(analyzer, [m for o in others for m in o.messages]) if grounded else None
            t = time.perf_counter()
            cache[key] = (bg, ev.evaluate(s.summary, s.messages, background=bg))
            seconds.append(time.perf_counter() - t)
        bg, true = cache[key]
        t = time.perf_counter()
        cand = ev.evaluate(p.candidate, s.messages, background=bg)
        seconds.append(time.perf_counter() - t)
        out.append((p.kind, true, cand))
    return out, float(np.mean(seconds))


def against_extractive(convs: list[Conversation], ev: SummaryEvaluator, analyzer: Analyzer, *, grounded: bool = True) -> list[tuple[Any, Any]]:
    """[(result for the true summary, result for the extractive summary of the session)]."""
    out = []
    for conv in convs:
        for i, s in enumerate(conv.sessions):
            bg = Background.build(analyzer, [m for j, o in enumerate(conv.sessions) if j != i for m in o.messages]) if grounded else None
            ext = extractive_summary("", s.messages, analyzer)
            out.append((ev.evaluate(s.summary, s.messages, background=bg), ev.evaluate(ext, s.messages, background=bg)))
    return out


def replaced(rows: list[tuple[Any, Any]], score) -> float:
    """Share of true summaries the retry would replace: below ``RETRY_BELOW`` with the extractive one higher."""
    return float(np.mean([score(t) < RETRY_BELOW and score(e) > score(t) for t, e in rows]))


def accuracy(rows, score) -> dict[str, float]:
    acc = {k: [score(t) > score(c) for kind, t, c in rows if kind == k] for k in KINDS}
    acc = {k: float(np.mean(v)) for k, v in acc.items() if v}
    acc["all"] = float(np.mean([score(t) > score(c) for _, t, c in rows]))
    return acc


def run(locomo: str, embedder: Any, limit: int = 0) -> None:
    analyzer = Analyzer()
    sets = {**locomo_sets(locomo), **synthetic_sets(0)}
    if limit:
        sets = {n: c[:limit] for n, c in sets.items()}
    weights = E.weights_of(SummaryQualitySettings())
    new = SummaryEvaluator(analyzer, embedder=embedder)
    old = SummaryEvaluator(analyzer, embedder=embedder, settings=SummaryQualitySettings(grounded=False))
    scored, past, base, timing, extractive, extractive_old = {}, {}, {}, {}, {}, {}
    for name, convs in sets.items():
        scored[name], t_new = score_pairs(convs, new, analyzer)
        base[name], t_old = score_pairs(convs, old, analyzer, grounded=False)
        past[name], _ = score_pairs(convs, new, analyzer, past_only=True)
        extractive[name] = against_extractive(convs, new, analyzer)
        extractive_old[name] = against_extractive(convs, old, analyzer, grounded=False)
        timing[name] = (t_old, t_new)
    grid = [dict(zip(GRID, v)) for v in itertools.product(*GRID.values())]
    acc_by = {name: [accuracy(rows, lambda q, p=p: rescore(q, p, weights))["all"] for p in grid] for name, rows in scored.items()}
    repl_by = {name: [replaced(rows, lambda q, p=p: rescore(q, p, weights)) for p in grid] for name, rows in extractive.items()}

    def choose(names: list[str]) -> int:
        """The parameters with the best mean over ``names`` of pairwise accuracy minus the share of true
        summaries the retry would replace by the extractive one."""
        return max(range(len(grid)), key=lambda i: (np.mean([acc_by[n][i] - repl_by[n][i] for n in names]), -i))

    emb = getattr(embedder, "name", "none (lexical proxies)") if embedder is not None else "none (lexical proxies)"
    n_pairs = {n: len(r) for n, r in scored.items()}
    print(f"\nSame chat or off-topic: pairwise accuracy (true summary strictly above the candidate), embedder {emb}, "
          f"no chat model; {sum(n_pairs.values())} pairs\n")
    rows, picks = [], []
    for held in sets:
        train = [n for n in sets if n != held]
        best = choose(train)
        p = grid[best]
        picks.append([held, *p.values(), float(np.mean([acc_by[n][best] for n in train])), float(np.mean([repl_by[n][best] for n in train]))])
        a_old = accuracy(base[held], lambda q: q["overall_score"])
        a_new = accuracy(scored[held], lambda q: q["overall_score"])
        a_loso = accuracy(scored[held], lambda q, p=p: rescore(q, p, weights))
        a_past = accuracy(past[held], lambda q: q["overall_score"])
        for k in (*KINDS, "all"):
            rows.append([held if k == KINDS[0] else "", k, a_old.get(k, "-"), a_new.get(k, "-"), a_loso.get(k, "-"), a_past.get(k, "-")])
    print(table(["set", "pairs", "before (grounded=False)", "defaults", "leave-one-set-out", "defaults, earlier sessions as background"], rows))
    print("\nLeave-one-set-out: the parameters chosen on the other five sets")
    print(table(["held-out set", *GRID, "mean accuracy on the other five", "mean replaced on the other five"], picks))
    d = defaults()
    on_all = choose(list(sets))
    print(f"\nshipped defaults {d}; best on all six sets {grid[on_all]} "
          f"(mean {np.mean([acc_by[n][on_all] for n in sets]):.3f}; defaults "
          f"{np.mean([accuracy(scored[n], lambda q: q['overall_score'])['all'] for n in sets]):.3f})")
    print(f"\nTrue summary replaced by the extractive one (true < {RETRY_BELOW} and the extractive scores higher: "
          "the session summary's retry), and the evaluator's time")
    trow = []
    for name in sets:
        t_old, t_new = timing[name]
        trow.append([name, replaced(extractive_old[name], lambda q: q["overall_score"]), replaced(extractive[name], lambda q: q["overall_score"]),
                     float(np.median([t["support"] for t, _ in extractive[name]])), f"{1000 * t_old:.1f}", f"{1000 * t_new:.1f}"])
    print(table(["set", "before", "defaults", "median support of true summaries", "ms before", "ms now"], trow))
