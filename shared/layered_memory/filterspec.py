"""One filter spec, two compilers: a Qdrant ``Filter`` for the vector index and a Python predicate
over the same payload dicts for the core mode (no vector index) and for re-checks.

    spec = FilterSpec.of(Eq("tenant", "acme"), Eq("user_id", "u1"), Range("timestamp", gte=start))
    index.query(name, ..., filter=spec.to_qdrant())
    [p for p in payloads if spec.matches(p)]

A spec is immutable; ``and_`` returns a wider conjunction. Conditions read payload keys (dotted keys
reach into nested objects, as in Qdrant). Both compilers give the same answer on the same payload:
the isolation rule of ``index.scope`` depends on it, and the tests check it on every condition type.
A foundation (pure values, no I/O): the retrieval core plans with it, the index layer runs it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Union

from ._lazy import qdrant_models as models
from .models import parse_time

Scalar = Union[str, int, float]


def _get(payload: Mapping[str, Any], key: str) -> Any:
    node: Any = payload
    for part in key.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _values(actual: Any) -> list[Any]:
    """A payload value as Qdrant sees it: a list matches when any element matches."""
    if actual is None:
        return []
    return list(actual) if isinstance(actual, (list, tuple)) else [actual]


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


@dataclass(frozen=True, slots=True)
class Eq:
    """``key`` equals one of ``values`` (keyword or integer match; a list payload matches on any element)."""

    key: str
    values: tuple[Scalar, ...]

    def __init__(self, key: str, *values: Scalar) -> None:
        flat: list[Scalar] = []
        for v in values:
            flat.extend(v if isinstance(v, (list, tuple, set, frozenset)) else [v])
        if not flat:
            raise ValueError(f"Eq({key!r}) needs at least one value")
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "values", tuple(flat))

    def to_qdrant(self) -> models.FieldCondition:
        if len(self.values) == 1:
            return models.FieldCondition(key=self.key, match=models.MatchValue(value=self.values[0]))
        return models.FieldCondition(key=self.key, match=models.MatchAny(any=list(self.values)))

    def matches(self, payload: Mapping[str, Any]) -> bool:
        return any(_same(a, v) for a in _values(_get(payload, self.key)) for v in self.values)


@dataclass(frozen=True, slots=True)
class Range:
    """``key`` within bounds: numbers, or datetimes (aware ``datetime`` bounds; ISO strings in the payload)."""

    key: str
    gte: float | datetime | None = None
    gt: float | datetime | None = None
    lte: float | datetime | None = None
    lt: float | datetime | None = None

    @property
    def is_time(self) -> bool:
        return any(isinstance(b, datetime) for b in (self.gte, self.gt, self.lte, self.lt))

    def to_qdrant(self) -> models.FieldCondition:
        if self.is_time:
            rng: Any = models.DatetimeRange(gte=self.gte, gt=self.gt, lte=self.lte, lt=self.lt)
        else:
            rng = models.Range(gte=self.gte, gt=self.gt, lte=self.lte, lt=self.lt)  # type: ignore[arg-type]
        return models.FieldCondition(key=self.key, range=rng)

    def matches(self, payload: Mapping[str, Any]) -> bool:
        for actual in _values(_get(payload, self.key)):
            value: Any
            if self.is_time:
                try:
                    value = parse_time(self.key, actual)
                except Exception:
                    continue
            elif isinstance(actual, (int, float)) and not isinstance(actual, bool) and math.isfinite(actual):
                value = float(actual)
            else:
                continue
            if (
                (self.gte is None or value >= self.gte)
                and (self.gt is None or value > self.gt)
                and (self.lte is None or value <= self.lte)
                and (self.lt is None or value < self.lt)
            ):
                return True
        return False


@dataclass(frozen=True, slots=True)
class IsEmpty:
    """``key`` is missing, null or an empty list."""

    key: str

    def to_qdrant(self) -> models.IsEmptyCondition:
        return models.IsEmptyCondition(is_empty=models.PayloadField(key=self.key))

    def matches(self, payload: Mapping[str, Any]) -> bool:
        return not _values(_get(payload, self.key))


@dataclass(frozen=True, slots=True)
class HasId:
    """The point id is one of ``ids`` (the Python side needs the point id passed to ``matches``)."""

    ids: tuple[str, ...]

    def __init__(self, ids: Sequence[str]) -> None:
        object.__setattr__(self, "ids", tuple(ids))

    def to_qdrant(self) -> models.HasIdCondition:
        return models.HasIdCondition(has_id=list(self.ids))

    def matches(self, payload: Mapping[str, Any], point_id: str | None = None) -> bool:
        return point_id is not None and point_id in self.ids


@dataclass(frozen=True, slots=True)
class AnyOf:
    """At least one of ``alternatives`` holds, each a conjunction (a nested Qdrant ``Filter`` with ``should``).

    The scope rule's one disjunction: a member of group chats sees their own records or the messages of
    those chats (``index.scope``)."""

    alternatives: tuple[FilterSpec, ...]

    def __init__(self, *alternatives: FilterSpec) -> None:
        if not alternatives:
            raise ValueError("AnyOf needs at least one alternative")
        object.__setattr__(self, "alternatives", tuple(alternatives))

    def to_qdrant(self) -> models.Filter:
        return models.Filter(should=[a.to_qdrant() for a in self.alternatives])

    def matches(self, payload: Mapping[str, Any], point_id: str | None = None) -> bool:
        return any(a.matches(payload, point_id) for a in self.alternatives)


Condition = Union[Eq, Range, IsEmpty, HasId, AnyOf]


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """All of ``must`` and none of ``must_not``."""

    must: tuple[Condition, ...] = ()
    must_not: tuple[Condition, ...] = ()

    @classmethod
    def of(cls, *must: Condition) -> FilterSpec:
        return cls(must=tuple(must))

    def and_(self, *must: Condition, must_not: Sequence[Condition] = ()) -> FilterSpec:
        return FilterSpec(must=self.must + tuple(must), must_not=self.must_not + tuple(must_not))

    def excluding_ids(self, ids: Sequence[str]) -> FilterSpec:
        return self.and_(must_not=[HasId(ids)]) if ids else self

    def value_of(self, key: str) -> Scalar | None:
        """The single value an ``Eq`` in ``must`` pins ``key`` to (a store can narrow its scan by it)."""
        for c in self.must:
            if isinstance(c, Eq) and c.key == key and len(c.values) == 1:
                return c.values[0]
        return None

    def to_qdrant(self) -> models.Filter:
        return models.Filter(
            must=[c.to_qdrant() for c in self.must] or None,
            must_not=[c.to_qdrant() for c in self.must_not] or None,
        )

    def matches(self, payload: Mapping[str, Any], point_id: str | None = None) -> bool:
        def ok(c: Condition) -> bool:
            return c.matches(payload, point_id) if isinstance(c, (HasId, AnyOf)) else c.matches(payload)

        return all(ok(c) for c in self.must) and not any(ok(c) for c in self.must_not)


__all__ = ["AnyOf", "Condition", "Eq", "FilterSpec", "HasId", "IsEmpty", "Range"]
