"""The ``layered-memory`` command. Maps 1:1 onto the engine's API and only adapts.

Errors (``LayeredMemoryError``, bad files) are one line on stderr and exit code 2.
"""

from __future__ import annotations

import click

from ._base import Group, open_memory
from .agents import agent_group
from .commands import context, demo, ingest, search
from .documents import register as register_documents
from .maintenance import doctor, optimize, process, reindex, status
from .serve import keys_group, mcp_command, serve_command
from .topics import topics_group


@click.group(cls=Group)
@click.option("--path", envvar="LAYERED_MEMORY_DATA_DIR", help="Data directory of the embedded store (default .layered_memory).")
@click.option("--tenant", envvar="LAYERED_MEMORY_TENANT", help="Tenant to read and write (default 'default').")
@click.option("--embedder", default=None, metavar="NAME", envvar="LAYERED_MEMORY_EMBEDDER",
              help="default | none (BM25 only) | e5 | use | openai:<model>@<base_url>.")
@click.option("--redis-url", envvar="LAYERED_MEMORY_REDIS__URL",
              help="Use Redis as the record store (redis+cluster:// for a cluster); with --postgres-url, the shared recent cache.")
@click.option("--postgres-url", envvar="LAYERED_MEMORY_POSTGRES__URL", help="Use PostgreSQL as the record store (postgresql://user:pw@host/db).")
@click.option("--qdrant-url", envvar="LAYERED_MEMORY_QDRANT__URL", help="Use a Qdrant server as the vector index.")
@click.pass_context
def main(ctx: click.Context, path: str | None, tenant: str | None, embedder: str | None, redis_url: str | None,
         postgres_url: str | None, qdrant_url: str | None) -> None:
    """Layered memory for LLM chat bots and agents.

    Example: layered-memory demo
    """
    ctx.obj = {"path": path, "tenant": tenant, "embedder": embedder, "redis_url": redis_url, "postgres_url": postgres_url, "qdrant_url": qdrant_url,
               "open_memory": open_memory}  # sub-command groups (agents/cli.py) open the engine through it


for command in (demo, ingest, search, context, process, optimize, reindex, doctor, status, agent_group, topics_group,
                mcp_command, serve_command, keys_group):
    main.add_command(command)

register_documents(main, open_memory)  # the docs / repo command groups

if __name__ == "__main__":  # pragma: no cover
    main()
