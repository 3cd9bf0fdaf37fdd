"""Agent tools over indexed documents and repositories (seed 002's skills): ``vector_rag``,
``search_repos``, ``index_document``, ``index_repo``.

    tools = create_document_tools(mem, user_id="u1", roots=["/srv/docs"])   # bound: u1's uploads + the tenant's
    agent = create_agent(model, tools=tools + create_memory_tools(mem, user_id="u1"))

A thin layer over ``layered_memory.documents.tools``: the names, descriptions, argument schemas, texts
and error strings are the shared ones (the LlamaIndex adapter shows the same). The schemas accept any
value and the shared functions answer a bad one with an error text: nothing raises into the agent
loop. ``index_document`` reads files and ``index_repo`` git trees only under ``roots`` (none by
default: the agent can then index text it passes, not the server's files).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict

from layered_memory import LayeredMemory
from layered_memory import tools as shared
from layered_memory.documents import tools as doc_tools


class DocumentTool(BaseTool):
    """One of the document tools (``name`` picks it); holds the bound handle and the readable roots."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    memory: LayeredMemory | None = None
    roots: list[str] | None = None

    def _extra(self) -> dict[str, Any]:
        return {"roots": self.roots} if doc_tools.TOOLS[self.name][4] else {}

    def _run(self, run_manager: Any = None, **kwargs: Any) -> str:
        return doc_tools.TOOLS[self.name][2](self.memory, **kwargs, **self._extra())

    async def _arun(self, run_manager: Any = None, **kwargs: Any) -> str:
        return await doc_tools.TOOLS[self.name][3](self.memory, **kwargs, **self._extra())


def document_tool(name: str, memory: LayeredMemory | None, roots: Sequence[str | os.PathLike[str]] | None = None) -> DocumentTool:
    if name not in doc_tools.TOOLS:
        raise ValueError(f"{name!r} is not a document tool; use one of {', '.join(doc_tools.DOCUMENT_TOOL_NAMES)}")
    description, schema = doc_tools.TOOLS[name][:2]
    args_schema: type[BaseModel] = schema
    return DocumentTool(name=name, description=description, args_schema=args_schema, memory=memory,
                        roots=[os.fspath(r) for r in roots] if roots else None)


def create_document_tools(
    memory: LayeredMemory | None, *, user_id: str | None = None, tenant: str | None = None,
    roots: Sequence[str | os.PathLike[str]] | None = None, include: Mapping[str, bool] | None = None,
) -> list[BaseTool]:
    """The document tools for an agent, bound to a tenant and optionally one user.

    Args:
        memory: the engine (or a tenant handle); None: every tool answers "not configured".
        user_id: bind to this user: searches see the tenant's documents and this user's uploads,
            ``index_document`` / ``index_repo`` write the user's private space.
        tenant: bind to this tenant; default: ``memory``'s.
        roots: directories ``index_document`` / ``index_repo`` may read (default: none).
        include: switch tools off by name, e.g. ``{"index_repo": False}``.

    Returns:
        ``[vector_rag, search_repos, index_document, index_repo]`` (as configured).
    """
    mem = shared.bind(memory, user_id, tenant)
    wanted = dict.fromkeys(doc_tools.DOCUMENT_TOOL_NAMES, True)
    for name, on in (include or {}).items():
        if name not in wanted:
            raise ValueError(f"include[{name!r}]: not a document tool; use one of {', '.join(wanted)}")
        wanted[name] = bool(on)
    return [document_tool(name, mem, roots) for name, on in wanted.items() if on]


__all__ = ["DocumentTool", "create_document_tools", "document_tool"]
