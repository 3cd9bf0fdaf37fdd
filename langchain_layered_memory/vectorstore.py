"""``LayeredMemoryVectorStore``: a LangChain ``VectorStore`` over ``mem.documents``.

    store = LayeredMemoryVectorStore(mem, collection="handbook", user_id=None)   # the tenant's; user_id: private
    store.add_documents(RecursiveCharacterTextSplitter(...).split_documents(PyPDFLoader("guide.pdf").load()))
    store.similarity_search("how do I request leave?", k=4, filter={"source": "guide.pdf"})
    retriever = store.as_retriever(search_kwargs={"k": 4})

Each ``Document`` is stored as given (LangChain splits documents itself) under its id (``doc.id``,
``ids=``, or a new UUID), in the engine's document records and vector index: search is the engine's
hybrid BM25 + dense (RRF), with the engine's embedder (the ``embedding`` a ``VectorStore`` is
usually given is the engine's: ``LayeredMemory.embedded(path, embedder=OpenAIEmbeddings())``).
Re-adding an id with the same text and metadata does nothing; a changed one replaces it. The same
documents are found by ``mem.documents.vector_rag(filters={"collection": ...})`` and the agents'
``vector_rag`` tool. ``filter`` is a dict of metadata key -> value (or a list of values: any of them);
a list-valued metadata field matches when it holds the value. ``k`` (and ``fetch_k``) is 1 to 100.

``similarity_search_by_vector`` and ``max_marginal_relevance_search`` (and their async twins,
``search_type="mmr"``) work on the engine's own vectors, as LangChain's ``InMemoryVectorStore`` does:
the vector must come from the engine's embedder (``store.embeddings`` when it is a LangChain
``Embeddings``); scores there are cosine similarities. Differences from ``InMemoryVectorStore``:
docs/vector-stores.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from layered_memory import LayeredMemory
from layered_memory import tools as shared


class LayeredMemoryVectorStore(VectorStore):
    """A ``VectorStore`` over one collection of ``mem.documents`` (see the module docstring).

    Args:
        memory: the engine (or a tenant / user handle).
        collection: the document collection (default ``"langchain"``).
        user_id: store and search this user's private documents (searches also see the tenant's).
        tenant: bind to this tenant; default: ``memory``'s.
    """

    def __init__(self, memory: LayeredMemory, *, collection: str = "langchain", user_id: str | None = None, tenant: str | None = None) -> None:
        if not isinstance(memory, LayeredMemory):
            raise TypeError(f"LayeredMemoryVectorStore needs a layered_memory.LayeredMemory, got {type(memory).__name__}")
        self.memory = shared.bind(memory, user_id, tenant)
        self.collection = collection
        self._texts = self.memory.documents.texts(collection)  # type: ignore[union-attr]

    @property
    def embeddings(self) -> Embeddings | None:
        """The LangChain ``Embeddings`` the engine embeds with (None when it was given another kind)."""
        emb = self.memory.embedder  # type: ignore[union-attr]
        if isinstance(emb, Embeddings):
            return emb
        inner = getattr(emb, "wrapped", None)  # as_embedder keeps the framework object there
        return inner if isinstance(inner, Embeddings) else None

    # -- writes ---------------------------------------------------------------------------------------
    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        ids = kwargs.get("ids")
        if ids is not None and len(ids) != len(documents):
            raise ValueError(f"ids: {len(ids)} ids for {len(documents)} documents; pass one id per document")
        items = [((ids[i] if ids is not None else None) or d.id, d.page_content, d.metadata) for i, d in enumerate(documents)]
        return self._texts.put(items)

    def add_texts(self, texts: Iterable[str], metadatas: list[dict] | None = None, *, ids: list[str] | None = None, **kwargs: Any) -> list[str]:
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"metadatas: {len(metadatas)} metadatas for {len(texts)} texts; pass one metadata dict per text "
                             "(or none at all)")
        docs = [Document(page_content=t, metadata=(metadatas[i] if metadatas else {}) or {}) for i, t in enumerate(texts)]
        return self.add_documents(docs, ids=ids)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete these ids (missing ones are ignored); ``ids=None`` deletes the whole collection."""
        self._texts.delete(ids)
        return True

    # -- reads ----------------------------------------------------------------------------------------
    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        return [Document(id=i, page_content=t, metadata=m) for i, t, m in self._texts.get(list(ids))]

    def similarity_search_with_score(self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any) -> list[tuple[Document, float]]:
        return [(Document(id=i, page_content=t, metadata=m), s) for i, t, m, s in self._texts.search(query, k=k, where=filter)]

    def similarity_search(self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any) -> list[Document]:
        return [d for d, _ in self.similarity_search_with_score(query, k=k, filter=filter)]

    def similarity_search_with_score_by_vector(
        self, embedding: list[float], k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any,
    ) -> list[tuple[Document, float]]:
        """The ``k`` documents nearest to ``embedding`` (from the engine's embedder), with cosine similarity."""
        return [(Document(id=i, page_content=t, metadata=m), s)
                for i, t, m, s, _ in self._texts.search_by_vector(embedding, k=k, where=filter)]

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any) -> list[Document]:
        return [d for d, _ in self.similarity_search_with_score_by_vector(embedding, k=k, filter=filter)]

    def max_marginal_relevance_search_by_vector(
        self, embedding: list[float], k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5, *,
        filter: dict[str, Any] | None = None, **kwargs: Any,
    ) -> list[Document]:
        """``fetch_k`` nearest documents, of which ``k`` chosen by maximal marginal relevance (LangChain's
        ``maximal_marginal_relevance`` over the engine's stored vectors, as ``InMemoryVectorStore``)."""
        import numpy as np  # langchain-core's MMR takes numpy arrays (as InMemoryVectorStore)

        from layered_memory.documents.results import check_k

        check_k(k, 4)  # the same 1..100 rule as every other search
        hits = self._texts.search_by_vector(embedding, k=fetch_k, where=filter, k_name="fetch_k")
        chosen = maximal_marginal_relevance(np.array(embedding, dtype=np.float32), [v for *_, v in hits], k=k, lambda_mult=lambda_mult)
        return [Document(id=hits[i][0], page_content=hits[i][1], metadata=hits[i][2]) for i in chosen]

    def max_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5, **kwargs: Any,
    ) -> list[Document]:
        return self.max_marginal_relevance_search_by_vector(self._embed_query(query), k, fetch_k, lambda_mult, **kwargs)

    def _embed_query(self, query: str) -> list[float]:
        from layered_memory.documents.results import check_query
        from layered_memory.errors import CapabilityError

        emb = self.memory.embedder  # type: ignore[union-attr]
        if emb is None:
            raise CapabilityError("max_marginal_relevance_search needs the engine's embedder; open the engine with one "
                                  "(LayeredMemory.embedded(path, embedder=...)) or use similarity_search")
        return emb.embed_query(check_query(query))

    def _select_relevance_score_fn(self) -> Any:
        return lambda score: score  # RRF scores: higher is better, already in [0, 1]

    @classmethod
    def from_texts(
        cls, texts: list[str], embedding: Embeddings | None = None, metadatas: list[dict] | None = None, *,
        ids: list[str] | None = None, memory: LayeredMemory | None = None, **kwargs: Any,
    ) -> LayeredMemoryVectorStore:
        """Build on ``memory`` (required: the engine embeds with its own embedder) and add ``texts``."""
        if memory is None:
            raise ValueError("LayeredMemoryVectorStore.from_texts needs memory=LayeredMemory...; "
                             "e.g. from_texts(texts, memory=LayeredMemory.embedded(path, embedder=embedding))")
        store = cls(memory, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store


__all__ = ["LayeredMemoryVectorStore"]
