"""Whether ``get_context_for_user`` adds "Relevant documents" (``include_documents``; the lines: ``context.candidates``)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..errors import InvalidInputError

if TYPE_CHECKING:

    from ..config import DocumentSettings

logger = logging.getLogger(__name__)


def wants_documents(include_documents: object, settings: DocumentSettings) -> bool:
    """``include_documents`` checked (None: ``documents.include_in_context``)."""
    if include_documents is None:
        return settings.include_in_context
    if not isinstance(include_documents, bool):
        raise InvalidInputError("include_documents", include_documents, "must be True, False or None", "pass a bool")
    return include_documents


__all__ = ["wants_documents"]
