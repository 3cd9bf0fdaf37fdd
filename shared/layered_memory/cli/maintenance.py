"""``optimize``, ``reindex``, ``doctor``: maintenance of a store from the shell."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..progress import progress_to
from ._base import open_memory


@contextmanager
def progress_bars(enabled: bool = True) -> Iterator[None]:
    """One tqdm bar per stage the work reports, on stderr when it is a terminal. A bar redraws itself with
    carriage returns and escape codes, noise in a log file or a pipe: there each stage gets one plain line
    at the end (``files: 2/2``). Off with --quiet."""
    from tqdm import tqdm

    bars: dict[str, Any] = {}
    if enabled and not sys.stderr.isatty():
        last: dict[str, tuple[int, int | None]] = {}
        try:
            with progress_to(lambda stage, done, total: last.__setitem__(stage, (done, total))):
                yield
        finally:
            for stage, (done, total) in last.items():
                click.echo(f"{stage}: {done}/{total}" if total is not None else f"{stage}: {done}", err=True)
        return

    def show(stage: str, done: int, total: int | None) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = tqdm(desc=stage, total=total, unit="", file=sys.stderr, disable=not enabled,
                                     dynamic_ncols=True, leave=True)
        if total is not None and bar.total != total:
            bar.total = total
        bar.update(done - bar.n)

    try:
        with progress_to(show):
            yield
    finally:
        for bar in bars.values():
            bar.close()


@click.command()
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.pass_context
def process(ctx: click.Context, quiet: bool) -> None:
    """Do the background work of the tenant now: index pending messages, thread messages into topics,
    write topic and session summaries, extract knowledge. Each step is idempotent (safe to re-run after a
    crash); progress bars go to stderr. Run it after a bulk `ingest`.

    Example: layered-memory ingest chat.jsonl && layered-memory process
    """
    with open_memory(ctx) as mem, progress_bars(not quiet):
        done = mem.process()
    click.echo(", ".join(f"{name} {n}" for name, n in done.items()))


@click.command()
@click.pass_context
def optimize(ctx: click.Context) -> None:
    """Build the ANN index of the embedded vector collections (maintenance; blocks writes while it runs).

    Example: layered-memory optimize
    """
    with open_memory(ctx) as mem:
        done = mem.optimize()
    for name, seconds in done.items():
        click.echo(f"optimized {name} in {seconds:.1f} s")
    if not done:
        click.echo("nothing to optimize (a Qdrant server optimizes by itself)")


@click.command()
@click.option("--recreate", is_flag=True, help="Drop the vector collections first and re-index every tenant (to switch embedders).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.pass_context
def reindex(ctx: click.Context, recreate: bool, quiet: bool) -> None:
    """Rebuild the vector index of the tenant from the record store.

    Example: layered-memory --embedder e5 reindex --recreate
    """
    if recreate:
        with progress_bars(not quiet), open_memory(ctx, recreate_index=True):
            click.echo("recreated the vector collections and re-indexed every tenant")
        return
    with open_memory(ctx) as mem, progress_bars(not quiet):
        n = mem.reindex()
    click.echo(f"reindexed {n} records")


@click.command()
@click.option("--repair", is_flag=True, help="Repair what differs (idempotent), then check again.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Compare the tenant's record store with its vector index and topic tier: pending (the index writer's
    lag, not drift), missing and orphan points per kind, unthreaded messages, wrong counters, interrupted deletes. Exit code 0 when
    all agrees (after --repair), 1 when drift remains, 2 on bad input.

    Example: layered-memory doctor --repair
    """
    with open_memory(ctx, repair_index=False) as mem:
        report = mem.doctor(repair=repair)
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        click.echo(f"tenant {report['tenant']}: interrupted deletes {report['outbox']}; "
                   f"pending for the index writer {report['pending']} (index lag, not drift)")
        for kind in ("messages", "topic_summaries", "items", "agents", "documents", "topics"):
            click.echo(f"  {kind}: " + ", ".join(f"{k} {v}" for k, v in report[kind].items()))
        if report.get("upgrade"):
            click.echo(f"upgrade: {report['upgrade']}")
        for name, change in report.get("bm25", {}).items():
            click.echo(f"bm25: collection {name}: {change} (run: layered-memory reindex)")
        state = ("ok: the vector index and the topic tier agree with the record store" if report["ok"]
                 else "DRIFT: the vector index or the topic tier differs from the record store (run: layered-memory doctor --repair)")
        click.echo(("repaired; " if report.get("repaired") else "") + state)
    if not report["ok"]:
        ctx.exit(1)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """The tenant's indexing: pending records per kind, index lag, failures and the last error, and the
    HNSW state per vector collection. Opening the store checks it without indexing anything, so the
    lag and errors are this process's; pending counts come from the record store (every process).

    Example: layered-memory status
    """
    with open_memory(ctx, repair_index=False) as mem:
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
