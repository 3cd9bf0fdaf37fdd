"""``demo``, ``ingest``, ``search``, ``context``: reading and writing messages from the shell."""

from __future__ import annotations

import importlib.resources
import json
import sys
import tempfile
from typing import Any

import click

from ..config import LayeredMemorySettings
from ..engine import LayeredMemory
from ..errors import LayeredMemoryError
from ._base import open_memory, print_context, print_search


@click.command()
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
            print_context(mem.get_context_for_user("u-anna", "telegram:1001", max_tokens=1200))
            for q in ("why did the payments pod crash?", "高铁票", "вегетарианские рестораны"):
                click.echo(click.style(f"\n== search({q!r}, k=3) ==", fg="cyan"))
                print_search(mem.search(q, k=3))


@click.command()
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
    with open_memory(ctx, create=True) as mem, tqdm(total=len(lines), unit="msg", file=sys.stderr, disable=len(lines) < 500) as bar:
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
    click.echo(f"ingested {len(lines)} messages")


@click.command()
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
    with open_memory(ctx) as mem:
        result = mem.search(list(queries), filters=flt or None, k=k, route=route)
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
    else:
        print_search(result)


@click.command()
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
    with open_memory(ctx) as mem:
        msgs = mem.get_context_for_user(user_id, session_id, query=query, include_vector=not no_vector, max_tokens=max_tokens)
    if as_json:
        click.echo(json.dumps([m.to_dict() | {"kind": m.kind} for m in msgs], ensure_ascii=False, indent=2))
    else:
        print_context(msgs)
