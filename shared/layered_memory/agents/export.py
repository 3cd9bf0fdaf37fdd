"""Streamed JSON export and import of one agent's context (seed 004 "Экспорт контекста агента").

The file is one JSON object, written page by page so a large agent never sits in memory::

    {"agent_id": "user123_coder", "export_date": "...", "user_id": "123", "agent_name": "coder", ..., "interactions": [
    {"interaction_id": "...", "text": "...", "interaction_type": "tool_call", "task_id": "t1", "timestamp": "...", ...},
    {...}
    ], "total_interactions": 2}

It is plain JSON (``json.load`` reads it); the reader also streams it line by line when the layout is
this one, so an import never holds the whole file either. ``total_interactions`` comes last because
it is only known once the last page is written; the reader checks it (a truncated file is refused).
Embeddings are left out unless ``include_embeddings=True`` (then each interaction has ``embedding``).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any

from ..errors import InvalidInputError
from ..models import iso, utcnow
from .store import doc_matches, key_range, scope_filter

if TYPE_CHECKING:
    from .models import AgentInfo, AgentScope
    from .store import AgentStore

logger = logging.getLogger(__name__)

FORMAT = "layered-memory/agent-export/1"
PAGE = 500
_OPEN = '"interactions": ['


@contextmanager
def _text_out(dest: str | os.PathLike[str] | IO[str]) -> Iterator[IO[str]]:
    if isinstance(dest, (str, os.PathLike)):
        tmp = os.fspath(dest) + ".part"
        with open(tmp, "w", encoding="utf-8") as fh:
            yield fh
        os.replace(tmp, dest)  # a failed export never leaves a half file under the real name
    else:
        yield dest


def write_export(
    store: AgentStore, scope: AgentScope, info: AgentInfo, dest: str | os.PathLike[str] | IO[str], *, include_embeddings: bool = False,
    since: datetime | str | None = None, until: datetime | str | None = None,
    interaction_type: str | Sequence[str] | None = None,
) -> int:
    """Write the export of one agent (``scope``, registered as ``info``) to ``dest`` (path or text file).
    Returns total_interactions."""
    filters: dict[str, Any] = {"timestamp_from": since, "timestamp_to": until,
                               "interaction_type": list(interaction_type) if isinstance(interaction_type, (list, tuple, set)) else interaction_type}
    _, normalized = scope_filter(scope, {k: v for k, v in filters.items() if v is not None}, "export")
    emb = store.embedder
    header = {
        "agent_id": scope.agent_id,
        "export_date": iso(utcnow()),
        "format": FORMAT,
        "tenant": scope.tenant,
        "user_id": scope.user_id,
        "agent_name": scope.agent_name,
        "collection": info.collection,
        "max_vectors": info.max_vectors,
        "embedder": emb.name if emb is not None else None,
        "dim": emb.dim if emb is not None else None,
        "include_embeddings": bool(include_embeddings),
        "filters": normalized,
    }
    total = 0
    after, stop = key_range(normalized)
    with _text_out(dest) as out:
        out.write(json.dumps(header, ensure_ascii=False)[:-1] + ", " + _OPEN + "\n")
        for page in store.iter_docs(scope, after=after, stop=stop, page=PAGE):
            docs = [d for _, d in page if doc_matches(d, normalized)]
            if not docs:
                continue
            if include_embeddings:
                vecs = store.vectors(scope, info, [d["interaction_id"] for d in docs])
                docs = [{**d, "embedding": vecs.get(d["interaction_id"])} for d in docs]
            for d in docs:
                out.write(("," if total else "") + json.dumps(d, ensure_ascii=False) + "\n")
                total += 1
        out.write(f'], "total_interactions": {total}}}\n')
    logger.info("exported %d interactions of agent %s", total, scope.agent_id)
    return total


def read_export(source: str | os.PathLike[str] | IO[str]) -> tuple[dict[str, Any], Iterator[list[dict[str, Any]]]]:
    """(header, pages of interaction dicts). Streams the ``write_export`` layout; any other JSON object with
    the same fields is read whole. The pages iterator raises InvalidInputError on a truncated file."""
    fh = open(source, encoding="utf-8") if isinstance(source, (str, os.PathLike)) else source  # noqa: SIM115
    first = fh.readline()
    if first.rstrip().endswith(_OPEN):
        header = _loads(first.rstrip() + "]}", "header")
        _check_header(header)
        return header, _stream(fh, header, close=fh is not source)
    data = _loads(first + fh.read(), "file")
    if fh is not source:
        fh.close()
    _check_header(data)
    rows = data.get("interactions")
    if not isinstance(rows, list):
        raise InvalidInputError("interactions", type(rows).__name__, "must be a list", "export the agent again")
    return data, iter([rows[i : i + PAGE] for i in range(0, len(rows), PAGE)])


def _stream(fh: IO[str], header: dict[str, Any], *, close: bool) -> Iterator[list[dict[str, Any]]]:
    page: list[dict[str, Any]] = []
    seen = 0
    total = None
    try:
        for no, line in enumerate(fh, 2):
            line = line.strip()
            if not line:
                continue
            if line.startswith("]"):
                total = _loads('{"interactions": [' + line, f"line {no}").get("total_interactions")
                break
            page.append(_loads(line.lstrip(","), f"line {no}"))
            seen += 1
            if len(page) >= PAGE:
                yield page
                page = []
        if page:
            yield page
    finally:
        if close:
            fh.close()
    if total != seen:
        raise InvalidInputError(
            "total_interactions", total, f"the file holds {seen} interactions (truncated or edited)",
            "export the agent again",
        )


def _loads(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"export {where}", text[:60], f"is not valid JSON ({exc.msg})", "use a file written by export_to") from None
    except (ValueError, RecursionError) as exc:  # an int over 4300 digits; nesting deeper than the stack
        raise InvalidInputError(f"export {where}", text[:60], f"cannot be read ({type(exc).__name__})", "use a file written by export_to") from None
    if not isinstance(value, dict):
        raise InvalidInputError(f"export {where}", text[:60], "must be a JSON object", "use a file written by export_to")
    return value


def _check_header(header: dict[str, Any]) -> None:
    for name in ("agent_id", "export_date", "user_id", "agent_name"):
        if name not in header:
            raise InvalidInputError(f"export {name}", None, "is missing", "use a file written by export_to")
