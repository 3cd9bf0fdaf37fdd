"""One small protocol per storage role. Backends: ``sqlite.py`` / ``redis.py`` / ``postgres.py`` (RecordStore),
``qdrant_edge.py`` / ``qdrant_server.py`` (VectorIndex).

The RecordStore is the source of truth; the VectorIndex is derived and rebuildable from it.
Every RecordStore method takes the tenant first: tenants never share a key or a row.
Methods are batch shaped (lists in, lists out, one round trip where the backend allows).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Protocol, runtime_checkable

from ..errors import InvalidInputError
from ..models import Message, MessageRef
from ..vectors import IndexHit, SparseVector, VectorPoint  # noqa: F401  (re-exported: stores use them from here)

# A schema migration that changed message point ids (v2: they include the chat) leaves this document
# in each tenant; the Indexer moves the old points to the new ids (reusing their vectors), then drops it.
INDEX_UPGRADES = "index_upgrades"
MESSAGE_POINTS_V2 = "message_points_v2"


@runtime_checkable
class RecordStore(Protocol):
    """Messages (an ordered log per tenant) and JSON documents (``collection``/``key`` per tenant).

    Documents hold everything that is not a message: summaries, user data, task memory, tasks,
    topics, profiles, agent interactions. Keys sort as strings; ``list_docs`` returns them in order.
    """

    backend: str  # "sqlite" | "redis" | "postgres"

    def setup(self) -> None:
        """Create tables / check the schema version. Idempotent."""

    def close(self) -> None: ...

    # -- messages ---------------------------------------------------------------------------
    # A message is identified by ``MessageRef(chat_id, message_id)`` within its tenant: message ids
    # are unique per chat only (Telegram numbers each chat's messages from 1).
    def put_messages(self, tenant: str, messages: Sequence[Message]) -> list[bool]:
        """Insert messages atomically; a (chat_id, message_id) already stored is left untouched (idempotent).

        Assigns ``seq`` (increasing per tenant) to new messages and marks them pending for indexing.
        Returns, per message, True when it was new.
        """

    def update_messages(self, tenant: str, messages: Sequence[Message], *, reindex: bool = False) -> None:
        """Overwrite stored messages (same chat_id and message_id), e.g. to set ``topic_id``. Keeps ``seq``
        and the pending flag; ``reindex=True`` marks them pending for indexing again in the same atomic
        write (an edited text: the index must not keep the old one, even if the process dies next).

        Raises:
            NotFoundError: a message is not stored (nothing is written then).
        """

    def get_messages(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        """The messages named by ``(chat_id, message_id)`` refs, in order (None where missing)."""

    def window(self, tenant: str, *, user_id: str, session_key: str, limit: int) -> list[Message]:
        """The last ``limit`` messages of one user's session, oldest first."""

    def chat_window(self, tenant: str, *, chat_id: str, session_key: str | None = None, limit: int) -> list[Message]:
        """The last ``limit`` messages of one chat, whoever wrote them (of one session of it when
        ``session_key`` is given), oldest first: a group chat's window."""

    def scan_messages(
        self,
        tenant: str,
        *,
        user_id: str | None = None,
        session_key: str | None = None,
        chat_id: str | None = None,
        after_seq: int = 0,
        limit: int = 1000,
    ) -> list[Message]:
        """Messages with ``seq > after_seq`` matching the given fields, by ascending seq."""

    def count_messages(
        self, tenant: str, *, user_id: str | None = None, session_key: str | None = None, after_seq: int = 0,
        chat_id: str | None = None,
    ) -> int:
        """How many messages match (``seq > after_seq`` when given: the topic tier's backlog)."""

    def delete_messages(self, tenant: str, *, user_id: str, session_key: str | None = None) -> list[MessageRef]:
        """Delete a user's messages (of one session, or all). Returns the deleted refs, by seq."""

    def delete_refs(self, tenant: str, refs: Sequence[MessageRef]) -> list[MessageRef]:
        """Delete the messages named by ``(chat_id, message_id)`` refs atomically (from every index: session,
        user, chat, pending). Returns the refs that were stored, in the order given; missing ones are skipped."""

    def tenants(self) -> list[str]:
        """Every tenant that has messages or documents."""

    # -- pending for the index --------------------------------------------------------------
    def pending_index(self, tenant: str, limit: int = 1000) -> list[MessageRef]:
        """Messages stored but not yet confirmed indexed (crash recovery), oldest first."""

    def count_pending(self, tenant: str) -> int:
        """How many messages ``pending_index`` would return without a limit (the writer's backlog)."""

    def mark_indexed(self, tenant: str, refs: Sequence[MessageRef]) -> None: ...

    def mark_all_pending(self, tenant: str) -> int:
        """Mark every message of the tenant for re-indexing (``reindex``). Returns the count."""

    # -- documents ----------------------------------------------------------------------------
    def put_docs(self, tenant: str, collection: str, items: Mapping[str, Mapping[str, Any]]) -> None:
        """Upsert JSON documents atomically."""

    def get_docs(self, tenant: str, collection: str, keys: Sequence[str]) -> list[dict[str, Any] | None]: ...

    def list_docs(
        self, tenant: str, collection: str, *, prefix: str = "", after: str = "", limit: int = 1000
    ) -> list[tuple[str, dict[str, Any]]]:
        """Documents whose key starts with ``prefix`` and sorts after ``after``, in key order."""

    def delete_docs(self, tenant: str, collection: str, keys: Sequence[str] | None = None) -> int:
        """Delete the given keys, or the whole collection when ``keys`` is None. Returns the count."""

    def count_docs(self, tenant: str, collection: str, *, prefix: str = "") -> int: ...

    # -- shared cache -------------------------------------------------------------------------
    def recent_cache(self, *, size: int, ttl: int) -> RecentCache | None:
        """A recent-message cache every process using this store shares (Redis: the seed's ZSET + TTL
        layout on the same client and prefix), or None when the store has none (then the topic tier
        keeps one in process)."""


@runtime_checkable
class RecentCache(Protocol):
    """The last ``size`` messages per (tenant, chat), each kept ``ttl`` seconds (seed 001, 2.5.2)."""

    def push(self, tenant: str, messages: Sequence[Message]) -> None:
        """Add or refresh messages (a message already cached is overwritten, e.g. with its topic_id)."""

    def recent(self, tenant: str, chat_id: str, limit: int) -> list[Message]:
        """The chat's newest ``limit`` cached messages, oldest first."""

    def get(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        """Cached messages by (chat_id, message_id), None where not cached."""

    def discard(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        """Drop these messages from the cache (deleted: a read must not find them here)."""

    def clear(self, tenant: str) -> None: ...


@runtime_checkable
class NativeAsync(Protocol):
    """A store that can run on an event loop: under ``stores.native.run_native`` its methods await an
    async client (redis.asyncio, psycopg's AsyncConnectionPool, AsyncQdrantClient) instead of blocking.
    The facade's ``aadd_message(s)`` / ``asearch`` / ``aget_context_for_user`` take that path when every
    store of the engine says True, else a worker thread per call (SQLite, Qdrant Edge)."""

    def native_async(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """One query to a ``VectorIndex``: dense only, sparse only, or both fused with (weighted) RRF
    inside the index. The filter (a ``qdrant_client.models.Filter``, e.g. ``FilterSpec.to_qdrant()``)
    applies inside each prefetch, so a scope filter never lets another scope's point into the
    candidate lists. ``weights`` are (dense, sparse) for the fused case. ``using`` names the dense
    vector ``dense`` is matched against: ``"dense"`` (a record's text), ``"context"`` (a message
    embedded with the turn before it) or ``"mean"`` (the mean of both unit vectors: its score is the mean
    of the two cosines); nothing is found in a collection without that vector.

        index.query("messages", IndexQuery(dense=q, sparse=s, filter=spec.to_qdrant(), limit=10))
        index.query("messages", dense=q, sparse=s, limit=10)     # the same, as keywords
    """

    dense: Sequence[float] | None = None
    sparse: SparseVector | None = None
    filter: Any = None
    limit: int = 10
    prefetch_limit: int = 100
    rrf_k: int = 60
    weights: tuple[float, float] | None = None
    payload: bool | Sequence[str] = True  # the whole payload, none, or only these keys (cheaper for many candidates)
    using: str = "dense"

    @classmethod
    def of(cls, request: IndexQuery | None, keywords: Mapping[str, Any]) -> IndexQuery:
        """The query a backend runs: ``request``, or one built from the keyword shorthand (not both).

        Raises:
            InvalidInputError: both given, a keyword that is no field, or a request of another type.
        """
        if request is None:
            unknown = sorted(set(keywords) - {f.name for f in fields(cls)})
            if unknown:
                raise InvalidInputError(
                    "query", unknown[0], f"is not a field of IndexQuery ({', '.join(f.name for f in fields(cls))})",
                    "fix the keyword's name",
                )
            return cls(**keywords)
        if not isinstance(request, IndexQuery):
            raise InvalidInputError("query", request, "must be an IndexQuery", "pass IndexQuery(...) or keywords")
        if keywords:
            raise InvalidInputError("query", sorted(keywords)[0], "is given twice: as a keyword and in the IndexQuery",
                                    "pass an IndexQuery or keywords, not both")
        return request


def iter_docs(
    records: RecordStore, tenant: str, collection: str, *, prefix: str = "", page: int = 1000
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ``(key, doc)`` of a document collection (keys under ``prefix``), in key order, ``page`` per read."""
    after = ""
    while True:
        rows = records.list_docs(tenant, collection, prefix=prefix, after=after, limit=page)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1][0]


# What a VectorIndex declares in ``capabilities`` (callers test membership, never the backend name).
MANUAL_OPTIMIZE = "manual_optimize"
"""``optimize(name)`` builds the ANN (HNSW) index and merges segments, and nothing else does: until it runs,
search is exact (brute force). It blocks writes, so it is maintenance, never on the request path (Qdrant
Edge). Without it the backend optimizes by itself and ``optimize`` is a no-op returning False (a Qdrant server)."""
INDEX_CAPABILITIES = frozenset({MANUAL_OPTIMIZE})


@runtime_checkable
class VectorIndex(Protocol):
    """Named vectors ``dense`` and ``context`` (cosine), ``mean`` (dot product, derived from those two by the
    index) and ``bm25`` (sparse, IDF modifier) with a filterable payload.

    Filters are ``qdrant_client.models.Filter`` objects on every backend (the Edge backend
    translates them). Flags are stored as int 0/1 (Qdrant Edge cannot match bools).
    ``capabilities`` is a subset of :data:`INDEX_CAPABILITIES`; ``backend`` names the backend for
    messages only.
    """

    backend: str  # "qdrant-edge" | "qdrant"
    capabilities: frozenset[str]

    def ensure_collection(
        self, name: str, *, dense_dim: int | None, embedder: str | None = None, bm25: Mapping[str, Any] | None = None,
    ) -> None:
        """Create the collection with the payload indexes if missing, recording ``bm25`` (what its sparse vectors
        are written with; ``info()["schema"]["bm25"]``). Raises SchemaMismatch when an existing collection has
        another dense size or was filled by another embedder."""

    def set_bm25(self, name: str, bm25: Mapping[str, Any]) -> None:
        """Record ``bm25`` on an existing collection (every point's sparse vector was just rewritten with it)."""

    def has_collection(self, name: str) -> bool: ...

    def drop_collection(self, name: str) -> None: ...

    def upsert(self, name: str, points: Sequence[VectorPoint]) -> None: ...

    def query(self, name: str, request: IndexQuery | None = None, /, **keywords: Any) -> list[IndexHit]:
        """Run one :class:`IndexQuery` (or its fields as keywords: ``IndexQuery.of``), best first."""

    def query_sides(self, name: str, dense: IndexQuery, sparse: IndexQuery) -> tuple[list[IndexHit], list[IndexHit]]:
        """Two single-side queries (a dense one and a sparse one), each with its own scores, unfused: the
        input of a client-side fusion. A backend may plan them as one batch."""

    def query_batch(self, name: str, requests: Sequence[IndexQuery]) -> list[list[IndexHit]]:
        """Several queries, each with its own scores, results in order (a backend may plan them as one
        batch): e.g. both dense vectors and BM25 of a message search."""

    def count(self, name: str, filter: Any = None) -> int: ...

    def holds_kind(self, name: str, kind: Any) -> bool:
        """False only when no point of this ``kind`` payload value was ever written to the collection, known
        without a query (callers then skip the query: a context asks for topic summaries and entities in
        stores that have none). A backend that cannot tell so cheaply returns True."""

    def delete(self, name: str, *, ids: Sequence[str] | None = None, filter: Any = None) -> None: ...

    def scroll(
        self, name: str, *, filter: Any = None, limit: int = 256, offset: Any = None, with_vectors: bool = False
    ) -> tuple[list[IndexHit], Any]:
        """A page of points and the offset of the next page (None at the end)."""

    def retrieve(self, name: str, ids: Sequence[str], *, with_vectors: bool = False) -> list[IndexHit]:
        """The points with these ids (missing ones left out; any order), payload always, ``dense``
        when ``with_vectors``. Scores are 0."""

    def set_payload(self, name: str, ids: Sequence[str], payload: Mapping[str, Any]) -> None: ...

    def size_bytes(self, name: str) -> int: ...

    def info(self, name: str) -> dict[str, Any]:
        """``points``, ``segments``, ``indexed_vectors`` (vectors inside an ANN index), ``payload_indexes``
        ({field: type}) and ``schema``."""

    def optimize(self, name: str) -> bool:
        """Maintenance: build the ANN index of the collection (see :data:`MANUAL_OPTIMIZE`). Returns True
        when anything changed; a backend that optimizes by itself returns False at once."""

    def close(self) -> None: ...


# Payload fields that get an index on every collection, with their schema kind.
PAYLOAD_INDEXES: dict[str, str] = {
    "tenant": "tenant",  # keyword, is_tenant=True
    "user_id": "keyword",
    "chat_id": "keyword",
    "session_key": "keyword",
    "role": "keyword",
    "kind": "keyword",
    "topic_id": "keyword",
    "task_id": "keyword",
    "interaction_type": "keyword",
    "channel": "keyword",
    "author": "keyword",
    "lang": "keyword",
    "success": "integer",
    "timestamp": "datetime",
}
