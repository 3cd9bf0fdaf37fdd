"""``layered-memory docs ...`` and ``layered-memory repo ...``: indexed documents and repositories.

    layered-memory docs index runbook.md handbook/ --collection ops --meta team=ops
    layered-memory docs search "how do I roll back" -k 5
    layered-memory repo index ~/src/app --include '*.py' --exclude 'tests/*'
    layered-memory repo search "load user by id" --language python

Progress bars (files, chunks, embeddings; ``--quiet``: none) go to stderr. ``--user`` writes / searches that user's private space.
Registered on the main group by ``register`` (``cli.py`` calls it), so this module never imports ``cli``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..documents.parse import SUFFIXES
from ..errors import InvalidInputError
from ..models import SearchResult
from .maintenance import progress_bars


def _expand(paths: tuple[str, ...]) -> list[str]:
    """Files as given; directories as their supported documents (recursively, sorted, hidden ones skipped)."""
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(str(f) for f in Path(p).rglob("*") if f.is_file() and f.suffix.lower() in SUFFIXES
                           and not any(part.startswith(".") for part in f.relative_to(p).parts))
            if not found:
                raise InvalidInputError("path", p, f"holds no supported documents ({', '.join(sorted(SUFFIXES))})", "pass files or another directory")
            out.extend(found)
        else:
            out.append(p)
    return out


def _meta(pairs: tuple[str, ...]) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r}: use KEY=VALUE", param_hint="--meta")
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out or None


def _print_hits(result: SearchResult, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        return
    if not result.hits:
        click.echo("no results")
    for i, h in enumerate(result.hits, start=1):
        extra = f"  [{h.meta['symbol']}]" if h.meta.get("symbol") else ""
        click.echo(f"{i:>2}. {h.score:.3f}  {h.meta.get('citation', '')}{extra}")
        click.echo("    " + " ".join(h.snippet.split()))
    click.echo(f"route: {result.route_used}" + (f" ({result.fallback_reason})" if result.fallback_reason else ""), err=True)


def register(main: click.Group, open_memory: Callable[..., Any]) -> None:
    """Add the ``docs`` and ``repo`` command groups to ``main``; ``open_memory(ctx)`` opens the engine."""

    def handle(ctx: click.Context, user: str | None) -> Any:
        mem = ctx.obj["_docs_mem"]
        return mem.for_user(user) if user else mem

    @main.group()
    @click.pass_context
    def docs(ctx: click.Context) -> None:
        """Indexed documents (Markdown, text, HTML, PDF): index, search, list, delete."""

    @docs.command("index")
    @click.argument("paths", nargs=-1, required=True)
    @click.option("--collection", default="docs", show_default=True, help="Collection to put the documents in.")
    @click.option("--meta", "meta", multiple=True, metavar="KEY=VALUE", help="Metadata kept on every chunk (repeatable).")
    @click.option("--format", "fmt", default=None, type=click.Choice(["markdown", "text", "html", "pdf"]), help="Force the format.")
    @click.option("--encoding", default=None, metavar="CODEC", help="Text encoding of the files (default UTF-8), e.g. latin-1 or cp1252.")
    @click.option("--user", default=None, help="Index as this user's private upload.")
    @click.option("--quiet", is_flag=True, help="No progress bars.")
    @click.pass_context
    def docs_index(ctx: click.Context, paths: tuple[str, ...], collection: str, meta: tuple[str, ...], fmt: str | None,
                   encoding: str | None, user: str | None, quiet: bool) -> None:
        """Index documents (files, or directories of them); unchanged ones are skipped. Progress bars
        (files, chunks, embeddings) go to stderr."""
        files = _expand(paths)
        metadata = _meta(meta)
        with open_memory(ctx, create=True) as mem, progress_bars(not quiet):
            ctx.obj["_docs_mem"] = mem
            done = handle(ctx, user).documents.index_documents(files, metadata=metadata, collection=collection, format=fmt,
                                                               encoding=encoding)
        counts = {s: sum(1 for d in done if d.status == s) for s in ("indexed", "replaced", "unchanged")}
        for d in done:
            if d.status != "unchanged":
                click.echo(f"{d.status:>9}  {d.chunks:>4} chunks  {d.source}")
        click.echo(f"{counts['indexed']} indexed, {counts['replaced']} replaced, {counts['unchanged']} unchanged; "
                   f"{sum(d.chunks for d in done if d.status != 'unchanged')} chunks written")

    @docs.command("search")
    @click.argument("query")
    @click.option("-k", "k", default=5, show_default=True, type=int)
    @click.option("--collection", default=None, help="Only this collection.")
    @click.option("--user", default=None, help="Search as this user (the tenant's documents plus the user's uploads).")
    @click.option("--json", "as_json", is_flag=True)
    @click.pass_context
    def docs_search(ctx: click.Context, query: str, k: int, collection: str | None, user: str | None, as_json: bool) -> None:
        """Hybrid search over the indexed documents; prints citations and snippets."""
        with open_memory(ctx) as mem:
            ctx.obj["_docs_mem"] = mem
            res = handle(ctx, user).documents.vector_rag(query, k=k, filters={"collection": collection} if collection else None)
        _print_hits(res, as_json)

    @docs.command("list")
    @click.option("--user", default=None)
    @click.pass_context
    def docs_list(ctx: click.Context, user: str | None) -> None:
        """The indexed documents."""
        with open_memory(ctx) as mem:
            ctx.obj["_docs_mem"] = mem
            for d in handle(ctx, user).documents.list_documents():
                click.echo(f"{d['collection']}\t{d['chunks']}\t{d['title']}\t{d['source']}")

    @docs.command("delete")
    @click.argument("source")
    @click.option("--collection", default="docs", show_default=True)
    @click.option("--user", default=None)
    @click.pass_context
    def docs_delete(ctx: click.Context, source: str, collection: str, user: str | None) -> None:
        """Delete a document (its path, or the source name it was indexed under)."""
        with open_memory(ctx) as mem:
            ctx.obj["_docs_mem"] = mem
            found = handle(ctx, user).documents.delete_document(source, collection=collection)
        click.echo("deleted" if found else "not indexed")

    @main.group()
    def repo() -> None:
        """Indexed git repositories: index (incremental), search."""

    @repo.command("index")
    @click.argument("path")
    @click.option("--include", multiple=True, metavar="GLOB", help="Only files matching (repeatable), e.g. '*.py'.")
    @click.option("--exclude", multiple=True, metavar="GLOB", help="Skip files matching (repeatable), e.g. 'tests/*'.")
    @click.option("--name", default=None, help="Repository name (default: the directory's name).")
    @click.option("--user", default=None)
    @click.option("--quiet", is_flag=True, help="No progress bars.")
    @click.pass_context
    def repo_index(ctx: click.Context, path: str, include: tuple[str, ...], exclude: tuple[str, ...], name: str | None, user: str | None,
                   quiet: bool) -> None:
        """Index the tracked files of a git working tree; only changed files are re-embedded. Progress
        bars (files, chunks, embeddings) go to stderr."""
        with open_memory(ctx, create=True) as mem, progress_bars(not quiet):
            ctx.obj["_docs_mem"] = mem
            r = handle(ctx, user).documents.index_repo(path, include=list(include) or None, exclude=list(exclude) or None, name=name)
        s = r.skipped
        click.echo(f"{r.repo} ({r.root}): {r.files} files, {r.indexed} indexed, {r.unchanged} unchanged, {r.removed} removed, "
                   f"{r.chunks} chunks in {r.seconds:.1f}s; skipped {s['binary']} binary, {s['too_large']} too large, "
                   f"{s['unreadable'] + s['empty']} other")

    @repo.command("search")
    @click.argument("query")
    @click.option("-k", "k", default=10, show_default=True, type=int)
    @click.option("--repo", "repo_name", default=None)
    @click.option("--path", "path_prefix", default=None, help="A file or directory inside the repository.")
    @click.option("--language", default=None)
    @click.option("--user", default=None)
    @click.option("--json", "as_json", is_flag=True)
    @click.pass_context
    def repo_search(ctx: click.Context, query: str, k: int, repo_name: str | None, path_prefix: str | None, language: str | None,
                    user: str | None, as_json: bool) -> None:
        """Hybrid search over indexed repositories; prints path:start-end and the symbol."""
        with open_memory(ctx) as mem:
            ctx.obj["_docs_mem"] = mem
            res = handle(ctx, user).documents.search_repos(query, repo=repo_name, path=path_prefix, language=language, k=k)
        _print_hits(res, as_json)


__all__ = ["register"]
