"""What every ``layered-memory`` command shares: the error handling of the group, opening the engine from the
root options, and printing contexts and search results."""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import click
from pydantic import BaseModel, ValidationError

from ..config import LayeredMemorySettings
from ..engine import LayeredMemory
from ..errors import InvalidInputError, LayeredMemoryError
from ..models import ContextMessage, SearchResult


class Group(click.Group):
    """Turns library errors into one clean line and exit code 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except LayeredMemoryError as exc:
            click.echo(f"error: {cli_message(exc)}", err=True)
            ctx.exit(2)
        except BrokenPipeError:  # `layered-memory ... | head`: the reader left; click exits quietly
            raise
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:  # unreadable files (agent import, ...)
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except click.ClickException as exc:
            if isinstance(exc, click.UsageError):  # click prints usage errors with exit code 2 itself
                raise
            click.echo(f"error: {exc.format_message()}", err=True)
            ctx.exit(2)
        except ValidationError as exc:  # a bad LAYERED_MEMORY_* value: one line, not a traceback
            click.echo(f"error: {settings_error(exc)}", err=True)
            ctx.exit(2)


# The engine names its arguments; from the shell the user typed these flags (the fix names the flag too).
CLI_FLAGS: dict[str, tuple[str, str]] = {
    "k": ("--k", "e.g. --k 10"),
    "max_tokens": ("--max-tokens", "e.g. --max-tokens 2000"),
    "route": ("--route", "use --route hybrid, bm25 or dense"),
    "filters": ("--filter", "e.g. --filter role=user"),
    "query": ("--query", 'e.g. --query "payments pod"'),
    "queries": ("QUERIES", 'e.g. layered-memory search "payments pod"'),
    "user_id": ("USER_ID", "e.g. layered-memory context u1 telegram:42"),
    "session_id": ("SESSION_ID", "e.g. layered-memory context u1 telegram:42"),
    "max_vectors": ("--max-vectors", "e.g. --max-vectors 100000"),
    "days": ("--days", "e.g. --days 30"),
    "period_days": ("--period-days", "e.g. --period-days 14"),
    "encoding": ("--encoding", "e.g. --encoding latin-1"),
}


def cli_message(exc: LayeredMemoryError) -> str:
    """The error as the shell user sees it: a bad argument is named by its flag, and the fix is a flag."""
    if isinstance(exc, InvalidInputError) and exc.field in CLI_FLAGS:
        flag, example = CLI_FLAGS[exc.field]
        value = exc.value if isinstance(exc.value, (str, int, float)) else str(exc)
        fix = exc.fix if "=" not in exc.fix and "(" not in exc.fix else example
        rule = exc.rule
        if rule.endswith(" or None"):  # Python's None is a flag left out, from the shell
            rule = rule.removesuffix(" or None") + f" (or leave {flag} out)"
        return f"{flag} {value!r}: {rule}; {fix}"
    return str(exc)


ENV_PREFIX = "LAYERED_MEMORY_"
_NOT_SETTINGS = ("LAYERED_MEMORY_TEST_",)  # the test suite's own variables


def env_names() -> set[str]:
    """Every ``LAYERED_MEMORY_*`` variable the settings read (sections nested with ``__``)."""
    names = set()
    for name, field in LayeredMemorySettings.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            names.update(f"{ENV_PREFIX}{name}__{sub}".upper() for sub in kind.model_fields)
        else:
            names.add(f"{ENV_PREFIX}{name}".upper())
    return names


def check_env(environ: Mapping[str, str]) -> None:
    """Refuse a ``LAYERED_MEMORY_*`` variable no setting reads (a misspelling is otherwise ignored)."""
    known = env_names()
    for var in sorted(environ):
        if var.upper().startswith(ENV_PREFIX) and var.upper() not in known and not var.upper().startswith(_NOT_SETTINGS):
            close = difflib.get_close_matches(var.upper(), sorted(known), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}?" if close else f"the settings are {ENV_PREFIX}<FIELD> and {ENV_PREFIX}<SECTION>__<FIELD>"
            raise click.ClickException(f"environment variable {var} is not a layered-memory setting; {hint} (or unset it)")


def settings_error(exc: ValidationError) -> str:
    """One line for the first invalid setting, named as its environment variable."""
    err = exc.errors()[0]
    var = ENV_PREFIX + "__".join(str(p) for p in err["loc"]).upper()
    shown = os.environ.get(var, err.get("input"))
    return f"{var}={shown!r}: {err['msg']}; fix the value or unset the variable"


def settings_of(path: str | None, tenant: str | None, redis_url: str | None, qdrant_url: str | None,
                postgres_url: str | None = None) -> LayeredMemorySettings:
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
    if postgres_url:
        updates["postgres"] = s.postgres.model_copy(update={"url": postgres_url})
    return s.model_copy(update=updates)


def record_file(settings: LayeredMemorySettings) -> str | None:
    """The SQLite record file an embedded store keeps (None when the records live on a server)."""
    if settings.redis.url or settings.postgres.url:
        return None
    return settings.sqlite.path or os.path.join(settings.data_dir, "records.sqlite3")


def tenant_of(ctx: click.Context) -> str:
    """The tenant the root options name, without opening anything (checks that must run before a store exists)."""
    o = ctx.obj
    check_env(os.environ)
    return settings_of(o["path"], o["tenant"], o["redis_url"], o["qdrant_url"], o.get("postgres_url")).tenant


@contextmanager
def open_memory(ctx: click.Context, *, recreate_index: bool = False, repair_index: bool = True,
                create: bool = False, root: bool = False) -> Iterator[LayeredMemory]:
    """The engine of the root options, as a handle on ``--tenant``. ``create=False`` (every command that only
    reads or maintains a store): a path that holds no store is refused instead of silently creating an empty
    one. ``root=True``: the unbound engine itself (``serve``: each bearer key opens its own tenant)."""
    o = ctx.obj
    check_env(os.environ)
    settings = settings_of(o["path"], o["tenant"], o["redis_url"], o["qdrant_url"], o.get("postgres_url"))
    records = record_file(settings)
    if not create and records is not None and not os.path.exists(records):
        raise click.ClickException(
            f"--path {settings.data_dir}: no layered-memory store there ({records} does not exist); check the path "
            f"(or LAYERED_MEMORY_DATA_DIR), or create a store with: layered-memory --path {settings.data_dir} ingest FILE.jsonl"
        )
    mem = LayeredMemory.from_settings(
        settings, embedder=o["embedder"] or settings.embedder, recreate_index=recreate_index, repair_index=repair_index,
    )
    try:
        yield mem if root else mem.tenant(settings.tenant)
    finally:
        mem.close()


def print_context(messages: list[ContextMessage]) -> None:
    from ..context import context_line

    for m in messages:
        label = m.role if m.kind == "window" else f"{m.role}/{m.kind}"
        click.echo(click.style(f"[{label}]", bold=True) + " " + context_line(m))


def print_search(result: SearchResult) -> None:
    note = f" (fallback: {result.fallback_reason})" if result.fallback_reason else ""
    click.echo(f"route={result.route_used}{note} total_found={result.total_found} timings={result.timings}")
    for i, h in enumerate(result.hits, 1):
        click.echo(f"{i:2d}. {h.score:.4f} [{h.meta.get('date')} {h.meta.get('author')}] {h.snippet or h.text}")
