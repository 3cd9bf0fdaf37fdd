"""``LayeredMemoryRetriever``: the engine's hybrid search as a LlamaIndex retriever.

    retriever = LayeredMemoryRetriever(memory=mem, user_id="u1", k=5, filters={"role": "user"})
    nodes = retriever.retrieve("where does the user live?")
    engine = RetrieverQueryEngine.from_args(retriever, llm=llm)

Each hit becomes ``NodeWithScore(TextNode(id_=message_id, text="[2024-05-02 09:05] Anna: ...", metadata=hit.meta), score)``:
the text says who wrote the message and when (the message text alone is ``metadata["text"]``).
``aretrieve`` awaits the engine's async search (the base class would run the sync one on the loop).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from layered_memory import LayeredMemory, SearchResult
from layered_memory import tools as shared_tools
from layered_memory.context import hit_line
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

#: metadata the LLM sees next to each node's text (the rest stays on the node, out of the prompt); who and
#: when are in the text itself
LLM_METADATA_KEYS = ("session_key",)


class LayeredMemoryRetriever(BaseRetriever):
    """Retrieve stored messages by hybrid (BM25 + dense), bm25 or dense search.

    Args:
        memory: the engine handle (a tenant handle, bound to ``user_id`` when given); positional or
            ``memory=`` (or ``mem=``), as for LangChain's ``LayeredMemoryRetriever``.
        user_id: only this user's messages (an unbound handle searches the whole tenant).
        k: results per query (1-100). filters: the engine's search filters (role, session_key,
            chat_id, timestamp_from, timestamp_to, ...). route: hybrid | bm25 | dense.

    Raises:
        InvalidInputError: at construction, for a bad ``k``, ``route`` or filter.
    """

    def __init__(
        self,
        engine: LayeredMemory | None = None,
        /,
        *,
        memory: LayeredMemory | None = None,
        mem: LayeredMemory | None = None,
        user_id: str | None = None,
        k: int = 5,
        filters: Mapping[str, Any] | None = None,
        route: str = "hybrid",
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        mem = shared_tools.engine_argument("LayeredMemoryRetriever", engine, memory, mem)
        self._mem = shared_tools.bind(mem, user_id)  # type: ignore[assignment]  # "" is refused, None binds nothing
        self._filters = dict(filters or {})
        self._k = k
        self._route = route
        self._mem.plan_search("check", filters=self._filters, k=k, route=route)  # fail early, not at the first query
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    @property
    def memory(self) -> LayeredMemory:
        return self._mem

    @property
    def mem(self) -> LayeredMemory:
        return self._mem

    def _nodes(self, result: SearchResult) -> list[NodeWithScore]:
        out = []
        for hit in result.hits:
            metadata = {key: value for key, value in hit.meta.items() if value is not None and value != []}
            metadata["snippet"] = hit.snippet
            metadata["route_used"] = result.route_used
            metadata["text"] = hit.text
            node = TextNode(
                id_=hit.id,
                text=hit_line(hit),
                metadata=metadata,
                excluded_llm_metadata_keys=[key for key in metadata if key not in LLM_METADATA_KEYS],
                excluded_embed_metadata_keys=list(metadata),
            )
            out.append(NodeWithScore(node=node, score=hit.score))
        return out

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self._mem.search(query_bundle.query_str, filters=self._filters, k=self._k, route=self._route)
        return self._nodes(result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = await self._mem.asearch(query_bundle.query_str, filters=self._filters, k=self._k, route=self._route)
        return self._nodes(result)


__all__ = ["LayeredMemoryRetriever"]
