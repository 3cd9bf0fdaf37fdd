"""Providers: the Embedder, ChatModel and Reranker protocols, local and HTTP embedders, rerankers, token counting,
and wrappers for LangChain / LlamaIndex objects. Re-exports only; nothing loads at import time."""

from .base import ChatModel, Completion, Embedder, Reranker, TokenUsage
from .local import DEFAULT_LOCAL_EMBEDDER, E5Embedder, USEEmbedder, default_embedder
from .rerankers import HTTPReranker, RerankerError, as_reranker
from .openai_compat import (
    EmbedderStats,
    EmbeddingHTTPError,
    EmbeddingInputRejected,
    OpenAICompatibleEmbedder,
)
from .tokens import (
    DEFAULT_ENCODING,
    TokenCounter,
    approximate_token_count,
    count_tokens,
    get_token_counter,
    truncate_to_tokens,
)
from .usage import OperationUsage, UsageMeter
from .wrappers import UsageCountingChatModel, as_chat_model, as_embedder

__all__ = [
    "approximate_token_count",
    "as_chat_model",
    "as_embedder",
    "as_reranker",
    "ChatModel",
    "Completion",
    "count_tokens",
    "default_embedder",
    "DEFAULT_ENCODING",
    "DEFAULT_LOCAL_EMBEDDER",
    "E5Embedder",
    "Embedder",
    "EmbedderStats",
    "EmbeddingHTTPError",
    "EmbeddingInputRejected",
    "get_token_counter",
    "HTTPReranker",
    "OpenAICompatibleEmbedder",
    "OperationUsage",
    "Reranker",
    "RerankerError",
    "TokenCounter",
    "TokenUsage",
    "truncate_to_tokens",
    "UsageCountingChatModel",
    "UsageMeter",
    "USEEmbedder",
]
