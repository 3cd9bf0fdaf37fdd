"""The public surface of llamaindex_layered_memory is exactly its __all__ (httpx-style pin)."""

from __future__ import annotations

import llamaindex_layered_memory as pkg


def test_all_is_pinned() -> None:
    public = sorted((n for n in vars(pkg) if not n.startswith("_")), key=str.casefold)
    modules = {"block", "memory", "retriever", "tools", "vector_store"}
    assert pkg.__all__ == sorted(pkg.__all__, key=str.casefold)
    assert sorted(set(public) - modules, key=str.casefold) == pkg.__all__
    assert pkg.__all__ == [
        "layered_document_tools", "layered_memory_tools", "LayeredChatMemory", "LayeredMemoryBlock", "LayeredMemoryRetriever", "LayeredMemoryToolSpec",
        "LayeredMemoryVectorStore",
        "register_memory", "unregister_memory",
    ]


def test_classes_are_the_llamaindex_bases() -> None:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.memory import BaseMemory
    from llama_index.core.memory.memory import BaseMemoryBlock
    from llama_index.core.tools.tool_spec.base import BaseToolSpec

    assert issubclass(pkg.LayeredChatMemory, BaseMemory)
    assert issubclass(pkg.LayeredMemoryBlock, BaseMemoryBlock)
    assert issubclass(pkg.LayeredMemoryRetriever, BaseRetriever)
    assert issubclass(pkg.LayeredMemoryToolSpec, BaseToolSpec)
