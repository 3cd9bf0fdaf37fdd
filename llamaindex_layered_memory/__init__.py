"""LlamaIndex adapters for layered-memory (``pip install -e ".[llamaindex]"`` in a clone of
layered-memory; docs/install.md).

    from layered_memory import LayeredMemory
    from llamaindex_layered_memory import LayeredChatMemory, LayeredMemoryRetriever, LayeredMemoryToolSpec

    mem = LayeredMemory.embedded("./memory")
    memory = LayeredChatMemory.from_defaults(mem, user_id="u1", session_id="s1")   # ChatMemoryBuffer drop-in
    retriever = LayeredMemoryRetriever(mem, user_id="u1", k=5)
    tools = LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list()

- ``LayeredChatMemory``: ``BaseMemory`` for chat engines and agents;
- ``LayeredMemoryBlock``: a block for ``llama_index.core.memory.Memory``;
- ``LayeredMemoryRetriever``: ``BaseRetriever`` over the hybrid search;
- ``LayeredMemoryToolSpec`` / ``layered_memory_tools``: qdrant_search_memory, search, topic_search,
  list_tasks;
- ``register_memory`` / ``unregister_memory``: the engine a restored (``from_dict``, unpickled, agent
  ``Context.from_dict``) memory or block attaches to.

A LlamaIndex ``BaseEmbedding`` or ``LLM`` can be handed to the engine directly:
``LayeredMemory.embedded(path, embedder=HuggingFaceEmbedding(...), chat_model=OpenAI(...))``.
"""

from ._registry import register_memory, unregister_memory
from .block import LayeredMemoryBlock
from ._document_tools import layered_document_tools
from .memory import LayeredChatMemory
from .retriever import LayeredMemoryRetriever
from .tools import LayeredMemoryToolSpec, layered_memory_tools
from .vector_store import LayeredMemoryVectorStore

__all__ = [
    "layered_document_tools",
    "layered_memory_tools",
    "LayeredChatMemory",
    "LayeredMemoryBlock",
    "LayeredMemoryRetriever",
    "LayeredMemoryToolSpec",
    "LayeredMemoryVectorStore",
    "register_memory",
    "unregister_memory",
]
