"""``LayeredMemoryVectorStore``: a LlamaIndex ``BasePydanticVectorStore`` over ``mem.documents``.

    store = LayeredMemoryVectorStore(mem, collection="handbook")          # user_id="u1": u1's private documents
    index = VectorStoreIndex.from_documents(SimpleDirectoryReader("docs").load_data(),
                                            storage_context=StorageContext.from_defaults(vector_store=store))
    index = VectorStoreIndex.from_vector_store(store)                      # later: reopen
    index.as_retriever(similarity_top_k=4).retrieve("how do I request leave?")

Nodes are stored as given (LlamaIndex splits documents itself), one chunk each, with the node
serialized into the metadata (LlamaIndex's ``node_to_metadata_dict``) so queries return full nodes.
The engine embeds and searches (hybrid BM25 + dense, RRF) with its own embedder: the query text is
what counts (``query_embedding`` is not used), so give the engine the embedder you want
(``LayeredMemory.embedded(path, embedder=HuggingFaceEmbedding(...))``). ``delete(ref_doc_id)``
removes a source document's nodes. Filters: ``MetadataFilters`` with ``==`` / ``in`` under AND.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
from pydantic import PrivateAttr

from layered_memory import LayeredMemory
from layered_memory import tools as shared


def _where(filters: MetadataFilters | None) -> dict[str, Any] | None:
    if filters is None or not filters.filters:
        return None
    if filters.condition not in (None, FilterCondition.AND):
        raise ValueError(f"filters.condition={filters.condition!r}: only AND is supported; split the query")
    out: dict[str, Any] = {}
    for f in filters.filters:
        if isinstance(f, MetadataFilters):
            raise ValueError("nested MetadataFilters are not supported; flatten them under AND")
        if f.operator == FilterOperator.EQ:
            out[f.key] = f.value
        elif f.operator == FilterOperator.IN:
            out[f.key] = list(f.value)  # type: ignore[arg-type]
        else:
            raise ValueError(f"filter {f.key} {f.operator.value}: only == and in are supported")
    return out


class LayeredMemoryVectorStore(BasePydanticVectorStore):
    """A LlamaIndex vector store over one collection of ``mem.documents`` (see the module docstring)."""

    stores_text: bool = True
    is_embedding_query: bool = False
    collection: str = "llamaindex"
    _mem: LayeredMemory = PrivateAttr()
    _texts: Any = PrivateAttr()

    def __init__(self, memory: LayeredMemory, *, collection: str = "llamaindex", user_id: str | None = None, tenant: str | None = None) -> None:
        if not isinstance(memory, LayeredMemory):
            raise TypeError(f"LayeredMemoryVectorStore needs a layered_memory.LayeredMemory, got {type(memory).__name__}")
        super().__init__(collection=collection)
        self._mem = shared.bind(memory, user_id, tenant)  # type: ignore[assignment]
        self._texts = self._mem.documents.texts(collection)

    @property
    def client(self) -> LayeredMemory:
        return self._mem

    def add(self, nodes: list[BaseNode], **add_kwargs: Any) -> list[str]:
        items = []
        for node in nodes:
            meta = node_to_metadata_dict(node, remove_text=True, flat_metadata=False)
            items.append((node.node_id, node.get_content(metadata_mode=MetadataMode.NONE), meta))
        return self._texts.put(items)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        self._texts.delete_where({"ref_doc_id": ref_doc_id})

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None, **delete_kwargs: Any) -> None:
        if node_ids is not None:
            self._texts.delete(node_ids)
        where = _where(filters)
        if where:
            self._texts.delete_where(where)

    def clear(self) -> None:
        self._texts.delete(None)

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None) -> list[BaseNode]:
        if node_ids is None:
            raise ValueError("get_nodes needs node_ids (listing a whole collection is not supported)")
        where = _where(filters) or {}
        out = []
        for nid, text, meta in self._texts.get(node_ids):
            if all(meta.get(k) in (v if isinstance(v, list) else [v]) for k, v in where.items()):
                out.append(self._node(text, meta))
        return out

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        if not query.query_str:
            raise ValueError("LayeredMemoryVectorStore searches by text: the query needs query_str (the engine embeds it)")
        where = _where(query.filters) or {}
        if query.doc_ids:
            where["ref_doc_id"] = list(query.doc_ids)
        hits = self._texts.search(query.query_str, k=query.similarity_top_k, where=where or None, ids=query.node_ids or None)
        nodes = [self._node(text, meta) for _, text, meta, _ in hits]
        return VectorStoreQueryResult(nodes=nodes, similarities=[s for *_, s in hits], ids=[i for i, *_ in hits])

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        import asyncio

        return await asyncio.to_thread(self.query, query, **kwargs)

    @staticmethod
    def _node(text: str, meta: dict[str, Any]) -> BaseNode:
        node = metadata_dict_to_node(meta)
        node.set_content(text)
        return node


__all__ = ["LayeredMemoryVectorStore"]
