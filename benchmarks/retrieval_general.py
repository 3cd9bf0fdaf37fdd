"""Retrieval quality on conversation sets that are not LoCoMo, through ``mem.search``.

    python benchmarks/synthconv.py --out /work/cache/synth/eval.json --seed 0
    python benchmarks/retrieval_general.py /work/cache/synth/eval.json [more sets] [--embedder e5]
    python benchmarks/retrieval_general.py /path/longmemeval_oracle.json      # LongMemEval's own format

A set is either the format of ``synthconv.py`` or LongMemEval's (a list of instances with
``haystack_sessions``; every instance is its own scope, evidence turns are those marked
``has_answer``, gold sessions are ``answer_session_ids``). Every conversation is one user scope,
every session one chat, each turn a message stamped with its session's date. Reported per route:
R@5 and R@10 (share of evidence turns in the top k), session-hit@5 (every gold session has a turn
in the top 5) and, per question kind and language, R@10. Data stays where it is (outside the repo);
embeddings are cached under ``--cache``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import table  # noqa: E402
from retrieval import OFF, CachedEmbedder  # noqa: E402
from retrieval_components import DEFAULT_CACHE  # noqa: E402

from layered_memory import LayeredMemory, LayeredMemorySettings  # noqa: E402


def _lme_date(text: str) -> str:
    """LongMemEval's "2023/05/20 (Sat) 02:21"."""
    return datetime.strptime(text.split(" (")[0] + " " + text.rsplit(" ", 1)[-1], "%Y/%m/%d %H:%M").replace(tzinfo=timezone.utc).isoformat()


def from_longmemeval(instances: list[dict]) -> dict:
    """LongMemEval's instances as one set: a conversation per instance (its haystack), the question(s) asked of
    it. Also reads the variant that asks several questions of one haystack (``questions``, ``answers`` and
    ``answer_session_ids`` as parallel lists). Abstention questions (``_abs``) are left out, as LongMemEval's own
    retrieval metrics do; a message longer than the engine takes (``memory.max_content_chars``: sharegpt
    sessions hold pasted articles of 70,000 characters) is cut there, which leaves every marked turn whole."""
    cut = LayeredMemorySettings().memory.max_content_chars
    convs, questions = [], []
    for inst in instances:
        if str(inst["question_id"]).endswith("_abs"):
            continue
        cid = f"lme-{inst['question_id']}"
        sessions, marked = [], {}
        for si, (sid, date, turns) in enumerate(zip(inst["haystack_session_ids"], inst["haystack_dates"], inst["haystack_sessions"])):
            sessions.append({"id": f"{cid}-{sid}", "date": _lme_date(date),
                             "turns": [{"speaker": t["role"], "role": t["role"], "text": t["content"][:cut]} for t in turns]})
            marked[f"{cid}-{sid}"] = [[si, ti] for ti, t in enumerate(turns) if t.get("has_answer")]
        ids = [s["id"] for s in sessions]
        grouped = "questions" in inst
        asked = zip(inst["questions"], inst["answer_session_ids"]) if grouped else [(inst["question"], inst["answer_session_ids"])]
        kept = 0
        for question, answer_sessions in asked:
            gold = [g for g in (f"{cid}-{sid}" for sid in answer_sessions) if g in marked]
            evidence = [e for g in gold for e in marked[g]]
            if not evidence:  # no marked turn: every user turn of the gold sessions
                evidence = [[ids.index(g), ti] for g in gold for ti, t in enumerate(sessions[ids.index(g)]["turns"]) if t["role"] == "user"]
            if not evidence:
                continue
            kept += 1
            questions.append({"conv": cid, "question": question, "kind": inst.get("question_type", "?"),
                              "date": _lme_date(inst["question_date"]), "evidence": evidence, "sessions": gold})
        if kept:
            convs.append({"id": cid, "lang": "en", "style": "longmemeval", "sessions": sessions})
    return {"conversations": convs, "questions": questions}


def load_set(path: str) -> dict:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, list):
        data = from_longmemeval(data)
    data["name"] = Path(path).stem
    return data


def ingest(mem: LayeredMemory, data: dict) -> dict[str, tuple[int, int]]:
    """Every turn as a message; returns message id -> (session index, turn index)."""
    where: dict[str, tuple[int, int]] = {}
    for c in data["conversations"]:
        msgs = []
        for si, s in enumerate(c["sessions"]):
            start = datetime.fromisoformat(s["date"])
            for ti, t in enumerate(s["turns"]):
                mid = f"{c['id']}-{si}-{ti}"
                where[mid] = (si, ti)
                msgs.append({"message_id": mid, "chat_id": s["id"], "user_id": c["id"], "user_name": t["speaker"],
                             "role": "assistant" if t["role"] == "assistant" else "user", "content": t["text"],
                             "create_time": start + timedelta(minutes=ti)})
        for i in range(0, len(msgs), 256):
            mem.add_messages(msgs[i : i + 256])
    mem.flush()
    return where


def rankings(data: dict, embedder, variants: list[tuple[str, str, dict]], settings: LayeredMemorySettings, k: int = 10) -> dict[str, list]:
    """name -> per question ``[(session, turn), ...]`` best first."""
    out: dict[str, list] = {name: [] for name, _, _ in variants}
    base = settings.retrieval.model_dump()
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=embedder, settings=settings)
        try:
            where = ingest(mem, data)
            for name, route, over in variants:
                for key, value in {**base, **over}.items():
                    setattr(settings.retrieval, key, value)
                for q in data["questions"]:
                    res = mem.search(q["question"], filters={"user_id": q["conv"]}, k=k, route=route)
                    out[name].append([where[h.id] for h in res.hits])
        finally:
            for key, value in base.items():
                setattr(settings.retrieval, key, value)
            mem.close()
    return out


def question_metrics(ranked: list[tuple[int, int]], q: dict) -> tuple[float, float, float]:
    """(R@5, R@10, every gold session among the sessions of the top 5)."""
    ev = {tuple(e) for e in q["evidence"]}
    r5 = len(ev & set(ranked[:5])) / len(ev)
    r10 = len(ev & set(ranked[:10])) / len(ev)
    return r5, r10, float(set(q["_gold_idx"]) <= {s for s, _ in ranked[:5]})


def prepare(data: dict) -> None:
    """Attach each question's gold session indices and language."""
    convs = {c["id"]: c for c in data["conversations"]}
    for q in data["questions"]:
        c = convs[q["conv"]]
        ids = [s["id"] for s in c["sessions"]]
        q["_gold_idx"] = [ids.index(s) for s in q["sessions"] if s in ids] or sorted({e[0] for e in q["evidence"]})
        q["_lang"], q["_style"] = c.get("lang", "?"), c.get("style", "?")


def summarise(data: dict, ranked: list) -> dict[str, tuple[float, ...]]:
    groups: dict[str, list] = defaultdict(list)
    for r, q in zip(ranked, data["questions"]):
        m = question_metrics(r, q)
        for g in ("all", f"kind:{q['kind']}", f"lang:{q['_lang']}", f"style:{q['_style']}"):
            groups[g].append(m)
    return {g: tuple(float(x) for x in np.mean(np.array(v), axis=0)) for g, v in groups.items()}


VARIANTS: list[tuple[str, str, dict]] = [
    ("bm25", "bm25", OFF), ("dense", "dense", OFF), ("hybrid rrf (old default)", "hybrid", OFF),
    ("hybrid adaptive, no signals", "hybrid", {**OFF, "fusion": "adaptive"}),
    ("hybrid defaults (this release)", "hybrid", {}),
]


def report(data: dict, results: dict[str, list]) -> None:
    per = {name: summarise(data, ranked) for name, ranked in results.items()}
    groups = sorted(g for g in next(iter(per.values())) if g != "all")
    print(table(["method", "R@5", "R@10", "session-hit@5"], [[n, *m["all"]] for n, m in per.items()]))
    print()
    print(table(["method", *(f"R@10 {g.split(':', 1)[1]}" for g in groups)], [[n, *(m[g][1] for g in groups)] for n, m in per.items()]))
    print()
    print(table(["method", *(f"sess@5 {g.split(':', 1)[1]}" for g in groups if g.startswith(("style", "kind")))],
                [[n, *(m[g][2] for g in groups if g.startswith(("style", "kind")))] for n, m in per.items()]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+", help="JSON sets (synthconv.py output or LongMemEval)")
    ap.add_argument("--embedder", choices=("e5", "use"), default="e5")
    ap.add_argument("--cache", default=DEFAULT_CACHE)
    ap.add_argument("--extra", action="store_true", help="also each signal and reranker on/off")
    args = ap.parse_args()
    emb = CachedEmbedder(args.embedder, args.cache)
    settings = LayeredMemorySettings()
    variants = list(VARIANTS)
    if args.extra:
        variants += extra_variants(settings)
    for path in args.sets:
        data = load_set(path)
        prepare(data)
        n_turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
        print(f"\n## {data['name']}: {len(data['conversations'])} conversations, {n_turns} turns, {len(data['questions'])} questions\n")
        t0 = time.perf_counter()
        results = rankings(data, emb, variants, settings)
        print(f"  {len(variants)} variants in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        report(data, results)


def extra_variants(settings: LayeredMemorySettings) -> list[tuple[str, str, dict]]:
    from layered_memory.retrieval.rerank import SIGNAL_WEIGHTS

    r = settings.retrieval
    out = [(f"  defaults, {n} = 0", "hybrid", {n: 0.0}) for n in SIGNAL_WEIGHTS if getattr(r, n) > 0]
    if "reranker" in type(r).model_fields:
        out += [(f"  defaults, reranker = {v}", "hybrid", {"reranker": v}) for v in ("rules", "learned", "off") if v != r.reranker]
    return out


if __name__ == "__main__":
    main()
