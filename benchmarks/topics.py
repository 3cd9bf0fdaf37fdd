"""Topic tier benchmark: threading throughput, topic/session agreement on LoCoMo, and whether topic
summaries raise evidence recall over the plain hybrid search.

    python benchmarks/topics.py                                  # throughput only
    python benchmarks/topics.py --locomo /work/data/locomo10.json --limit 3

Throughput: messages/s of ``mem.process()`` threading (the write path, with its embeddings, is timed
apart), without a model and with a scripted LangChain fake model whose answers always land in the
ambiguous band (every decision asks the model). LoCoMo: each conversation is one chat, each turn a
message at its session's date; topics are compared with the sessions by the adjusted Rand index
(implemented here in numpy). Recall@k: the share of a question's evidence turns found in the top k
of ``mem.search`` (messages only) vs the same list fused (RRF) with a search restricted to the topics
whose summaries match the question best.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import table  # noqa: E402

from layered_memory.config import LayeredMemorySettings, TopicSettings  # noqa: E402
from layered_memory.engine import LayeredMemory  # noqa: E402
from layered_memory.retrieval.fusion import rrf  # noqa: E402


def adjusted_rand_index(a: list[object], b: list[object]) -> float:
    """ARI of two labelings (Hubert & Arabie 1985), from the contingency table."""
    _, ai = np.unique(np.asarray(a, dtype=str), return_inverse=True)
    _, bi = np.unique(np.asarray(b, dtype=str), return_inverse=True)
    table_ = np.zeros((ai.max() + 1, bi.max() + 1), dtype=np.int64)
    np.add.at(table_, (ai, bi), 1)
    comb = lambda x: x * (x - 1) / 2  # noqa: E731
    sum_ij = comb(table_).sum()
    sum_a, sum_b = comb(table_.sum(1)).sum(), comb(table_.sum(0)).sum()
    total = comb(len(a))
    expected = sum_a * sum_b / total if total else 0.0
    max_index = (sum_a + sum_b) / 2
    return float((sum_ij - expected) / (max_index - expected)) if max_index != expected else 1.0


def make_embedder(name: str):
    from layered_memory.providers.local import E5Embedder, USEEmbedder

    return {"use": USEEmbedder, "e5": E5Embedder}[name]() if name != "none" else "none"


# -- throughput ---------------------------------------------------------------------------------------
def synthetic(n: int) -> list[dict]:
    themes = [
        "hiking trail mountain lake weekend tents", "laptop crash driver update graphics", "dinner recipe pasta tomato sauce",
        "football game goal final score", "job interview resume marketing", "отпуск море Сочи пляж отель", "周末 爬山 湖边 风景",
    ]
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    out = []
    for i in range(n):
        words = themes[(i // 6) % len(themes)].split()
        text = " ".join(words[(i + j) % len(words)] for j in range(4)) + f" {i}"
        out.append({"message_id": f"s{i}", "chat_id": f"c{i % 4}", "user_id": f"u{i % 3}", "content": text,
                    "create_time": t0 + timedelta(seconds=20 * i)})
    return out


def throughput(embedder, n: int) -> list[list[object]]:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    if embedder != "none":  # load the model and measure its calibration outside the timings
        from layered_memory.topics.threader import embedder_calibration

        embedder.embed_documents(["warm up"])
        embedder_calibration(embedder)
    rows = []
    for label, model, extra in (
        ("no model", None, {}),
        ("scripted model (every decision asks)", FakeListChatModel(responses=["1", "Title"]),
         {"assign_threshold": 0.999, "ambiguous_threshold": 0.0, "similarity_floor": -1.0, "similarity_topical": 1.0}),
    ):
        settings = LayeredMemorySettings(topics=TopicSettings(**extra))
        with tempfile.TemporaryDirectory() as tmp:
            mem = LayeredMemory.embedded(tmp, embedder=embedder, chat_model=model, settings=settings)
            msgs = synthetic(n)
            t = time.perf_counter()
            for i in range(0, n, 64):
                mem.add_messages(msgs[i : i + 64])
            write_s = time.perf_counter() - t
            t = time.perf_counter()
            done = mem.topics.process()
            thread_s = time.perf_counter() - t
            calls = mem.topics.usage["total"]["calls"]
            n_topics = sum(len(mem.topics.list(f"c{c}")) for c in range(4))
            rows.append([label, n, round(n / write_s, 1), round(done["threaded"] / thread_s, 1), n_topics, calls])
            mem.close()
    return rows


# -- LoCoMo ---------------------------------------------------------------------------------------------
def parse_date(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def locomo(path: str, embedder, limit: int, k: int) -> tuple[list[list[object]], dict[str, float]]:
    data = json.loads(Path(path).read_text())[:limit]
    rows = []
    base_hits = topic_hits = n_evidence = 0
    with tempfile.TemporaryDirectory() as tmp:
        mem = LayeredMemory.embedded(tmp, embedder=embedder)
        for conv in data:
            chat = re.sub(r"[^A-Za-z0-9_-]", "-", conv["sample_id"])
            c = conv["conversation"]
            sessions = sorted((int(m.group(1)), key) for key in c if (m := re.fullmatch(r"session_(\d+)", key)))
            msgs, labels = [], []
            for num, key in sessions:
                start = parse_date(c[f"{key}_date_time"])
                for j, turn in enumerate(c[key]):
                    msgs.append({"message_id": f"{chat}-{turn['dia_id'].replace(':', '_')}", "chat_id": chat,
                                 "user_id": re.sub(r"\W", "_", turn["speaker"]), "user_name": turn["speaker"],
                                 "content": turn["text"] or "(image)", "create_time": start + timedelta(seconds=30 * j)})
                    labels.append(num)
            t = time.perf_counter()
            for i in range(0, len(msgs), 128):
                mem.add_messages(msgs[i : i + 128])
            mem.process()
            for topic in mem.topics.list(chat, active_only=True):  # the last session's topics are still open
                mem.topics.summarize(topic.topic_id)
            elapsed = time.perf_counter() - t
            got = [m.topic_id for m in mem.get_messages([(m["chat_id"], m["message_id"]) for m in msgs])]
            ari = adjusted_rand_index(labels, got)
            n_topics = len(set(got))
            # evidence recall@k
            qa = [q for q in conv["qa"] if q.get("evidence") and q.get("category") != 5]
            b = t_ = e = 0
            for q in qa:
                want = {f"{chat}-{ev.strip().replace(':', '_')}" for ev in q["evidence"]}
                base = [h.id for h in mem.search(q["question"], filters={"chat_id": chat, "kind": "message"}, k=k).hits]
                sums = mem.topics.search_summaries(q["question"], chat_id=chat, k=3)
                routed: list[str] = []
                if sums:
                    topic_ids = [h.meta["topic_id"] for h in sums]
                    routed = [h.id for h in mem.search(q["question"], filters={"chat_id": chat, "topic_id": topic_ids, "kind": "message"}, k=k).hits]
                fused = [i for i, _ in rrf([base, routed], k=60, limit=k)]
                b += len(want & set(base))
                t_ += len(want & set(fused))
                e += len(want)
            base_hits, topic_hits, n_evidence = base_hits + b, topic_hits + t_, n_evidence + e
            rows.append([chat, len(msgs), len(sessions), n_topics, round(ari, 3), round(b / max(e, 1), 3), round(t_ / max(e, 1), 3), round(elapsed, 1)])
        mem.close()
    return rows, {"recall_base": base_hits / max(n_evidence, 1), "recall_topics": topic_hits / max(n_evidence, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--locomo", help="path to locomo10.json (read in place, never copied)")
    ap.add_argument("--limit", type=int, default=3, help="LoCoMo conversations to use (max 10)")
    ap.add_argument("--embedder", default="use", choices=["use", "e5", "none"])
    ap.add_argument("--messages", type=int, default=600, help="synthetic messages for the throughput table")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    embedder = make_embedder(args.embedder)
    print(f"embedder: {args.embedder}\n")
    print(table(["threading", "messages", "write msg/s", "threading msg/s", "topics", "model calls"], throughput(embedder, args.messages)))
    if args.locomo:
        rows, total = locomo(args.locomo, embedder, args.limit, args.k)
        print()
        print(table(["conversation", "turns", "sessions", "topics", "ARI vs sessions", f"recall@{args.k} search",
                     f"recall@{args.k} +topics", "ingest+thread+summarize s"], rows))
        print(f"\nevidence recall@{args.k}: mem.search {total['recall_base']:.3f} -> with topic summaries {total['recall_topics']:.3f}")


if __name__ == "__main__":
    main()
