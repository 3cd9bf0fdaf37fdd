"""The ``layered-memory`` command. Maps 1:1 onto the engine's API and only adapts.

Errors (``LayeredMemoryError``, bad files) are one line on stderr and exit code 2.
"""

from __future__ import annotations

import importlib.resources
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from .config import LayeredMemorySettings
from .engine import LayeredMemory
from .errors import LayeredMemoryError
from .models import ContextMessage, SearchResult


class _Group(click.Group):
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


def _settings(path: str | None, tenant: str | None, redis_url: str | None, qdrant_url: str | None) -> LayeredMemorySettings:
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
def _open(ctx: click.Context, *, recreate_index: bool = False, repair_index: bool = True) -> Iterator[LayeredMemory]:
    o = ctx.obj
    settings = _settings(o["path"], o["tenant"], o["redis_url"], o["qdrant_url"])
    mem = LayeredMemory.from_settings(
        settings, embedder=o["embedder"] or settings.embedder, recreate_index=recreate_index, repair_index=repair_index,
    )
    try:
        yield mem.tenant(settings.tenant)
    finally:
        mem.close()


@click.group(cls=_Group)
@click.option("--path", envvar="LAYERED_MEMORY_DATA_DIR", help="Data directory of the embedded store (default .layered_memory).")
@click.option("--tenant", envvar="LAYERED_MEMORY_TENANT", help="Tenant to read and write (default 'default').")
@click.option("--embedder", default=None, metavar="NAME", envvar="LAYERED_MEMORY_EMBEDDER",
              help="default | none (BM25 only) | e5 | use | openai:<model>@<base_url>.")
@click.option("--redis-url", envvar="LAYERED_MEMORY_REDIS__URL", help="Use Redis as the record store.")
@click.option("--qdrant-url", envvar="LAYERED_MEMORY_QDRANT__URL", help="Use a Qdrant server as the vector index.")
@click.pass_context
def main(ctx: click.Context, path: str | None, tenant: str | None, embedder: str | None, redis_url: str | None, qdrant_url: str | None) -> None:
    """Layered memory for LLM chat bots and agents.

    Example: layered-memory demo
    """
    ctx.obj = {"path": path, "tenant": tenant, "embedder": embedder, "redis_url": redis_url, "qdrant_url": qdrant_url,
               "open_memory": _open}  # sub-command groups (agents/cli.py) open the engine through it


def _print_context(messages: list[ContextMessage]) -> None:
    for m in messages:
        label = m.role if m.kind == "window" else f"{m.role}/{m.kind}"
        click.echo(click.style(f"[{label}]", bold=True) + " " + m.content)


def _print_search(result: SearchResult) -> None:
    note = f" (fallback: {result.fallback_reason})" if result.fallback_reason else ""
    click.echo(f"route={result.route_used}{note} total_found={result.total_found} timings={result.timings}")
    for i, h in enumerate(result.hits, 1):
        click.echo(f"{i:2d}. {h.score:.4f} [{h.meta.get('date')} {h.meta.get('author')}] {h.snippet or h.text}")


@main.command()
@click.option("--keep", type=click.Path(file_okay=False), help="Keep the demo store in this directory.")
@click.pass_context
def demo(ctx: click.Context, keep: str | None) -> None:
    """Ingest a bundled Russian/Chinese/English conversation into a temporary embedded store,
    then print the assembled context for a user and a search result.

    Example: layered-memory demo
    """
    sample = importlib.resources.files("layered_memory") / "data" / "sample_conversation.jsonl"
    rows = [json.loads(line) for line in sample.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        path = keep or tmp
        settings = LayeredMemorySettings(data_dir=path)
        settings.memory.short_term_window = 4
        settings.memory.summary_threshold_messages = 6
        with LayeredMemory.embedded(path, embedder=ctx.obj["embedder"] or "default", settings=settings) as mem:
            mem.add_messages(rows)
            mem.set_user_data("u-anna", {"name": "Anna", "diet": "vegetarian", "timezone": "Europe/Berlin"})
            emb = mem.embedder.name if mem.embedder else "none (BM25 only)"
            click.echo(f"Stored {len(rows)} messages in {path} (embedder: {emb}).\n")
            click.echo(click.style("== get_context_for_user('u-anna', 'telegram:1001') ==", fg="cyan"))
            _print_context(mem.get_context_for_user("u-anna", "telegram:1001", max_tokens=1200))
            for q in ("why did the payments pod crash?", "高铁票", "вегетарианские рестораны"):
                click.echo(click.style(f"\n== search({q!r}, k=3) ==", fg="cyan"))
                _print_search(mem.search(q, k=3))


@main.command()
@click.argument("file", type=click.File("r", encoding="utf-8"))
@click.option("--batch", default=256, show_default=True, type=click.IntRange(min=1), help="Messages per batch.")
@click.pass_context
def ingest(ctx: click.Context, file: Any, batch: int) -> None:
    """Add messages from a JSON Lines file (one seed 001 message object per line).

    Example: layered-memory ingest chat.jsonl
    """
    from tqdm import tqdm

    try:
        lines = [line for line in file if line.strip()]
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{file.name}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the file as UTF-8") from None
    quiet = len(lines) < 500
    with _open(ctx) as mem, tqdm(total=len(lines), unit="msg", desc="stored ", file=sys.stderr, disable=quiet) as bar, \
            tqdm(total=len(lines), unit="msg", desc="indexed", file=sys.stderr, disable=quiet, position=1) as indexed:
        pending0 = mem.records.count_pending(mem.tenant_id)  # left by an earlier run: not this file's
        t0 = time.perf_counter()
        for start in range(0, len(lines), batch):
            chunk = []
            for no, line in enumerate(lines[start : start + batch], start + 1):
                try:
                    chunk.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise click.ClickException(f"line {no}: not JSON ({exc.msg}); fix the line or remove it") from None
                except RecursionError:
                    raise click.ClickException(f"line {no}: JSON nested too deeply to parse; flatten the line or remove it") from None
            try:
                mem.add_messages(chunk)
            except LayeredMemoryError as exc:
                raise click.ClickException(f"batch starting at line {start + 1}: {exc}") from None
            bar.update(len(chunk))
            _progress(indexed, mem, start + len(chunk), pending0)
        stored_s = time.perf_counter() - t0
        while not mem.flush(timeout=0.5):  # the background writer embeds what is left
            _progress(indexed, mem, len(lines), pending0)
        _progress(indexed, mem, len(lines), pending0)
    total = time.perf_counter() - t0
    click.echo(f"ingested {len(lines)} messages: stored in {stored_s:.1f} s, indexed in {total:.1f} s ({len(lines) / max(total, 1e-9):.1f} msg/s)")


def _progress(bar: Any, mem: LayeredMemory, stored: int, pending0: int) -> None:
    """The indexed bar: what is stored minus what still waits in the outbox."""
    bar.n = max(0, min(stored, stored - max(0, mem.records.count_pending(mem.tenant_id) - pending0)))
    bar.refresh()


@main.command()
@click.argument("queries", nargs=-1, required=True)
@click.option("--k", default=10, show_default=True)
@click.option("--route", type=click.Choice(["hybrid", "bm25", "dense"]), default="hybrid", show_default=True)
@click.option("--filter", "filters", multiple=True, metavar="NAME=VALUE", help="e.g. --filter role=user")
@click.option("--json", "as_json", is_flag=True, help="Print the seed 003 JSON result.")
@click.pass_context
def search(ctx: click.Context, queries: tuple[str, ...], k: int, route: str, filters: tuple[str, ...], as_json: bool) -> None:
    """Hybrid search over stored messages.

    Example: layered-memory search "payments pod crash" --k 5 --filter role=user
    """
    flt: dict[str, str] = {}
    for item in filters:
        name, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--filter")
        flt[name] = value
    with _open(ctx) as mem:
        result = mem.search(list(queries), filters=flt or None, k=k, route=route)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_search(result)


@main.command()
@click.argument("user_id")
@click.argument("session_id")
@click.option("--query", default=None, help="Query for the relevant-memory blocks (default: the last user message).")
@click.option("--max-tokens", type=int, default=None)
@click.option("--no-vector", is_flag=True, help="Leave out the relevant-memory blocks.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def context(ctx: click.Context, user_id: str, session_id: str, query: str | None, max_tokens: int | None, no_vector: bool, as_json: bool) -> None:
    """Print the context get_context_for_user assembles.

    Example: layered-memory context u1 telegram:123 --max-tokens 2000
    """
    with _open(ctx) as mem:
        msgs = mem.get_context_for_user(user_id, session_id, query=query, include_vector=not no_vector, max_tokens=max_tokens)
    if as_json:
        click.echo(json.dumps([m.to_dict() | {"kind": m.kind} for m in msgs], ensure_ascii=False, indent=2))
    else:
        _print_context(msgs)


@main.command()
@click.pass_context
def optimize(ctx: click.Context) -> None:
    """Build the ANN index of the embedded vector collections (maintenance; blocks writes while it runs).

    Example: layered-memory optimize
    """
    with _open(ctx) as mem:
        done = mem.optimize()
    for name, seconds in done.items():
        click.echo(f"optimized {name} in {seconds:.1f} s")
    if not done:
        click.echo("nothing to optimize (a Qdrant server optimizes by itself)")


@main.command()
@click.option("--recreate", is_flag=True, help="Drop the vector collections first and re-index every tenant (to switch embedders).")
@click.pass_context
def reindex(ctx: click.Context, recreate: bool) -> None:
    """Rebuild the vector index of the tenant from the record store.

    Example: layered-memory --embedder e5 reindex --recreate
    """
    if recreate:
        with _open(ctx, recreate_index=True):
            click.echo("recreated the vector collections and re-indexed every tenant")
        return
    with _open(ctx) as mem:
        n = mem.reindex()
    click.echo(f"reindexed {n} records")


@main.command()
@click.option("--repair", is_flag=True, help="Repair what differs (idempotent), then check again.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Compare the tenant's record store with its vector index and topic tier: pending, missing and
    orphan points per kind, unthreaded messages, wrong counters, interrupted deletes. Exit code 0 when
    all is in line (after --repair), 1 when drift remains, 2 on bad input.

    Example: layered-memory doctor --repair
    """
    with _open(ctx, repair_index=False) as mem:
        report = mem.doctor(repair=repair)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        click.echo(f"tenant {report['tenant']}: interrupted deletes {report['outbox']}")
        for kind in ("messages", "topic_summaries", "items", "agents", "topics"):
            click.echo(f"  {kind}: " + ", ".join(f"{k} {v}" for k, v in report[kind].items()))
        state = "in line" if report["ok"] else "DRIFT (run: layered-memory doctor --repair)"
        click.echo(("repaired; now " if report.get("repaired") else "") + state)
    if not report["ok"]:
        ctx.exit(1)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """The tenant's indexing: pending records per kind, index lag, failures and the last error, and the
    HNSW state per vector collection. Opening the store checks it without indexing anything, so the
    lag and errors are this process's; pending counts come from the record store (every process).

    Example: layered-memory status
    """
    with _open(ctx, repair_index=False) as mem:
        report = mem.status()
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2, default=str))
        return
    click.echo(f"mode {report['mode']}; pending " + ", ".join(f"{k} {v}" for k, v in report["pending"].items()))
    if "lag_seconds" in report:
        click.echo(f"index lag {report['lag_seconds']} s (recent P50 {report['lag_p50_seconds']} s, P95 {report['lag_p95_seconds']} s); "
                   f"failing {report['failing']}; last error {report['last_error'] or '-'}")
    for name, h in report["hnsw"].items():
        click.echo(f"  {name}: " + ", ".join(f"{k} {v}" for k, v in h.items() if v is not None))


from .agents.cli import agent_group  # noqa: E402  (the agent group opens the engine via ctx.obj["open_memory"])

main.add_command(agent_group)

from .topics.cli import topics_group  # noqa: E402

main.add_command(topics_group)

if __name__ == "__main__":  # pragma: no cover
    main()
