"""Sessions as units of a search result (``mem.search(..., group_by="session")``).

Many questions are answered by a whole session ("what did we discuss about my trip?"), not by one
turn. The ranked candidates of a message search are grouped into sessions and the sessions ranked
by an aggregate of their members' scores (``retrieval.group_aggregation``):

  ``max``   the best member's score;
  ``top2``  the sum of the two best;
  ``top3``  the sum of the three best;
  ``decay`` the best plus half the second plus a quarter of the third, ...: a second strong turn
            adds, a long tail of weak ones does not.

A session is a chat's ``session_key`` split where consecutive members are more than
``session_gap_hours`` apart (the same rule as the session signal, ``rerank.sessions_of``): the same
turns group alike whether the caller keeps one chat per conversation or one per session.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .rerank import sessions_of

__all__ = ["AGGREGATIONS", "Group", "group_ranked"]

AGGREGATIONS = ("max", "top2", "top3", "decay")


@dataclass(slots=True)
class Group:
    key: tuple[Any, Any, int]  # (chat_id, session_key, n-th session of that key among the candidates)
    score: float
    members: list[int] = field(default_factory=list)  # indices into the ranked list, best first


def _aggregate(scores: Sequence[float], how: str) -> float:
    s = sorted(scores, reverse=True)
    if how == "max":
        return s[0]
    if how == "top2":
        return sum(s[:2])
    if how == "top3":
        return sum(s[:3])
    if how == "decay":
        return sum(v * 0.5**i for i, v in enumerate(s))
    raise ValueError(f"group aggregation {how!r} must be one of {', '.join(AGGREGATIONS)}")


def group_ranked(payloads: Sequence[dict[str, Any]], scores: Sequence[float], *, how: str, gap_seconds: float) -> list[Group]:
    """Sessions of the ranked candidates (``payloads`` with their ``scores``, best first), best first
    (ties: the session of the better best member first)."""
    if not payloads:
        return []
    keyed = [{**p, "chat_id": (p.get("chat_id"), p.get("session_key") or p.get("chat_id"))} for p in payloads]
    sess, _ = sessions_of(keyed, gap_seconds)
    groups: dict[int, Group] = {}
    for i, (p, g) in enumerate(zip(payloads, np.asarray(sess).tolist())):
        grp = groups.get(g)
        if grp is None:
            grp = groups[g] = Group((p.get("chat_id"), p.get("session_key") or p.get("chat_id"), 0), 0.0)
        grp.members.append(i)
    nth: dict[tuple[Any, Any], int] = {}
    for grp in groups.values():
        grp.score = _aggregate([float(scores[i]) for i in grp.members], how)
    out = sorted(groups.values(), key=lambda g: (-g.score, g.members[0]))
    for grp in sorted(out, key=lambda g: min(str(payloads[i].get("timestamp") or "") for i in g.members)):
        base = grp.key[:2]
        grp.key = (base[0], base[1], nth.setdefault(base, 0))
        nth[base] += 1
    return out
