"""What a rerank model (``rerank_model=``, opt-in) can add to a message search, and what its call costs, in one run.

    python benchmarks/rerank_model.py --locomo /work/data/locomo10.json --set /work/cache/synth/assistant2.json

No rerank model runs here (no model hub), so the quality rows bound what one can do rather than measure a model:

* ``defaults``: the engine alone (the baseline every row is read against);
* ``oracle, depth N``: a model that knows the answer (evidence turns 1, the rest 0) and reads the best N hits,
  ``retrieval.rerank_depth``: the ceiling a perfect model reaches at that depth, through the real code path (the
  verbatim rule, the depth cut, the scores handed back);
* ``the engine's order through HTTP``: ``HTTPReranker`` against a local server on a free loopback port that
  scores by the engine's own order, so the hits do not move and the search P50 / P95 beside ``defaults`` is the
  cost of the call itself (JSON of 30 hits each way), without a model's time.

R@5 / R@10 / R@30 are the shares of the evidence turns in the top 5 / 10 / 30 of a search for 30 hits; hit@1 the
first hit is an evidence turn. Each set's store answers every variant question by question (interleaved).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _common import EvidenceOracle, pct, set_arguments, table  # noqa: E402
from _loso_corpus import CACHE  # noqa: E402
from retrieval import CachedEmbedder  # noqa: E402
from retrieval_sets import ingest, locomo_set  # noqa: E402

from layered_memory import LayeredMemory, LayeredMemorySettings  # noqa: E402
from layered_memory.providers import HTTPReranker  # noqa: E402

K = 30


class EchoServer:
    """A rerank API that scores the documents by the order they came in: the engine's order, unchanged."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                n = len(body["documents"])
                data = json.dumps({"results": [{"index": i, "relevance_score": float(n - i)} for i in range(n)]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1/rerank"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def run(data: dict, emb, depths: Sequence[int]) -> list[list[object]]:
    settings = LayeredMemorySettings()
    oracle, echo = EvidenceOracle(), EchoServer()
    http = HTTPReranker(echo.url, model="echo")
    variants = [("defaults", None, None)] + [(f"oracle, depth {d}", oracle, d) for d in depths] + [("the engine's order through HTTP", http, K)]
    texts: dict[tuple[str, int, int], str] = {}
    for c in data["conversations"]:
        for si, s in enumerate(c["sessions"]):
            for ti, t in enumerate(s["turns"]):
                texts[(c["id"], si, ti)] = t["text"]
    rows: dict[str, dict[str, list]] = {name: {"m": [], "lat": [], "errors": []} for name, _, _ in variants}
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=emb, settings=settings)
        searcher = mem._core.searcher  # the variants swap the model on one store (a benchmark's reach-in)
        try:
            where = ingest(mem, data)
            for q in data["questions"]:
                ev = {tuple(e) for e in q["evidence"]}
                oracle.evidence = {texts[(q["conv"], *e)] for e in ev}
                for name, model, depth in variants:
                    searcher.rerank_model = model
                    settings.retrieval.rerank_depth = depth or K
                    t0 = time.perf_counter()
                    res = mem.search(q["question"], filters={"user_id": q["conv"]}, k=K)
                    rows[name]["lat"].append((time.perf_counter() - t0) * 1000)
                    rows[name]["errors"].append(bool(res.rerank_error))
                    ranked = [where[h.id] for h in res.hits if h.id in where]
                    rows[name]["m"].append([len(ev & set(ranked[:n])) / len(ev) for n in (5, 10, K)] + [float(bool(ranked) and ranked[0] in ev)])
        finally:
            searcher.rerank_model = None
            mem.close()
            http.close()
            echo.close()
    return [[name, *np.mean(np.array(r["m"]), axis=0).tolist(), pct(r["lat"], 50), pct(r["lat"], 95), int(sum(r["errors"]))]
            for name, r in rows.items()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    set_arguments(ap, CACHE)
    ap.add_argument("--depths", default="10,20,30", help="oracle rows: rerank_depth values")
    args = ap.parse_args()
    from retrieval_general import load_set

    emb = CachedEmbedder("e5", args.cache)
    depths = [int(x) for x in args.depths.split(",")]
    sets = ([locomo_set(args.locomo, args.conversations)] if args.locomo else []) + [load_set(p) for p in args.set]
    head = ["variant", "R@5", "R@10", f"R@{K}", "hit@1", "search P50 ms", "P95 ms", "rerank errors"]
    for data in sets:
        print(f"\n## {data['name']}: {len(data['conversations'])} conversations, {len(data['questions'])} questions, search for {K} hits\n")
        print(table(head, run(data, emb, depths)))


if __name__ == "__main__":
    main()
