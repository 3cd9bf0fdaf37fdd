"""The sets of the retrieval lab (``retrieval_loso.py``) and what the engine indexes of them.

Each set is read into conversations (``Conv``: turns with their own text, their context, the turn before in
their chat, and the questions with their evidence turns); a ``Corpus`` holds one set's BM25 vectors, built the
way ``index.indexer.Indexer`` writes message vectors (the context plus the turn's own words twice, the messages'
BM25 parameters), and its cached embeddings: each turn's own text and context, each question whole and as the
dense side embeds it (``retrieval.drop_preamble``), and the sentences of long turns. ``candidates`` turns the
lists a question reads into the second stage's input.
"""

from __future__ import annotations

import copy
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from retrieval_components import EmbedCache  # noqa: E402
from retrieval_lab import BM25Sets, collect  # noqa: E402

from layered_memory.config import RetrievalSettings  # noqa: E402
from layered_memory.retrieval.analyzer import Analyzer  # noqa: E402
from layered_memory.retrieval.bm25 import BM25Encoder  # noqa: E402
from layered_memory.retrieval.rerank import Candidate  # noqa: E402

try:  # retrieval_sets --baseline-tree imports the lab on an engine from before drop_preamble: whole questions
    from layered_memory.retrieval.preamble import question_core
except ImportError:  # pragma: no cover - only under an older engine
    def question_core(text: str) -> str | None:
        return None

CACHE = "/work/cache/retrieval"
PREVIOUS_CHARS = 300  # layered_memory.index.indexer.PREVIOUS_CHARS


@dataclass
class Conv:
    id: str
    lang: str
    turns: list[dict] = field(default_factory=list)  # speaker, role, text, chat, date, seq, own, ctx
    questions: list[str] = field(default_factory=list)
    evidence: list[list[int]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)


def _add_turns(c: Conv, chat: str, start, turns: list[dict], minutes: bool = True) -> None:
    from datetime import timedelta

    prev = None
    for j, t in enumerate(turns):
        own = f"{t['speaker']}: {t['text']}"
        ctx = own
        if prev is not None:
            p = prev["text"] if len(prev["text"]) <= PREVIOUS_CHARS else prev["text"][:PREVIOUS_CHARS] + "…"
            ctx = f"{prev['speaker']}: {p}\n{own}"
        c.turns.append({"speaker": t["speaker"], "role": t.get("role", "user"), "text": t["text"], "chat": chat,
                        "date": start + timedelta(minutes=j), "seq": len(c.turns) + 1, "own": own, "ctx": ctx})
        prev = t


def load_locomo(path: str, n: int = 10) -> list[Conv]:
    from retrieval_lab import load

    out = []
    for lc in load(path)[:n]:
        c = Conv(lc.sample_id, "en")
        by_session: dict[str, list[dict]] = defaultdict(list)
        for t in lc.turns:
            by_session[t["session"]].append(t)
        for sess, turns in by_session.items():  # in order: load() keeps the sessions sorted
            _add_turns(c, sess, turns[0]["date"], [{"speaker": t["speaker"], "text": t["text"]} for t in turns])
        c.questions, c.evidence, c.kinds = lc.questions, lc.evidence, [str(k) for k in lc.categories]
        out.append(c)
    return out


def load_synth(path: str, style: str | None = None) -> list[Conv]:
    """``synthconv.py`` / ``assistantchat.py`` output; ``style`` keeps one chat style."""
    import json
    from datetime import datetime

    data = json.loads(Path(path).read_text(encoding="utf-8"))
    convs: dict[str, Conv] = {}
    starts: dict[str, list[int]] = {}
    for cd in data["conversations"]:
        if style and cd.get("style") != style:
            continue
        c = convs[cd["id"]] = Conv(cd["id"], cd.get("lang", "en"))
        starts[cd["id"]] = []
        for s in cd["sessions"]:
            starts[cd["id"]].append(len(c.turns))
            _add_turns(c, s["id"], datetime.fromisoformat(s["date"]), s["turns"])
    for q in data["questions"]:
        c = convs.get(q["conv"])
        if c is None:
            continue
        c.questions.append(q["question"])
        c.evidence.append(sorted(starts[q["conv"]][si] + ti for si, ti in q["evidence"]))
        c.kinds.append(q["kind"])
    return list(convs.values())


class Corpus(BM25Sets):
    """One set: BM25 over the context + own terms (collection-wide IDF, as Qdrant's modifier) and
    dense scores of both texts per turn."""

    def __init__(self, name: str, convs: list[Conv], cache: EmbedCache, settings: RetrievalSettings):
        self.name, self.convs = name, convs
        self.analyzer = Analyzer()
        self.bm25_params = (settings.message_k1, settings.message_b, settings.message_avgdl)
        self.build_bm25(BM25Encoder(*self.bm25_params), "ctx")
        self._variants: dict[tuple, Corpus] = {}
        self.cache = cache
        self._sentences: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.P_own = [cache.get([t["own"] for t in c.turns], "passage") for c in convs]
        self.P_ctx = [cache.get([t["ctx"] for t in c.turns], "passage") for c in convs]
        # the questions as the dense side embeds them (retrieval.drop_preamble: a short opening clause left out), and whole
        self.Q_whole = [cache.get(c.questions, "query") for c in convs]
        self.Q_core = [cache.get([question_core(q) or q for q in c.questions], "query") for c in convs]
        self.Q = self.Q_core if settings.drop_preamble else self.Q_whole

    def for_bm25(self, over: dict) -> Corpus:
        """This set with BM25's document vectors written with ``over``'s message_k1 / _b / _avgdl (the rest shared)."""
        params = tuple(float(over.get(k, v)) for k, v in zip(("message_k1", "message_b", "message_avgdl"), self.bm25_params))
        if params == self.bm25_params:
            return self
        if params not in self._variants:
            other = copy.copy(self)
            other.bm25_params = params
            other.build_bm25(BM25Encoder(*params), "ctx")
            self._variants[params] = other
        return self._variants[params]

    def dense(self, ci: int, qi: int, how: str, whole: bool = False) -> np.ndarray:
        """Dense scores of conversation ``ci``'s turns for question ``qi`` (``whole``: embedded with its preamble)."""
        q = (self.Q_whole if whole else self.Q_core)[ci][qi]
        if how == "own":
            return self.P_own[ci] @ q
        if how == "ctx":
            return self.P_ctx[ci] @ q
        own, ctx = self.P_own[ci] @ q, self.P_ctx[ci] @ q
        if how == "max":
            return np.maximum(own, ctx)
        if how == "mean":
            return (own + ctx) / 2
        if how.startswith("max-"):  # the context, unless the own text is higher by more than the margin
            return np.maximum(ctx, own - float(how[4:]))
        if how.startswith(("sent:", "sentx:")):  # "sent:W": (1 - W) x the mean + W x the best of the own text and its sentences
            w = float(how.split(":")[1])  # "sentx:W": the best of the mean and the sentences (a one-sentence turn: its mean)
            vecs, owner = self.sentences(ci)
            best = own.copy() if how.startswith("sent:") else (own + ctx) / 2
            if len(owner):
                np.maximum.at(best, owner, vecs @ q)
            return (1.0 - w) * (own + ctx) / 2 + w * best
        raise ValueError(how)

    def sentences(self, ci: int) -> tuple[np.ndarray, np.ndarray]:
        """The sentence vectors of conversation ``ci``'s turns of two sentences or more ("Speaker: sentence",
        split as ``session_summaries.split_sentences`` splits) and the turn each belongs to; embedded on first use."""
        if ci not in self._sentences:
            from layered_memory.session_summaries import split_sentences

            texts, owner = [], []
            for i, t in enumerate(self.convs[ci].turns):
                parts = split_sentences(t["text"])
                if len(parts) > 1:
                    texts += [f"{t['speaker']}: {x}" for x in parts]
                    owner += [i] * len(parts)
            vecs = self.cache.get(texts, "passage") if texts else np.zeros((0, self.P_own[ci].shape[1]), np.float32)
            self._sentences[ci] = (vecs, np.array(owner, dtype=np.int64))
        return self._sentences[ci]


def candidates(conv: Conv, lists: dict[str, list[tuple[int, float]]]) -> list[Candidate]:
    """The second stage's input for one question: each listed turn with the payload keys a message point carries."""
    def payload(i: int) -> dict:
        t = conv.turns[i]
        return {"author": t["speaker"], "session_key": t["chat"], "chat_id": t["chat"], "user_id": conv.id, "message_id": str(i),
                "seq": t["seq"], "timestamp": t["date"].isoformat(), "text": t["text"], "role": t["role"],
                **({"prev": str(i - 1)} if t["ctx"] != t["own"] else {})}

    return collect(lists, payload)
