"""The runtime of one engine: the stores, providers and services every handle of a ``LayeredMemory``
shares, built once by ``build_runtime`` (``LayeredMemory.from_stores`` calls it).

    core = build_runtime(records, index, embedder="default", settings=settings)
    mem = LayeredMemory(core, "acme", "u1")         # a handle: a Scope over the shared runtime

The wiring is explicit and one way: the facade calls the runtime's services, the services call the
tiers below them (topics -> knowledge through one typed callback, set here), and no tier holds the
facade. The order of a write: records (``engine.add_messages``) -> ``indexer.index_messages`` ->
``topics.on_write`` (queue for threading); of a context: window -> ``searcher`` -> ``topics.memory_lines``
-> ``knowledge.memory_lines``; of ``process()``: summaries -> ``topics.process`` -> ``knowledge.process``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .config import LayeredMemorySettings
from .errors import ConfigurationError
from .indexing import MESSAGES, Indexer
from .providers.base import ChatModel, Embedder
from .providers.tokens import get_token_counter
from .retrieval.analyzer import Analyzer
from .retrieval.bm25 import BM25Encoder
from .message_search import SearchService
from .sessions import SessionRegistry
from .stores.base import RecordStore, VectorIndex

if TYPE_CHECKING:
    from .agents.api import AgentRuntime
    from .knowledge.api import KnowledgeRuntime
    from .topics.api import TopicRuntime

_DEFAULT = "default"


def _resolve_embedder(embedder: Any, api_key: str | None = None) -> Embedder | None:
    """An embedder object, or one named by a string (see ``LayeredMemorySettings.embedder``)."""
    if embedder is None or embedder == "none":
        return None
    if embedder == _DEFAULT:
        from .providers.local import default_embedder

        return default_embedder()
    if isinstance(embedder, str):
        from .providers.local import LOCAL_EMBEDDERS

        if embedder in LOCAL_EMBEDDERS:
            return LOCAL_EMBEDDERS[embedder]()
        model, sep, base_url = embedder.removeprefix("openai:").partition("@")
        if embedder.startswith("openai:") and sep and model and base_url:
            from .providers.openai_compat import OpenAICompatibleEmbedder

            return OpenAICompatibleEmbedder(base_url, model, api_key=api_key)
        raise ConfigurationError(
            f"embedder={embedder!r} is not known; use 'default', 'none', one of {', '.join(sorted(LOCAL_EMBEDDERS))}, "
            "'openai:<model>@<base_url>' (e.g. openai:text-embedding-3-small@https://api.openai.com/v1), or pass an "
            "embedder object (an Embedder, a LangChain Embeddings or a LlamaIndex BaseEmbedding)"
        )
    from .providers.wrappers import as_embedder  # a static check: never probes a remote embedder

    return as_embedder(embedder)


def _resolve_chat_model(model: Any) -> ChatModel | None:
    if model is None:
        return None
    from .providers.wrappers import as_chat_model

    return as_chat_model(model)


@dataclass
class Runtime:
    """State shared by every tenant / user handle of one LayeredMemory."""

    settings: LayeredMemorySettings
    records: RecordStore
    index: VectorIndex | None
    embedder: Embedder | None
    chat_model: ChatModel | None
    analyzer: Analyzer
    indexer: Indexer
    searcher: SearchService
    count_tokens: Any
    sessions: SessionRegistry
    # The tiers, built by build_runtime (topics: threading and mid-term summaries; knowledge: the
    # long-term tier fed by topic summaries; agents: seed 004's store, built on first use).
    topics: TopicRuntime = field(init=False)
    knowledge: KnowledgeRuntime = field(init=False)
    _agents: AgentRuntime | None = field(default=None, init=False)
    summary_jobs: set[tuple[str, str, str]] = field(default_factory=set)  # (tenant, user, session) to refresh
    ensured_collections: set[str] = field(default_factory=set)  # vector collections already created
    write_lock: threading.RLock = field(default_factory=threading.RLock)
    closed: bool = False

    @property
    def agents(self) -> AgentRuntime:
        """The agent context store's per-engine state (needs a vector index; built on first use)."""
        if self._agents is None:
            from .agents.api import AgentRuntime

            with self.write_lock:
                if self._agents is None:
                    self._agents = AgentRuntime.build(self)
        return self._agents


def build_runtime(
    records: RecordStore,
    index: VectorIndex | None,
    *,
    embedder: Any = _DEFAULT,
    chat_model: Any = None,
    settings: LayeredMemorySettings | None = None,
    recreate_index: bool = False,
) -> Runtime:
    """Resolve the providers, set up the stores (``recreate_index`` drops the derived collections) and
    build the services and tiers. Opening checks (drift, pending work) are the engine's."""
    settings = settings or LayeredMemorySettings()
    key = settings.embedder_api_key.get_secret_value() if settings.embedder_api_key else None
    emb = _resolve_embedder(embedder, key)
    records.setup()
    analyzer = Analyzer()
    r = settings.retrieval
    encoder = BM25Encoder(k1=r.k1, b=r.b, avgdl=r.avgdl)
    collection = settings.qdrant.collection_prefix + MESSAGES
    if recreate_index and index is not None:
        from .doctor import derived_collections

        for name in sorted(derived_collections(records, settings.qdrant.collection_prefix)):
            if index.has_collection(name):
                index.drop_collection(name)
    indexer = Indexer(records, index, emb, analyzer, encoder, collection, r.index_context)
    searcher = SearchService(records, index, emb, analyzer, encoder, collection, r)
    core = Runtime(
        settings=settings, records=records, index=index, embedder=emb, chat_model=_resolve_chat_model(chat_model),
        analyzer=analyzer, indexer=indexer, searcher=searcher, count_tokens=get_token_counter(settings.context.encoding),
        sessions=SessionRegistry(records),
    )
    from .knowledge.api import KnowledgeRuntime
    from .topics.api import TopicRuntime

    core.topics = TopicRuntime(core)  # topic threading, mid-term summaries (seed 001, 2-3)
    core.knowledge = KnowledgeRuntime(core, core.topics)  # the long-term tier (seed 001, 4)
    core.topics.on_summary = core.knowledge.on_summary  # each new topic summary queues an extraction
    return core


__all__ = ["Runtime", "build_runtime"]
