"""Document lines for the prompt context (``get_context_for_user(..., include_documents=True)``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..context import MemoryLine
from ..errors import InvalidInputError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..config import DocumentSettings
    from ..models import Message
    from .api import Documents

logger = logging.getLogger(__name__)


def wants_documents(include_documents: object, settings: DocumentSettings) -> bool:
    """``include_documents`` checked (None: ``documents.include_in_context``)."""
    if include_documents is None:
        return settings.include_in_context
    if not isinstance(include_documents, bool):
        raise InvalidInputError("include_documents", include_documents, "must be True, False or None", "pass a bool")
    return include_documents


def document_lines(docs: Documents, query: str | None, window: Sequence[Message] = ()) -> list[MemoryLine]:
    """The best ``documents.context_k`` chunks for ``query`` (default: the window's last user message)
    that ``docs`` (the documents of a handle bound to the context's user) may see, as ``[citation]
    text`` lines; nothing when the search fails (the context never breaks)."""
    query = query or next((m.content for m in reversed(window) if m.role == "user"), "")
    if not query.strip():
        return []
    k = docs.settings.context_k
    limit = docs.store.runtime.settings.retrieval.max_query_chars
    try:
        hits = docs.vector_rag(query[:limit], k=k).hits
    except Exception as exc:  # a failing document search must not break the prompt
        logger.warning("document search for the context failed (%s: %s)", type(exc).__name__, exc)
        return []
    return [MemoryLine(f"[{h.meta.get('citation', '')}] {h.text}", f"doc|{h.id}") for h in hits]


__all__ = ["document_lines", "wants_documents"]
