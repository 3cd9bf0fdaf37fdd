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
(``LayeredMemory.embedded(path, embedder=HuggingFaceEmbedding(...))``).

The contract is LlamaIndex's (its ``SimpleVectorStore`` tests, in our words, in
``tests/unit/llamaindex/test_llamaindex_vector_store.py``): ``add`` returns node ids, ``delete(ref_doc_id)``,
``delete_nodes(node_ids, filters)`` (both must match), ``get_nodes``, ``clear``, and every
``MetadataFilters`` operator and condition with LlamaIndex's own semantics
(``build_metadata_filter_fn``, as ``SimpleVectorStore``: ``EQ "a"`` / ``IN ["a"]`` do not match a
list value ``["a", "b"]``; ``CONTAINS`` / ``ANY`` / ``ALL`` do). ``==`` / ``in`` on strings under AND
run inside the index (list values left out there too); other filters are evaluated over the records
the store can see first (a user's store: the tenant's nodes and the user's), then the search is
restricted to the matching node ids (a scan per query: fine for thousands of nodes). Either way a
filter keeps the same nodes. ``get_nodes`` / ``delete_nodes`` / ``clear`` work on the store's own
space (a user's store: the user's nodes). ``similarity_top_k`` is 1 to 100.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
    VectorStoreQueryResult,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn, metadata_dict_to_node, node_to_metadata_dict
from pydantic import PrivateAttr

from layered_memory import LayeredMemory
from layered_memory import tools as shared


ROUTES = {VectorStoreQueryMode.DEFAULT: "hybrid", VectorStoreQueryMode.HYBRID: "hybrid",
          VectorStoreQueryMode.SPARSE: "bm25", VectorStoreQueryMode.TEXT_SEARCH: "bm25"}


def _scalar(value: object) -> bool:
    return isinstance(value, str)  # numbers: 2 == 2.0 for LlamaIndex, not for a keyword/integer index match


def _in_index(filters: MetadataFilters | None) -> dict[str, Any] | None:
    """The filters as an in-index ``where`` (==, in on strings, under AND, each key once),
    or None when they need LlamaIndex's evaluator over the records."""
    if filters is None or not filters.filters:
        return {}
    if filters.condition not in (None, FilterCondition.AND):
        return None
    out: dict[str, Any] = {}
    for f in filters.filters:
        if not isinstance(f, MetadataFilter) or f.key in out or not f.key.replace("_", "").replace("-", "").isalnum():
            return None
        if f.operator == FilterOperator.EQ and _scalar(f.value):
            out[f.key] = f.value
        elif f.operator == FilterOperator.IN and isinstance(f.value, list) and f.value and all(_scalar(v) for v in f.value):
            out[f.key] = list(f.value)
        else:
            return None
    return out


def _check(filters: MetadataFilters | None) -> None:
    for f in filters.filters if filters else ():
        if isinstance(f, MetadataFilters):
            raise ValueError("nested MetadataFilters are not supported (as in LlamaIndex's SimpleVectorStore); flatten them")


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

    def _matching(self, filters: MetadataFilters | None, node_ids: list[str] | None = None, *, visible: bool = False) -> list[str]:
        """Ids of the collection's nodes matching ``filters`` (LlamaIndex's semantics) and among ``node_ids``:
        in the store's own space, or with ``visible`` in every space its queries see."""
        _check(filters)
        keep = set(node_ids) if node_ids is not None else None
        found = [(nid, meta) for nid, meta in self._texts.items(visible=visible) if keep is None or nid in keep]
        match = build_metadata_filter_fn(lambda meta: meta, filters)  # called with the metadata (an id may be in two spaces)
        try:
            return list(dict.fromkeys(nid for nid, meta in found if match(meta)))  # type: ignore[arg-type]
        except TypeError as exc:  # e.g. '>' between a stored string and a number
            raise ValueError(f"filters {filters!r} cannot be evaluated on the stored metadata ({exc}); "
                             "compare values of the stored type") from exc

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        self._texts.delete_where({"ref_doc_id": ref_doc_id})

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None, **delete_kwargs: Any) -> None:
        """Delete the nodes among ``node_ids`` that match ``filters`` (either may be left out, not both)."""
        if node_ids is None and (filters is None or not filters.filters):
            raise ValueError("delete_nodes needs node_ids or filters; to empty the collection call clear()")
        if filters is None or not filters.filters:
            self._texts.delete(node_ids)
        else:
            self._texts.delete(self._matching(filters, node_ids))

    def clear(self) -> None:
        self._texts.delete(None)

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None) -> list[BaseNode]:
        """The stored nodes among ``node_ids`` (default: all) that match ``filters``, in the given order."""
        ids = self._matching(filters, node_ids)
        if node_ids is not None:
            have = set(ids)
            ids = [i for i in dict.fromkeys(node_ids) if i in have]
        return [self._node(text, meta) for _, text, meta in self._texts.get(ids)]

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        if not query.query_str:
            raise ValueError("LayeredMemoryVectorStore searches by text: the query needs query_str (the engine embeds it)")
        route = ROUTES.get(query.mode)
        if route is None:
            raise ValueError(f"query mode {query.mode.value!r} is not supported: use default/hybrid, or sparse/text_search (BM25)")
        _check(query.filters)
        where = _in_index(query.filters)
        ids = list(query.node_ids) if query.node_ids else None
        if where is None:  # operators the index does not run: LlamaIndex's evaluator over the visible records first
            ids = self._matching(query.filters, ids, visible=True)
            where = {}
            if not ids:
                return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        if query.doc_ids:
            where["ref_doc_id"] = list(query.doc_ids)
        hits = self._texts.search(query.query_str, k=query.similarity_top_k, where=where or None, ids=ids, route=route,
                                  scalars_only=True, k_name="similarity_top_k")
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
