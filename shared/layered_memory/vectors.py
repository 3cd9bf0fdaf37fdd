"""The value types of the vector side: a sparse vector, a point to write, a hit read back.

They sit below both the retrieval core (which builds sparse vectors) and the stores (which keep and
return points), so neither imports the other; ``stores.base`` re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(slots=True)
class VectorPoint:
    """A point to write. ``context``: a second dense vector (the message embedded with the turn before it),
    kept in the named vector ``context`` where the collection has one (schema 2) and dropped otherwise.
    ``mean``: also index the mean of the unit ``dense`` and ``context`` vectors (``dense`` alone without a
    context) where the collection has that vector (schema 3): set for messages, whose search queries it.
    ``sentences``: the vectors of a message's sentences when it has two or more; with ``mean`` set, they are the
    point's ``sentences`` multivector (schema 4, MaxSim), so a query of it scores the point by its best sentence."""

    id: str  # a UUID string
    payload: dict[str, Any]
    dense: list[float] | None = None
    sparse: SparseVector | None = None
    context: list[float] | None = None
    mean: bool = False
    sentences: list[list[float]] | None = None


@dataclass(slots=True)
class IndexHit:
    id: str
    score: float
    payload: dict[str, Any] = field(default_factory=dict)
    dense: list[float] | None = None
    context: list[float] | None = None  # read back with the vectors (scroll / retrieve ``with_vectors``)
    sentences: list[list[float]] | None = None  # the ``sentences`` rows, read back the same way


__all__ = ["IndexHit", "SparseVector", "VectorPoint"]
