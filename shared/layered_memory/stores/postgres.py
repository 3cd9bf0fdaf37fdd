"""PostgresRecordStore: the RecordStore on PostgreSQL (psycopg 3 and a ``psycopg_pool.ConnectionPool``).

Seed 001 keeps messages and topics in PostgreSQL, Qdrant for vectors and Redis as the recent-message
cache. The schema and its migrations are in ``postgres_schema.py``, the pools, transactions, error
translation and ``setup()`` in ``postgres_connect.py``. Each call takes a pooled
connection for one transaction (committed on success, rolled back on any error), so a failed batch
leaves nothing behind. ``put_messages`` locks its tenant's counter row: writers of one tenant
serialize, and ``seq`` follows their commit order (never reused).

Example::

    store = PostgresRecordStore.from_url("postgresql://lm:secret@db:5432/memory")
    store.setup()                      # checks the server, applies migrations, opens the pool
    store.put_messages("default", [Message.build({...})])

With ``cache_url`` (a Redis URL) ``recent_cache()`` returns the seed's Redis cache (seed 001, 2.5.2),
shared by every process; without it the topic tier keeps one in process.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ..config import PostgresSettings
from ..errors import ConfigurationError, InvalidInputError, NotFoundError
from ..models import Message, MessageRef
from .postgres_connect import PostgresConnection
from .sqlite import check_collection, check_limit, check_tenant, dump_doc, dump_message, load_message, not_stored, prefix_end, ref_pairs

logger = logging.getLogger(__name__)

__all__ = ["PostgresRecordStore"]


def _doc_key(key: object) -> str:
    if isinstance(key, str) and "\x00" in key:
        raise InvalidInputError("document key", key, "must not contain NUL (\\x00): PostgreSQL text cannot hold it", "remove the NUL character")
    return key  # type: ignore[return-value]


def _key_range(prefix: str, after: str) -> tuple[str, list[str]]:
    """SQL for ``key`` starting with ``prefix`` and greater than ``after`` (an index range, "C" order)."""
    clauses: list[str] = []
    params: list[str] = []
    if after and after >= prefix:
        clauses.append("key > %s")
        params.append(_doc_key(after))
    elif prefix:
        clauses.append("key >= %s")
        params.append(_doc_key(prefix))
    end = prefix_end(prefix) if prefix else None
    if end is not None and not 0xD800 <= ord(end[-1]) <= 0xDFFF:  # a surrogate cannot be sent: no upper bound
        clauses.append("key < %s")
        params.append(end)
    elif prefix:
        clauses.append("starts_with(key, %s)")
        params.append(prefix)
    return "".join(f" AND {c}" for c in clauses), params


class PostgresRecordStore(PostgresConnection):
    """The RecordStore on PostgreSQL.

    Args:
        url: a libpq URL or DSN (``postgresql://user:password@host:5432/dbname``).
        schema: the PostgreSQL schema holding the tables (created by ``setup()``); many stores may
            share a database under different schemas.
        min_size, max_size: the connection pool's bounds (connections are opened by ``setup()``).
        connect_timeout: seconds to connect, and to wait for a pooled connection when all are busy
            or the server is down (then ``BackendUnavailable``).
        statement_timeout: seconds a statement may run before the server cancels it (``BackendTimeout``).
        cache_url: a Redis URL (``redis://``, ``redis+cluster://``...) for the shared recent-message cache
            (``recent_cache``); None: no shared cache.
        cache_prefix: the Redis key prefix of that cache.
    """

    backend = "postgres"

    def __init__(
        self, url: str, *, schema: str = "layered_memory", min_size: int = 1, max_size: int = 10,
        connect_timeout: float = 5.0, statement_timeout: float = 30.0, cache_url: str | None = None,
        cache_prefix: str = "lm",
    ) -> None:
        super().__init__(url, schema=schema, min_size=min_size, max_size=max_size, connect_timeout=connect_timeout,
                         statement_timeout=statement_timeout)
        self.cache_prefix = cache_prefix
        self._cache: Any = None  # a RedisRecordStore used for its recent cache only (any Redis URL, cluster too)
        if cache_url:
            from .redis import RedisRecordStore

            self._cache = RedisRecordStore.from_url(cache_url, prefix=cache_prefix)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> PostgresRecordStore:
        return cls(url, **kwargs)

    @classmethod
    def from_settings(cls, settings: PostgresSettings, *, cache_url: str | None = None, cache_prefix: str = "lm") -> PostgresRecordStore:
        """A store for ``settings`` (not set up yet: call ``setup()``)."""
        if not settings.url:
            raise ConfigurationError("postgres.url is empty; set LAYERED_MEMORY_POSTGRES__URL=postgresql://user:password@host:5432/dbname")
        return cls(
            settings.url, schema=settings.schema_name, min_size=settings.pool_min_size, max_size=settings.pool_max_size,
            connect_timeout=settings.connect_timeout, statement_timeout=settings.statement_timeout,
            cache_url=cache_url, cache_prefix=cache_prefix,
        )

    def __enter__(self) -> PostgresRecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PostgresRecordStore({self.address!r}, schema={self.schema!r})"

    # -- lifecycle (setup: PostgresConnection) ---------------------------------------------------
    def close(self) -> None:
        super().close()
        if self._cache is not None:
            self._cache.close()

    def recent_cache(self, *, size: int, ttl: int) -> Any:
        """The seed's Redis cache when the store was given ``cache_url``, shared by every process; else None."""
        if self._cache is None:
            return None
        from .redis_cache import RedisRecentCache

        return RedisRecentCache(self._cache.client, prefix=self._cache.prefix, size=size, ttl=ttl)

    def _register(self, cur: Any, tenant: str) -> None:
        cur.execute(f"INSERT INTO {self._s}.lm_tenants (tenant) VALUES (%s) ON CONFLICT (tenant) DO NOTHING", (tenant,))

    # -- messages -------------------------------------------------------------------------------
    def put_messages(self, tenant: str, messages: Sequence[Message]) -> list[bool]:
        """Insert new messages in one transaction; a stored (chat_id, message_id) is left untouched.

        New messages get ``seq`` (also set on the objects passed in, after the commit).
        """
        tenant = check_tenant(tenant)
        rows = [dump_message(tenant, m) for m in messages]  # bad input fails before any write
        if not rows:
            return []
        s = self._s
        first: dict[tuple[str, str], int] = {}
        for i, (msg, _) in enumerate(rows):
            first.setdefault((msg.chat_id, msg.message_id), i)
        with self._tx("put_messages") as cur:
            # registers the tenant and locks its counter row until the commit, in one round trip
            cur.execute(
                f"INSERT INTO {s}.lm_tenants AS t (tenant) VALUES (%s) ON CONFLICT (tenant)"
                " DO UPDATE SET last_seq = t.last_seq RETURNING last_seq", (tenant,),
            )
            seq = start = cur.fetchone()[0]
            pairs = list(first)
            cur.execute(
                f"SELECT m.chat_id, m.message_id FROM {s}.lm_messages m"
                " JOIN unnest(%s::text[], %s::text[]) AS r(c, i) ON m.chat_id = r.c AND m.message_id = r.i"
                " WHERE m.tenant = %s",
                ([c for c, _ in pairs], [i for _, i in pairs], tenant),
            )
            stored = {(c, i) for c, i in cur.fetchall()}
            fresh = [first[p] for p in pairs if p not in stored]  # batch order
            seqs: dict[int, int] = {}
            for i in fresh:
                seq += 1
                seqs[i] = seq
            if fresh:
                new = [rows[i][0] for i in fresh]
                cur.execute(  # the rows and the counter in one statement
                    f"WITH ins AS (INSERT INTO {s}.lm_messages (tenant, chat_id, message_id, seq, user_id, session_key,"
                    " role, topic_id, create_time, body) SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::bigint[],"
                    " %s::text[], %s::text[], %s::text[], %s::text[], %s::timestamptz[], %s::json[]))"
                    f" UPDATE {s}.lm_tenants SET last_seq = %s WHERE tenant = %s",
                    (tenant, [m.chat_id for m in new], [m.message_id for m in new], [seqs[i] for i in fresh],
                     [m.user_id for m in new], [m.session_key for m in new], [str(m.role) for m in new],
                     [m.topic_id for m in new], [m.create_time for m in new], [rows[i][1] for i in fresh], seq, tenant),
                )
        for i, value in seqs.items():
            messages[i].seq = value
        logger.debug("postgres put_messages tenant=%s new=%d of %d", tenant, seq - start, len(rows))
        return [seqs.get(i) is not None for i in range(len(rows))]

    def update_messages(self, tenant: str, messages: Sequence[Message], *, reindex: bool = False) -> None:
        """Overwrite stored messages by (chat_id, message_id), keeping ``seq``; the indexed flag too, unless
        ``reindex`` makes them pending for the index again (in the same transaction).

        Raises:
            NotFoundError: a message is not stored (nothing is written then).
        """
        tenant = check_tenant(tenant)
        rows = [dump_message(tenant, m) for m in messages]
        last = {(m.chat_id, m.message_id): (m, data) for m, data in rows}  # the last write of a ref wins
        if not last:
            return
        new = [m for m, _ in last.values()]
        pending = ", indexed = false" if reindex else ""
        with self._tx("update_messages") as cur:
            cur.execute(
                f"UPDATE {self._s}.lm_messages m SET user_id = u.user_id, session_key = u.session_key, role = u.role,"
                f" topic_id = u.topic_id, create_time = u.create_time, body = u.body{pending}"
                " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
                " %s::timestamptz[], %s::json[]) AS u(chat_id, message_id, user_id, session_key, role, topic_id,"
                " create_time, body) WHERE m.tenant = %s AND m.chat_id = u.chat_id AND m.message_id = u.message_id"
                " RETURNING m.chat_id, m.message_id",
                ([m.chat_id for m in new], [m.message_id for m in new], [m.user_id for m in new],
                 [m.session_key for m in new], [str(m.role) for m in new], [m.topic_id for m in new],
                 [m.create_time for m in new], [d for _, d in last.values()], tenant),
            )
            done = {(c, i) for c, i in cur.fetchall()}
            for m, _ in rows:
                if (m.chat_id, m.message_id) not in done:
                    raise NotFoundError(not_stored(tenant, MessageRef(m.chat_id, m.message_id)))  # rolls back

    def get_messages(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        tenant, pairs = check_tenant(tenant), ref_pairs(refs)
        unique = [p for p in dict.fromkeys(pairs) if "\x00" not in p[0] + p[1]]
        found: dict[tuple[str, str], Message] = {}
        if unique:
            with self._autocommit("get_messages") as cur:
                cur.execute(
                    f"SELECT m.chat_id, m.message_id, m.body::text, m.seq FROM {self._s}.lm_messages m"
                    " JOIN unnest(%s::text[], %s::text[]) AS r(c, i) ON m.chat_id = r.c AND m.message_id = r.i"
                    " WHERE m.tenant = %s",
                    ([c for c, _ in unique], [i for _, i in unique], tenant),
                )
                for chat, mid, raw, seq in cur.fetchall():
                    found[(chat, mid)] = load_message(raw, seq)
        return [found.get(pair) for pair in pairs]

    def window(self, tenant: str, *, user_id: str, session_key: str, limit: int) -> list[Message]:
        tenant, limit = check_tenant(tenant), check_limit(limit)
        if limit == 0:
            return []
        with self._autocommit("window") as cur:
            cur.execute(
                f"SELECT body::text, seq FROM {self._s}.lm_messages WHERE tenant = %s AND user_id = %s"
                " AND session_key = %s ORDER BY seq DESC LIMIT %s",
                (tenant, user_id, session_key, limit),
            )
            rows = cur.fetchall()
        return [load_message(raw, seq) for raw, seq in reversed(rows)]

    def chat_window(self, tenant: str, *, chat_id: str, session_key: str | None = None, limit: int) -> list[Message]:
        tenant, limit = check_tenant(tenant), check_limit(limit)
        if limit == 0:
            return []
        where, params = self._where(tenant, None, session_key, chat_id)
        with self._autocommit("chat_window") as cur:  # (tenant, chat_id, seq) index, newest first
            cur.execute(f"SELECT body::text, seq FROM {self._s}.lm_messages WHERE {where} ORDER BY seq DESC LIMIT %s", (*params, limit))
            rows = cur.fetchall()
        return [load_message(raw, seq) for raw, seq in reversed(rows)]

    @staticmethod
    def _where(tenant: str, user_id: str | None, session_key: str | None, chat_id: str | None) -> tuple[str, list[Any]]:
        clauses, params = ["tenant = %s"], [tenant]
        for column, value in (("user_id", user_id), ("session_key", session_key), ("chat_id", chat_id)):
            if isinstance(value, str) and "\x00" in value:
                clauses.append("false")  # PostgreSQL text cannot hold NUL: no stored row has this value
            elif value is not None:
                clauses.append(f"{column} = %s")
                params.append(value)
        return " AND ".join(clauses), params

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
        tenant, limit = check_tenant(tenant), check_limit(limit)
        if limit == 0:
            return []
        where, params = self._where(tenant, user_id, session_key, chat_id)
        with self._autocommit("scan_messages") as cur:
            cur.execute(
                f"SELECT body::text, seq FROM {self._s}.lm_messages WHERE {where} AND seq > %s ORDER BY seq LIMIT %s",
                (*params, after_seq, limit),
            )
            rows = cur.fetchall()
        return [load_message(raw, seq) for raw, seq in rows]

    def count_messages(
        self, tenant: str, *, user_id: str | None = None, session_key: str | None = None, after_seq: int = 0,
        chat_id: str | None = None,
    ) -> int:
        where, params = self._where(check_tenant(tenant), user_id, session_key, chat_id)
        with self._autocommit("count_messages") as cur:
            cur.execute(f"SELECT COUNT(*) FROM {self._s}.lm_messages WHERE {where} AND seq > %s", (*params, after_seq))
            return int(cur.fetchone()[0])

    def delete_messages(self, tenant: str, *, user_id: str, session_key: str | None = None) -> list[MessageRef]:
        where, params = self._where(check_tenant(tenant), user_id, session_key, None)
        with self._autocommit("delete_messages") as cur:
            cur.execute(f"DELETE FROM {self._s}.lm_messages WHERE {where} RETURNING seq, chat_id, message_id", params)
            rows = sorted(cur.fetchall())
        logger.debug("postgres delete_messages tenant=%s user=%s deleted=%d", tenant, user_id, len(rows))
        return [MessageRef(chat, mid) for _, chat, mid in rows]

    def delete_refs(self, tenant: str, refs: Sequence[MessageRef]) -> list[MessageRef]:
        tenant, pairs = check_tenant(tenant), list(dict.fromkeys(ref_pairs(refs)))
        wanted = [p for p in pairs if "\x00" not in p[0] + p[1]]
        if not wanted:
            return []
        with self._autocommit("delete_refs") as cur:
            cur.execute(
                f"DELETE FROM {self._s}.lm_messages m USING unnest(%s::text[], %s::text[]) AS r(c, i)"
                " WHERE m.tenant = %s AND m.chat_id = r.c AND m.message_id = r.i RETURNING m.chat_id, m.message_id",
                ([c for c, _ in wanted], [i for _, i in wanted], tenant),
            )
            gone = {(c, i) for c, i in cur.fetchall()}
        return [MessageRef(*p) for p in pairs if p in gone]

    def tenants(self) -> list[str]:
        """Every tenant that ever stored a message or document (deleting everything keeps it listed)."""
        with self._autocommit("tenants") as cur:
            cur.execute(f"SELECT tenant FROM {self._s}.lm_tenants ORDER BY tenant")
            return [r[0] for r in cur.fetchall()]

    # -- pending for the index ------------------------------------------------------------------
    def pending_index(self, tenant: str, limit: int = 1000) -> list[MessageRef]:
        tenant, limit = check_tenant(tenant), check_limit(limit)
        if limit == 0:
            return []
        with self._autocommit("pending_index") as cur:
            cur.execute(
                f"SELECT chat_id, message_id FROM {self._s}.lm_messages WHERE tenant = %s AND NOT indexed"
                " ORDER BY seq LIMIT %s", (tenant, limit),
            )
            return [MessageRef(*r) for r in cur.fetchall()]

    def count_pending(self, tenant: str) -> int:
        tenant = check_tenant(tenant)
        with self._autocommit("count_pending") as cur:
            cur.execute(f"SELECT COUNT(*) FROM {self._s}.lm_messages WHERE tenant = %s AND NOT indexed", (tenant,))
            return int(cur.fetchone()[0])

    def mark_indexed(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        tenant, pairs = check_tenant(tenant), ref_pairs(refs)
        pairs = [p for p in dict.fromkeys(pairs) if "\x00" not in p[0] + p[1]]
        if not pairs:
            return
        with self._autocommit("mark_indexed") as cur:
            cur.execute(
                f"UPDATE {self._s}.lm_messages m SET indexed = true FROM unnest(%s::text[], %s::text[]) AS r(c, i)"
                " WHERE m.tenant = %s AND m.chat_id = r.c AND m.message_id = r.i AND NOT m.indexed",
                ([c for c, _ in pairs], [i for _, i in pairs], tenant),
            )

    def mark_all_pending(self, tenant: str) -> int:
        tenant = check_tenant(tenant)
        with self._tx("mark_all_pending") as cur:
            cur.execute(f"UPDATE {self._s}.lm_messages SET indexed = false WHERE tenant = %s AND indexed", (tenant,))
            cur.execute(f"SELECT COUNT(*) FROM {self._s}.lm_messages WHERE tenant = %s", (tenant,))
            return int(cur.fetchone()[0])

    # -- documents ------------------------------------------------------------------------------
    def put_docs(self, tenant: str, collection: str, items: Mapping[str, Mapping[str, Any]]) -> None:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        rows = [(_doc_key(key), dump_doc(collection, key, doc)) for key, doc in items.items()]
        if not rows:
            return
        with self._tx("put_docs") as cur:
            self._register(cur, tenant)
            cur.execute(
                f"INSERT INTO {self._s}.lm_docs (tenant, collection, key, body) SELECT %s, %s, k, b"
                " FROM unnest(%s::text[], %s::json[]) AS t(k, b)"
                " ON CONFLICT (tenant, collection, key) DO UPDATE SET body = excluded.body",
                (tenant, collection, [k for k, _ in rows], [b for _, b in rows]),
            )

    def get_docs(self, tenant: str, collection: str, keys: Sequence[str]) -> list[dict[str, Any] | None]:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        unique = [k for k in dict.fromkeys(keys) if isinstance(k, str) and "\x00" not in k]
        found: dict[str, dict[str, Any]] = {}
        if unique:
            with self._autocommit("get_docs") as cur:
                cur.execute(
                    f"SELECT key, body::text FROM {self._s}.lm_docs WHERE tenant = %s AND collection = %s"
                    " AND key = ANY(%s::text[])", (tenant, collection, unique),
                )
                found = {key: json.loads(raw) for key, raw in cur.fetchall()}
        return [found.get(k) for k in keys]

    def list_docs(
        self, tenant: str, collection: str, *, prefix: str = "", after: str = "", limit: int = 1000
    ) -> list[tuple[str, dict[str, Any]]]:
        tenant, collection, limit = check_tenant(tenant), check_collection(collection), check_limit(limit)
        if limit == 0:
            return []
        where, params = _key_range(prefix, after)
        with self._autocommit("list_docs") as cur:
            cur.execute(
                f"SELECT key, body::text FROM {self._s}.lm_docs WHERE tenant = %s AND collection = %s{where}"
                " ORDER BY key LIMIT %s", (tenant, collection, *params, limit),
            )
            return [(key, json.loads(raw)) for key, raw in cur.fetchall()]

    def delete_docs(self, tenant: str, collection: str, keys: Sequence[str] | None = None) -> int:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        with self._autocommit("delete_docs") as cur:
            if keys is None:
                cur.execute(f"DELETE FROM {self._s}.lm_docs WHERE tenant = %s AND collection = %s", (tenant, collection))
                return cur.rowcount
            unique = [k for k in dict.fromkeys(keys) if isinstance(k, str) and "\x00" not in k]
            if not unique:
                return 0
            cur.execute(
                f"DELETE FROM {self._s}.lm_docs WHERE tenant = %s AND collection = %s AND key = ANY(%s::text[])",
                (tenant, collection, unique),
            )
            return cur.rowcount

    def count_docs(self, tenant: str, collection: str, *, prefix: str = "") -> int:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        where, params = _key_range(prefix, "")
        with self._autocommit("count_docs") as cur:
            cur.execute(
                f"SELECT COUNT(*) FROM {self._s}.lm_docs WHERE tenant = %s AND collection = %s{where}",
                (tenant, collection, *params),
            )
            return int(cur.fetchone()[0])
