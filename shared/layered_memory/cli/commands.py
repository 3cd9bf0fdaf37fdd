"""``demo``, ``ingest``, ``search``, ``context``: reading and writing messages from the shell."""

from __future__ import annotations

import importlib.resources
import json
import sys
import tempfile
import time
from typing import Any

import click

from ..config import LayeredMemorySettings
from ..engine import LayeredMemory
from ..errors import LayeredMemoryError
from ..models import Message
from ._base import open_memory, print_context, print_search, tenant_of


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


FORMAT_HELP = """One JSON object per line, e.g.

\b
{"message_id": "m1", "chat_id": "telegram:42", "user_id": "u1", "content": "hi", "create_time": "2024-05-02T09:05:00Z"}

Required: message_id, chat_id, user_id, content. Optional: role (user |
assistant | system | tool, default user), user_name, create_time (ISO 8601 with a time zone, or Unix
seconds), session_key (default chat_id), reply_message_id, root_message_id, metadata (an object).
Blank lines are skipped; a message already stored (same chat_id and message_id) is not added again."""


def _parse(no: int, line: str, tenant: str) -> dict[str, Any]:
    """One line as a message dict, checked as the engine checks it; an error names the line."""
    try:
        row = json.loads(line.strip())
    except json.JSONDecodeError as exc:
        shown = line.strip()
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise click.ClickException(
            f"line {no}: not JSON ({exc.msg} at column {exc.colno}): {shown!r}; fix the line or remove it"
        ) from None
    except RecursionError:
        raise click.ClickException(f"line {no}: JSON nested too deeply to parse; flatten the line or remove it") from None
    if not isinstance(row, dict):
        raise click.ClickException(f"line {no}: a {type(row).__name__}, not a message object; write one JSON object per line")
    try:
        Message.build({**row, "tenant": tenant})
    except LayeredMemoryError as exc:
        raise click.ClickException(f"line {no}: {exc}") from None
    return row


def _ref(row: dict[str, Any]) -> tuple[Any, Any]:
    return (row.get("chat_id"), row.get("message_id"))


def plural(n: int, noun: str) -> str:
    """``1 message``, ``2 messages``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@click.command(epilog=FORMAT_HELP)
@click.argument("file", type=click.File("r", encoding="utf-8-sig"))  # -sig: a byte-order mark (Windows editors) is skipped
@click.option("--batch", default=256, show_default=True, type=click.IntRange(min=1), help="Messages per batch.")
@click.pass_context
def ingest(ctx: click.Context, file: Any, batch: int) -> None:
    """Add messages from a JSON Lines file (one message object per line; the format is below).

    Every line is checked before anything is written (or created); an error names its line. Creates the store.

    Example: layered-memory ingest chat.jsonl
    """
    from tqdm import tqdm

    try:
        numbered = [(no, line) for no, line in enumerate(file, 1) if line.strip()]
    except UnicodeDecodeError as exc:
        raise click.ClickException(f"{file.name}: not UTF-8 text ({exc.reason} at byte {exc.start}); save the file as UTF-8") from None
    rows = [(no, _parse(no, line, tenant_of(ctx))) for no, line in numbered]  # a bad line: refused before the store exists
    with open_memory(ctx, create=True) as mem:
        seen: set[tuple[Any, Any]] = set()
        added = again = 0
        quiet = len(rows) < 500 or not sys.stderr.isatty()  # bars redraw with escape codes: a terminal only
        pending0 = mem.records.count_pending(mem.tenant_id)  # left by an earlier run: not this file's
        t0 = time.perf_counter()
        with tqdm(total=len(rows), unit="msg", desc="stored ", file=sys.stderr, disable=quiet) as bar, \
                tqdm(total=len(rows), unit="msg", desc="indexed", file=sys.stderr, disable=quiet, position=1) as indexed:
            for start in range(0, len(rows), batch):
                part = rows[start : start + batch]
                stored = {m.ref for m in mem.get_messages([_ref(r) for _, r in part]) if m is not None}
                for _, r in part:
                    ref = _ref(r)
                    if ref in stored or ref in seen:
                        again += 1
                    else:
                        added += 1
                    seen.add(ref)
                try:
                    mem.add_messages([r for _, r in part])
                except LayeredMemoryError as exc:
                    first, last = part[0][0], part[-1][0]
                    raise click.ClickException(
                        f"lines {first}-{last}: {exc} (the lines before {first} are stored; fix the line and run ingest "
                        "again: stored messages are skipped)"
                    ) from None
                bar.update(len(part))
                _progress(indexed, mem, start + len(part), pending0)
            stored_s = time.perf_counter() - t0
            while not mem.flush(timeout=0.5):  # the background writer embeds what is left
                _progress(indexed, mem, len(rows), pending0)
            _progress(indexed, mem, len(rows), pending0)
    total = time.perf_counter() - t0
    click.echo(f"ingested {plural(added, 'message')}" + (f" ({again} already stored, skipped)" if again else "")
               + f": stored in {stored_s:.1f} s, indexed in {total:.1f} s ({len(rows) / max(total, 1e-9):.1f} msg/s)")


def _progress(bar: Any, mem: Any, stored: int, pending0: int) -> None:
    """The indexed bar: what is stored minus what is still pending for the index."""
    bar.n = max(0, min(stored, stored - max(0, mem.records.count_pending(mem.tenant_id) - pending0)))
    bar.refresh()


@click.command()
@click.argument("queries", nargs=-1, required=True)
@click.option("--k", default=10, show_default=True)
@click.option("--route", type=click.Choice(["hybrid", "bm25", "dense"]), default="hybrid", show_default=True)
@click.option("--filter", "filters", multiple=True, metavar="NAME=VALUE", help="e.g. --filter role=user")
@click.option("--json", "as_json", is_flag=True, help=('Print the result as JSON: '
                                                                 '{"hits": [{"id", "score", "text", "snippet", "meta"}], "total_found", "route_used"}.'))
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
@click.option("--max-tokens", type=int, default=None,
              help="Token budget of the context, at least 1 (default: LAYERED_MEMORY_CONTEXT__MAX_TOKENS; unset: no limit).")
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
