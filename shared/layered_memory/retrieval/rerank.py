"""Second stage over fused candidates: score fusion beyond RRF, then model-free signals.

The index returns the top ``prefetch_limit`` of each side (dense, BM25) with their scores; this
module fuses them client-side and reranks the union (a few dozen to a hundred candidates, pure
arithmetic, well under a millisecond). Every signal has a weight in ``RetrievalSettings``; a weight
of 0 switches it off.

Fusion (``fusion``):
  ``rrf``       weighted reciprocal rank fusion (ranks only; Qdrant's formula, ``rrf_k``, weights).
  ``zscore``    each side's scores standardised over its own list (mean 0, sd 1); a candidate absent
                from a side gets that side's lowest z; weighted sum.
  ``dbsf``      distribution-based score fusion (Qdrant's ``Fusion.Dbsf``): (s - (mean - 3 sd)) / 6 sd.
  ``adaptive``  z-score fusion whose side weights follow how clearly each side separates its best
                candidates from the rest for this query (the z of its top hits): a side that is much
                stronger on a query pulls the ranking, instead of a fixed weight pulling it back.

How the signals combine (``reranker``):
  ``rules``    the fused score rescaled to 0..1 over the candidates plus each signal x its weight.
  ``learned``  a logistic model over the same features (:mod:`.learned`: fused score, each side's
               z-score and rank, both sides agreeing, and the signals), trained on synthetic
               en/ru/zh conversations (``benchmarks/train_reranker.py``); a signal whose weight is 0
               is still off (its feature is 0).
  ``off``      the fused score alone.

The whole stage is numpy over the candidate arrays: no per-candidate Python beyond reading the
payloads once (a few dozen to a hundred candidates: ~0.35 ms on a busy 2-core machine).

Signals:
  neighbour  a turn followed by a strong hit of the same session (within ``neighbour_span`` seqs)
             gains ``neighbour_weight`` x that turn's score: evidence often spans a question and
             its answer. Only forward: a turn's index entry already carries the previous turn
             (``index_context="neighbour"``); both directions measured 0.789, forward only 0.793.
  session    every turn gains ``session_weight`` x its session's strength (the sum of its three
             best candidates' scores, rescaled), so a turn in the right session beats a lexically
             similar one elsewhere; the best three, not all: a long session of weak, wordy matches
             must not outweigh a session with a few strong ones.
  speaker    when the query names a speaker of the candidates ("what did Anna say..."), that
             speaker's turns gain ``speaker_weight``.
  phrase     quoted phrases and capitalised names of the query found verbatim in a turn:
             ``phrase_weight`` x the share found.
  time       a time expression in the query (en/ru/zh, :mod:`.timeexpr`) resolved against ``now``:
             turns inside the window gain ``time_weight``, decaying with the distance outside.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from .analyzer import Analyzer, text_key
from .confidence import Confidence, estimate
from .learned import FEATURES, score as learned_score
from .timeexpr import TimeWindow, resolve_time

__all__ = ["Candidate", "SecondStage", "FUSIONS", "RERANKERS", "SIGNAL_KEYS", "SIGNAL_WEIGHTS", "has_signals", "join_ranked", "names_speaker",
           "reads_bm25_text"]

FUSIONS = ("rrf", "zscore", "dbsf", "adaptive", "confidence")
RERANKERS = ("rules", "learned", "off")
SIDES = ("dense", "sparse")
SIGNAL_KEYS = ("author", "chat_id", "message_id", "prev", "role", "seq", "text_key", "timestamp")  # payload keys the signals read (phrase: + "text")
SIGNAL_WEIGHTS = ("neighbour_weight", "session_weight", "speaker_weight", "phrase_weight", "time_weight")


def reads_bm25_text(settings: Any) -> bool:
    """Whether the confidence fusion reads the text of BM25's hits (its ``coverage`` input), so a hybrid search
    asks the index for it on that side."""
    return getattr(settings, "fusion", None) == "confidence" and getattr(settings, "confidence_coverage", 0) > 0


def has_signals(settings: Any) -> bool:
    """Whether any second-stage signal is on (``reranker="off"`` turns them all off)."""
    return getattr(settings, "reranker", "rules") != "off" and any(getattr(settings, name) > 0 for name in SIGNAL_WEIGHTS)


@dataclass(slots=True)
class Candidate:
    key: Hashable
    payload: dict[str, Any]
    scores: dict[str, float] = field(default_factory=dict)  # side -> raw score, for the sides that returned it
    ranks: dict[str, int] = field(default_factory=dict)  # side -> 0-based position in that side's list
    score: float = 0.0
    signals: dict[str, float] = field(default_factory=dict)


_QUOTED = re.compile(r"[\"“”«»「」『』]([^\"“”«»「」『』]{2,80})[\"“”«»「」『』]")
_NAME = re.compile(r"(?<![\w])([A-ZА-ЯЁ][\w'’-]+)")


def _parse_ts(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str) or not value:
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def _name_matches(word: str, name: str, capitalised: bool) -> bool:
    """A query word names ``name`` (both casefolded): equal; a capitalised short form ("Mel" for
    Melanie); or an inflected form differing in the last letters ("Анны", "Анне" for Анна)."""
    if word == name:
        return True
    if capitalised and len(word) >= 3 and name.startswith(word):
        return True
    if len(name) >= 4 and len(word) <= len(name) + 2:
        common = 0
        for a, b in zip(word, name):
            if a != b:
                break
            common += 1
        return common >= len(name) - 1
    return False


def names_speaker(query: str, author: str) -> bool:
    """Whether ``query`` names ``author`` (any of its words, e.g. "Anna" or "Smith" of "Anna Smith";
    a CJK name as a substring of the query)."""
    folded = author.casefold().strip()
    if not folded:
        return False
    if _CJK.search(folded):
        return folded in query.casefold()
    parts = [p for p in re.findall(r"\w+", folded) if len(p) >= 2]
    for m in re.finditer(r"\w+", query):
        w = m.group(0)
        wf = w.casefold()
        if any(_name_matches(wf, p, w[0].isupper()) for p in parts):
            return True
    return False


def sessions_of(payloads: Sequence[dict[str, Any]], gap_seconds: float) -> tuple[np.ndarray, int]:
    """Each candidate's session index and the number of sessions: a session is a run of a chat's
    candidates with no more than ``gap_seconds`` between consecutive ones (by timestamp), so the same
    turns group alike whether the caller keeps one chat per conversation or one per session, one
    ``user_id`` or one per speaker. Candidates without a timestamp form one session per chat."""
    chats: dict[Any, list[tuple[float, int]]] = {}
    for i, p in enumerate(payloads):
        t = _parse_ts(p.get("timestamp"))
        chats.setdefault(p.get("chat_id"), []).append((t.timestamp() if t is not None else float("-inf"), i))
    out = np.zeros(len(payloads), dtype=np.int64)
    n = 0
    for members in chats.values():
        members.sort()
        last = None
        for t, i in members:
            if last is None or (t - last > gap_seconds if t != float("-inf") and last != float("-inf") else t != last):
                n += 1
            out[i] = n - 1
            last = t
    return out, n


def join_ranked(head: Sequence[tuple[Any, float]], tail: Sequence[tuple[Any, float]], k: int) -> list[tuple[Any, float]]:
    """The deep tail (``retrieval.deep_limit``): ``head`` as ranked, then ``tail``'s order without the head's
    keys, ``k`` in all. The two rankings' scores are not on one scale, so a tail score is capped to stay
    below the one before it (callers that re-sort by score keep this order)."""
    out = list(head[:k])
    seen = {key for key, _ in out}
    last = out[-1][1] if out else float("inf")
    for key, score in tail:
        if len(out) >= k:
            break
        if key in seen:
            continue
        last = min(float(score), last - 1e-6)
        out.append((key, last))
        seen.add(key)
    return out


def verbatim(query: str, payloads: Sequence[dict[str, Any]]) -> np.ndarray:
    """Which candidates are the query verbatim, up to case and whitespace (their ``text_key``)."""
    key = text_key(query)
    return np.array([p.get("text_key") == key for p in payloads], dtype=bool)


def _bot_before_user(before: dict[str, Any], hit: dict[str, Any]) -> bool:
    """``before`` is the bot's reply and ``hit`` the user's next message (the neighbour signal does not link them)."""
    return before.get("role") == "assistant" and hit.get("role") == "user"


def _minmax(x: np.ndarray) -> np.ndarray:
    """Rescaled to 0..1 over the candidates; all equal (one candidate, or a tie) are all the best: 1."""
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.ones_like(x)


class SecondStage:
    """Fuse and rerank candidates of one query. ``settings`` is a ``RetrievalSettings``."""

    def __init__(self, settings: Any, analyzer: Analyzer) -> None:
        self.s = settings
        self.analyzer = analyzer
        self.confidence: Confidence | None = None  # the last query's route confidence (fusion="confidence")

    # -- fusion -----------------------------------------------------------------------------------
    def side_weights(self) -> dict[str, float]:
        s = self.s
        if s.fusion == "rrf":
            return {"dense": s.dense_weight, "sparse": s.sparse_weight}
        return {"dense": s.fusion_dense_weight, "sparse": s.sparse_weight}

    @staticmethod
    def _arrays(cands: list[Candidate]) -> tuple[np.ndarray, np.ndarray]:
        """Scores and ranks, shape (2, n) in SIDES order; NaN score / -1 rank where a side lacks the candidate."""
        n = len(cands)
        scores = np.full((2, n), np.nan)
        ranks = np.full((2, n), -1.0)
        for i, c in enumerate(cands):
            for j, side in enumerate(SIDES):
                v = c.scores.get(side)
                if v is not None:
                    scores[j, i] = v
                    ranks[j, i] = c.ranks[side]
        return scores, ranks

    def fuse(self, cands: list[Candidate], query: str = "") -> None:
        """Set every candidate's ``score`` to its fused score."""
        if cands:
            scores, ranks = self._arrays(cands)
            fused, _ = self._fuse(scores, ranks, query)
            for c, v in zip(cands, fused.tolist()):
                c.score = v

    def _fuse(self, scores: np.ndarray, ranks: np.ndarray, query: str = "",
              payloads: Sequence[dict[str, Any]] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(fused score, z-scores (2, n) with the side minimum for the absent; 0 for a muted or empty side)."""
        s = self.s
        w = self.side_weights()
        weights = np.array([w[side] for side in SIDES])
        present = ~np.isnan(scores)
        counts = present.sum(axis=1)
        filled = np.where(present, scores, 0.0)
        mean = filled.sum(axis=1) / np.maximum(counts, 1)
        sd = np.sqrt(np.where(present, (scores - mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(counts, 1))
        sd = np.where(sd > 1e-9, sd, 1.0)
        z = (filled - mean[:, None]) / sd[:, None]
        zmin = np.where(present, z, np.inf).min(axis=1)
        zmin = np.where(np.isfinite(zmin), zmin, 0.0)
        z = np.where(present, z, zmin[:, None])
        live = (counts > 0) & (weights > 0)
        z[~live] = 0.0
        if s.fusion == "rrf":
            k = float(s.rrf_k)
            safe = np.where(weights > 0, weights, 1.0)[:, None]
            contrib = np.where((ranks >= 0) & (weights[:, None] > 0), 1.0 / ((ranks + 1.0) / safe + k - 1.0), 0.0)
            return contrib.sum(axis=0), z
        if s.fusion == "dbsf":
            v = np.where(present, (filled - (mean - 3 * sd)[:, None]) / (6 * sd)[:, None], 0.0)
            return (weights[:, None] * np.where(live[:, None], v, 0.0)).sum(axis=0), z
        if s.fusion == "adaptive" and live.all():
            weights = weights * self._separation(z, present)
        elif s.fusion == "confidence" and live.all():
            qterms = self.analyzer.terms(query) if query else []
            cov = self._coverage(qterms, payloads, ranks) if payloads is not None and reads_bm25_text(s) else 1.0
            self.confidence = estimate(qterms, query, scores, ranks, z, s, cov)
            weights = np.array(self.confidence.weights)
        return (weights[:, None] * z).sum(axis=0), z

    def _coverage(self, qterms: Sequence[str], payloads: Sequence[dict[str, Any]], ranks: np.ndarray) -> float:
        """The largest share of the query's distinct terms, the candidates' speakers' names left out (the
        speaker signal reads those), that one of BM25's best ``confidence_coverage_top`` hits holds in its own
        words: 1 when a hit matches the whole query, low when BM25's best share only a filler word or a
        name with it. A query of names alone, or hits without their text, count as covered (1)."""
        want = set(qterms)
        for author in {str(p.get("author") or "") for p in payloads}:
            want.difference_update(self.analyzer.terms(author))
        top = np.flatnonzero((ranks[1] >= 0) & (ranks[1] < self.s.confidence_coverage_top)).tolist()
        if not want or not top or any("text" not in payloads[i] for i in top):
            return 1.0
        have = (set(self.analyzer.terms(str(payloads[i]["text"] or ""))) for i in top)
        return max(len(want & words) / len(want) for words in have)

    def _separation(self, z: np.ndarray, present: np.ndarray) -> np.ndarray:
        """Per side, how far its best ``adaptive_top`` stand above its own list (their mean z), relative to
        the other side's, to the power ``adaptive_power``: the side that separates better leads."""
        top = max(1, int(self.s.adaptive_top))
        sep = np.empty(len(SIDES))
        for j in range(len(SIDES)):
            vals = z[j][present[j]]
            if len(vals) > top:
                vals = np.partition(vals, len(vals) - top)[-top:]
            sep[j] = max(float(vals.sum()) / len(vals), 1e-3)
        return (sep / sep.mean()) ** self.s.adaptive_power

    # -- ranking ----------------------------------------------------------------------------------
    def rank(self, query: str, cands: list[Candidate], *, k: int, now: datetime | None = None) -> list[Candidate]:
        """Fuse, add the signals, and return the best ``k`` (ties: fused score, then newest)."""
        if not cands:
            return []
        scores, ranks = self._arrays(cands)
        order, final, base, sig = self._rank(query, [c.payload for c in cands], scores, ranks, k, now)
        out = []
        for i in order.tolist():
            c = cands[i]
            c.score = float(final[i])
            c.signals["fused"] = float(base[i])
            for name, v in sig.items():
                if v[i] > 0:
                    c.signals[name] = float(v[i])
            out.append(c)
        return out

    def rank_sides(self, query: str, sides: Sequence[tuple[str, Sequence[Any]]], *, k: int, now: datetime | None = None,
                   whole: str | None = None) -> list[tuple[Any, float]]:
        """The index path: ``sides`` is ``[(side, hits)]`` with hits (``.id``, ``.score``, ``.payload``) best
        first; returns ``[(id, score)]`` of the best ``k`` without building a Candidate per hit. ``whole``: the
        query before ``max_query_chars`` cut it, which a verbatim match is compared with (default: ``query``)."""
        first: dict[Any, dict[str, Any]] = {}  # each candidate's payload, in order of first appearance
        for _, hits in sides:
            for h in hits:
                seen = first.get(h.id)
                if seen is None or len(h.payload) > len(seen):  # a side may read more keys (BM25: the text)
                    first[h.id] = h.payload
        if not first:
            return []
        where = {key: i for i, key in enumerate(first)}
        payloads = list(first.values())
        scores = np.full((2, len(payloads)), np.nan)
        ranks = np.full((2, len(payloads)), -1.0)
        for side, hits in sides:  # a side's hits are best first: its rank is the position
            idx = [where[h.id] for h in hits]
            scores[SIDES.index(side), idx] = [h.score for h in hits]
            ranks[SIDES.index(side), idx] = np.arange(len(idx))
        order, final, _, _ = self._rank(query, payloads, scores, ranks, k, now, whole)
        ids = list(first)
        return [(ids[i], float(final[i])) for i in order.tolist()]

    def _rank(self, query: str, payloads: list[dict[str, Any]], scores: np.ndarray, ranks: np.ndarray, k: int,
              now: datetime | None, whole: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        base, z, sig, seq = self._inputs(query, payloads, scores, ranks, now)
        if self.s.reranker == "learned":
            final = learned_score(self.features(base, z, ranks, sig))
        else:
            final = base.copy()
            for name, v in sig.items():
                final += getattr(self.s, f"{name}_weight") * v
        if self.s.exact_first:  # a verbatim match scores above every other candidate
            exact = verbatim(whole or query, payloads)
            if exact.any():
                final = np.where(exact, final + (final.max() - final.min()) + 1.0, final)
        return np.lexsort((-seq, -base, -final))[:k], final, base, sig

    def _inputs(self, query: str, payloads: list[dict[str, Any]], scores: np.ndarray, ranks: np.ndarray,
                now: datetime | None) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """(fused score rescaled to 0..1, z-scores, signal name -> values, seq) of the candidates."""
        s = self.s
        fused, z = self._fuse(scores, ranks, query, payloads)
        base = _minmax(fused)
        sig: dict[str, np.ndarray] = {}
        seq = np.array([int(p.get("seq") or 0) for p in payloads], dtype=np.int64)
        if s.reranker == "off":
            return base, z, sig, seq
        if s.neighbour_weight > 0:
            sig["neighbour"] = self._neighbours(seq, payloads, base)
        if s.session_weight > 0:
            sess, n_sessions = sessions_of(payloads, s.session_gap_hours * 3600.0)
            sig["session"] = self._sessions(sess, n_sessions, base)
        if s.speaker_weight > 0:
            sig["speaker"] = self._speakers(query, payloads)
        if s.phrase_weight > 0:
            sig["phrase"] = self._phrases(query, payloads)
        if s.time_weight > 0:
            sig["time"] = self._time(query, payloads, now)
        return base, z, sig, seq

    def feature_matrix(self, query: str, cands: list[Candidate], *, now: datetime | None = None) -> np.ndarray:
        """The learned reranker's inputs for ``cands`` (``benchmarks/train_reranker.py`` trains on them)."""
        scores, ranks = self._arrays(cands)
        base, z, sig, _ = self._inputs(query, [c.payload for c in cands], scores, ranks, now)
        return self.features(base, z, ranks, sig)

    @staticmethod
    def features(base: np.ndarray, z: np.ndarray, ranks: np.ndarray, sig: dict[str, np.ndarray]) -> np.ndarray:
        """The learned reranker's inputs, one row per candidate, columns in :data:`.learned.FEATURES` order."""
        n = base.shape[0]
        zero = np.zeros(n)
        cols = {
            "fused": base, "dense_z": z[0], "sparse_z": z[1],
            "dense_rr": np.where(ranks[0] >= 0, 1.0 / np.maximum(ranks[0] + 1.0, 1.0), 0.0),
            "sparse_rr": np.where(ranks[1] >= 0, 1.0 / np.maximum(ranks[1] + 1.0, 1.0), 0.0),
            "both": ((ranks[0] >= 0) & (ranks[1] >= 0)).astype(float),
        }
        return np.column_stack([cols[f] if f in cols else sig.get(f, zero) for f in FEATURES])

    def _neighbours(self, seq: np.ndarray, payloads: list[dict[str, Any]], base: np.ndarray) -> np.ndarray:
        """A turn followed by a candidate gains that candidate's score: the candidate's ``prev`` (the turn
        before it in its chat, whoever wrote it) names it. A payload without ``prev`` (indexed before it
        existed) links by seq instead: the next turn of the same chat within ``neighbour_span`` seqs.

        Except the bot's reply before a user's message: a person's turn may answer the other's, but a user's
        next request to an assistant does not answer its last reply, so that reply is not lifted (measured:
        +2 points of R@5 on three synthetic assistant sets, nothing else moves; docs/retrieval.md)."""
        best = [0.0] * len(base)  # plain floats: a numpy scalar per link costs more than the whole loop
        scores = base.tolist()
        where = {(p.get("chat_id"), p.get("message_id")): i for i, p in enumerate(payloads)}
        legacy: list[int] = []
        for j, p in enumerate(payloads):
            prev = p.get("prev")
            if prev is not None:
                i = where.get((p.get("chat_id"), prev))
                if i is not None and i != j and scores[j] > best[i] and not _bot_before_user(payloads[i], p):
                    best[i] = scores[j]
            elif p.get("seq") is not None:
                legacy.append(j)
        out = np.array(best)
        if len(legacy) > 1:
            ids: dict[Any, int] = {}
            chat = np.array([ids.setdefault(payloads[j].get("chat_id"), len(ids)) for j in legacy])
            idx = np.array(legacy)
            order = idx[np.lexsort((seq[idx], chat))]
            chat_of = dict(zip(legacy, chat.tolist()))
            cur, nxt = order[:-1], order[1:]
            ok = np.array([chat_of[int(a)] == chat_of[int(b)] and not _bot_before_user(payloads[int(a)], payloads[int(b)])
                           for a, b in zip(cur, nxt)]) & (seq[nxt] - seq[cur] <= max(1, int(self.s.neighbour_span)))
            out[cur[ok]] = np.maximum(out[cur[ok]], base[nxt[ok]])
        return out

    @staticmethod
    def _sessions(sess: np.ndarray, n_sessions: int, base: np.ndarray) -> np.ndarray:
        """Each turn's session strength: the sum of its session's three best fused scores, over the best session's."""
        order = np.lexsort((-base, sess))
        s_sorted = sess[order]
        starts = np.r_[0, np.flatnonzero(s_sorted[1:] != s_sorted[:-1]) + 1]
        pos = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        keep = pos < 3
        total = np.zeros(n_sessions)
        np.add.at(total, s_sorted[keep], base[order][keep])
        top = total.max()
        return total[sess] / top if top > 0 else np.zeros(len(base))

    @staticmethod
    def _speakers(query: str, payloads: list[dict[str, Any]]) -> np.ndarray:
        authors = [str(p.get("author") or "") for p in payloads]
        unique = set(authors)
        named = {a for a in unique if a and names_speaker(query, a)}
        if not named or named == unique:
            return np.zeros(len(authors))
        return np.array([a in named for a in authors], dtype=float)

    @staticmethod
    def _phrases(query: str, payloads: list[dict[str, Any]]) -> np.ndarray:
        out = np.zeros(len(payloads))
        phrases = [p.strip().casefold() for p in _QUOTED.findall(query) if p.strip()]
        authors = {str(p.get("author") or "").casefold() for p in payloads}
        first = re.match(r"\W*(\w+)", query)
        first_word = first.group(1) if first else ""
        for m in _NAME.finditer(query):
            name = m.group(1)
            if name == first_word or name.casefold() in authors or len(name) < 3:
                continue
            phrases.append(name.casefold())
        phrases = list(dict.fromkeys(phrases))
        if phrases:
            for i, p in enumerate(payloads):
                text = str(p.get("text") or "").casefold()
                out[i] = sum(1 for ph in phrases if ph in text) / len(phrases)
        return out

    def _time(self, query: str, payloads: list[dict[str, Any]], now: datetime | None) -> np.ndarray:
        out = np.zeros(len(payloads))
        clock = datetime.now(timezone.utc)
        window: TimeWindow | None = resolve_time(query, now or clock)
        if window is None:  # no time expression: no timestamp is parsed
            return out
        stamps = [_parse_ts(p.get("timestamp")) for p in payloads]
        known = np.array([t is not None for t in stamps])
        x = np.array([t.timestamp() if t is not None else 0.0 for t in stamps])
        if now is None and self.s.time_anchor == "latest" and known.any() and x[known].max() < clock.timestamp():
            window = resolve_time(query, datetime.fromtimestamp(float(x[known].max()), timezone.utc))
            if window is None:
                return out
        start, end = window.start.timestamp(), window.end.timestamp()
        width = max(end - start, 86_400.0) * self.s.time_decay
        gap = np.where(x < start, start - x, np.where(x > end, x - end, 0.0))
        v = np.exp(-gap / width) if width > 0 else (gap == 0).astype(float)
        v = np.where(known & (v > 1e-3), v, 0.0)
        return v
