"""The document tools (seed 002's skills) as LlamaIndex ``FunctionTool``s: ``vector_rag``,
``search_repos``, ``index_document``, ``index_repo``.

    tools = layered_document_tools(mem, user_id="u1", roots=["/srv/docs"])
    agent = FunctionAgent(tools=tools + LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list(), llm=llm)

Same names, descriptions, argument schemas, texts and error strings as the LangChain adapter (both
wrap ``layered_memory.documents.tools``). Files and git trees are read only under ``roots``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

from layered_memory import LayeredMemory
from layered_memory import tools as shared
from layered_memory.documents import tools as doc_tools
from llama_index.core.tools import FunctionTool, ToolMetadata


def layered_document_tools(
    mem: LayeredMemory | None, user_id: str | None = None, *, roots: Sequence[str | os.PathLike[str]] | None = None,
    names: Sequence[str] | None = None,
) -> list[FunctionTool]:
    """The document tools bound to ``mem`` (and, with ``user_id``, one user); ``names`` picks some."""
    if mem is not None and not isinstance(mem, LayeredMemory):
        raise TypeError(f"layered_document_tools needs a layered_memory.LayeredMemory as mem, got {type(mem).__name__}")
    bound = shared.bind(mem, user_id)
    allowed = [os.fspath(r) for r in roots] if roots else None
    out = []
    for name in names or doc_tools.DOCUMENT_TOOL_NAMES:
        if name not in doc_tools.TOOLS:
            raise ValueError(f"names: {name!r} is not a document tool (known: {', '.join(doc_tools.DOCUMENT_TOOL_NAMES)})")
        description, schema, fn, afn, takes_roots = doc_tools.TOOLS[name]
        extra: dict[str, Any] = {"roots": allowed} if takes_roots else {}
        out.append(FunctionTool.from_defaults(
            fn=functools.partial(fn, bound, **extra), async_fn=functools.partial(afn, bound, **extra),
            tool_metadata=ToolMetadata(name=name, description=description, fn_schema=schema),
        ))
    return out


__all__ = ["layered_document_tools"]
