"""Code search over a real repository: ``index_repo`` / ``search_repos`` quality and indexing speed.

    python benchmarks/documents.py [--repo /work/.mirror/encode+httpx/repo] [--embedder e5] [--limit 300]

Data: a public repository (default encode/httpx, fetched as a bare mirror), exported to
``/work/cache/documents-bench``. Queries are derived from docstrings: for every function or method
with a docstring whose first sentence has at least four words, the query is that sentence, and the
relevant chunk is the definition's own chunk (same path, same qualified symbol). The docstrings
are removed from the indexed copy (their lines blanked, so line numbers stay), otherwise BM25 would
find the query text verbatim. Graded judgements do not apply (one relevant chunk per query), so
nDCG@10 is binary nDCG. One engine, one index, three routes in the same run: BM25 alone, dense
alone and hybrid (RRF), plus the index throughput against the embedder's own rate on the same
chunk texts, and the incremental re-index after one file changes against a full index.
"""

from __future__ import annotations

import argparse
import ast
import math
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "shared"), str(Path(__file__).resolve().parent)]

from _common import table  # noqa: E402

from layered_memory import LayeredMemory  # noqa: E402

CACHE = Path("/work/cache/documents-bench")


def export(mirror: str, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", mirror, "archive", "HEAD"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def strip_docstrings(root: Path, package: str) -> list[tuple[str, str, str]]:
    """Blank the docstrings of the package's .py files; returns (query, path, qualified symbol)."""
    queries = []
    for path in sorted((root / package).rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        src = path.read_text(encoding="utf-8")
        tree = ast.parse(src)
        lines = src.split("\n")
        blank: list[tuple[int, int]] = []

        def visit(body: list[ast.stmt], prefix: str) -> None:
            for node in body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = f"{prefix}.{node.name}" if prefix else node.name
                    doc = ast.get_docstring(node)
                    first = node.body[0] if node.body else None
                    if doc and isinstance(first, ast.Expr) and len(node.body) > 1:
                        sentence = " ".join(doc.strip().split("\n\n")[0].split()).split(". ")[0]
                        if len(sentence.split()) >= 4 and not isinstance(node, ast.ClassDef):
                            queries.append((sentence, rel, name))
                        blank.append((first.lineno, first.end_lineno or first.lineno))
                    visit(node.body, name)

        visit(tree.body, "")
        for a, b in blank:
            for i in range(a - 1, b):
                lines[i] = ""
        path.write_text("\n".join(lines), encoding="utf-8")
    return queries


def git_commit(root: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "bench"]):
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def evaluate(mem: LayeredMemory, queries: list[tuple[str, str, str]], route: str) -> tuple[float, float, float, float]:
    ndcg = recall = mrr = 0.0
    times = []
    for q, path, symbol in queries:
        t0 = time.perf_counter()
        hits = mem.documents.search_repos(q, k=10, route=route).hits
        times.append(time.perf_counter() - t0)
        rank = next((i for i, h in enumerate(hits) if h.meta.get("path") == path and h.meta.get("symbol") == symbol), None)
        if rank is not None:
            ndcg += 1 / math.log2(rank + 2)
            recall += 1
            mrr += 1 / (rank + 1)
    n = len(queries)
    return ndcg / n, recall / n, mrr / n, 1000 * sorted(times)[len(times) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default="/work/.mirror/encode+httpx/repo", help="a bare git mirror (the fetch tool's copy)")
    ap.add_argument("--package", default="httpx", help="the package directory whose functions give the queries")
    ap.add_argument("--embedder", default="e5", help="e5 | use (local, offline)")
    ap.add_argument("--limit", type=int, default=300, help="at most this many queries (evenly sampled)")
    args = ap.parse_args()
    src = CACHE / "src"
    export(args.repo, src)
    queries = strip_docstrings(src, args.package)
    if len(queries) > args.limit:
        step = len(queries) / args.limit
        queries = [queries[int(i * step)] for i in range(args.limit)]
    git_commit(src)
    store = Path(tempfile.mkdtemp(dir="/work/cache"))
    try:
        mem = LayeredMemory.embedded(store / "m", embedder=args.embedder)
        t0 = time.perf_counter()
        report = mem.documents.index_repo(src, include=[f"{args.package}/*"])
        full = time.perf_counter() - t0
        print(f"indexed {report.chunks} chunks in {full:.1f}s", file=sys.stderr, flush=True)
        texts = [d["text"] for _, d in mem.documents.store.scan("doc_chunks", "")][:256]  # a sample: the rate only
        t0 = time.perf_counter()
        for i in range(0, len(texts), 64):
            mem.embedder.embed_documents(texts[i: i + 64])
        embed_only = time.perf_counter() - t0
        print(f"embedder alone: {embed_only:.1f}s", file=sys.stderr, flush=True)
        rows = []
        for route in ("bm25", "dense", "hybrid"):
            rows.append((route, *evaluate(mem, queries, route)))
            print(f"{route}: {rows[-1]}", file=sys.stderr, flush=True)
        target = src / args.package / "_urls.py"
        target.write_text(target.read_text(encoding="utf-8") + "\n\ndef bench_added(x):\n    return x\n", encoding="utf-8")
        t0 = time.perf_counter()
        inc = mem.documents.index_repo(src, include=[f"{args.package}/*"])
        incremental = time.perf_counter() - t0
        mem.close()
    finally:
        shutil.rmtree(store, ignore_errors=True)
    print(f"repository {args.repo}, {args.package}/ ({report.files} tracked files, {report.indexed} indexed, skipped {report.skipped}, "
          f"parsers {report.parsers}); {report.chunks} chunks; {len(queries)} docstring queries; embedder {args.embedder}")
    print(table(["route", "nDCG@10", "Recall@10", "MRR@10", "P50 ms"], rows))
    print()
    print(table(["indexing", "seconds", "chunks/s"], [
        ("index_repo, full (parse + chunk + embed + write)", round(full, 2), round(report.chunks / full, 1)),
        (f"embedder alone on {len(texts)} of the same chunk texts (batches of 64)", round(embed_only, 2), round(len(texts) / embed_only, 1)),
        (f"index_repo after one file changed ({inc.indexed} file re-embedded, {inc.unchanged} unchanged)", round(incremental, 2), "-"),
    ]))


if __name__ == "__main__":
    main()
