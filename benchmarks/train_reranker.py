"""Train the second stage's learned reranker (``retrieval.reranker="learned"``) and write its coefficients.

    python benchmarks/synthconv.py --out /work/cache/synth/train.json --seed 1 --per-style 3
    python benchmarks/train_reranker.py /work/cache/synth/train.json [--cache DIR] [--write]

Training data is synthetic (``synthconv.py``, en/ru/zh, two chat styles): neither LoCoMo nor
LongMemEval, which judge the model. Per question, the candidates are what the engine's second stage
sees (each side's top ``prefetch_limit``, rebuilt by ``retrieval_lab.py`` from cached embeddings:
the same lists as ``mem.search``), the features are ``SecondStage.feature_matrix`` (every signal on
with the default settings), the label is "an evidence turn". Model: L2-regularised logistic
regression (Newton steps, numpy only), positives weighted to balance the classes, coefficients kept
non-negative (``--signed`` lifts that: it fits the generator better and transfers worse). ``--write``
replaces the ``MODEL`` block of ``layered_memory/retrieval/learned.py``; without it the
coefficients are printed only. Held-out check: the questions of every third conversation are left
out of training and scored with the model and with the rules.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from retrieval_components import DEFAULT_CACHE, EmbedCache, LazyEmbedder, metrics  # noqa: E402
from retrieval_lab import Corpus, candidates, load_set, top  # noqa: E402

from layered_memory.config import RetrievalSettings  # noqa: E402
from layered_memory.retrieval.learned import FEATURES  # noqa: E402
from layered_memory.retrieval.rerank import SecondStage  # noqa: E402

LEARNED = Path(__file__).resolve().parent.parent / "shared" / "layered_memory" / "retrieval" / "learned.py"


def dataset(corpus: Corpus, settings: RetrievalSettings) -> list[tuple[int, int, np.ndarray, np.ndarray, list]]:
    """Per question: (conversation index, question index, features, labels, candidate keys)."""
    stage = SecondStage(settings, corpus.analyzer)
    out = []
    for ci, c in enumerate(corpus.convs):
        for qi, q in enumerate(c.questions):
            lists = {"dense": top(corpus.dense(ci, qi), settings.prefetch_limit),
                     "sparse": top(corpus.bm25(ci, q), settings.prefetch_limit, positive=True)}
            cands = candidates(c, lists)
            x = stage.feature_matrix(q, cands)
            ev = set(c.evidence[qi])
            out.append((ci, qi, x, np.array([float(cd.key in ev) for cd in cands]), [cd.key for cd in cands]))
    return out


def fit(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 30) -> tuple[np.ndarray, float]:
    """Weighted logistic regression by Newton's method; returns (coef, intercept)."""
    xb = np.column_stack([x, np.ones(len(x))])
    pos = y.sum()
    w = np.where(y > 0, (len(y) - pos) / max(pos, 1.0), 1.0)
    beta = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ beta)))
        grad = xb.T @ (w * (p - y)) + reg * beta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta[:-1], float(beta[-1])


def fit_monotone(x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """``fit`` with every coefficient >= 0 (each feature can only lift a candidate, as in the rules):
    features given a negative coefficient are dropped and the rest refitted, until none is negative.
    Unconstrained, the model leans on differences between collinear features (fused score against
    each side's rank) that hold on the training generator and nowhere else."""
    active = np.ones(x.shape[1], dtype=bool)
    while True:
        coef, intercept = fit(x * active, y, l2)
        coef = np.where(active, coef, 0.0)
        neg = coef < 0
        if not neg.any():
            return coef, intercept
        active &= ~neg


def recall10(rows, coef: np.ndarray | None, intercept: float, corpus: Corpus) -> float:
    got = []
    for ci, qi, x, y, keys in rows:
        s = x @ coef + intercept if coef is not None else x[:, 0] + x[:, 6:] @ _RULES
        order = np.argsort(-s, kind="stable")[:10]
        ev = corpus.convs[ci].evidence[qi]  # every evidence turn, also those no side returned
        got.append(metrics([keys[i] for i in order], ev)[1])
    return float(np.mean(got))


_RULES = np.zeros(len(FEATURES) - 6)


def write(coef: np.ndarray, intercept: float, note: str) -> None:
    text = LEARNED.read_text(encoding="utf-8")
    block = ("MODEL = {\n"
             f"    \"trained_on\": {note!r},\n"
             f"    \"coef\": [{', '.join(f'{v:.6g}' for v in coef)}],\n"
             f"    \"intercept\": {intercept:.6g},\n"
             "}\n")
    new, n = re.subn(r"MODEL = \{\n.*?\n\}\n", block, text, flags=re.S)
    if n != 1:
        sys.exit(f"{LEARNED}: no MODEL block to replace")
    LEARNED.write_text(new, encoding="utf-8")
    print(f"wrote {LEARNED}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("train", help="a synthconv.py set (not LoCoMo, not LongMemEval)")
    ap.add_argument("--cache", default=DEFAULT_CACHE)
    ap.add_argument("--l2", type=float, default=1.0)
    ap.add_argument("--features", nargs="+", choices=FEATURES, default=list(FEATURES), help="features the model may use (the rest get 0)")
    ap.add_argument("--signed", action="store_true", help="allow negative coefficients (measured: worse off the training set)")
    ap.add_argument("--write", action="store_true", help="write the coefficients into layered_memory/retrieval/learned.py")
    args = ap.parse_args()
    settings = RetrievalSettings()
    for i, name in enumerate(FEATURES[6:]):
        _RULES[i] = getattr(settings, f"{name}_weight")
    convs = load_set(args.train)
    corpus = Corpus(convs, EmbedCache(args.cache, "e5", LazyEmbedder("e5")), settings)
    mask = np.array([f in args.features for f in FEATURES], dtype=float)
    rows = [(ci, qi, x * mask, y, keys) for ci, qi, x, y, keys in dataset(corpus, settings) if y.any()]
    train = [r for r in rows if r[0] % 3 != 2]
    held = [r for r in rows if r[0] % 3 == 2]
    x = np.vstack([r[2] for r in train])
    y = np.concatenate([r[3] for r in train])
    fitter = fit if args.signed else fit_monotone
    coef, intercept = fitter(x, y, args.l2)
    print(f"{len(rows)} questions ({len(train)} train, {len(held)} held out), {len(y)} candidates, {int(y.sum())} positives")
    for name, v in zip(FEATURES, coef):
        print(f"  {name:<10} {v:+.4f}")
    print(f"  intercept  {intercept:+.4f}")
    print(f"held-out R@10: rules {recall10(held, None, 0.0, corpus):.3f}, learned {recall10(held, coef, intercept, corpus):.3f}")
    coef, intercept = fitter(np.vstack([r[2] for r in rows]), np.concatenate([r[3] for r in rows]), args.l2)  # the shipped model: all of it
    if args.write:
        write(coef, intercept, f"synthconv.py set {Path(args.train).name}: {len(rows)} questions, l2={args.l2}, {'signed' if args.signed else 'non-negative'}")


if __name__ == "__main__":
    main()
