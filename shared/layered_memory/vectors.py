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
    id: str  # a UUID string
    payload: dict[str, Any]
    dense: list[float] | None = None
    sparse: SparseVector | None = None


@dataclass(slots=True)
class IndexHit:
    id: str
    score: float
    payload: dict[str, Any] = field(default_factory=dict)
    dense: list[float] | None = None


__all__ = ["IndexHit", "SparseVector", "VectorPoint"]
