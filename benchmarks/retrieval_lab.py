"""A fast LoCoMo harness for ranking experiments: no engine, no index, no re-embedding.

    python benchmarks/retrieval_lab.py --locomo PATH/locomo10.json [--cache DIR]

It rebuilds what the engine indexes per turn (``index_context="neighbour"``: the previous turn of the
session, then "Speaker: text"; BM25 terms of that text plus the turn's own terms again), scores BM25
with the engine's analyzer and encoder (IDF over the whole collection, as Qdrant's modifier does) and
dense with cached embeddings (``retrieval_components.EmbedCache``), takes the top ``prefetch`` of each
side per question within its conversation, and hands those candidate lists to the engine's own
second stage (:mod:`layered_memory.retrieval.rerank`) under a grid of settings. One run of the whole
grid takes seconds once the embeddings are cached, so each signal is measured on and off.

It is a lab, not the bar: ``benchmarks/retrieval.py`` measures the product path (``mem.search``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
from scipy import sparse as sp

sys.path.insert(0, str(Path(__file__).parent))
from retrieval_components import DEFAULT_CACHE, EmbedCache, LazyEmbedder, metrics  # noqa: E402

from layered_memory.config import RetrievalSettings  # noqa: E402
from layered_memory.retrieval.analyzer import Analyzer  # noqa: E402
from layered_memory.retrieval.bm25 import BM25Encoder, idf  # noqa: E402
from layered_memory.retrieval.rerank import Candidate, SecondStage  # noqa: E402

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
PREVIOUS_CHARS = 300  # layered_memory.index.indexer.PREVIOUS_CHARS


def parse_session_date(text: str) -> datetime:
    """LoCoMo's "1:56 pm on 8 May, 2023"."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


@dataclass
class Conv:
    sample_id: str
    turns: list[dict] = field(default_factory=list)  # speaker, text, session, date, indexed
    questions: list[str] = field(default_factory=list)
    evidence: list[list[int]] = field(default_factory=list)
    categories: list[int] = field(default_factory=list)


def turn_text(turn: dict) -> str:
    cap = turn.get("blip_caption") or ""
    return turn["text"] + (f" [image: {cap}]" if cap else "")


def load_set(path: str) -> list[Conv]:
    """A set in ``synthconv.py``'s format (or LongMemEval's): indexed as the engine does, categories are question kinds."""
    from retrieval_general import load_set as read

    data = read(path)
    convs: dict[str, Conv] = {}
    for cd in data["conversations"]:
        c = convs[cd["id"]] = Conv(cd["id"])
        c.starts = []  # type: ignore[attr-defined]
        for si, sess in enumerate(cd["sessions"]):
            start = datetime.fromisoformat(sess["date"])
            c.starts.append(len(c.turns))  # type: ignore[attr-defined]
            prev = None
            for j, t in enumerate(sess["turns"]):
                line = f"{t['speaker']}: {t['text']}"
                if prev is not None:
                    p = prev["text"] if len(prev["text"]) <= PREVIOUS_CHARS else prev["text"][:PREVIOUS_CHARS] + "…"
                    line = f"{prev['speaker']}: {p}\n{line}"
                c.turns.append({"speaker": t["speaker"], "text": t["text"], "session": sess["id"], "date": start + timedelta(minutes=j),
                                "seq": len(c.turns) + 1, "indexed": line})
                prev = t
    for q in data["questions"]:
        c = convs[q["conv"]]
        c.questions.append(q["question"])
        c.evidence.append(sorted(c.starts[si] + ti for si, ti in q["evidence"]))  # type: ignore[attr-defined]
        c.categories.append(q["kind"])
    return list(convs.values())


def load(path: str) -> list[Conv]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    out = []
    for sample in data:
        conv = sample["conversation"]
        keys = sorted((k for k, v in conv.items() if k.startswith("session_") and isinstance(v, list)), key=lambda k: int(k.split("_")[1]))
        c = Conv(sample["sample_id"])
        for key in keys:
            date = parse_session_date(conv[f"{key}_date_time"])
            prev = None
            for j, t in enumerate(conv[key]):
                text = turn_text(t)
                line = f"{t['speaker']}: {text}"
                if prev is not None:
                    p = turn_text(prev)
                    p = p if len(p) <= PREVIOUS_CHARS else p[:PREVIOUS_CHARS] + "…"
                    line = f"{prev['speaker']}: {p}\n{line}"
                c.turns.append({"dia": t["dia_id"], "speaker": t["speaker"], "text": text, "session": key, "date": date,
                                "seq": len(c.turns) + 1, "indexed": line})
                prev = t
        pos = {t["dia"]: i for i, t in enumerate(c.turns)}
        for qa in sample["qa"]:
            if qa.get("category") == 5:
                continue
            ev = sorted({pos[e.strip()] for e in qa.get("evidence", []) if e.strip() in pos})
            if not ev:
                continue
            c.questions.append(str(qa["question"]))
            c.evidence.append(ev)
            c.categories.append(int(qa["category"]))
        out.append(c)
    return out


def query_ids(terms: list[str]) -> list[int]:
    """The term ids a question's BM25 query holds, as the engine encodes it (``BM25Encoder.query``: its
    terms and, with an engine that has them, the Russian prefixes)."""
    return BM25Encoder().query(terms).indices


class BM25Sets:
    """The BM25 side of a lab corpus (engine analyzer + encoder, collection-wide IDF, as Qdrant's modifier):
    every turn's document vector as the engine writes a message's (its indexed context, then its own words
    again: ``Indexer.sparse_terms``), and a question's scores over one conversation's turns."""

    convs: list
    analyzer: Analyzer

    def build_bm25(self, enc: BM25Encoder, context: str) -> None:
        """The document vectors of every turn, ``t[context]`` being the text indexed before its own words."""
        vocab: dict[int, int] = {}
        rows, cols, vals = [], [], []
        n = 0
        self.offsets = []
        for c in self.convs:
            self.offsets.append(n)
            for t in c.turns:
                sv = enc.document(self.analyzer.terms(t[context]) + self.analyzer.terms(t["text"]))
                for i, v in zip(sv.indices, sv.values):
                    rows.append(n)
                    cols.append(vocab.setdefault(i, len(vocab)))
                    vals.append(v)
                n += 1
        self.vocab = vocab
        self.D = sp.csr_matrix((vals, (rows, cols)), shape=(n, len(vocab)))
        self.idf = idf(n, np.asarray((self.D > 0).sum(axis=0)).ravel())

    def bm25(self, ci: int, question: str, terms: list[str] | None = None) -> np.ndarray:
        terms = self.analyzer.terms(question) if terms is None else terms
        q = np.zeros(len(self.vocab))
        for t in query_ids(terms):
            j = self.vocab.get(t)
            if j is not None:
                q[j] = self.idf[j]
        lo, hi = self.offsets[ci], self.offsets[ci] + len(self.convs[ci].turns)
        return self.D[lo:hi] @ q


class Corpus(BM25Sets):
    """BM25 and dense scores of every question's conversation."""

    def __init__(self, convs: list[Conv], cache: EmbedCache, settings: RetrievalSettings):
        self.convs = convs
        self.analyzer = Analyzer()
        self.build_bm25(BM25Encoder(settings.k1, settings.b, settings.avgdl), "indexed")
        self.P = [cache.get([t["indexed"] for t in c.turns], "passage") for c in convs]
        self.Q = [cache.get(c.questions, "query") for c in convs]

    def bm25_prf(self, ci: int, question: str, docs: int = 5, terms: int = 10, alpha: float = 0.3) -> np.ndarray:
        """RM3-style pseudo-relevance feedback: the best ``docs`` turns' most weighty terms (tf x idf,
        not in the query) added to the query at ``alpha`` of an original term's weight."""
        q_terms = self.analyzer.terms(question)
        first = self.bm25(ci, question, q_terms)
        top_docs = np.argsort(-first)[:docs]
        q_ids = {self.vocab.get(t) for t in query_ids(q_terms)}
        lo = self.offsets[ci]
        acc = np.zeros(len(self.vocab))
        for d in top_docs:
            if first[d] <= 0:
                continue
            row = self.D[lo + d]
            acc[row.indices] += row.data / max(row.data.sum(), 1e-9) * self.idf[row.indices]
        for j in q_ids:
            if j is not None:
                acc[j] = 0
        q = np.zeros(len(self.vocab))
        for j in q_ids:
            if j is not None:
                q[j] = self.idf[j]
        best = np.argsort(-acc)[:terms]
        if acc[best[0]] > 0:
            q[best] += alpha * self.idf[best] * acc[best] / acc[best[0]]
        hi = lo + len(self.convs[ci].turns)
        return self.D[lo:hi] @ q

    def dense(self, ci: int, qi: int) -> np.ndarray:
        return self.P[ci] @ self.Q[ci][qi]


def top(scores: np.ndarray, n: int, positive: bool = False) -> list[tuple[int, float]]:
    idx = np.argsort(-scores, kind="stable")[:n]
    return [(int(i), float(scores[i])) for i in idx if not positive or scores[i] > 0]


def collect(lists: dict[str, list[tuple[int, float]]], payload_of: Callable[[int], dict]) -> list[Candidate]:
    """One second-stage candidate per turn in any side's list (turn index, score; best first), with each side's
    score and rank; ``payload_of(i)`` is turn ``i``'s payload as the index would return it."""
    out: dict[int, Candidate] = {}
    for side, lst in lists.items():
        for rank, (i, s) in enumerate(lst):
            c = out.get(i)
            if c is None:
                c = out[i] = Candidate(key=i, payload=payload_of(i))
            c.scores[side] = s
            c.ranks[side] = rank
    return list(out.values())


def candidates(conv: Conv, lists: dict[str, list[tuple[int, float]]]) -> list[Candidate]:
    def payload(i: int) -> dict:
        t = conv.turns[i]
        return {"author": t["speaker"], "session_key": t["session"], "chat_id": t["session"], "seq": t["seq"],
                "timestamp": t["date"].isoformat(), "text": t["text"]}

    return collect(lists, payload)


def run(corpus: Corpus, stage: SecondStage, prefetch: int, prf: dict | None = None) -> dict[str, list[tuple[float, ...]]]:
    per_cat: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    for ci, c in enumerate(corpus.convs):
        for qi, q in enumerate(c.questions):
            bm = corpus.bm25_prf(ci, q, **prf) if prf else corpus.bm25(ci, q)
            lists = {"dense": top(corpus.dense(ci, qi), prefetch), "sparse": top(bm, prefetch, positive=True)}
            ranked = stage.rank(q, candidates(c, lists), k=10)
            m = metrics([cand.key for cand in ranked], c.evidence[qi])
            sess = {c.turns[e]["session"] for e in c.evidence[qi]}
            m = (*m, float(sess <= {c.turns[cand.key]["session"] for cand in ranked[:5]}))  # session-hit@5
            per_cat[CATEGORIES.get(c.categories[qi], c.categories[qi])].append(m)  # type: ignore[call-overload]
            per_cat["all"].append(m)
    return per_cat


def summary(per_cat) -> str:
    cols = ["all", *sorted(k for k in per_cat if k != "all")]
    r10 = " ".join(f"{k[:6]} {np.mean([m[1] for m in per_cat[k]]):.3f}" for k in cols[1:])
    a = np.mean(np.array(per_cat["all"]), axis=0)
    return f"R@5 {a[0]:.3f} R@10 {a[1]:.3f} All@10 {a[2]:.3f} NDCG {a[3]:.3f} sess@5 {a[4]:.3f} | R@10 {r10}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--locomo", help="LoCoMo's locomo10.json")
    ap.add_argument("--set", help="instead of LoCoMo: a synthconv.py (or LongMemEval) JSON set")
    ap.add_argument("--cache", default=DEFAULT_CACHE)
    ap.add_argument("--conversations", type=int, default=10)
    ap.add_argument("--grid", default="default", help="name of a grid in GRIDS")
    args = ap.parse_args()
    if not args.locomo and not args.set:
        ap.error("pass --locomo PATH or --set PATH")
    convs = load_set(args.set) if args.set else load(args.locomo)[: args.conversations]
    base = RetrievalSettings()
    corpus = Corpus(convs, EmbedCache(args.cache, "e5", LazyEmbedder("e5")), base)
    print(f"{len(convs)} conversations, {sum(len(c.questions) for c in convs)} questions; R@10 columns: all single multi temporal open")
    for name, over in GRIDS[args.grid]:
        over = dict(over)
        prf = over.pop("prf", None)
        s = base.model_copy(update=over)
        print(f"{name:<40} {summary(run(corpus, SecondStage(s, corpus.analyzer), s.prefetch_limit, prf))}", flush=True)


OFF = {"fusion": "rrf", "neighbour_weight": 0.0, "session_weight": 0.0, "speaker_weight": 0.0, "phrase_weight": 0.0, "time_weight": 0.0}
GRIDS: dict[str, list[tuple[str, dict]]] = {
    "default": [
        ("today: rrf k=2 w=(0.5,1)", OFF),
        ("dense only", {**OFF, "sparse_weight": 0.0}),
        ("bm25 only", {**OFF, "dense_weight": 0.0}),
        ("zscore", {**OFF, "fusion": "zscore"}),
        ("dbsf", {**OFF, "fusion": "dbsf"}),
        ("adaptive", {**OFF, "fusion": "adaptive"}),
        ("defaults (all on)", {}),
    ],
}

def _sweep() -> list[tuple[str, dict]]:
    out = []
    for fusion in ("rrf", "zscore", "adaptive"):
        out.append((f"{fusion}", {**OFF, "fusion": fusion}))
        for name, values in (("neighbour_weight", (0.1, 0.2, 0.4)), ("session_weight", (0.05, 0.1, 0.2)),
                             ("speaker_weight", (0.05, 0.1, 0.2)), ("phrase_weight", (0.05, 0.1, 0.2)), ("time_weight", (0.05, 0.1, 0.2, 0.4))):
            for v in values:
                out.append((f"{fusion} + {name}={v}", {**OFF, "fusion": fusion, name: v}))
    return out


GRIDS["sweep"] = _sweep()
GRIDS["adaptive"] = [("dense only", {**OFF, "sparse_weight": 0.0}), ("defaults", {})] + [
    (f"defaults adaptive_power={p} adaptive_top={t}", {"adaptive_power": p, "adaptive_top": t}) for p in (0.5, 1.0, 2.0) for t in (1, 3, 5, 10)]
GRIDS["reranker"] = [("defaults (rules)", {}), ("reranker=learned", {"reranker": "learned"}), ("reranker=off", {"reranker": "off"}),
                     ("adaptive, session_weight=0", {"session_weight": 0.0}), ("learned, session_weight=0", {"reranker": "learned", "session_weight": 0.0})]
GRIDS["fdw"] = [(f"{f} fusion_dense_weight={w}", {**OFF, "fusion": f, "fusion_dense_weight": w})
                for f in ("zscore", "adaptive") for w in (0.5, 0.7, 1.0, 1.4)] + \
               [(f"adaptive power={p} top={t}", {**OFF, "fusion": "adaptive", "adaptive_power": p, "adaptive_top": t})
                for p in (0.5, 1.0, 2.0) for t in (1, 3, 5)]

def _combos() -> list[tuple[str, dict]]:
    out = [("rrf", OFF)]
    for fusion in ("rrf", "zscore", "adaptive"):
        for nw in (0.3, 0.6):
            for sw in (0.1, 0.3):
                for spw in (0.2, 0.4):
                    for tw in (0.3, 0.6):
                        o = {**OFF, "fusion": fusion, "neighbour_weight": nw, "session_weight": sw, "speaker_weight": spw, "time_weight": tw}
                        out.append((f"{fusion} n={nw} s={sw} sp={spw} t={tw}", o))
    return out


GRIDS["combos"] = _combos()


def _combos2() -> list[tuple[str, dict]]:
    out = []
    for fusion in ("rrf", "adaptive"):
        for nw in (0.2, 0.4):
            for sw in (0.3, 0.5):
                for spw in (0.4, 0.7, 1.0):
                    for tw in (0.6, 1.0):
                        o = {**OFF, "fusion": fusion, "neighbour_weight": nw, "session_weight": sw, "speaker_weight": spw, "time_weight": tw}
                        out.append((f"{fusion} n={nw} s={sw} sp={spw} t={tw}", o))
    return out


GRIDS["combos2"] = _combos2()
_PICK = {"neighbour_weight": 0.4, "session_weight": 0.3, "speaker_weight": 0.7, "time_weight": 0.8, "time_decay": 1.0}
GRIDS["final"] = [(f"{f} {k}={v}", {**OFF, **_PICK, "fusion": f, k: v}) for f in ("adaptive", "rrf")
                  for k, v in (("time_decay", 0.5), ("time_decay", 1.0), ("time_decay", 2.0), ("neighbour_span", 2), ("phrase_weight", 0.2),
                               ("speaker_weight", 0.5), ("adaptive_power", 0.5), ("adaptive_power", 2.0), ("fusion_dense_weight", 0.7))]
GRIDS["neighbour"] = [(f"defaults neighbour_weight={w}", {"neighbour_weight": w}) for w in (0.0, 0.2, 0.4, 0.6, 0.8)]
GRIDS["anchor"] = [("defaults", {}), ("defaults, time_anchor=now", {"time_anchor": "now"})]
GRIDS["prefetch"] = [(f"defaults prefetch={n}", {"prefetch_limit": n}) for n in (20, 30, 40, 50, 80)]
GRIDS["ablate"] = [("picked", {**OFF, **_PICK, "fusion": "adaptive"})] + \
    [(f"picked, {k}=0", {**OFF, **_PICK, "fusion": "adaptive", k: 0.0}) for k in _PICK] + \
    [(f"picked, fusion={f}", {**OFF, **_PICK, "fusion": f}) for f in ("rrf", "zscore", "dbsf")]
GRIDS["prf"] = [("rrf", OFF)] + [(f"rrf + prf docs={d} terms={t} alpha={a}", {**OFF, "prf": {"docs": d, "terms": t, "alpha": a}})
                                 for d in (3, 5, 10) for t in (5, 10, 20) for a in (0.2, 0.5)]

if __name__ == "__main__":
    main()
