"""PostgresRecordStore: the RecordStore on PostgreSQL (psycopg 3 and a ``psycopg_pool.ConnectionPool``).

Seed 001 keeps messages and topics in PostgreSQL, Qdrant for vectors and Redis as the recent-message
cache. The schema and its migrations are in ``postgres_schema.py``. Each call takes a pooled
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
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

from ..config import PostgresSettings
from ..errors import BackendError, BackendTimeout, BackendUnavailable, ConfigurationError, InvalidInputError, NotFoundError, SchemaMismatch, install_hint
from ..models import Message, MessageRef
from .native import PerLoop, SyncCursor, await_only, entered, in_native
from .postgres_schema import check_schema_name, migrate
from .sqlite import check_collection, check_limit, check_tenant, dump_doc, dump_message, load_message, not_stored, prefix_end, ref_pairs

try:
    import psycopg
    from psycopg import conninfo as _conninfo
    from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ConfigurationError(
        f"the PostgreSQL record store needs psycopg 3 and psycopg_pool ({exc}); {install_hint('postgres')}"
    ) from None

logger = logging.getLogger(__name__)

__all__ = ["PostgresRecordStore"]


def describe(url: str) -> str:
    """``user@host:port/dbname`` of a libpq URL or DSN, never the password.

    Raises:
        ConfigurationError: the URL cannot be parsed.
    """
    try:
        parts = _conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ConfigurationError(
            f"postgres url is not valid ({str(exc).splitlines()[0]}); use postgresql://user:password@host:5432/dbname"
        ) from None
    user = parts.get("user")
    host = parts.get("host") or parts.get("hostaddr") or "localhost"
    where = f"{host}:{parts.get('port') or 5432}" if not str(host).startswith("/") else f"{host} (unix socket)"
    return f"{user + '@' if user else ''}{where}/{parts.get('dbname') or user or '?'}"


def connect_fix(text: str, address: str) -> str:
    """What to do about a failed connection, from libpq's message."""
    low = text.lower()
    if "password" in low and ("authentication failed" in low or "no password" in low):
        return "check the user and password in the URL (postgresql://user:password@host:port/dbname)"
    if "database" in low and "does not exist" in low:
        return f"create the database (CREATE DATABASE ...; or createdb) at {address.split('@')[-1].split('/')[0]} or fix its name in the URL"
    if "role" in low and "does not exist" in low:
        return "create the role (CREATE ROLE ... LOGIN PASSWORD ...) or fix the user in the URL"
    if "no pg_hba.conf entry" in low:
        return "allow this client in the server's pg_hba.conf"
    return "start PostgreSQL there or fix the host and port in the URL (postgresql://user:password@host:port/dbname)"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


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


class PostgresRecordStore:
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
        self.address = describe(url)
        self.schema = check_schema_name(schema)
        if not (isinstance(min_size, int) and isinstance(max_size, int) and 0 <= min_size <= max_size and max_size >= 1):
            raise InvalidInputError("pool size", (min_size, max_size), "needs 0 <= min_size <= max_size, max_size >= 1", "use e.g. min_size=1, max_size=10")
        self._url = url
        self.connect_timeout = float(connect_timeout)
        self.statement_timeout = float(statement_timeout)
        self._s = f'"{self.schema}"'
        self._kwargs = {
            "connect_timeout": max(1, round(self.connect_timeout)),
            "options": f"-c statement_timeout={int(self.statement_timeout * 1000)}",
            "application_name": "layered-memory",
            "autocommit": True,  # a read is one round trip; writes open their transaction (_tx)
        }
        self._pool = ConnectionPool(
            url, kwargs=self._kwargs, min_size=min_size, max_size=max_size, open=False,
            timeout=self.connect_timeout, check=ConnectionPool.check_connection, name=f"layered-memory {self.address}",
        )
        self._opened = False
        self._open_lock = threading.Lock()
        self._apools: PerLoop[AsyncConnectionPool] = PerLoop(self._async_pool, lambda pool: pool.close())
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

    # -- plumbing -------------------------------------------------------------------------------
    @contextmanager
    def _errors(self, op: str) -> Iterator[None]:
        """Translate psycopg errors into BackendError subclasses (the only place that does)."""
        try:
            yield
        except PoolTimeout as exc:
            raise BackendUnavailable(
                f"no connection to PostgreSQL at {self.address} within {self.connect_timeout:g}s during {op} "
                f"({_first_line(exc)}): the server is down or unreachable, or all {self._pool.max_size} pooled "
                "connections are busy; start PostgreSQL or fix the URL, or raise pool_max_size / connect_timeout",
                backend="postgres", op=op,
            ) from exc
        except psycopg.errors.QueryCanceled as exc:
            raise BackendTimeout(
                f"PostgreSQL at {self.address} cancelled {op} after statement_timeout={self.statement_timeout:g}s "
                f"({_first_line(exc)}); nothing was written; check the server load or raise statement_timeout",
                backend="postgres", op=op,
            ) from exc
        except psycopg.errors.UndefinedTable as exc:
            raise SchemaMismatch(
                f"PostgreSQL at {self.address} has no layered-memory tables in schema {self.schema!r} "
                f"({_first_line(exc)}); call store.setup() first", backend="postgres", op=op,
            ) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise BackendError(
                f"PostgreSQL at {self.address} refused {op} to this user ({_first_line(exc)}); grant it the rights on "
                f"schema {self.schema!r} (GRANT CREATE ON DATABASE ... for setup, or create the schema and GRANT ALL ON "
                "SCHEMA ... and its tables to the user)", backend="postgres", op=op,
            ) from exc
        except psycopg.OperationalError as exc:
            text = _first_line(exc)
            raise BackendUnavailable(
                f"lost or refused the connection to PostgreSQL at {self.address} during {op} ({text}); a write in "
                "flight was rolled back or committed (writes are idempotent: retrying is safe); "
                + connect_fix(text, self.address), backend="postgres", op=op,
            ) from exc
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL {op} failed at {self.address}: {_first_line(exc)}", backend="postgres", op=op) from exc

    def _open(self) -> None:
        with self._open_lock:
            if not self._opened:
                self._pool.open(wait=False)
                self._opened = True

    def native_async(self) -> bool:
        """Every method may run under ``stores.native.run_native``: its cursor is then an async one, on a pool
        of this event loop (psycopg's ``AsyncConnectionPool``, the same sizes and timeouts as the sync pool)."""
        return True

    def _async_pool(self) -> AsyncConnectionPool:
        pool = AsyncConnectionPool(
            self._url, kwargs=self._kwargs, min_size=self._pool.min_size, max_size=self._pool.max_size, open=False,
            timeout=self.connect_timeout, check=AsyncConnectionPool.check_connection, name=f"layered-memory async {self.address}",
        )
        await_only(pool.open(wait=False))
        return pool

    @contextmanager
    def _native(self, op: str, transaction: bool) -> Iterator[Any]:
        """``_tx`` / ``_autocommit`` under run_native: an async connection of this loop's pool."""
        with self._errors(op), entered(self._apools.get().connection()) as conn:
            with entered(conn.transaction()) if transaction else nullcontext(), entered(conn.cursor()) as cur:
                yield SyncCursor(cur)

    def _tx(self, op: str) -> Any:
        """A cursor inside one transaction on a pooled connection: commit on success, roll back on error."""
        return self._cursor(op, transaction=True)

    def _autocommit(self, op: str) -> Any:
        """A cursor on a pooled autocommit connection: for reads and single-statement writes (a statement is
        atomic by itself), one round trip each."""
        return self._cursor(op, transaction=False)

    @contextmanager
    def _cursor(self, op: str, *, transaction: bool) -> Iterator[Any]:
        if in_native():  # on the event loop: the async pool's connection
            with self._native(op, transaction=transaction) as cur:
                yield cur
            return
        if not self._opened:
            self._open()
        with self._errors(op), self._pool.connection() as conn, conn.transaction() if transaction else nullcontext(), conn.cursor() as cur:
            yield cur

    # -- lifecycle ------------------------------------------------------------------------------
    def setup(self) -> None:
        """Check the server (one direct connection, so a bad URL, password or database is named),
        apply the migrations not yet applied, then open the pool. Idempotent.

        Raises:
            BackendUnavailable: the server cannot be reached, refuses the login, or has no such database.
            SchemaMismatch: the schema was written by a newer layered-memory, or the database is not UTF8.
        """
        try:
            conn = psycopg.connect(self._url, **self._kwargs)  # autocommit: migrate() opens its transaction
        except psycopg.OperationalError as exc:
            text = _first_line(exc)
            raise BackendUnavailable(
                f"cannot connect to PostgreSQL at {self.address} ({text}); {connect_fix(text, self.address)}",
                backend="postgres", op="setup",
            ) from None
        try:
            with self._errors("setup"):
                encoding = conn.execute("SHOW server_encoding").fetchone()[0]  # type: ignore[index]
                if encoding.upper() not in ("UTF8", "UTF-8"):
                    raise SchemaMismatch(
                        f"PostgreSQL database at {self.address} uses encoding {encoding}; layered-memory needs UTF8 "
                        "(CREATE DATABASE ... ENCODING 'UTF8' TEMPLATE template0)", backend="postgres", op="setup",
                    )
                for version in migrate(conn, self.schema, self.address):
                    logger.info("postgres %s schema %s: migrated to version %d", self.address, self.schema, version)
        finally:
            conn.close()
        self._open()

    def close(self) -> None:
        self._apools.close()
        self._pool.close()
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
