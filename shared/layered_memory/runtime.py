"""The runtime of one engine: the stores, providers and services every handle of a ``LayeredMemory``
shares, built once by ``build_runtime`` (``LayeredMemory.from_stores`` calls it).

    core = build_runtime(records, index, embedder="default", settings=settings)
    mem = LayeredMemory(core, "acme", "u1")         # a handle: a Scope over the shared runtime

This is the composition root: the one module that knows every tier's class and registers the kinds
of derived state (``_kinds``); only the facade (``engine.py``) imports it. ``Runtime`` implements
``kernel.Kernel``, the protocol every tier types against; a tier reaches another through the kernel's
seams (``TopicTier``, ``KnowledgeTier``) or a typed callback set here (topics -> knowledge:
``on_summary``), never by importing it upward. The order of a write: records (``writes.MessageWrites.add_messages``)
-> ``index_new_messages`` (the BM25 points; the ``background`` writer embeds later) ->
``topics.on_write`` (queue for threading); of a context: window -> ``searcher`` -> ``topics.memory_lines``
-> ``knowledge.memory_lines``; of ``process()``: summaries -> ``topics.process`` -> ``knowledge.process``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._native import native_ready
from .config import LayeredMemorySettings
from .errors import ConfigurationError, InvalidInputError
from .index.background import BackgroundIndexer
from .index.indexer import Indexer
from .index.points import MESSAGES
from .index.search import SearchService
from .kernel import Kind
from .models import Message
from .providers.base import ChatModel, Embedder, Reranker
from .providers.tokens import get_token_counter
from .retrieval.analyzer import Analyzer
from .retrieval.bm25 import BM25Encoder, marker
from .chats import ChatRegistry
from .sessions import SessionRegistry
from .stores.base import RecordStore, VectorIndex
from .stores.native import OffloadedEmbedder, OffloadedReranker

if TYPE_CHECKING:
    from .agents.api import AgentRuntime
    from .knowledge.api import KnowledgeRuntime
    from .topics.api import TopicRuntime

logger = logging.getLogger(__name__)

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


def _resolve_rerank_model(model: Any, settings: LayeredMemorySettings) -> Reranker | None:
    """The rerank model passed to the constructor, else the one ``settings.rerank_model`` names (``"none"``: none)."""
    from .providers.rerankers import as_reranker

    key = settings.rerank_model_api_key.get_secret_value() if settings.rerank_model_api_key else None
    return as_reranker(settings.rerank_model if model is None else model, api_key=key)


def _resolve_chat_model(model: Any) -> ChatModel | None:
    if model is None:
        return None
    from .providers.wrappers import as_chat_model

    return as_chat_model(model)


@dataclass
class Runtime:
    """State shared by every tenant / user handle of one LayeredMemory (implements ``kernel.Kernel``)."""

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
    chats: ChatRegistry  # who is in each chat: what a member sees of a group chat
    # The tiers, built by build_runtime (topics: threading and mid-term summaries; knowledge: the
    # long-term tier fed by topic summaries; agents: seed 004's store, built on first use).
    topics: TopicRuntime = field(init=False)
    knowledge: KnowledgeRuntime = field(init=False)
    _agents: AgentRuntime | None = field(default=None, init=False)
    kinds: tuple[Kind, ...] = ()  # the kinds of derived state (``_kinds``), built by build_runtime
    summary_jobs: set[tuple[str, str, str]] = field(default_factory=set)  # (tenant, user, session) to refresh
    ensured_collections: set[str] = field(default_factory=set)  # vector collections already created
    write_lock: threading.RLock = field(default_factory=threading.RLock)
    closed: bool = False
    background: BackgroundIndexer | None = None  # the pending sources and their writer thread (None without a vector index)

    @property
    def deferred(self) -> bool:
        """Whether new messages get their dense vectors from the background writer (else inline)."""
        return self.background is not None and self.embedder is not None and self.settings.index_mode == "background"

    def index_new_messages(self, tenant: str, new: Sequence[Message]) -> None:
        """Index messages just stored (under the write lock). Background mode: their BM25 points now
        (keyword search sees them when the add returns), the dense vectors from the writer; while the
        writer builds an HNSW index (the Edge write lock is taken) the writer writes those too. Sync
        mode or no embedder: the full points now. A failure leaves them pending (the writer or the next open indexes them)."""
        try:
            if not self.deferred:
                self.indexer.index_messages(tenant, new)
            elif self.background.optimizing.acquire(blocking=False):  # type: ignore[union-attr]
                try:
                    self.indexer.index_sparse(tenant, new)
                finally:
                    self.background.optimizing.release()  # type: ignore[union-attr]
        except Exception as exc:  # stored and pending: the writer, sync_index or the next open indexes them
            logger.warning("indexing failed (%s: %s); %d messages stay pending", type(exc).__name__, exc, len(new))

    def notify_writer(self, tenant: str, new: Sequence[Message]) -> None:
        """After the write lock is released: wake the writer for the messages' dense vectors."""
        if self.deferred and new:
            self.background.notify(tenant, [m.ref for m in new], source="messages")  # type: ignore[union-attr]

    def flush_index(self, timeout: float | None = None) -> bool:
        """Wait until everything written before the call is indexed (dense vectors included); False
        on timeout. Refused under the write lock: the writer needs it for its last step."""
        if self.background is None:
            return True
        if self.write_lock._is_owned():  # type: ignore[attr-defined]
            raise InvalidInputError(
                "flush", "inside a write", "cannot wait for the index writer while holding the engine's write lock",
                "call flush() outside hooks and write callbacks",
            )
        if not self.deferred:
            return True
        return self.background.flush(timeout)

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
    rerank_model: Any = None,
) -> Runtime:
    """Resolve the providers, set up the stores (``recreate_index`` drops the derived collections) and
    build the services and tiers. Opening checks (drift, pending work) are the engine's."""
    settings = settings or LayeredMemorySettings()
    key = settings.embedder_api_key.get_secret_value() if settings.embedder_api_key else None
    emb = _resolve_embedder(embedder, key)
    if emb is not None and native_ready(records, index):  # on the loop's native path, embedding runs in a thread (CPU)
        emb = OffloadedEmbedder(emb)
    records.setup()
    analyzer = Analyzer()
    r = settings.retrieval
    encoder = BM25Encoder(k1=r.k1, b=r.b, avgdl=r.avgdl)
    collection = settings.qdrant.collection_prefix + MESSAGES
    kinds = _kinds()
    if recreate_index and index is not None:
        from .doctor import derived_collections

        for name in sorted(derived_collections(kinds, records, settings)):
            if index.has_collection(name):
                index.drop_collection(name)
    indexer = Indexer(records, index, emb, analyzer, encoder, collection, r.index_context, r.session_gap_hours * 3600.0,
                      message_encoder=BM25Encoder(k1=r.message_k1, b=r.message_b, avgdl=r.message_avgdl), bm25=marker(r))
    reranker = _resolve_rerank_model(rerank_model, settings)
    if reranker is not None and native_ready(records, index):  # on the loop's native path, the model runs in a thread
        reranker = OffloadedReranker(reranker)
    searcher = SearchService(records, index, emb, analyzer, encoder, collection, r, rerank_model=reranker)
    core = Runtime(
        settings=settings, records=records, index=index, embedder=emb, chat_model=_resolve_chat_model(chat_model),
        analyzer=analyzer, indexer=indexer, searcher=searcher, count_tokens=get_token_counter(settings.context.encoding, lazy=True),
        sessions=SessionRegistry(records), chats=ChatRegistry(records, settings.memory),
    )
    from .knowledge.api import KnowledgeRuntime
    from .topics.api import TopicRuntime

    core.topics = TopicRuntime(core)  # topic threading, mid-term summaries (seed 001, 2-3)
    core.knowledge = KnowledgeRuntime(core, core.topics)  # the long-term tier (seed 001, 4)
    core.topics.on_summary = core.knowledge.on_summary  # each new topic summary queues an extraction
    core.kinds = tuple(kind(core) for kind in kinds)
    if index is not None:  # every kind with a pending source: the writer embeds its pending records
        bg = BackgroundIndexer(settings.writer, index)
        for kind in core.kinds:
            source = kind.pending_source()
            if source is not None:
                bg.add_source(source)
        bg.watch(collection)
        core.background = bg
    return core


def _kinds() -> tuple[type[Kind], ...]:
    """The registered kinds of derived state, in the doctor's report order: each lives in its tier's folder."""
    from .agents.health import AgentKind
    from .documents.health import DocumentKind
    from .items.health import ItemKind
    from .message_health import MessageKind
    from .topics.health import SummaryKind, ThreadingCheck

    return (MessageKind, SummaryKind, ItemKind, AgentKind, DocumentKind, ThreadingCheck)


__all__ = ["Runtime", "build_runtime"]
