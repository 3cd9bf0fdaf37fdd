"""What every ``layered-memory`` command shares: the error handling of the group, opening the engine from the
root options, and printing contexts and search results."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..config import LayeredMemorySettings
from ..engine import LayeredMemory
from ..errors import LayeredMemoryError
from ..models import ContextMessage, SearchResult


class Group(click.Group):
    """Turns library errors into one clean line and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LayeredMemoryError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:  # unreadable files (agent import, ...)
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except click.ClickException as exc:
            if isinstance(exc, click.UsageError):  # click prints usage errors with exit code 2 itself
                raise
            click.echo(f"error: {exc.format_message()}", err=True)
            ctx.exit(2)


def settings_of(path: str | None, tenant: str | None, redis_url: str | None, qdrant_url: str | None) -> LayeredMemorySettings:
    s = LayeredMemorySettings()
    updates: dict[str, Any] = {}
    if path:
        updates["data_dir"] = path
    if tenant:
        updates["tenant"] = tenant
    if redis_url:
        updates["redis"] = s.redis.model_copy(update={"url": redis_url})
    if qdrant_url:
        updates["qdrant"] = s.qdrant.model_copy(update={"url": qdrant_url})
    return s.model_copy(update=updates)


@contextmanager
def open_memory(ctx: click.Context, *, recreate_index: bool = False, repair_index: bool = True) -> Iterator[LayeredMemory]:
    o = ctx.obj
    settings = settings_of(o["path"], o["tenant"], o["redis_url"], o["qdrant_url"])
    mem = LayeredMemory.from_settings(
        settings, embedder=o["embedder"] or settings.embedder, recreate_index=recreate_index, repair_index=repair_index,
    )
    try:
        yield mem.tenant(settings.tenant)
    finally:
        mem.close()


def print_context(messages: list[ContextMessage]) -> None:
    for m in messages:
        label = m.role if m.kind == "window" else f"{m.role}/{m.kind}"
        click.echo(click.style(f"[{label}]", bold=True) + " " + m.content)


def print_search(result: SearchResult) -> None:
    note = f" (fallback: {result.fallback_reason})" if result.fallback_reason else ""
    click.echo(f"route={result.route_used}{note} total_found={result.total_found} timings={result.timings}")
    for i, h in enumerate(result.hits, 1):
        click.echo(f"{i:2d}. {h.score:.4f} [{h.meta.get('date')} {h.meta.get('author')}] {h.snippet or h.text}")
