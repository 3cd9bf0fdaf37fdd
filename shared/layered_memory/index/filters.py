"""The filter spec, re-exported where it was first defined (it lives in ``layered_memory.filterspec``, below
the retrieval core that plans with it)."""

from ..filterspec import AnyOf, Condition, Eq, FilterSpec, HasId, IsEmpty, Range

__all__ = ["AnyOf", "Condition", "Eq", "FilterSpec", "HasId", "IsEmpty", "Range"]
