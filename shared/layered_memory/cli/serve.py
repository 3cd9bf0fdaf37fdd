"""``layered-memory mcp``, ``layered-memory serve`` and ``layered-memory keys``: the memory as a service
(the ``serve`` extra). Options fall back to ``LAYERED_MEMORY_SERVE__*`` (``ServeSettings``)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ..config import LayeredMemorySettings
from ..errors import install_hint
from ._base import check_env, open_memory, record_file, settings_of

EXTRA_HINT = f"this command needs the serve extra: {install_hint('serve')}"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _settings(ctx: click.Context) -> LayeredMemorySettings:
    o = ctx.obj
    check_env(os.environ)
    return settings_of(o["path"], o["tenant"], o["redis_url"], o["qdrant_url"], o.get("postgres_url"))


def _need_extra() -> None:
    try:
        import mcp  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise click.ClickException(f"{EXTRA_HINT} ({exc.name} is missing)") from None


def _keys(path: str | None, tenant: str) -> Any:
    from ..serve.keys import KeyRing

    return KeyRing.load(path, default_tenant=tenant) if path else None


@click.command("mcp")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True,
              help="stdio: one client that started this command (a desktop agent); http: streamable HTTP with bearer keys.")
@click.option("--user", default=None, help="stdio: bind the server to this user (default LAYERED_MEMORY_SERVE__USER; none: the whole tenant).")
@click.option("--documents/--no-documents", default=None, help="Offer vector_rag and search_repos (default LAYERED_MEMORY_SERVE__DOCUMENTS).")
@click.option("--host", default=None, help="http: the address to bind (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="http: the port (default 8765).")
@click.option("--keys", "keys_file", default=None, help="http: the keys file (bearer key -> tenant and user; see docs/serve.md).")
@click.pass_context
def mcp_command(ctx: click.Context, transport: str, user: str | None, documents: bool | None, host: str | None,
                port: int | None, keys_file: str | None) -> None:
    """Serve the memory as an MCP server: the memory tools (qdrant_search_memory, search, quick_search,
    topic_search, get_context, add_message, the task tools) on one tenant, optionally one user.

    Example: layered-memory --path ./memory --tenant acme mcp --user anna
    """
    _need_extra()
    s = _settings(ctx).serve
    docs = s.documents if documents is None else documents
    if transport == "stdio":
        import anyio

        from ..serve.mcp_server import build_server, fixed_binding, run_stdio

        with open_memory(ctx, create=True) as mem:  # a desktop agent's first start creates its store
            bound = user if user is not None else s.user
            handle = mem.for_user(bound) if bound else mem
            anyio.run(run_stdio, build_server(fixed_binding(handle), documents=docs))
        return
    import uvicorn

    from ..serve.mcp_server import http_app

    keys_file = keys_file or s.keys_file
    if not keys_file:
        raise click.ClickException("--transport http needs --keys FILE (or LAYERED_MEMORY_SERVE__KEYS_FILE): "
                                   "create one with: layered-memory keys add FILE --tenant NAME")
    host, port = host or s.host, port if port is not None else s.port
    with open_memory(ctx, root=True, create=True) as mem:
        app = http_app(mem, _keys(keys_file, mem.tenant_id), documents=docs, host=host)
        click.echo(f"MCP over streamable HTTP at http://{host}:{port}/mcp", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")


@click.command("serve")
@click.option("--host", default=None, help="The address to bind (default 127.0.0.1: this machine only).")
@click.option("--port", type=int, default=None, help="The port (default 8765; 0: any free port).")
@click.option("--keys", "keys_file", default=None, help="The keys file (default LAYERED_MEMORY_SERVE__KEYS_FILE; none: one key for this run, printed).")
@click.option("--workers", type=int, default=1, show_default=True, help="Worker processes (server backends only: the embedded store is one process).")
@click.option("--mcp/--no-mcp", "with_mcp", default=True, show_default=True, help="Also serve MCP at /mcp.")
@click.option("--documents/--no-documents", default=None, help="MCP: offer vector_rag and search_repos.")
@click.option("--monitor/--no-monitor", default=True, show_default=True, help="Run the 24 h agent size check in this process.")
@click.option("--max-body-bytes", type=int, default=None, help="Larger request bodies get 413 (default 1 MiB).")
@click.pass_context
def serve_command(ctx: click.Context, host: str | None, port: int | None, keys_file: str | None, workers: int, with_mcp: bool,
                  documents: bool | None, monitor: bool, max_body_bytes: int | None) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json), the memory viewer (/) and MCP (/mcp).

    Example: layered-memory --path ./memory serve --keys keys.json
    """
    _need_extra()
    import uvicorn

    settings = _settings(ctx)
    s = settings.serve
    host, port = host or s.host, port if port is not None else s.port
    keys_file = keys_file or s.keys_file
    options = {"documents": s.documents if documents is None else documents, "mcp": with_mcp, "run_monitor": monitor,
               "max_body_bytes": max_body_bytes or s.max_body_bytes, "host": host}
    if host not in LOOPBACK:
        click.echo(f"warning: binding {host}: reachable from other machines; use TLS in front (docs/serve.md)", err=True)
    if workers > 1:
        if record_file(settings) is not None:
            raise click.ClickException("--workers > 1 needs the server backends (--postgres-url or --redis-url, and --qdrant-url): "
                                       "the embedded store is opened by one process at a time")
        if not keys_file:
            raise click.ClickException("--workers > 1 needs --keys FILE (every worker reads the same keys)")
        _keys(keys_file, settings.tenant)  # refuse a broken file before starting the workers
        os.environ.update(_worker_env(ctx, keys_file, options))
        click.echo(f"serving on http://{host}:{port}/ with {workers} workers", err=True)
        uvicorn.run("layered_memory.cli.serve:worker_app", factory=True, host=host, port=port, workers=workers, log_level="warning")
        return
    from ..serve.api import create_app
    from ..serve.keys import KeyRing, new_token

    with open_memory(ctx, root=True, create=True) as mem:
        keys = _keys(keys_file, mem.tenant_id)
        url = f"http://{host}:{port}/"
        if keys is None:
            token = new_token()
            keys = KeyRing.single(token, mem.tenant_id, name="this run")
            click.echo(f"no --keys: a key for this run reaches tenant {mem.tenant_id!r}: open {url}#key={token}", err=True)
        else:
            click.echo(f"serving on {url} ({len(keys)} keys)", err=True)
        uvicorn.run(create_app(mem, keys, **options), host=host, port=port, log_level="warning")


def _worker_env(ctx: click.Context, keys_file: str, options: dict[str, Any]) -> dict[str, str]:
    o = ctx.obj
    env = {"LAYERED_MEMORY_SERVE__KEYS_FILE": os.path.abspath(keys_file), "LM_SERVE_WORKER_OPTIONS": json.dumps(options)}
    for var, value in (("LAYERED_MEMORY_TENANT", o["tenant"]), ("LAYERED_MEMORY_EMBEDDER", o["embedder"]),
                       ("LAYERED_MEMORY_REDIS__URL", o["redis_url"]), ("LAYERED_MEMORY_POSTGRES__URL", o.get("postgres_url")),
                       ("LAYERED_MEMORY_QDRANT__URL", o["qdrant_url"])):
        if value:
            env[var] = value
    return env


def worker_app() -> Any:
    """The app of one ``serve --workers N`` worker (uvicorn's factory): settings from the environment."""
    from ..engine import LayeredMemory
    from ..serve.api import create_app
    from ..serve.keys import KeyRing

    options = json.loads(os.environ.pop("LM_SERVE_WORKER_OPTIONS", "{}"))
    settings = LayeredMemorySettings()
    mem = LayeredMemory.from_settings(settings)
    keys = KeyRing.load(settings.serve.keys_file, default_tenant=settings.tenant)  # type: ignore[arg-type]
    return create_app(mem, keys, close_engine=True, **options)


@click.group("keys")
def keys_group() -> None:
    """Bearer keys of serve and mcp --transport http (a JSON file; only the keys' SHA-256 are stored)."""


@keys_group.command("add")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--tenant", required=True, help="The tenant the key reaches.")
@click.option("--user", default=None, help="Bind the key to this user (default: the whole tenant).")
@click.option("--name", default=None, help="A label for the key (shown in /v1/me and logs).")
def keys_add(file: str, tenant: str, user: str | None, name: str | None) -> None:
    """Create a key, store its SHA-256 in FILE and print the key (shown once).

    Example: layered-memory keys add keys.json --tenant acme --user anna
    """
    from ..serve.keys import add_key

    click.echo(add_key(file, tenant=tenant, user=user, name=name))


@keys_group.command("list")
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
def keys_list(file: str) -> None:
    """The keys in FILE: name, tenant and user (never the keys).

    Example: layered-memory keys list keys.json
    """
    with open(file, encoding="utf-8") as f:
        data = json.load(f)
    from ..serve.keys import KeyRing

    KeyRing.parse(data, source=f"keys file {file!r}")
    for e in data["keys"]:
        click.echo(f"{e.get('name', '-')}\ttenant={e.get('tenant', '(server default)')}\tuser={e.get('user') or '*'}", file=sys.stdout)


__all__ = ["keys_group", "mcp_command", "serve_command", "worker_app"]
