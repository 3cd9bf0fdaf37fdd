"""Client-side weighted reciprocal rank fusion, score-compatible with Qdrant's ``Rrf(k, weights)``.

For a list ``i`` with weight ``w_i`` and a 0-based position ``p`` (first occurrence only)::

    contribution = 1 / ((p + 1) / w_i + k - 1)

With ``w_i = 1`` this is ``1 / (k + p)``, i.e. Cormack et al.'s ``1 / (k' + rank)`` with
``k' = k - 1``. This is the formula of qdrant-client's local-mode fusion
(``qdrant_client/hybrid/fusion.py``), so a fusion tuned here gives the same order when pushed down
to Qdrant. A weight scales the rank (a weight of 2 makes position 10 count like position 5),
and a weight <= 0 mutes the list.

Ties: higher score first, then the better best position over all lists, then the earlier list,
then first appearance; ids need only be hashable.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Sequence
from typing import TypeVar

logger = logging.getLogger(__name__)

__all__ = ["rrf", "DEFAULT_RRF_K"]

DEFAULT_RRF_K = 60

IdT = TypeVar("IdT", bound=Hashable)


def rrf(
    ranked_id_lists: Sequence[Sequence[IdT]],
    k: float = DEFAULT_RRF_K,
    weights: Sequence[float] | None = None,
    limit: int | None = None,
) -> list[tuple[IdT, float]]:
    """Fuse ranked id lists (best first) into ``[(id, score), ...]``, best first.

    ``k`` must be >= 1 (Qdrant requires a positive integer; k=1 is the sharpest).
    ``weights`` has one entry per list (default 1.0 each). ``limit`` truncates the result.
    """
    if k < 1:
        raise ValueError(f"rrf k must be >= 1, got {k}")
    if weights is not None and len(weights) != len(ranked_id_lists):
        raise ValueError(f"rrf got {len(weights)} weights for {len(ranked_id_lists)} ranked lists; pass one weight per list")
    scores: dict[IdT, float] = {}
    best: dict[IdT, tuple[int, int, int]] = {}  # (best position, list index, order of appearance)
    for li, ids in enumerate(ranked_id_lists):
        w = 1.0 if weights is None else float(weights[li])
        seen: set[IdT] = set()
        for pos, doc_id in enumerate(ids):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            contrib = 1.0 / ((pos + 1.0) / w + k - 1.0) if w > 0 else 0.0
            if doc_id in scores:
                scores[doc_id] += contrib
                if pos < best[doc_id][0]:
                    best[doc_id] = (pos, best[doc_id][1], best[doc_id][2])
            else:
                scores[doc_id] = contrib
                best[doc_id] = (pos, li, len(best))
    ranked = sorted(scores, key=lambda d: (-scores[d], best[d]))
    if limit is not None:
        ranked = ranked[: max(limit, 0)]
    return [(d, scores[d]) for d in ranked]
