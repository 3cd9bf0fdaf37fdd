"""The kernel: what the tiers of one engine share, typed below them.

Every tier (``topics/``, ``knowledge/``, ``agents/``, ``documents/``, ``items``, ``session_summaries``,
``edits``, ``doctor``, ...) takes a ``Kernel``: the stores, the providers, the analyzer, the write lock,
the message indexer and search, the background writer, and the other tiers seen through small seams
(``TopicTier``, ``KnowledgeTier``) when one tier must reach another. ``runtime.Runtime`` is the one
implementation, built by ``runtime.build_runtime`` (the composition root, which only the facade sees),
so a tier never imports the runtime, the facade, or a tier above it:

    def drop_session(core: Kernel, tenant: str, user: str, session: str) -> None:
        with core.write_lock:
            core.sessions.drop(tenant, user, session)

This module imports nothing at run time; its names are for signatures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import threading

    from .chats import ChatRegistry
    from .config import LayeredMemorySettings
    from .index.background import BackgroundIndexer
    from .index.pending import PendingSource
    from .index.indexer import Indexer
    from .index.search import SearchService
    from .models import Message
    from .providers.base import ChatModel, Embedder
    from .retrieval.analyzer import Analyzer
    from .sessions import SessionRegistry
    from .stores.base import RecentCache, RecordStore, VectorIndex


class TopicTier(Protocol):
    """What the tiers beside the topic tier use of it (``topics.api.TopicRuntime`` is the one)."""

    @property
    def cache(self) -> RecentCache | None:
        """The recent-message cache (None: off)."""
        ...

    def on_write(self, tenant: str, new: Sequence[Message]) -> None:
        """Newly stored (or re-stored) messages: into the recent cache."""
        ...

    def summarizer(self, tenant: str) -> Any:
        """The tenant's topic summaries (``topics.summaries.Summarizer``): their search, points and index."""
        ...

    def process(self, tenant: str) -> dict[str, int]:
        """Thread the tenant's queued messages and write due topic summaries (``mem.process()``)."""
        ...


class KnowledgeTier(Protocol):
    """What the tiers beside the long-term tier use of it (``knowledge.api.KnowledgeRuntime`` is the one)."""

    def forget_profile(self, tenant: str, user_id: str) -> None:
        """Drop the cached profile of a user (a fact it was built from changed)."""
        ...

    def process(self, tenant: str) -> dict[str, int]:
        """Run the tenant's queued extraction jobs (``mem.process()``, after the topic tier's)."""
        ...


class Kind(Protocol):
    """One kind of state derived from the records, as the doctor, the index writer, ``reindex`` and
    ``recreate_index`` see it (``kinds``: its base classes and helpers; each kind lives in its tier's folder)."""

    name: str  # its key in the doctor's report; its source name in the index writer
    writer: bool  # its ``pending`` records are the index writer's lag (summed in the report's ``pending``)
    intents: tuple[str, ...]  # the ops of the delete intents it finishes (``drain``)
    drift: tuple[str, ...]  # the keys of its report that are drift (``pending`` is lag, never drift)

    @classmethod
    def collections(cls, records: RecordStore, settings: LayeredMemorySettings) -> set[str]:
        """The vector collections derived from its records, every tenant's (``recreate_index`` drops them
        before anything is built: a class method)."""
        ...

    def pending_source(self) -> PendingSource | None:
        """What of its records is pending for the background writer (None: the writer never indexes this kind)."""
        ...

    def check(self, tenant: str, repair: bool) -> dict[str, int]:
        """Its part of the doctor's report; with ``repair`` the drift is repaired (idempotent)."""
        ...

    def at_open(self, tenant: str, repair: bool) -> dict[str, int] | None:
        """The check when a store opens: a few counts; their disagreement brings the full ``check``,
        whose report is returned when it found drift (None: nothing to say). Raises ``Suspect``."""
        ...

    def reindex(self, tenant: str) -> int:
        """Re-create every point of the tenant's records of this kind. Returns how many were indexed."""
        ...

    def drain(self, tenant: str, intent: Mapping[str, Any]) -> None:
        """Finish one interrupted write or delete (an intent of one of ``intents``), under the write lock."""
        ...

    def drifted(self, part: Mapping[str, int]) -> bool:
        """Whether its report shows drift."""
        ...


class Kernel(Protocol):
    """State shared by every handle of one engine, as the tiers see it (see the module docstring)."""

    settings: LayeredMemorySettings
    records: RecordStore
    index: VectorIndex | None
    embedder: Embedder | None
    chat_model: ChatModel | None
    analyzer: Analyzer
    indexer: Indexer  # the message write side (BM25 and dense points, the messages pending for the index)
    searcher: SearchService  # the message search
    count_tokens: Callable[[str], int]
    sessions: SessionRegistry
    chats: ChatRegistry  # who is in each chat: what a member sees of a group chat
    ensured_collections: set[str]  # vector collections already created
    summary_jobs: set[tuple[str, str, str]]  # (tenant, user, session) whose summary to refresh: the write path queues
    write_lock: threading.RLock  # one writer at a time per engine
    closed: bool  # set once by close(): the stores are closed
    background: BackgroundIndexer | None  # the pending sources and their writer thread (None without a vector index)

    @property
    def deferred(self) -> bool:
        """Whether new records get their dense vectors from the background writer (else inline)."""
        ...

    @property
    def topics(self) -> TopicTier: ...

    @property
    def knowledge(self) -> KnowledgeTier: ...

    @property
    def agents(self) -> Any:
        """The agent store's per-engine state (``agents.api.AgentRuntime``, built on first use; only the
        ``agents`` package reads it)."""
        ...

    @property
    def kinds(self) -> Sequence[Kind]:
        """The kinds of derived state (``Kind``), in the doctor's report order: what the doctor, the
        index writer, ``reindex`` and ``recreate_index`` loop over."""
        ...

    def index_new_messages(self, tenant: str, new: Sequence[Message]) -> None:
        """Index messages just stored (under the write lock); a failure leaves them pending."""
        ...

    def notify_writer(self, tenant: str, new: Sequence[Message]) -> None:
        """After the write lock is released: wake the writer for the messages' dense vectors."""
        ...

    def flush_index(self, timeout: float | None = None) -> bool:
        """Wait until everything written before the call is indexed (dense vectors included); False on
        timeout. Refused under the write lock (the writer needs it for its last step)."""
        ...


__all__ = ["Kernel", "Kind", "KnowledgeTier", "TopicTier"]
