"""layered-memory: a memory layer for LLM chat bots and agents.

    from layered_memory import LayeredMemory
    mem = LayeredMemory.embedded("./memory")
    mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content="I live in Kazan")
    mem.get_context_for_user("u1", "c1")
"""

from .config import LayeredMemorySettings
from .context import Context
from .engine import LayeredMemory
from .errors import (
    BackendError,
    BackendTimeout,
    BackendUnavailable,
    CapabilityError,
    ConfigurationError,
    InvalidInputError,
    LayeredMemoryError,
    NotFoundError,
    SchemaMismatch,
)
from .models import ContextMessage, Message, MessageRef, SearchGroup, SearchHit, SearchResult, Task, Topic, TopicSummary
from .providers.base import ChatModel, Embedder

__all__ = [
    "BackendError",
    "BackendTimeout",
    "BackendUnavailable",
    "CapabilityError",
    "ChatModel",
    "ConfigurationError",
    "Context",
    "ContextMessage",
    "Embedder",
    "InvalidInputError",
    "LayeredMemory",
    "LayeredMemoryError",
    "LayeredMemorySettings",
    "Message",
    "MessageRef",
    "NotFoundError",
    "SchemaMismatch",
    "SearchGroup",
    "SearchHit",
    "SearchResult",
    "Task",
    "Topic",
    "TopicSummary",
]
__version__ = "0.1.0"
