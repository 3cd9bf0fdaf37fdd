"""LangChain / LangGraph adapters for layered-memory (``pip install -e ".[langchain]"`` in a clone
of layered-memory; docs/install.md).

    from langchain_layered_memory import (LayeredChatMessageHistory, LayeredMemoryRetriever,
        LayeredMemoryMiddleware, LayeredMemoryStore, create_memory_tools, with_layered_memory)

Only the engine's public API is used; every adapter takes a ``LayeredMemory`` (or a tenant / user
handle of it).
"""

from .chat_history import LayeredChatMessageHistory
from .document_tools import DocumentTool, create_document_tools
from .middleware import LayeredMemoryMiddleware
from .retrievers import LayeredMemoryRetriever
from .runnable import LayeredRunnableWithMessageHistory, with_layered_memory
from .store import LayeredMemoryStore
from .tools import (
    ListTasksTool,
    MemorySearchTool,
    QdrantSearchMemoryTool,
    TopicSearchTool,
    create_memory_tools,
)
from .vectorstore import LayeredMemoryVectorStore

__all__ = [
    "create_document_tools",
    "create_memory_tools",
    "DocumentTool",
    "LayeredChatMessageHistory",
    "LayeredMemoryMiddleware",
    "LayeredMemoryRetriever",
    "LayeredMemoryStore",
    "LayeredMemoryVectorStore",
    "LayeredRunnableWithMessageHistory",
    "ListTasksTool",
    "MemorySearchTool",
    "QdrantSearchMemoryTool",
    "TopicSearchTool",
    "with_layered_memory",
]
