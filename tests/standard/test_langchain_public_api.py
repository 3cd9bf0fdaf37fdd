"""The public API of langchain_layered_memory is its ``__all__``, pinned here (httpx style)."""

from __future__ import annotations

import langchain_layered_memory


def test_all_is_pinned_and_sorted():
    public = [m for m in vars(langchain_layered_memory) if not m.startswith("_")]
    modules = {"chat_history", "document_tools", "middleware", "retrievers", "runnable", "store", "tools", "vectorstore"}
    assert langchain_layered_memory.__all__ == sorted((m for m in public if m not in modules), key=str.casefold)
    assert langchain_layered_memory.__all__ == [
        "create_document_tools", "create_memory_tools", "DocumentTool", "LayeredChatMessageHistory", "LayeredMemoryMiddleware",
        "LayeredMemoryRetriever", "LayeredMemoryStore", "LayeredMemoryVectorStore", "LayeredRunnableWithMessageHistory",
        "ListTasksTool", "MemorySearchTool", "QdrantSearchMemoryTool", "TopicSearchTool", "with_layered_memory",
    ]


def test_every_public_name_is_documented():
    for name in langchain_layered_memory.__all__:
        assert (getattr(langchain_layered_memory, name).__doc__ or "").strip(), name
