"""``LayeredMemoryRetriever``: the engine's hybrid search as a LangChain retriever.

    retriever = LayeredMemoryRetriever(memory=mem, user_id="u1", k=4)
    retriever.invoke("where does the user live?", k=3, filters={"role": "user"}, route="bm25")
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, field_validator

from layered_memory import LayeredMemory, SearchResult
from layered_memory.context import hit_line
from layered_memory import tools as shared_tools
from layered_memory.errors import InvalidInputError
from layered_memory.index import check_user_id


def hits_to_documents(result: SearchResult) -> list[Document]:
    """One Document per hit: page_content = the hit as a context line (``[2024-05-02 09:05] Anna: text``: who
    said it and when, which a model needs to use it), metadata = the hit's meta + score + id + snippet +
    ``text`` (the message text alone)."""
    return [
        Document(page_content=hit_line(h), id=h.id,
                 metadata={**h.meta, "score": h.score, "id": h.id, "snippet": h.snippet, "text": h.text})
        for h in result.hits
    ]


class LayeredMemoryRetriever(BaseRetriever):
    """Hybrid (BM25 + dense, RRF), ``bm25`` or ``dense`` search over the stored messages.

    Args:
        memory: the engine (or a tenant handle); positional, ``memory=`` or ``mem=``, as for LlamaIndex's
            ``LayeredMemoryRetriever``.
        user_id: when set, only this user's messages are searched (``memory.for_user``).
        k: hits per query (1..100); ``invoke(q, k=3)`` overrides it for one call.
        route: ``"hybrid"`` | ``"bm25"`` | ``"dense"``; per call too.
        filters: engine filters (role, session_key, chat_id, timestamp_from/to, ...), applied inside the
            index; per-call ``filters=`` are merged over these.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: LayeredMemory
    user_id: str | None = None
    k: int = 4
    route: str = "hybrid"
    filters: dict[str, Any] = Field(default_factory=dict)

    def __init__(self, memory: LayeredMemory | None = None, /, **data: Any) -> None:
        data["memory"] = shared_tools.engine_argument("LayeredMemoryRetriever", memory, data.pop("memory", None), data.pop("mem", None))
        super().__init__(**data)

    @field_validator("user_id")
    @classmethod
    def _no_empty_user(cls, value: str | None) -> str | None:
        return check_user_id(value)  # "" would search every user: refused; None binds nothing

    def _handle(self) -> LayeredMemory:
        return self.memory.for_user(self.user_id) if self.user_id is not None else self.memory

    def _args(self, k: int | None, filters: Mapping[str, Any] | None, route: str | None) -> dict[str, Any]:
        if filters is not None and not isinstance(filters, Mapping):
            raise InvalidInputError("filters", filters, "must be a dict of filter names to values", 'pass e.g. {"role": "user"}')
        return {
            "k": self.k if k is None else k,
            "filters": {**self.filters, **(filters or {})},
            "route": route or self.route,
        }

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None,
        filters: Mapping[str, Any] | None = None, route: str | None = None,
    ) -> list[Document]:
        return hits_to_documents(self._handle().search(query, **self._args(k, filters, route)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None,
        filters: Mapping[str, Any] | None = None, route: str | None = None,
    ) -> list[Document]:
        return hits_to_documents(await self._handle().asearch(query, **self._args(k, filters, route)))
