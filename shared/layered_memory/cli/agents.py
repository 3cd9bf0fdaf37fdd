"""``layered-memory agent ...``: the agent context store from the shell. Maps 1:1 onto ``mem.agents`` and
``Agent`` and only adapts (library errors become one line on stderr and exit code 2, via the main group).

    layered-memory agent create 123 coder --max-vectors 100000
    layered-memory agent stats 123 coder --period-days 14 --granularity day
    layered-memory agent export 123 coder -o coder.json --since 2024-06-01T00:00:00Z --type tool_call
    layered-memory agent import coder.json
    layered-memory agent prune 123 coder --days 30
    layered-memory agent prune 123 coder --filter success=false
    layered-memory agent clear 123 coder --yes
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click


def _open(ctx: click.Context, *, create: bool = False) -> Any:
    """The engine of the root command's options: the root (``layered_memory.cli.main.main``) puts its opener in
    ``ctx.obj["open_memory"]``, so this group never imports the module that imports it. Only ``create`` and
    ``import`` may create a store; the other commands refuse a path that holds none."""
    root = ctx.find_root()
    return root.obj["open_memory"](root, create=create)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def _filters(items: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--filter")
        out[name] = value.split(",") if name == "interaction_type" and "," in value else value
    return out


@click.group("agent")
def agent_group() -> None:
    """Agent context stores: one memory per (user, agent) of an agent's actions, tool calls and results.

    Example: layered-memory agent create 123 coder
    """


@agent_group.command("create")
@click.argument("user_id")
@click.argument("agent_name")
@click.option("--max-vectors", type=int, default=None, help="Size limit (default 1,000,000).")
@click.option("--mode", "collection_mode", type=click.Choice(["per_agent", "shared"]), default=None,
              help="A collection per agent (default) or one shared collection.")
@click.pass_context
def create(ctx: click.Context, user_id: str, agent_name: str, max_vectors: int | None, collection_mode: str | None) -> None:
    """Create an agent and its collection (idempotent).

    Example: layered-memory agent create 123 coder --max-vectors 100000
    """
    with _open(ctx, create=True) as mem:
        agent = mem.agents.create(user_id, agent_name, max_vectors=max_vectors, collection_mode=collection_mode)
        _echo_json(agent.info.to_doc())


@agent_group.command("list")
@click.option("--user-id", default=None)
@click.pass_context
def list_(ctx: click.Context, user_id: str | None) -> None:
    """List agents (of one user).

    Example: layered-memory agent list --user-id 123
    """
    with _open(ctx) as mem:
        _echo_json([i.to_doc() for i in mem.agents.list(user_id)])


@agent_group.command("stats")
@click.argument("user_id")
@click.argument("agent_name")
@click.option("--period-days", type=int, default=None, help="Add a timeline over the last N days.")
@click.option("--granularity", type=click.Choice(["day", "week"]), default="day", show_default=True)
@click.pass_context
def stats(ctx: click.Context, user_id: str, agent_name: str, period_days: int | None, granularity: str) -> None:
    """Print an agent's statistics as JSON.

    Example: layered-memory agent stats 123 coder --period-days 28 --granularity week
    """
    with _open(ctx) as mem:
        _echo_json(mem.agents.get(user_id, agent_name).stats(period_days=period_days, granularity=granularity))


@agent_group.command("search")
@click.argument("user_id")
@click.argument("agent_name")
@click.argument("query")
@click.option("--k", default=10, show_default=True)
@click.option("--filter", "filters", multiple=True, metavar="NAME=VALUE", help="e.g. --filter success=false")
@click.pass_context
def search(ctx: click.Context, user_id: str, agent_name: str, query: str, k: int, filters: tuple[str, ...]) -> None:
    """Hybrid search in one agent's context.

    Example: layered-memory agent search 123 coder "failing tests" --filter success=false
    """
    with _open(ctx) as mem:
        result = mem.agents.get(user_id, agent_name).search(query, k=k, filters=_filters(filters) or None)
    _echo_json(result.to_dict() | {"timings": result.timings})


@agent_group.command("export")
@click.argument("user_id")
@click.argument("agent_name")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="File to write (default stdout).")
@click.option("--include-embeddings", is_flag=True)
@click.option("--since", default=None, help="ISO timestamp, e.g. 2024-06-01T00:00:00Z")
@click.option("--until", default=None)
@click.option("--type", "types", multiple=True, type=click.Choice(["task_execution", "tool_call", "user_message", "agent_response"]))
@click.pass_context
def export(ctx: click.Context, user_id: str, agent_name: str, output: str | None, include_embeddings: bool,
           since: str | None, until: str | None, types: tuple[str, ...]) -> None:
    """Export an agent's interactions to JSON (streamed).

    Example: layered-memory agent export 123 coder -o coder.json --type tool_call
    """
    with _open(ctx) as mem:
        agent = mem.agents.get(user_id, agent_name)
        n = agent.export_to(output or sys.stdout, include_embeddings=include_embeddings, since=since, until=until,
                            interaction_type=list(types) or None)
    if output:
        click.echo(f"exported {n} interactions of {agent.agent_id} to {output}")


@agent_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--user-id", default=None, help="Restore under another user.")
@click.option("--agent-name", default=None, help="Restore under another agent name.")
@click.pass_context
def import_(ctx: click.Context, file: str, user_id: str | None, agent_name: str | None) -> None:
    """Restore an agent from an export file.

    Example: layered-memory agent import coder.json
    """
    with _open(ctx, create=True) as mem:
        agent = mem.agents.import_from(file, user_id=user_id, agent_name=agent_name)
        click.echo(f"imported into {agent.agent_id}: {agent.count()} interactions")


@agent_group.command("prune")
@click.argument("user_id")
@click.argument("agent_name")
@click.option("--days", type=float, default=None, help="Delete interactions older than N days.")
@click.option("--filter", "filters", multiple=True, metavar="NAME=VALUE", help="e.g. --filter success=false")
@click.pass_context
def prune(ctx: click.Context, user_id: str, agent_name: str, days: float | None, filters: tuple[str, ...]) -> None:
    """Delete old and/or matching interactions (an empty filter is refused: use clear).

    Example: layered-memory agent prune 123 coder --days 30 --filter success=false
    """
    with _open(ctx) as mem:
        n = mem.agents.get(user_id, agent_name).prune(days, filter=_filters(filters) or None)
    click.echo(f"removed {n} interactions")


@agent_group.command("clear")
@click.argument("user_id")
@click.argument("agent_name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def clear(ctx: click.Context, user_id: str, agent_name: str, yes: bool) -> None:
    """Delete every interaction of an agent.

    Example: layered-memory agent clear 123 coder --yes
    """
    if not yes:
        click.confirm(f"Delete every interaction of agent {agent_name!r} of user {user_id!r}?", abort=True)
    with _open(ctx) as mem:
        n = mem.agents.get(user_id, agent_name).clear()
    click.echo(f"removed {n} interactions")
