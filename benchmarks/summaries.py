"""Summary quality on LoCoMo: does the seed 001 3.2.3 evaluator agree with the human reference summaries?

    python benchmarks/summaries.py --locomo /work/cache/locomo10.json                # USE embedder
    python benchmarks/summaries.py --locomo /work/cache/locomo10.json --embedder none --limit 50
    python benchmarks/summaries.py --pairs --locomo /work/cache/locomo10.json --embedder none    # same-chat pairs (summary_pairs.py)

LoCoMo (snap-research/LoCoMo, ``data/locomo10.json``: keep it outside the repo) ships a human-written
``session_summary`` for each of its 272 sessions. Per session, four summaries of the session's turns:

* ``extractive``: ``layered_memory.session_summaries.extractive_summary`` (what the engine writes without a chat
  model; 8 sentences, as for session summaries);
* ``lead-8``: the first 8 sentences of the session (the baseline);
* ``scripted model``: what a chat model that writes the session's facts would return: LoCoMo's
  ``observation`` facts of the session (annotated apart from the summary), joined;
* ``off-topic``: the extractive summary of a session of another conversation (fluent, wrong content);
* ``reference``: the human summary itself (scored by the evaluator only).

Each is scored by (a) the seed evaluator (``SummaryEvaluator``: coverage, coherence, relevance; no chat
model, so the LLM judge's weight is redistributed and no title: the session's keywords stand in) and
(b) against the reference: ROUGE-L F1 (LCS over lower-cased, Snowball-stemmed word tokens, as
``rouge-score`` with ``use_stemmer``) and key-fact recall (the reference's sentences are the key facts;
one is kept when the summary has at least half of its content terms). Printed: means per summarizer,
Spearman / Pearson correlation of (a) with (b) across sessions, how often (a) orders two summarizers of
the same session as ROUGE-L does, the coherence proxy against reference summaries interleaved with
another session's sentences, and the share of each summarizer under candidate retry thresholds.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import Stemmer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import table  # noqa: E402
from summary_sets import locomo_time  # noqa: E402

from layered_memory.evaluation import SummaryEvaluator, split_sentences  # noqa: E402
from layered_memory.models import Message  # noqa: E402
from layered_memory.retrieval.analyzer import Analyzer  # noqa: E402
from layered_memory.session_summaries import extractive_summary  # noqa: E402

N_SENTENCES = 8
_WORD = re.compile(r"\w+")
_STEM = Stemmer.Stemmer("english")


def rouge_l(candidate: str, reference: str) -> float:
    """ROUGE-L F1 (Lin 2004) over lower-cased stemmed word tokens."""
    c = _STEM.stemWords(_WORD.findall(candidate.lower()))
    r = _STEM.stemWords(_WORD.findall(reference.lower()))
    if not c or not r:
        return 0.0
    prev = [0] * (len(r) + 1)
    for x in c:
        cur = [0]
        for j, y in enumerate(r, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    lcs = prev[-1]
    if lcs == 0:
        return 0.0
    p, rec = lcs / len(c), lcs / len(r)
    return 2 * p * rec / (p + rec)


def key_fact_recall(candidate: str, reference: str, analyzer: Analyzer) -> float:
    have = set(analyzer.terms(candidate))
    facts = [set(analyzer.terms(s)) for s in split_sentences(reference)]
    facts = [f for f in facts if f]
    return sum(1 for f in facts if len(f & have) >= 0.5 * len(f)) / len(facts) if facts else 0.0


def spearman(a: list[float], b: list[float]) -> float | str:
    if np.std(a) == 0 or np.std(b) == 0:
        return "- (constant)"
    ra = np.argsort(np.argsort(a, kind="stable"), kind="stable").astype(float)
    rb = np.argsort(np.argsort(b, kind="stable"), kind="stable").astype(float)
    return float(np.corrcoef(ra, rb)[0, 1])


def pearson(a: list[float], b: list[float]) -> float | str:
    if np.std(a) == 0 or np.std(b) == 0:
        return "- (constant)"
    return float(np.corrcoef(a, b)[0, 1])


def sessions(path: str) -> list[tuple[str, list[Message], str, str]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    out = []
    for conv in data:
        c = conv["conversation"]
        for key, ref in conv["session_summary"].items():
            n = key.removesuffix("_summary")
            turns = c.get(n) or []
            t0 = locomo_time(c[f"{n}_date_time"])  # the session's date: the reference summaries open with it
            msgs = [Message.build({"message_id": t["dia_id"], "chat_id": conv["sample_id"], "user_id": t["speaker"].lower(),
                                   "user_name": t["speaker"], "content": t["text"], "create_time": t0 + timedelta(minutes=i)})
                    for i, t in enumerate(turns) if t.get("text")]
            facts = (conv.get("observation") or {}).get(f"{n}_observation") or {}
            scripted = " ".join(f[0].strip() for per in facts.values() for f in per if f and f[0].strip())
            if msgs and ref:
                out.append((f"{conv['sample_id']}/{n}", msgs, ref, scripted))
    return out


def lead(msgs: list[Message], n: int) -> str:
    out: list[str] = []
    for m in msgs:
        for s in split_sentences(m.content):
            if len(out) < n:
                out.append(f"{m.user_name}: {s}")
    return " ".join(out)


def make_embedder(name: str):
    if name == "none":
        return None
    from layered_memory.providers.local import E5Embedder, USEEmbedder

    return {"use": USEEmbedder, "e5": E5Embedder}[name]()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--locomo", default="/work/cache/locomo10.json", help="path to locomo10.json (read in place)")
    ap.add_argument("--embedder", default="use", choices=["use", "e5", "none"])
    ap.add_argument("--limit", type=int, default=0, help="first N sessions only (0: all 272)")
    ap.add_argument("--pairs", action="store_true", help="same-chat / off-topic pairs on six sets, leave-one-set-out (summary_pairs.py)")
    ap.add_argument("--conversations", type=int, default=0, help="with --pairs: first N conversations of each set (0: all)")
    args = ap.parse_args()
    if args.pairs:
        from summary_pairs import run

        run(args.locomo, make_embedder(args.embedder), args.conversations)
        return
    analyzer = Analyzer()
    embedder = make_embedder(args.embedder)
    if embedder is not None:
        embedder.embed_documents(["warm up"])
    ev = SummaryEvaluator(analyzer, embedder=embedder)
    ev_lex = SummaryEvaluator(analyzer)  # the lexical proxies, for the coherence check
    data = sessions(args.locomo)
    if args.limit:
        data = data[: args.limit]
    rng = random.Random(0)
    names = ["extractive", "lead-8", "scripted model", "off-topic", "reference"]
    res: dict[str, dict[str, list[float]]] = {n: {"overall": [], "coverage": [], "coherence": [], "relevance": [],
                                                   "rouge_l": [], "key_facts": [], "seconds": []} for n in names}
    summaries: dict[str, list[str]] = {n: [] for n in names}
    t_gen = {"extractive": 0.0, "lead-8": 0.0}
    for sid, msgs, ref, scripted in data:
        summaries["scripted model"].append(scripted)
        t = time.perf_counter()
        summaries["extractive"].append(extractive_summary("", msgs, analyzer, max_sentences=N_SENTENCES))
        t_gen["extractive"] += time.perf_counter() - t
        t = time.perf_counter()
        summaries["lead-8"].append(lead(msgs, N_SENTENCES))
        t_gen["lead-8"] += time.perf_counter() - t
        summaries["reference"].append(ref)
    convs = [d[0].split("/")[0] for d in data]
    for i in range(len(data)):  # a session of another conversation
        j = rng.choice([k for k in range(len(data)) if convs[k] != convs[i]] or [i])
        summaries["off-topic"].append(summaries["extractive"][j])
    for i, (sid, msgs, ref, _) in enumerate(data):
        for n in names:
            s = summaries[n][i]
            q = ev.evaluate(s, msgs, None)
            r = res[n]
            r["overall"].append(q["overall_score"])
            r["coverage"].append(q["coverage"])
            r["coherence"].append(np.nan if q["coherence"] is None else q["coherence"])
            r["relevance"].append(q["relevance"])
            r["seconds"].append(q["seconds"])
            r["rouge_l"].append(rouge_l(s, ref))
            r["key_facts"].append(key_fact_recall(s, ref, analyzer))
    emb = embedder.name if embedder is not None else "none (lexical proxies)"
    print(f"\n{len(data)} LoCoMo sessions, embedder {emb}, no chat model (LLM judge weight redistributed)\n")
    rows = []
    for n in names:
        r = res[n]
        gen = f"{1000 * t_gen[n] / len(data):.2f}" if n in t_gen else "-"
        rows.append([n, float(np.mean(r["overall"])), float(np.mean(r["coverage"])), float(np.nanmean(r["coherence"])),
                     float(np.mean(r["relevance"])), "-" if n == "reference" else float(np.mean(r["rouge_l"])),
                     "-" if n == "reference" else float(np.mean(r["key_facts"])), gen, f"{1000 * np.mean(r['seconds']):.1f}"])
    print(table(["summarizer", "evaluator overall", "coverage", "coherence", "relevance", "ROUGE-L F1", "key-fact recall",
                 "gen ms", "eval ms"], rows))
    print("\nCorrelation of the evaluator's overall score with the reference-based scores")
    crow = []
    pooled = ["extractive", "lead-8", "scripted model", "off-topic"]
    for label, group in [*[(n, [n]) for n in pooled], ("pooled (4 x sessions)", pooled)]:
        ov = [x for g in group for x in res[g]["overall"]]
        rl = [x for g in group for x in res[g]["rouge_l"]]
        kf = [x for g in group for x in res[g]["key_facts"]]
        crow.append([label, len(ov), spearman(ov, rl), pearson(ov, rl), spearman(ov, kf), pearson(ov, kf)])
    print(table(["summaries", "n", "Spearman vs ROUGE-L", "Pearson vs ROUGE-L", "Spearman vs key facts", "Pearson vs key facts"], crow))
    print("\nSame session, two summarizers: does the evaluator order them as ROUGE-L does? (ties in ROUGE-L left out)")
    prow = []
    for a, b in [("extractive", "lead-8"), ("scripted model", "extractive"), ("scripted model", "lead-8"),
                 ("extractive", "off-topic"), ("lead-8", "off-topic")]:
        agree = n_pairs = 0
        for i in range(len(data)):
            dr = res[a]["rouge_l"][i] - res[b]["rouge_l"][i]
            de = res[a]["overall"][i] - res[b]["overall"][i]
            if dr != 0:
                n_pairs += 1
                agree += int(np.sign(dr) == np.sign(de))
        rouge_a = sum(res[a]["rouge_l"][i] > res[b]["rouge_l"][i] for i in range(len(data))) / len(data)
        eval_a = sum(res[a]["overall"][i] > res[b]["overall"][i] for i in range(len(data))) / len(data)
        prow.append([f"{a} vs {b}", n_pairs, agree / max(1, n_pairs), rouge_a, eval_a])
    print(table(["pair", "sessions", "evaluator agrees with ROUGE-L", "ROUGE-L prefers first", "evaluator prefers first"], prow))
    coherence_check(data, summaries["reference"], ev, ev_lex, rng)
    print("\nShare of summaries below a retry threshold (evaluator overall)")
    trow = []
    for th in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35):
        trow.append([th, *[float(np.mean(np.asarray(res[n]["overall"]) < th)) for n in names]])
    print(table(["retry_below", *names], trow))
    print("\nPercentiles of the evaluator overall score")
    print(table(["summarizer", "p5", "p25", "p50", "p75", "p95"],
                [[n, *[float(np.percentile(res[n]["overall"], q)) for q in (5, 25, 50, 75, 95)]] for n in names]))


def coherence_check(data, refs: list[str], ev: SummaryEvaluator, ev_lex: SummaryEvaluator, rng: random.Random) -> None:
    """The coherence proxy on human summaries: the reference against (1) its sentences in a shuffled
    order and (2) its sentences interleaved with another session's reference sentences (same length)."""
    rows = []
    for label, e in [("embedder", ev), ("lexical", ev_lex)]:
        if label == "embedder" and e.embedder is None:
            continue
        wins = {"shuffled": [0, 0], "interleaved": [0, 0]}
        for i, ref in enumerate(refs):
            sents = split_sentences(ref)
            if len(sents) < 4:
                continue
            other = split_sentences(refs[(i + len(refs) // 2) % len(refs)])
            shuffled = sents[:]
            rng.shuffle(shuffled)
            mixed = [s for pair in zip(sents, other) for s in pair][: len(sents)]
            base = e._coherence(sents, e._embed(sents))
            for name, variant in (("shuffled", shuffled), ("interleaved", mixed)):
                if variant == sents:
                    continue
                v = e._coherence(variant, e._embed(variant))
                if base is None or v is None or base == v:
                    continue
                wins[name][0] += int(base > v)
                wins[name][1] += 1
        rows.append([label, *[f"{w}/{n} = {w / max(1, n):.2f}" for w, n in wins.values()]])
    print("\nCoherence proxy: the human reference scores higher than ... (ties left out)")
    print(table(["coherence", "its sentences shuffled", "interleaved with another session"], rows))


if __name__ == "__main__":
    main()
