"""Document lines for the prompt context (``get_context_for_user(..., include_documents=True)``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..context import MemoryLine

if TYPE_CHECKING:
    from .api import Documents

logger = logging.getLogger(__name__)


def document_lines(docs: Documents, query: str) -> list[MemoryLine]:
    """The best ``documents.context_k`` chunks for ``query`` that ``docs`` (the documents of a handle
    bound to the context's user) may see, as ``[citation] text`` lines; nothing when the search fails
    (the context never breaks)."""
    k = docs.settings.context_k
    limit = docs.store.runtime.settings.retrieval.max_query_chars
    try:
        hits = docs.vector_rag(query[:limit], k=k).hits
    except Exception as exc:  # a failing document search must not break the prompt
        logger.warning("document search for the context failed (%s: %s)", type(exc).__name__, exc)
        return []
    return [MemoryLine(f"[{h.meta.get('citation', '')}] {h.text}", f"doc|{h.id}") for h in hits]


__all__ = ["document_lines"]
