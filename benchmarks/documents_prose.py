"""Prose retrieval on a public judged set: ``vector_rag`` (hybrid) against BM25 alone and dense alone.

    python benchmarks/documents_prose.py --data /work/cache/cranfield [--embedder e5|use] [--queries N]

Data (never in the repository; give its directory with ``--data``), one of two layouts:

* Cranfield 1400 as distributed (``cran.all.1400``, ``cran.qry``, ``cranqrel``): 1,400 aeronautics
  abstracts, 225 queries, 1,837 graded judgements. A public copy with the three files as plain text:
  https://github.com/noramtboraas/information-retrieval (root of the tree). The judgements follow
  Cleverdon's scale shipped in its ``cranqrel.readme``: 1 = a complete answer ... 4 = minimum interest
  (-1: no interest); the gain used here is ``5 - code`` (4, 3, 2, 1; -1 -> 0). The qrels number the
  queries 1..225 in file order (the ``.I`` numbers of ``cran.qry`` skip values), as ir_datasets does.
* A BEIR directory (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``; e.g. NFCorpus or SciFact
  unzipped): the grades are the qrels' scores.

Each document is indexed through the product path, ``mem.documents.index_document`` (Markdown
``# title`` + text, its id as the document name, the default chunker), into an embedded store. Every
query then runs three routes in the same run: ``bm25``, ``dense`` and ``hybrid`` (the default,
RRF inside the index); a hit's chunk maps to its document, the first chunk of a document counts.
Reported: nDCG@10 (graded gains, linear, as trec_eval) and Recall@10 (share of the judged-relevant
documents in the top 10), plus a reference outside the engine: ``rank_bm25`` (Okapi) over lower-cased
alphanumeric tokens. Embeddings are cached per text under ``--cache`` (outside the repository), so a
rerun costs no embedding time; the query and passage prefixes are the engine's (e5: ``query:`` /
``passage:``).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "shared"), str(Path(__file__).resolve().parent)]

from _common import table  # noqa: E402
from retrieval import CachedEmbedder  # noqa: E402

from layered_memory import LayeredMemory  # noqa: E402
from layered_memory.documents.prose import chunk_sections  # noqa: E402
from layered_memory.documents.parse import load, parse  # noqa: E402

Docs = dict[str, tuple[str, str]]  # id -> (title, text)
Qrels = dict[str, dict[str, int]]  # query id -> doc id -> gain


def _fields(block: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for m in re.finditer(r"^\.([TAWB])\n(.*?)(?=^\.[TAWB]\n|\Z)", block, flags=re.S | re.M):
        out[m.group(1)] = " ".join(m.group(2).split())
    return out


def load_cranfield(root: Path) -> tuple[Docs, dict[str, str], Qrels]:
    docs: Docs = {}
    for block in re.split(r"^\.I ", (root / "cran.all.1400").read_text(encoding="utf-8", errors="replace"), flags=re.M)[1:]:
        num, _, rest = block.partition("\n")
        f = _fields(rest)
        docs[num.strip()] = (f.get("T", ""), f.get("W", ""))
    queries = {}
    for n, block in enumerate(re.split(r"^\.I ", (root / "cran.qry").read_text(encoding="utf-8"), flags=re.M)[1:], start=1):
        queries[str(n)] = _fields(block.partition("\n")[2]).get("W", "")
    qrels: Qrels = {}
    for line in (root / "cranqrel").read_text(encoding="utf-8").split("\n"):
        parts = line.split()
        if len(parts) >= 3:
            code = int(parts[2])
            qrels.setdefault(parts[0], {})[parts[1]] = 5 - code if 1 <= code <= 4 else 0
    return docs, queries, qrels


def load_beir(root: Path, split: str) -> tuple[Docs, dict[str, str], Qrels]:
    docs: Docs = {}
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            docs[str(d["_id"])] = (d.get("title") or "", d.get("text") or "")
    queries = {}
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            queries[str(q["_id"])] = q["text"]
    qrels: Qrels = {}
    for line in (root / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").split("\n")[1:]:
        parts = line.split("\t")
        if len(parts) >= 3:
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    return docs, queries, qrels


def ndcg_recall(ranked: list[str], judged: dict[str, int]) -> tuple[float, float]:
    top = ranked[:10]
    dcg = sum(judged.get(d, 0) / math.log2(i + 2) for i, d in enumerate(top))
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    relevant = {d for d, g in judged.items() if g > 0}
    return (dcg / idcg if idcg else 0.0), (len(relevant & set(top)) / len(relevant) if relevant else 0.0)


def run_route(mem: LayeredMemory, queries: list[tuple[str, str]], qrels: Qrels, route: str) -> tuple[float, float, float, str]:
    n_sum = r_sum = 0.0
    times, used = [], set()
    for qid, text in queries:
        t0 = time.perf_counter()
        res = mem.documents.vector_rag(text, k=30, route=route, filters={"collection": "bench"})
        times.append(time.perf_counter() - t0)
        used.add(res.route_used)
        ranked = list(dict.fromkeys(h.meta["source"] for h in res.hits))
        n, r = ndcg_recall(ranked, qrels[qid])
        n_sum, r_sum = n_sum + n, r_sum + r
    return n_sum / len(queries), r_sum / len(queries), 1000 * sorted(times)[len(times) // 2], "/".join(sorted(used))


def rank_bm25_reference(docs: Docs, queries: list[tuple[str, str]], qrels: Qrels) -> tuple[float, float]:
    from rank_bm25 import BM25Okapi

    tok = lambda s: re.findall(r"[a-z0-9]+", s.lower())  # noqa: E731
    ids = list(docs)
    bm = BM25Okapi([tok(f"{docs[i][0]} {docs[i][1]}") for i in ids])
    n_sum = r_sum = 0.0
    for qid, text in queries:
        scores = bm.get_scores(tok(text))
        ranked = [ids[i] for i in sorted(range(len(ids)), key=lambda i: -scores[i])[:10]]
        n, r = ndcg_recall(ranked, qrels[qid])
        n_sum, r_sum = n_sum + n, r_sum + r
    return n_sum / len(queries), r_sum / len(queries)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/work/cache/cranfield", help="a Cranfield or BEIR directory (see the module docstring)")
    ap.add_argument("--split", default="test", help="BEIR qrels split")
    ap.add_argument("--embedder", default="e5", help="e5 | use (local, offline)")
    ap.add_argument("--queries", type=int, default=0, help="at most this many queries (evenly sampled; 0: all)")
    ap.add_argument("--cache", default="/work/cache/emb-prose", help="per-text embedding cache (outside the repository)")
    args = ap.parse_args()
    root = Path(args.data)
    if (root / "cran.all.1400").exists():
        name, (docs, queries, qrels) = "Cranfield 1400", load_cranfield(root)
    elif (root / "corpus.jsonl").exists():
        name, (docs, queries, qrels) = f"BEIR {root.name}", load_beir(root, args.split)
    else:
        sys.exit(f"--data {root}: neither cran.all.1400 nor corpus.jsonl there; see the module docstring for where to get the data")
    qs = [(q, queries[q]) for q in qrels if q in queries and queries[q].strip() and any(g > 0 for g in qrels[q].values())]
    if args.queries and len(qs) > args.queries:
        step = len(qs) / args.queries
        qs = [qs[int(i * step)] for i in range(args.queries)]
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    emb = CachedEmbedder(args.embedder, args.cache)
    store = Path(tempfile.mkdtemp(dir="/work/cache"))
    try:
        mem = LayeredMemory.embedded(store / "m", embedder=emb)
        t0 = time.perf_counter()
        sources = [(f"# {title}\n\n{text}\n" if title else f"{text}\n", doc_id) for doc_id, (title, text) in docs.items() if (title + text).strip()]
        texts = []  # the chunk texts the engine will embed: embedded here in batches (the cache), then found there
        for body, doc_id in sources:
            parsed = parse(load(body, name=doc_id, format="markdown", max_bytes=1 << 24))
            texts += [c.indexed_text(parsed.title) for c in chunk_sections(parsed.sections, mem.settings.documents.chunk_chars)]
        emb.cache.get(texts, "passage")
        for i, (body, doc_id) in enumerate(sources, start=1):
            mem.documents.index_document(body, name=doc_id, format="markdown", collection="bench")
            if i % 200 == 0:
                print(f"  indexed {i}/{len(sources)} documents", file=sys.stderr, flush=True)
        emb.cache.save()
        indexed = time.perf_counter() - t0
        emb.cache.get([text for _, text in qs], "query")  # one batch (and one cache line) for every query
        chunks = sum(d["chunks"] or 0 for d in mem.documents.list_documents("bench"))
        rows = []
        for label, route in (("BM25 alone", "bm25"), ("dense alone", "dense"), ("vector_rag hybrid (RRF, the default)", "hybrid")):
            n, r, p50, used = run_route(mem, qs, qrels, route)
            rows.append((label, n, r, round(p50, 1), used))
            print(f"  {route}: {rows[-1]}", file=sys.stderr, flush=True)
        emb.cache.save()
        mem.close()
    finally:
        shutil.rmtree(store, ignore_errors=True)
    n, r = rank_bm25_reference(docs, qs, qrels)
    rows.append(("reference: rank_bm25 Okapi, whitespace-alnum tokens", n, r, "-", "-"))
    print(f"{name}: {len(sources)} documents ({chunks} chunks), {len(qs)} queries with graded judgements; "
          f"embedder {args.embedder} ({emb.name}); indexed in {indexed:.1f} s (embedding included, none for texts already in the cache)")
    print(table(["route", "nDCG@10", "Recall@10", "P50 ms", "route_used"], rows))


if __name__ == "__main__":
    main()
