"""Search results of documents and repositories: argument checks, citations, ``SearchHit``s."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..errors import InvalidInputError
from ..models import SearchHit, SearchResult
from ..retrieval.snippet import make_snippet
from .store import SourceStore

MAX_K = 100


def check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query", query, "must be a non-empty string", "pass what you are looking for, e.g. 'how to roll back'")
    return query.strip()


def check_k(k: object, default: int, name: str = "k") -> int:
    """``k`` (None: ``default``), an integer from 1 to ``MAX_K``; ``name`` is the argument's name in the
    caller's API (``fetch_k``, LlamaIndex's ``similarity_top_k``), so the error names what the user typed."""
    if k is None:
        return default
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidInputError(name, k, f"must be an integer from 1 to {MAX_K}", f"pass e.g. {name}={default}")
    return k


def check_route(route: object) -> str:
    from ..index.collection import ROUTES

    if route not in ROUTES:
        raise InvalidInputError("route", route, f"must be one of {', '.join(ROUTES)}", "pass route='hybrid' (the default)")
    return route  # type: ignore[return-value]


def citation(title: str, heading_path: Sequence[str], page: int | None, a: int | None, b: int | None) -> str:
    """``Title > Heading > Sub (page 3)`` or ``Title > Heading (lines 10-24)``."""
    path = list(heading_path)
    if title and path and path[0] == title:  # the H1 is usually the title: not twice
        path = path[1:]
    head = " > ".join([title, *path]) if title else " > ".join(path)
    if page is not None:
        return f"{head} (page {page})"
    if a is not None:
        return f"{head} (lines {a}-{b})" if b is not None and b != a else f"{head} (line {a})"
    return head


def hit(h: Any, query_terms: list[str], analyzer: Any) -> SearchHit:
    """A ``SearchHit`` of a chunk point: text, snippet, and its citation and location in ``meta``."""
    p = h.payload
    meta = {k: p.get(k) for k in (
        "citation", "source", "title", "format", "heading_path", "page", "line_start", "line_end", "metadata",
        "repo", "path", "language", "symbol", "symbol_kind", "blob",
    ) if p.get(k) is not None}
    if p.get("doc_collection") is not None:
        meta["collection"] = p["doc_collection"]
    meta["kind"] = p.get("kind")
    text = p.get("text", "")
    return SearchHit(id=str(h.id), score=float(h.score), text=text, snippet=make_snippet(text, query_terms, analyzer), meta=meta)


def result(store: SourceStore, query: str, found: Any, t_start: float) -> SearchResult:
    terms = store.runtime.analyzer.terms(query)
    hits = [hit(h, terms, store.runtime.analyzer) for h in found.hits]
    timings = dict(found.timings)
    timings["total"] = round((time.perf_counter() - t_start) * 1000, 3)
    return SearchResult(hits=hits, total_found=len(hits), route_used=found.route_used, fallback_reason=found.fallback_reason,
                        queries=[query], timings=timings)


__all__ = ["MAX_K", "check_k", "check_route", "check_query", "citation", "hit", "result"]
