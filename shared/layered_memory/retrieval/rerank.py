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

Signals (added to the fused score rescaled to 0..1 over the candidates):
  neighbour  a turn followed by a strong hit of the same session (within ``neighbour_span`` seqs)
             gains ``neighbour_weight`` x that turn's score: evidence often spans a question and
             its answer. Only forward: a turn's index entry already carries the previous turn
             (``index_context="neighbour"``); both directions measured 0.789, forward only 0.793.
  session    every turn gains ``session_weight`` x its session's strength (the sum of its
             candidates' scores, rescaled), so a turn in the right session beats a lexically
             similar one elsewhere.
  speaker    when the query names a speaker of the candidates ("what did Anna say..."), that
             speaker's turns gain ``speaker_weight``.
  phrase     quoted phrases and capitalised names of the query found verbatim in a turn:
             ``phrase_weight`` x the share found.
  time       a time expression in the query (en/ru/zh, :mod:`.timeexpr`) resolved against ``now``:
             turns inside the window gain ``time_weight``, decaying with the distance outside.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .analyzer import Analyzer
from .timeexpr import TimeWindow, resolve_time

__all__ = ["Candidate", "SecondStage", "FUSIONS", "SIGNAL_KEYS", "SIGNAL_WEIGHTS", "has_signals", "names_speaker"]

FUSIONS = ("rrf", "zscore", "dbsf", "adaptive")
SIDES = ("dense", "sparse")
SIGNAL_KEYS = ("author", "user_id", "session_key", "seq", "timestamp")  # payload keys the signals read (phrase: + "text")
SIGNAL_WEIGHTS = ("neighbour_weight", "session_weight", "speaker_weight", "phrase_weight", "time_weight")


def has_signals(settings: Any) -> bool:
    """Whether any second-stage signal is on."""
    return any(getattr(settings, name) > 0 for name in SIGNAL_WEIGHTS)


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


def _stats(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / n
    return mean, math.sqrt(var)


class SecondStage:
    """Fuse and rerank candidates of one query. ``settings`` is a ``RetrievalSettings``."""

    def __init__(self, settings: Any, analyzer: Analyzer) -> None:
        self.s = settings
        self.analyzer = analyzer

    # -- fusion -----------------------------------------------------------------------------------
    def side_weights(self) -> dict[str, float]:
        s = self.s
        if s.fusion == "rrf":
            return {"dense": s.dense_weight, "sparse": s.sparse_weight}
        return {"dense": s.fusion_dense_weight, "sparse": s.sparse_weight}

    def fuse(self, cands: list[Candidate]) -> None:
        s = self.s
        weights = self.side_weights()
        if s.fusion == "rrf":
            k = float(s.rrf_k)
            for c in cands:
                c.score = sum(1.0 / ((r + 1.0) / weights[side] + k - 1.0) for side, r in c.ranks.items() if weights.get(side, 0) > 0)
            return
        present = {side: [c.scores[side] for c in cands if side in c.scores] for side in SIDES}
        norm: dict[str, tuple[float, float, float]] = {}  # side -> (mean, sd, value for the absent)
        for side, vals in present.items():
            if not vals or weights.get(side, 0) <= 0:
                continue
            mean, sd = _stats(vals)
            sd = sd if sd > 1e-9 else 1.0
            if s.fusion == "dbsf":
                lo = mean - 3 * sd
                norm[side] = (lo, 6 * sd, 0.0)
            else:
                norm[side] = (mean, sd, (min(vals) - mean) / sd)
        if s.fusion == "adaptive" and len(norm) == 2:
            weights = self._adaptive(present, norm, weights)
        for c in cands:
            total = 0.0
            for side, (a, b, absent) in norm.items():
                v = (c.scores[side] - a) / b if side in c.scores else absent
                total += weights[side] * v
            c.score = total

    def _adaptive(self, present: dict[str, list[float]], norm: dict[str, tuple[float, float, float]], weights: dict[str, float]) -> dict[str, float]:
        """Scale each side's weight by how far its top hits stand above its own list (mean z of its
        best ``adaptive_top``), relative to the other side: the side that separates better leads."""
        top = max(1, int(self.s.adaptive_top))
        sep = {}
        for side, (mean, sd, _) in norm.items():
            best = sorted(present[side], reverse=True)[:top]
            sep[side] = max(sum((v - mean) / sd for v in best) / len(best), 1e-3)
        avg = sum(sep.values()) / len(sep)
        p = self.s.adaptive_power
        return {side: weights[side] * (sep[side] / avg) ** p for side in norm}

    # -- signals ----------------------------------------------------------------------------------
    def rank(self, query: str, cands: list[Candidate], *, k: int, now: datetime | None = None) -> list[Candidate]:
        """Fuse, add the signals, and return the best ``k`` (ties: fused score, then newest)."""
        if not cands:
            return []
        self.fuse(cands)
        s = self.s
        hi = max(c.score for c in cands)
        lo = min(c.score for c in cands)
        span = hi - lo if hi > lo else 1.0
        base = {id(c): (c.score - lo) / span for c in cands}
        final = dict(base)
        keys = [self._session_of(c) for c in cands] if s.neighbour_weight > 0 or s.session_weight > 0 else []
        if s.neighbour_weight > 0:
            self._neighbours(cands, keys, base, final)
        if s.session_weight > 0:
            self._sessions(cands, keys, base, final)
        if s.speaker_weight > 0:
            self._speakers(query, cands, final)
        if s.phrase_weight > 0:
            self._phrases(query, cands, final)
        if s.time_weight > 0:
            self._time(query, cands, final, now)
        for c in cands:
            c.signals["fused"] = base[id(c)]
            c.score = final[id(c)]
        cands.sort(key=lambda c: (-c.score, -c.signals["fused"], -int(c.payload.get("seq") or 0)))
        return cands[:k]

    @staticmethod
    def _session_of(c: Candidate) -> tuple[Any, Any]:
        p = c.payload
        return (p.get("user_id"), p.get("session_key") or p.get("chat_id"))

    def _neighbours(self, cands: list[Candidate], keys: list[tuple[Any, Any]], base: dict[int, float], final: dict[int, float]) -> None:
        span = max(1, int(self.s.neighbour_span))
        by_session: dict[tuple[Any, Any], list[tuple[int, Candidate]]] = {}
        for key, c in zip(keys, cands):
            seq = c.payload.get("seq")
            if seq is not None:
                by_session.setdefault(key, []).append((int(seq), c))
        w = self.s.neighbour_weight
        for group in by_session.values():
            if len(group) < 2:
                continue
            group.sort(key=lambda sc: sc[0])
            for i, (seq, c) in enumerate(group[:-1]):
                nxt_seq, nxt = group[i + 1]
                best = base[id(nxt)] if nxt_seq - seq <= span else 0.0
                if best > 0:
                    final[id(c)] += w * best
                    c.signals["neighbour"] = best

    def _sessions(self, cands: list[Candidate], keys: list[tuple[Any, Any]], base: dict[int, float], final: dict[int, float]) -> None:
        totals: dict[tuple[Any, Any], float] = {}
        for key, c in zip(keys, cands):
            totals[key] = totals.get(key, 0.0) + base[id(c)]
        top = max(totals.values())
        if top <= 0:
            return
        w = self.s.session_weight
        for key, c in zip(keys, cands):
            v = totals[key] / top
            final[id(c)] += w * v
            c.signals["session"] = v

    def _speakers(self, query: str, cands: list[Candidate], final: dict[int, float]) -> None:
        authors = {str(c.payload.get("author") or "") for c in cands}
        named = {a for a in authors if a and names_speaker(query, a)}
        if not named or named == authors:
            return
        for c in cands:
            if str(c.payload.get("author") or "") in named:
                final[id(c)] += self.s.speaker_weight
                c.signals["speaker"] = 1.0

    def _phrases(self, query: str, cands: list[Candidate], final: dict[int, float]) -> None:
        phrases = [p.strip().casefold() for p in _QUOTED.findall(query) if p.strip()]
        authors = {str(c.payload.get("author") or "").casefold() for c in cands}
        first = re.match(r"\W*(\w+)", query)
        first_word = first.group(1) if first else ""
        for m in _NAME.finditer(query):
            name = m.group(1)
            if name == first_word or name.casefold() in authors or len(name) < 3:
                continue
            phrases.append(name.casefold())
        phrases = list(dict.fromkeys(phrases))
        if not phrases:
            return
        for c in cands:
            text = str(c.payload.get("text") or "").casefold()
            found = sum(1 for p in phrases if p in text)
            if found:
                v = found / len(phrases)
                final[id(c)] += self.s.phrase_weight * v
                c.signals["phrase"] = v

    def _time(self, query: str, cands: list[Candidate], final: dict[int, float], now: datetime | None) -> None:
        clock = datetime.now(timezone.utc)
        window: TimeWindow | None = resolve_time(query, now or clock)
        if window is None:  # no time expression: nothing to parse
            return
        stamps = [_parse_ts(c.payload.get("timestamp")) for c in cands]
        if now is None and self.s.time_anchor == "latest":
            known = [t for t in stamps if t is not None]
            if known and max(known) < clock:
                window = resolve_time(query, max(known))
                if window is None:
                    return
        start, end = window.start.timestamp(), window.end.timestamp()
        width = max(end - start, 86_400.0) * self.s.time_decay
        w = self.s.time_weight
        for t, c in zip(stamps, cands):
            if t is None:
                continue
            x = t.timestamp()
            gap = start - x if x < start else x - end if x > end else 0.0
            v = 1.0 if gap == 0 else math.exp(-gap / width) if width > 0 else 0.0
            if v > 1e-3:
                final[id(c)] += w * v
                c.signals["time"] = v
