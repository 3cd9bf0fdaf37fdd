"""The four memory tools as LlamaIndex ``FunctionTool``s and a ``BaseToolSpec``.

    tools = LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list()
    agent = FunctionAgent(tools=tools, llm=llm)

Same names, descriptions, argument schemas and outputs as the LangChain adapter (both wrap
``layered_memory.tools``): ``qdrant_search_memory`` (seed 000 text), ``search`` (seed 003 dict,
JSON for the model), ``topic_search`` and ``list_tasks``. The tools are bound to a tenant and,
with ``user_id``, to one user: the model cannot name another user. They return errors as text.
"""

from __future__ import annotations

from typing import Any

from layered_memory import LayeredMemory
from layered_memory import tools as shared
from llama_index.core.tools import FunctionTool, ToolMetadata
from llama_index.core.tools.tool_spec.base import SPEC_FUNCTION_TYPE, BaseToolSpec


def _json(output: Any) -> str | None:
    return shared.search_json(output) if isinstance(output, dict) else None


async def _ajson(output: Any) -> str | None:
    return _json(output)


TOOL_METADATA = {
    "qdrant_search_memory": (shared.QDRANT_SEARCH_MEMORY_DESCRIPTION, shared.QdrantSearchMemoryArgs),
    "search": (shared.SEARCH_DESCRIPTION, shared.SearchArgs),
    "topic_search": (shared.TOPIC_SEARCH_DESCRIPTION, shared.TopicSearchArgs),
    "list_tasks": (shared.LIST_TASKS_DESCRIPTION, shared.ListTasksArgs),
}


class LayeredMemoryToolSpec(BaseToolSpec):
    """The memory tools bound to ``mem`` (a tenant handle) and, with ``user_id``, to one user.

    Without a bound user ``qdrant_search_memory``, ``search`` and ``topic_search`` see the whole
    tenant and ``list_tasks`` answers with an error text. ``mem=None`` (memory not configured):
    every tool answers seed 000's "not configured" text.

    ``session_id`` (the conversation the agent answers in, as given to ``LayeredChatMemory``): the
    message searches leave out its short-term window, the question being answered among it, which
    the memory already shows; ``exclude_window=False`` keeps them.
    """

    spec_functions: list[SPEC_FUNCTION_TYPE] = [
        ("qdrant_search_memory", "aqdrant_search_memory"),
        ("search", "asearch"),
        ("topic_search", "atopic_search"),
        ("list_tasks", "alist_tasks"),
    ]

    def __init__(self, mem: LayeredMemory | None, user_id: str | None = None, *, session_id: str | None = None,
                 exclude_window: bool = True) -> None:
        if mem is not None and not isinstance(mem, LayeredMemory):
            raise TypeError(
                f"LayeredMemoryToolSpec needs a layered_memory.LayeredMemory as mem, got {type(mem).__name__}; "
                "build one with LayeredMemory.embedded(path)"
            )
        self.mem = shared.bind(mem, user_id)
        self.session_id = session_id
        self.exclude_window = exclude_window

    @property
    def _skip(self) -> str | None:
        return self.session_id if self.exclude_window else None

    # -- the tools (sync and async twins; a missing or bad argument is answered with the shared error text)
    def qdrant_search_memory(self, query_text: str | None = None, limit: int = shared.QDRANT_SEARCH_DEFAULT_LIMIT, filters: dict | None = None) -> str:
        """Search past conversation messages by meaning (seed 000 output)."""
        return shared.qdrant_search_memory(self.mem, query_text, limit, filters, exclude_session=self._skip)

    async def aqdrant_search_memory(self, query_text: str | None = None, limit: int = shared.QDRANT_SEARCH_DEFAULT_LIMIT, filters: dict | None = None) -> str:
        return await shared.aqdrant_search_memory(self.mem, query_text, limit, filters, exclude_session=self._skip)

    def search(self, queries: list[str] | str | None = None, filters: dict | None = None, k: int = shared.SEARCH_DEFAULT_K,
               route: str = "hybrid", query: str | None = None) -> dict:
        """Hybrid search over stored messages (seed 003 dict)."""
        return shared.search_tool(self.mem, queries, filters, k, route, query=query, exclude_session=self._skip)

    async def asearch(self, queries: list[str] | str | None = None, filters: dict | None = None, k: int = shared.SEARCH_DEFAULT_K,
                      route: str = "hybrid", query: str | None = None) -> dict:
        return await shared.asearch_tool(self.mem, queries, filters, k, route, query=query, exclude_session=self._skip)

    def topic_search(self, query: str | None = None, chat_id: str | None = None, k: int = shared.TOPIC_SEARCH_DEFAULT_K) -> str:
        """Search conversation topics by meaning."""
        return shared.topic_search_tool(self.mem, query, chat_id, k)

    async def atopic_search(self, query: str | None = None, chat_id: str | None = None, k: int = shared.TOPIC_SEARCH_DEFAULT_K) -> str:
        return await shared.atopic_search_tool(self.mem, query, chat_id, k)

    def list_tasks(self, status: str | None = None) -> str:
        """The user's tasks."""
        return shared.list_tasks_tool(self.mem, None, status)

    async def alist_tasks(self, status: str | None = None) -> str:
        return await shared.alist_tasks_tool(self.mem, None, status)

    # -- conversion -------------------------------------------------------------------------------
    def to_tool_list(
        self,
        spec_functions: list[SPEC_FUNCTION_TYPE] | None = None,
        func_to_metadata_mapping: dict[str, ToolMetadata] | None = None,
    ) -> list[FunctionTool]:
        """``FunctionTool``s with the shared names, descriptions and schemas; ``search`` answers the
        model in JSON (``raw_output`` keeps the dict). Pick tools by name: ``spec_functions=["search"]``."""
        mapping = func_to_metadata_mapping or {}
        wanted = spec_functions or self.spec_functions
        by_name = {spec[0] if isinstance(spec, tuple) else spec: spec for spec in self.spec_functions}
        out = []
        for spec in wanted:
            name = spec[0] if isinstance(spec, tuple) else spec
            if name not in by_name:
                raise ValueError(f"spec_functions: {name!r} is not a tool of this spec (known: {', '.join(by_name)})")
            sync_name, async_name = by_name[name]
            description, schema = TOOL_METADATA[name]
            metadata = mapping.get(name) or ToolMetadata(name=name, description=description, fn_schema=schema)
            is_dict = name == "search"
            out.append(FunctionTool.from_defaults(
                fn=getattr(self, sync_name), async_fn=getattr(self, async_name), tool_metadata=metadata,
                callback=_json if is_dict else None, async_callback=_ajson if is_dict else None,
            ))
        return out


def layered_memory_tools(mem: LayeredMemory | None, user_id: str | None = None, names: list[str] | None = None, *,
                         session_id: str | None = None, exclude_window: bool = True) -> list[FunctionTool]:
    """The memory tools as ``FunctionTool``s: ``LayeredMemoryToolSpec(mem, user_id, session_id=...).to_tool_list(names)``."""
    spec = LayeredMemoryToolSpec(mem, user_id, session_id=session_id, exclude_window=exclude_window)
    return spec.to_tool_list(names)  # type: ignore[arg-type]


__all__ = ["LayeredMemoryToolSpec", "TOOL_METADATA", "layered_memory_tools"]
