"""Search planning: normalize queries, validate filters, build the index filter (seed 003).

Building and running stay apart (sqlite-utils ``search_sql``): ``plan_search`` returns a
``SearchPlan`` that the CLI and the tests can inspect; ``SearchService.execute`` runs it.
The tenant condition is added here, below the public API, and cannot be removed by a caller.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInputError
from ..filterspec import Eq, FilterSpec, Range
from ..models import INTERACTION_TYPES, ROLES, iso, parse_time

logger = logging.getLogger(__name__)

ROUTES = ("hybrid", "bm25", "dense")
GROUP_BY = ("session",)
MAX_K = 100

# filter name -> payload key (keyword match); value may be a string or a list of strings (any of)
KEYWORD_FILTERS = {
    "role": "role",
    "session_key": "session_key",
    "user_id": "user_id",
    "chat_id": "chat_id",
    "channel": "channel",
    "author": "author",
    "lang": "lang",
    "kind": "kind",
    "topic_id": "topic_id",
    "task_id": "task_id",
    "interaction_type": "interaction_type",
}
RANGE_FILTERS = ("timestamp_from", "timestamp_to")
FLAG_FILTERS = ("success",)
FILTER_NAMES = tuple(sorted([*KEYWORD_FILTERS, *RANGE_FILTERS, *FLAG_FILTERS]))
_ALLOWED_VALUES = {"role": ROLES, "interaction_type": INTERACTION_TYPES}


@dataclass(slots=True)
class SearchPlan:
    queries: list[str]
    k: int
    route: str
    filter: FilterSpec  # the scope's base filter AND the user's filters: compiled for the index or run in-process
    filters: dict[str, Any] = field(default_factory=dict)  # the validated, normalized user filters
    group_by: str | None = None  # "session": rank sessions as units (k of them)
    whole: list[str] = field(default_factory=list)  # each query before ``max_query_chars`` cut it: a message of that text comes first


def normalize_queries(queries: str | Sequence[str] | None, *, max_chars: int = 2000) -> list[str]:
    """Strip, collapse whitespace, drop duplicates (case-insensitive), truncate very long queries.

    Raises:
        InvalidInputError: no query, or a blank one.
    """
    return [_cut(q, max_chars) for q in clean_queries(queries)]


def _cut(text: str, max_chars: int) -> str:
    if len(text) > max_chars:
        logger.warning("query of %d characters truncated to %d", len(text), max_chars)
        return text[:max_chars]
    return text


def clean_queries(queries: str | Sequence[str] | None) -> list[str]:
    """``normalize_queries`` without the truncation: the whole queries, whitespace collapsed, duplicates dropped.

    Raises:
        InvalidInputError: no query, or a blank one.
    """
    if queries is None:
        raise InvalidInputError("queries", queries, "at least one query is required", "pass a string or a list of strings")
    if not isinstance(queries, (str, list, tuple)):
        raise InvalidInputError("queries", queries, "must be a string or a list of strings", "pass e.g. ['docker install']")
    items = [queries] if isinstance(queries, str) else list(queries)
    if not items:
        raise InvalidInputError("queries", queries, "the list is empty", "pass at least one non-blank query")
    out: list[str] = []
    seen: set[str] = set()
    for q in items:
        if not isinstance(q, str):
            raise InvalidInputError("queries", q, "every query must be a string", "convert it to text")
        text = re.sub(r"\s+", " ", q).strip()
        if not text:
            raise InvalidInputError("queries", q, "a query is blank", "remove blank queries")
        key = text.casefold()
        if key not in seen:
            seen.add(key)
            out.append(text)
    return out


def _keyword_values(name: str, value: Any) -> list[str]:
    values = value if isinstance(value, (list, tuple, set, frozenset)) else [value]
    if not values:
        raise InvalidInputError(f"filters.{name}", value, "an empty list matches nothing", f"drop {name} or give values")
    out = []
    for v in values:
        if (isinstance(v, bool) or not isinstance(v, (str, int)) or (isinstance(v, str) and not v.strip())
                or (isinstance(v, int) and not -(10**200) < v < 10**200)):  # str() refuses ints over 4300 digits
            raise InvalidInputError(f"filters.{name}", v, "must be a non-empty string (or a list of them)", f"fix {name}")
        allowed = _ALLOWED_VALUES.get(name)
        if allowed and v not in allowed:
            raise InvalidInputError(f"filters.{name}", v, f"must be one of {', '.join(allowed)}", f"fix {name}")
        out.append(str(v))
    return out


def build_filter(base: FilterSpec, filters: Mapping[str, Any] | None) -> tuple[FilterSpec, dict[str, Any]]:
    """The index filter: the scope's ``base`` (tenant, bound user: ``Scope.spec``), AND the user's filters.

    The user's filters can only narrow ``base``: a filter naming another user than the bound one
    matches nothing.

    Raises:
        InvalidInputError: unknown filter names, bad values, malformed or inverted dates.
    """
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidInputError("filters", filters, "must be an object", "pass a dict of filter names to values")
    filters = dict(filters or {})
    unknown = sorted(set(filters) - set(FILTER_NAMES))
    if unknown:
        raise InvalidInputError(
            "filters", unknown[0], f"is not a known filter (known: {', '.join(FILTER_NAMES)})", "remove or rename it"
        )
    must: list[Any] = []
    normalized: dict[str, Any] = {}
    for name, key in KEYWORD_FILTERS.items():
        if filters.get(name) is None:
            continue
        values = _keyword_values(name, filters[name])
        normalized[name] = values if len(values) > 1 else values[0]
        must.append(Eq(key, values))
    start = end = None
    if filters.get("timestamp_from") is not None:
        start = parse_time("filters.timestamp_from", filters["timestamp_from"])
        normalized["timestamp_from"] = iso(start)
    if filters.get("timestamp_to") is not None:
        end = parse_time("filters.timestamp_to", filters["timestamp_to"])
        normalized["timestamp_to"] = iso(end)
    if start and end and start > end:
        raise InvalidInputError(
            "filters.timestamp_from", normalized["timestamp_from"],
            f"is after timestamp_to={normalized['timestamp_to']}", "swap the two dates",
        )
    if start or end:
        must.append(Range("timestamp", gte=start, lte=end))
    if filters.get("success") is not None:
        flag = filters["success"]
        if isinstance(flag, str) and flag.lower() in ("true", "false"):
            flag = flag.lower() == "true"
        if not isinstance(flag, (bool, int)) or flag not in (0, 1, True, False):
            raise InvalidInputError("filters.success", flag, "must be true or false", "pass a boolean")
        normalized["success"] = bool(flag)
        must.append(Eq("success", int(bool(flag))))  # stored as 0/1: Qdrant Edge cannot match booleans
    return base.and_(*must), normalized


def plan_search(
    base: FilterSpec,
    queries: str | Sequence[str] | None,
    *,
    filters: Mapping[str, Any] | None = None,
    k: int = 10,
    route: str = "hybrid",
    max_query_chars: int = 2000,
    group_by: str | None = None,
) -> SearchPlan:
    """Validate everything and return the plan; nothing runs.

    Raises:
        InvalidInputError: bad queries, k outside 1..100, unknown route or group_by, bad filters.
    """
    if group_by is not None and group_by not in GROUP_BY:
        raise InvalidInputError("group_by", group_by, f"must be one of {', '.join(GROUP_BY)} (or None)", 'use group_by="session"')
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInputError("k", k, f"must be an integer from 1 to {MAX_K}", "pass e.g. k=10")
    if route not in ROUTES:
        raise InvalidInputError("route", route, f"must be one of {', '.join(ROUTES)}", 'use route="hybrid"')
    whole = clean_queries(queries)
    flt, normalized = build_filter(base, filters)
    return SearchPlan(queries=[_cut(q, max_query_chars) for q in whole], k=k, route=route, filter=flt, filters=normalized,
                      group_by=group_by, whole=whole)


def aligned_vectors(plan: SearchPlan, texts: list[str], vectors: list[list[float]]) -> list[list[float]]:
    """The vectors of the plan's (normalized, deduplicated) queries, from the raw texts' vectors."""
    by_text = {" ".join(t.split()).casefold(): v for t, v in zip(texts, vectors)}
    return [by_text[q.casefold()] for q in plan.queries]
