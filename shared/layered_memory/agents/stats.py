"""Statistics of one agent's context (seed 004 "Статистика контекста").

Totals come from the vector index (exact, filtered counts: cheap with the payload indexes); the
oldest and newest timestamps and the per-day / per-week aggregates come from the RecordStore, whose
keys sort by timestamp, so a period is one key range and never a scan of the whole agent.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from ..models import INTERACTION_TYPES, iso, parse_time, utcnow
from .store import key_range

if TYPE_CHECKING:
    from .models import AgentInfo, AgentScope
    from .store import AgentStore

logger = logging.getLogger(__name__)

GRANULARITIES = ("day", "week")
MAX_BUCKETS = 3660


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def agent_stats(
    store: AgentStore, scope: AgentScope, info: AgentInfo, *, period_days: int | None = None, since: datetime | str | None = None,
    until: datetime | str | None = None, granularity: str = "day",
) -> dict[str, Any]:
    """The statistics dict.

    Keys: ``agent_id``, ``total_vectors``, ``collection_size_mb`` (per-agent collections: bytes on disk;
    shared collection: the agent's share of it, ``collection_size_estimated=True``), ``oldest_interaction``,
    ``newest_interaction`` (ISO or None), ``by_type`` ({type: count} for all four types),
    ``success_rate`` (percent of successful interactions, None when empty), ``failed``, ``max_vectors``,
    ``usage`` (total / max), and with a period: ``period`` {from, to, granularity} and ``timeline``, one
    bucket per day (UTC date) or ISO week (Monday), empty ones included, each
    ``{start, total, success, failed, success_rate, by_type}``.

    Raises:
        InvalidInputError: unknown granularity, a bad date, an inverted or too long period.
    """
    if granularity not in GRANULARITIES:
        raise InvalidInputError("granularity", granularity, f"must be one of {', '.join(GRANULARITIES)}", "use 'day' or 'week'")
    total = store.count(scope, info, None)
    successes = store.count(scope, info, {"success": True}) if total else 0
    by_type = {t: (store.count(scope, info, {"interaction_type": t}) if total else 0) for t in INTERACTION_TYPES}
    size = store.index.size_bytes(info.collection)
    estimated = info.collection_mode == "shared"
    if estimated:  # the shared collection's bytes, apportioned by point count
        everything = store.index.count(info.collection)
        size = int(size * total / everything) if everything else 0
    out: dict[str, Any] = {
        "agent_id": scope.agent_id,
        "user_id": scope.user_id,
        "agent_name": scope.agent_name,
        "collection": info.collection,
        "collection_mode": info.collection_mode,
        "total_vectors": total,
        "collection_size_mb": round(size / 1_048_576, 3),
        "collection_size_estimated": estimated,
        "oldest_interaction": store.oldest(scope),
        "newest_interaction": store.newest(scope),
        "by_type": by_type,
        "success_rate": _pct(successes, total),
        "failed": total - successes,
        "max_vectors": info.max_vectors,
        "usage": round(total / info.max_vectors, 4),
    }
    if period_days is not None or since is not None or until is not None:
        start, end = _period(period_days, since, until, out["oldest_interaction"])
        out["period"] = {"from": iso(start), "to": iso(end), "granularity": granularity}
        out["timeline"] = timeline(store, scope, start, end, granularity)
    return out


def _period(period_days: int | None, since: Any, until: Any, oldest: str | None) -> tuple[datetime, datetime]:
    end = parse_time("until", until) if until is not None else utcnow()
    if period_days is not None:
        if since is not None:
            raise InvalidInputError("period_days", period_days, "cannot be combined with since", "pass one of them")
        if isinstance(period_days, bool) or not isinstance(period_days, int) or period_days < 1:
            raise InvalidInputError("period_days", period_days, "must be an int >= 1", "e.g. period_days=30")
        try:
            start = end - timedelta(days=period_days)
        except OverflowError:
            raise InvalidInputError("period_days", period_days, "reaches back before year 1", "e.g. period_days=30") from None
    elif since is not None:
        start = parse_time("since", since)
    else:
        start = parse_time("oldest", oldest) if oldest else end
    if start > end:
        raise InvalidInputError("since", iso(start), f"is after until={iso(end)}", "swap the two dates")
    if (end - start).days > MAX_BUCKETS:
        raise InvalidInputError("period", f"{(end - start).days} days", f"is longer than {MAX_BUCKETS} days", "ask for a shorter period")
    return start, end


def _bucket(day: date, granularity: str) -> date:
    return day - timedelta(days=day.weekday()) if granularity == "week" else day


def timeline(store: AgentStore, scope: AgentScope, start: datetime, end: datetime, granularity: str) -> list[dict[str, Any]]:
    """Aggregates per bucket over ``start <= timestamp <= end``, from one key range of the RecordStore."""
    step = timedelta(days=7 if granularity == "week" else 1)
    buckets: dict[date, dict[str, Any]] = {}
    day = _bucket(start.astimezone(timezone.utc).date(), granularity)
    last = _bucket(end.astimezone(timezone.utc).date(), granularity)
    while day <= last:
        buckets[day] = {"start": day.isoformat(), "total": 0, "success": 0, "failed": 0, "by_type": dict.fromkeys(INTERACTION_TYPES, 0)}
        day += step
    after, stop = key_range({"timestamp_from": iso(start), "timestamp_to": iso(end)})
    for page in store.iter_docs(scope, after=after, stop=stop):
        for _, doc in page:
            ts = parse_time("timestamp", doc["timestamp"])
            if ts < start or ts > end:
                continue
            b = buckets[_bucket(ts.date(), granularity)]
            b["total"] += 1
            b["success" if doc.get("success") else "failed"] += 1
            b["by_type"][doc.get("interaction_type")] = b["by_type"].get(doc.get("interaction_type"), 0) + 1
    out = list(buckets.values())
    for b in out:
        b["success_rate"] = _pct(b["success"], b["total"])
    return out
