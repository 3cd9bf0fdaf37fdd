"""Settings, read only at the edge (``LayeredMemory.from_settings()``); env prefix ``LAYERED_MEMORY_``.

Nested values use ``__``: ``LAYERED_MEMORY_REDIS__URL=redis://localhost:6379/0``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_SHORT_TERM_WINDOW = 10
DEFAULT_SUMMARY_THRESHOLD = 20
DEFAULT_MAX_CONTENT_CHARS = 32_000


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SQLiteSettings(_Section):
    path: str | None = None  # None: <data_dir>/records.sqlite3


class RedisSettings(_Section):
    url: str | None = None
    prefix: str = "lm"
    socket_timeout: float = 5.0
    connect_timeout: float = 2.0


class QdrantSettings(_Section):
    url: str | None = None  # None: embedded Qdrant Edge under <data_dir>/vectors
    api_key: SecretStr | None = None
    timeout: float = 10.0
    collection_prefix: str = "lm_"


class RetrievalSettings(_Section):
    k1: float = 1.2
    b: float = 0.75
    avgdl: float = 24.0  # fixed average document length in terms: vectors stay comparable across restarts
    rrf_k: int = 60
    dense_weight: float = 1.0
    sparse_weight: float = 1.0
    prefetch_limit: int = 100
    max_query_chars: int = 2_000


class MemorySettings(_Section):
    short_term_window: int = Field(DEFAULT_SHORT_TERM_WINDOW, ge=1, le=1000)
    summary_threshold_messages: int = Field(DEFAULT_SUMMARY_THRESHOLD, ge=2)
    max_content_chars: int = Field(DEFAULT_MAX_CONTENT_CHARS, ge=1)
    relevant_memory_k: int = Field(5, ge=0, le=50)
    conversation_memory_k: int = Field(5, ge=0, le=50)

    @model_validator(mode="after")
    def _check(self) -> MemorySettings:
        if self.summary_threshold_messages <= self.short_term_window:
            raise ValueError(
                f"summary_threshold_messages={self.summary_threshold_messages} must be greater than "
                f"short_term_window={self.short_term_window}: only messages older than the window are summarized; "
                "raise summary_threshold_messages"
            )
        return self


class ContextSettings(_Section):
    max_tokens: int | None = None
    encoding: str = "o200k_base"


class LayeredMemorySettings(BaseSettings):
    """All settings. Environment: ``LAYERED_MEMORY_<FIELD>`` and ``LAYERED_MEMORY_<SECTION>__<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="LAYERED_MEMORY_", env_nested_delimiter="__", extra="forbid")

    data_dir: str = ".layered_memory"
    tenant: str = "default"
    embedder: str = "default"  # "default" (local offline model), "none", "openai:<model>@<base_url>"
    sqlite: SQLiteSettings = SQLiteSettings()
    redis: RedisSettings = RedisSettings()
    qdrant: QdrantSettings = QdrantSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    memory: MemorySettings = MemorySettings()
    context: ContextSettings = ContextSettings()
