"""``LayeredMemory``: the facade users hold.

    mem = LayeredMemory.embedded("./memory")            # SQLite + Qdrant Edge on disk
    mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content="Hi")
    mem.get_context_for_user("u1", "c1")

Every public operation has an async twin (``aadd_message``, ``aget_context_for_user``, ...): the sync
code in a worker thread, or for the hot ones on the server backends on the event loop itself (``_native.py``). ``mem.tenant("acme")``
returns a handle that reads and writes only that tenant; ``mem.for_user("u1")`` one that can only
see user u1 (adapters bind both at construction).

The facade holds no logic of its own beyond construction and the handles' scope: each call is delegated
to a service of the handle, built on first use over the shared runtime (``writes.MessageWrites``,
``reads.MessageReads``, ``edits.MessageEdits``, ``session_summaries.SessionSummaries``,
``userdata.UserData``, ``maintenance.Maintenance``), to ``context.build_context``, or to a tier's facet.
A handle is a light view: a ``Scope`` over the runtime, so ``tenant()`` / ``for_user()`` cost a few
attribute sets.
"""

from __future__ import annotations

import functools
import os
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ._async import async_twins
from ._native import run_engine
from .config import LayeredMemorySettings
from .context import Context, build_context, check_context_args
from .edits import MessageEdits
from .errors import InvalidInputError
from .index import Scope, check_user_id
from .maintenance import Maintenance
from .models import check_id
from .providers.base import ChatModel, Embedder
from .opening import check_tenants, embedded_stores, server_stores, settings_stores
from .reads import MessageReads
from .runtime import Runtime, build_runtime
from .stores.base import RecordStore, VectorIndex
from .session_summaries import SessionSummaries
from .userdata import UserData
from .writes import MessageWrites

if TYPE_CHECKING:
    from .agents.api import Agents
    from .chats import Chats
    from .documents import Documents
    from .items import Items
    from .knowledge.api import Knowledge
    from .topics.api import Topics


_DEFAULT = "default"


def _delegate(part: str, cls: type, name: str) -> Any:
    """A facade method that calls ``self.<part>.<name>`` (same signature and docstring)."""
    target = getattr(cls, name)

    @functools.wraps(target)
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(getattr(self, part), name)(*args, **kwargs)

    return method


@async_twins
class LayeredMemory:
    """The memory engine for one tenant (default ``"default"``), optionally bound to one user."""

    _ASYNC = (
        "add_message", "add_messages", "list_sessions", "get_messages", "get_session_messages", "clear_session", "search",
        "get_context_for_user", "get_summary", "refresh_summary", "get_summary_quality", "evaluate_summary", "process", "reindex", "sync_index",
        "set_user_data", "get_user_data", "delete_user_data", "add_tool_result", "get_task_memory",
        "clear_task_memory", "create_task", "update_task", "complete_task", "list_tasks", "get_task", "optimize", "close",
        "doctor", "flush", "status", "edit_message", "delete_message",
    )
    _NATIVE = ("add_message", "add_messages", "search", "get_context_for_user")  # on the loop itself on server backends

    async def _run_async(self, call: Any, write: bool) -> Any:
        return await run_engine(self._core, call, write=write)

    def __init__(self, core: Runtime, tenant: str = _DEFAULT, user_id: str | None = None, *, pinned: bool = False) -> None:
        self._core = core
        self.scope = Scope(check_id("tenant", tenant), check_user_id(user_id))  # type: ignore[arg-type]
        self._pinned = pinned or user_id is not None  # a tenant or user handle: its tenant is fixed
        self.tenant_id = self.scope.tenant
        self.bound_user = self.scope.bound_user

    # -- the services of this handle (built on first use; each a Scope over the shared runtime) --------
    _writes = cached_property(lambda self: MessageWrites(self._core, self.scope))
    _reads = cached_property(lambda self: MessageReads(self._core, self.scope))
    _edits = cached_property(lambda self: MessageEdits(self._core, self.scope, self._writes.validate, self._writes.drain_intents))
    _summaries = cached_property(lambda self: SessionSummaries(self._core, self.scope))
    _user_data = cached_property(lambda self: UserData(self._core.records, self.scope))
    _upkeep = cached_property(lambda self: Maintenance(self._core, self.scope))

    # -- delegations: messages (writes.py, reads.py) ---------------------------------------------
    check_messages = _delegate("_writes", MessageWrites, "check_messages")
    add_message = _delegate("_writes", MessageWrites, "add_message")
    add_messages = _delegate("_writes", MessageWrites, "add_messages")
    clear_session = _delegate("_writes", MessageWrites, "clear_session")
    list_sessions = _delegate("_reads", MessageReads, "list_sessions")
    get_messages = _delegate("_reads", MessageReads, "get_messages")
    get_session_messages = _delegate("_reads", MessageReads, "get_session_messages")
    plan_search = _delegate("_reads", MessageReads, "plan_search")
    search = _delegate("_reads", MessageReads, "search")
    # session summaries (seed 002) and user data, task memory, tasks
    get_summary = _delegate("_summaries", SessionSummaries, "get_summary")
    refresh_summary = _delegate("_summaries", SessionSummaries, "refresh_summary")
    get_summary_quality = _delegate("_summaries", SessionSummaries, "get_summary_quality")
    evaluate_summary = _delegate("_summaries", SessionSummaries, "evaluate_summary")
    set_user_data = _delegate("_user_data", UserData, "set_user_data")
    get_user_data = _delegate("_user_data", UserData, "get_user_data")
    delete_user_data = _delegate("_user_data", UserData, "delete_user_data")
    add_tool_result = _delegate("_user_data", UserData, "add_tool_result")
    get_task_memory = _delegate("_user_data", UserData, "get_task_memory")
    clear_task_memory = _delegate("_user_data", UserData, "clear_task_memory")
    create_task = _delegate("_user_data", UserData, "create_task")
    get_task = _delegate("_user_data", UserData, "get_task")
    update_task = _delegate("_user_data", UserData, "update_task")
    complete_task = _delegate("_user_data", UserData, "complete_task")
    list_tasks = _delegate("_user_data", UserData, "list_tasks")
    # a platform's edit or delete of one message (layered_memory.edits): re-indexed, summaries and facts marked stale
    edit_message = _delegate("_edits", MessageEdits, "edit_message")
    delete_message = _delegate("_edits", MessageEdits, "delete_message")
    # maintenance (maintenance.py): process() and the index, the doctor, close
    process = _delegate("_upkeep", Maintenance, "process")
    sync_index = _delegate("_upkeep", Maintenance, "sync_index")
    flush = _delegate("_upkeep", Maintenance, "flush")
    status = _delegate("_upkeep", Maintenance, "status")
    reindex = _delegate("_upkeep", Maintenance, "reindex")
    doctor = _delegate("_upkeep", Maintenance, "doctor")
    optimize = _delegate("_upkeep", Maintenance, "optimize")
    close = _delegate("_upkeep", Maintenance, "close")

    # -- construction (which stores: opening.py) ------------------------------------------------
    @classmethod
    def from_stores(
        cls, records: RecordStore, index: VectorIndex | None, *, embedder: Any = _DEFAULT, chat_model: Any = None,
        settings: LayeredMemorySettings | None = None, recreate_index: bool = False, repair_index: bool = True, rerank_model: Any = None,
    ) -> LayeredMemory:
        """Build from ready stores (any RecordStore / VectorIndex).

        ``recreate_index=True`` drops the vector collections (messages, items, agents) and re-indexes
        every tenant from the RecordStore: the way to switch embedders (a collection keeps one
        embedder's vectors). Otherwise every tenant is checked on open (``doctor.open_check``): delete
        intents are drained, pending messages indexed, and an index behind or ahead of the records
        is repaired with a warning (with ``repair_index=False`` only the warning: the doctor reports).

        ``rerank_model`` (opt-in): a model that reorders the best ``retrieval.rerank_depth`` hits of each message
        search, the context's included: a LangChain document compressor or cross-encoder, a LlamaIndex node
        postprocessor, a sentence-transformers ``CrossEncoder``, a ``(query, documents) -> scores`` function, or
        ``"<model>@<url>"`` for a rerank API (``providers.rerankers``; default: ``settings.rerank_model``)."""
        core = build_runtime(records, index, embedder=embedder, chat_model=chat_model, settings=settings, recreate_index=recreate_index,
                             rerank_model=rerank_model)
        check_tenants(core, recreate_index=recreate_index, repair_index=repair_index)
        return cls(core, core.settings.tenant)

    @classmethod
    def embedded(
        cls, path: str | os.PathLike[str] = ".layered_memory", *, embedder: Any = _DEFAULT, chat_model: Any = None,
        settings: LayeredMemorySettings | None = None, recreate_index: bool = False, repair_index: bool = True, rerank_model: Any = None,
    ) -> LayeredMemory:
        """SQLite + Qdrant Edge under ``path`` (created if missing). No server.

        The record file is ``settings.sqlite.path`` when set, else ``<path>/records.sqlite3``, opened
        with ``settings.sqlite.synchronous`` (FULL by default: acknowledged writes survive a power loss)."""
        settings = settings or LayeredMemorySettings()
        records, index = embedded_stores(path, settings)
        return cls.from_stores(records, index, embedder=embedder, chat_model=chat_model, settings=settings,
                               recreate_index=recreate_index, repair_index=repair_index, rerank_model=rerank_model)

    @classmethod
    def from_urls(
        cls, *, redis_url: str | None = None, postgres_url: str | None = None, qdrant_url: str | None = None,
        qdrant_api_key: str | None = None, embedder: Any = _DEFAULT, chat_model: Any = None,
        settings: LayeredMemorySettings | None = None, recreate_index: bool = False, repair_index: bool = True, rerank_model: Any = None,
    ) -> LayeredMemory:
        """Server backends: the records in PostgreSQL (``postgres_url``; Redis beside it, when given, is the
        shared recent-message cache of seed 001) or in Redis (``redis_url`` alone; ``redis+cluster://`` for a
        cluster), vectors in a Qdrant server (or none: BM25 over the records, seed 002's core)."""
        settings = settings or LayeredMemorySettings()
        records, index = server_stores(settings, redis_url=redis_url, postgres_url=postgres_url, qdrant_url=qdrant_url,
                                       qdrant_api_key=qdrant_api_key)
        return cls.from_stores(records, index, embedder=embedder, chat_model=chat_model, settings=settings,
                               recreate_index=recreate_index, repair_index=repair_index, rerank_model=rerank_model)

    @classmethod
    def from_settings(
        cls, settings: LayeredMemorySettings | None = None, *, embedder: Any = None, chat_model: Any = None,
        recreate_index: bool = False, repair_index: bool = True, rerank_model: Any = None,
    ) -> LayeredMemory:
        """From ``LAYERED_MEMORY_*`` (or ``settings``): records in PostgreSQL or Redis (their urls), else SQLite under
        ``data_dir``; vectors on the Qdrant server at ``qdrant.url``, else Qdrant Edge (SQLite only)."""
        settings = settings or LayeredMemorySettings()
        records, index = settings_stores(settings)
        return cls.from_stores(records, index, embedder=embedder if embedder is not None else settings.embedder,
                               chat_model=chat_model, settings=settings, recreate_index=recreate_index, repair_index=repair_index, rerank_model=rerank_model)

    def tenant(self, name: str) -> LayeredMemory:
        """A handle that reads and writes only tenant ``name`` (same stores).

        Only the engine itself (what ``embedded`` / ``from_urls`` / ``from_settings`` return) opens any
        tenant: a handle made by ``tenant()`` or ``for_user()`` can only narrow, so ``h.tenant(other)``
        raises and ``h.tenant(h.tenant_id)`` is ``h``'s own scope.

        Raises:
            InvalidInputError: ``name`` is invalid, or this handle is bound to another tenant.
        """
        name = check_id("tenant", name)  # type: ignore[assignment]
        if self._pinned:
            if name != self.tenant_id:
                raise InvalidInputError(
                    "tenant", name, f"this handle is bound to tenant {self.tenant_id!r} and cannot reach another tenant",
                    "open the other tenant from the engine itself: LayeredMemory.embedded(...).tenant(name)",
                )
            return self  # its own scope: the same view (and the facets it already built)
        return LayeredMemory(self._core, name, self.bound_user, pinned=True)

    def for_user(self, user_id: str) -> LayeredMemory:
        """A handle that can only read and write ``user_id``'s data in this tenant (and cannot leave it)."""
        scope = self.scope.narrow(user_id)  # a bound handle narrows only to its own user
        if scope.bound_user == self.bound_user:
            return self
        return LayeredMemory(self._core, self.tenant_id, scope.bound_user, pinned=True)

    @property
    def settings(self) -> LayeredMemorySettings:
        return self._core.settings

    @property
    def embedder(self) -> Embedder | None:
        return self._core.embedder

    @property
    def chat_model(self) -> ChatModel | None:
        return self._core.chat_model

    @property
    def records(self) -> RecordStore:
        return self._core.records

    @property
    def index(self) -> VectorIndex | None:
        return self._core.index

    # -- the tiers of this handle (built once per handle, on first use) ---------------------------
    @cached_property
    def topics(self) -> Topics:
        """Topic threading, mid-term summaries, ``quick_search`` / ``topic_search`` (seed 001)."""
        from .topics.api import Topics

        return Topics(self._core, self.scope, process=self._upkeep.process)  # the tenant's whole process(), as on the engine

    @cached_property
    def chats(self) -> Chats:
        """Who is in each chat (private or group; members learned from messages or declared): ``mem.chats.declare``."""
        from .chats import Chats

        return Chats(self._core.chats, self.scope, self._core.write_lock)

    @cached_property
    def knowledge(self) -> Knowledge:
        """Long-term tier: entities, relations, user profiles, graph queries (seed 001, 4)."""
        from .knowledge.api import Knowledge

        return Knowledge(self._core, self.scope)

    @cached_property
    def agents(self) -> Agents:
        """Agent context stores (seed 004): ``mem.agents.create(user_id, agent_name)``."""
        from .agents.api import Agents

        return Agents(self._core, self.scope)

    @cached_property
    def items(self) -> Items:
        """Namespaced JSON items with hybrid search (backs the LangGraph ``BaseStore`` adapter)."""
        from .items import Items

        return Items(self._core, self.scope)

    @cached_property
    def documents(self) -> Documents:
        """Indexed documents and git repositories (seed 002): ``index_document``, ``index_repo``,
        ``vector_rag``, ``search_repos``. A bound handle's uploads are private to its user."""
        from .documents import Documents

        return Documents(self._core, self.scope)

    def count_tokens(self, text: str) -> int:
        return self._core.count_tokens(text)

    # -- context ------------------------------------------------------------------------------
    def get_context_for_user(
        self, user_id: str | None, session_id: str, query: str | None = None, include_vector: bool = True,
        max_tokens: int | None = None, *, task_id: str | None = None, include_documents: bool | None = None,
    ) -> Context:
        """The prompt context in the seed 002 order, filling ``max_tokens`` with what is worth most.

        1. "Previous context summary: ..." (system), 2. user data (system), 3. the session's last
        messages (at most ``short_term_window``), 4. "Relevant memory: ..." (this session's older
        messages and their following turns, topic summaries, facts), 5. "Relevant conversation
        memory: ..." (the user's other sessions), 6. "Relevant documents: ..." when asked. Blocks 4-6 are
        chosen by one ranking over every tier's candidates, by value per token, above a relevance floor
        and without repeats (blocks 4-5 need an embedder and ``include_vector``). Every recalled line reads
        ``[2024-05-02 09:05] Anna: text``. ``max_tokens`` (default ``context.max_tokens``) is filled and
        never exceeded (tiktoken). ``print(ctx)`` shows the whole context as text (``ctx.text``).
        See docs/context.md.
        """
        user_id = self.scope.user(user_id)
        session_id, query, max_tokens, task_id = check_context_args(session_id, query, include_vector, max_tokens, task_id)
        from .documents.context import wants_documents

        with_docs = wants_documents(include_documents, self._core.settings.documents)  # checked before any read
        return build_context(self._core, self, user_id, session_id, query, include_vector, max_tokens, task_id=task_id, with_docs=with_docs)

    def __enter__(self) -> LayeredMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> LayeredMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

