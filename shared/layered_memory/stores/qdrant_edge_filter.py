"""The translation layer of the Qdrant Edge backend: ``qdrant_client.models`` filters and payload index kinds
into their ``qdrant_edge`` equivalents. The project writes every request as ``qdrant_client.models`` (its one
request language); only this module and ``qdrant_edge.py`` import ``qdrant_edge``.

    to_edge_filter(models.Filter(must=[models.FieldCondition(key="tenant", match=models.MatchValue(value="t1"))]))
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import qdrant_edge as qe
from .._lazy import qdrant_models as models

from ..errors import InvalidInputError
from . import qdrant_common as qc

_INDEX_TYPES = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "datetime": qe.PayloadSchemaType.Datetime,
    "float": qe.PayloadSchemaType.Float,
}


def edge_index_schema(kind: str) -> Any:
    """The Edge payload index parameters of one ``PAYLOAD_INDEXES`` kind."""
    if kind == "tenant":
        return qe.KeywordIndexParams(is_tenant=True)
    if kind == "integer":
        return qe.IntegerIndexParams(lookup=True, range=True)
    return _INDEX_TYPES[kind]


def to_edge_filter(f: models.Filter | None) -> qe.Filter | None:
    """Translate a ``models.Filter`` into the equivalent ``qdrant_edge.Filter`` (recursively)."""
    if f is None:
        return None
    min_should = None
    if f.min_should is not None:
        min_should = qe.MinShould([_cond(c) for c in f.min_should.conditions], f.min_should.min_count)
    return qe.Filter(
        must=[_cond(c) for c in qc._as_list(f.must)] or None,
        should=[_cond(c) for c in qc._as_list(f.should)] or None,
        must_not=[_cond(c) for c in qc._as_list(f.must_not)] or None,
        min_should=min_should,
    )


def _cond(c: Any) -> Any:
    if isinstance(c, models.Filter):
        return to_edge_filter(c)
    if isinstance(c, models.FieldCondition):
        return _field(c)
    if isinstance(c, models.HasIdCondition):
        return qe.HasIdCondition({qc.check_point_id(i, "HasIdCondition.has_id") for i in c.has_id})
    if isinstance(c, models.IsEmptyCondition):
        return qe.IsEmptyCondition(c.is_empty.key)
    if isinstance(c, models.IsNullCondition):
        return qe.IsNullCondition(c.is_null.key)
    if isinstance(c, models.HasVectorCondition):
        return qe.HasVectorCondition(c.has_vector)
    if isinstance(c, models.NestedCondition):
        return qe.NestedCondition(c.nested.key, to_edge_filter(c.nested.filter))
    raise InvalidInputError(
        "filter", type(c).__name__, "this condition type has no Qdrant Edge translation",
        "use FieldCondition, HasIdCondition, IsEmptyCondition, IsNullCondition, HasVectorCondition, "
        "NestedCondition or a nested Filter",
    )


def _field(c: models.FieldCondition) -> qe.FieldCondition:
    kw: dict[str, Any] = {}
    if c.match is not None:
        kw["match"] = _match(c.match, c.key)
    if c.range is not None:
        r = c.range
        if isinstance(r, models.DatetimeRange):
            kw["range"] = qe.RangeDateTime(gte=_iso(r.gte), gt=_iso(r.gt), lte=_iso(r.lte), lt=_iso(r.lt))
        else:
            kw["range"] = qe.RangeFloat(gte=r.gte, gt=r.gt, lte=r.lte, lt=r.lt)
    if c.values_count is not None:
        v = c.values_count
        kw["values_count"] = qe.ValuesCount(lt=v.lt, gt=v.gt, lte=v.lte, gte=v.gte)
    if c.is_empty is not None:
        kw["is_empty"] = c.is_empty
    if c.is_null is not None:
        kw["is_null"] = c.is_null
    if c.geo_bounding_box is not None or c.geo_radius is not None or c.geo_polygon is not None:
        raise InvalidInputError(
            f"filter: {c.key}", "geo", "geo conditions are not translated for Qdrant Edge", "filter geo client side"
        )
    if not kw:
        raise InvalidInputError(f"filter: {c.key}", c, "a FieldCondition needs match, range or values_count",
                                "set one of them")
    return qe.FieldCondition(c.key, **kw)


def _match(m: Any, key: str) -> Any:
    if isinstance(m, models.MatchValue):
        return qe.MatchValue(m.value)
    if isinstance(m, models.MatchAny):
        return qe.MatchAny(list(m.any))
    if isinstance(m, models.MatchExcept):
        return qe.MatchExcept(list(m.except_))
    if isinstance(m, models.MatchText):
        return qe.MatchText(m.text)
    if isinstance(m, models.MatchTextAny):
        return qe.MatchTextAny(m.text_any)
    if isinstance(m, models.MatchPhrase):
        return qe.MatchPhrase(m.phrase)
    raise InvalidInputError(f"filter: {key}", type(m).__name__, "this match type has no Qdrant Edge translation",
                            "use MatchValue, MatchAny, MatchExcept, MatchText, MatchTextAny or MatchPhrase")


def _iso(value: Any) -> str | None:
    """ISO 8601 with an explicit offset; naive datetimes are taken as UTC, as the Qdrant server does."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if not isinstance(value, dt.datetime):  # a date
        value = dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.isoformat()


__all__ = ["edge_index_schema", "to_edge_filter"]
