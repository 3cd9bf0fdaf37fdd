"""Connecting to PostgreSQL: the URL, the connection pools (sync, and one async pool per event loop for
the native path), the translation of psycopg's errors, transactions, and ``setup()`` (the server check
and the migrations of ``postgres_schema``). ``PostgresRecordStore`` (``postgres.py``) is the record
store on top: its methods take a cursor with ``_tx`` (one transaction) or ``_autocommit`` (one
statement) and run their SQL.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from ..errors import BackendError, BackendTimeout, BackendUnavailable, ConfigurationError, InvalidInputError, SchemaMismatch, install_hint
from .native import PerLoop, SyncCursor, await_only, entered, in_native
from .postgres_schema import check_schema_name, migrate

try:
    import psycopg
    from psycopg import conninfo as _conninfo
    from psycopg_pool import AsyncConnectionPool, ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ConfigurationError(
        f"the PostgreSQL record store needs psycopg 3 and psycopg_pool ({exc}); {install_hint('postgres')}"
    ) from None

logger = logging.getLogger("layered_memory.stores.postgres")  # the store's logger: one place to silence

__all__ = ["PostgresConnection", "connect_fix", "describe", "first_line"]


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


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


class PostgresConnection:
    """A PostgreSQL database as the record store uses it: pooled connections to one schema, every error
    a ``BackendError`` that names the server and the fix.

    Args:
        url: a libpq URL or DSN (``postgresql://user:password@host:5432/dbname``).
        schema: the PostgreSQL schema holding the tables (created by ``setup()``).
        min_size, max_size: the connection pool's bounds (connections are opened by ``setup()``).
        connect_timeout: seconds to connect, and to wait for a pooled connection.
        statement_timeout: seconds a statement may run before the server cancels it.
    """

    def __init__(
        self, url: str, *, schema: str = "layered_memory", min_size: int = 1, max_size: int = 10,
        connect_timeout: float = 5.0, statement_timeout: float = 30.0,
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

    # -- connections and transactions ---------------------------------------------------------------
    @contextmanager
    def _errors(self, op: str) -> Iterator[None]:
        """Translate psycopg errors into BackendError subclasses (the only place that does)."""
        try:
            yield
        except PoolTimeout as exc:
            raise BackendUnavailable(
                f"no connection to PostgreSQL at {self.address} within {self.connect_timeout:g}s during {op} "
                f"({first_line(exc)}): the server is down or unreachable, or all {self._pool.max_size} pooled "
                "connections are busy; start PostgreSQL or fix the URL, or raise pool_max_size / connect_timeout",
                backend="postgres", op=op,
            ) from exc
        except psycopg.errors.QueryCanceled as exc:
            raise BackendTimeout(
                f"PostgreSQL at {self.address} cancelled {op} after statement_timeout={self.statement_timeout:g}s "
                f"({first_line(exc)}); nothing was written; check the server load or raise statement_timeout",
                backend="postgres", op=op,
            ) from exc
        except psycopg.errors.UndefinedTable as exc:
            raise SchemaMismatch(
                f"PostgreSQL at {self.address} has no layered-memory tables in schema {self.schema!r} "
                f"({first_line(exc)}); call store.setup() first", backend="postgres", op=op,
            ) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise BackendError(
                f"PostgreSQL at {self.address} refused {op} to this user ({first_line(exc)}); grant it the rights on "
                f"schema {self.schema!r} (GRANT CREATE ON DATABASE ... for setup, or create the schema and GRANT ALL ON "
                "SCHEMA ... and its tables to the user)", backend="postgres", op=op,
            ) from exc
        except psycopg.OperationalError as exc:
            text = first_line(exc)
            raise BackendUnavailable(
                f"lost or refused the connection to PostgreSQL at {self.address} during {op} ({text}); a write in "
                "flight was rolled back or committed (writes are idempotent: retrying is safe); "
                + connect_fix(text, self.address), backend="postgres", op=op,
            ) from exc
        except psycopg.Error as exc:
            raise BackendError(f"PostgreSQL {op} failed at {self.address}: {first_line(exc)}", backend="postgres", op=op) from exc

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
            text = first_line(exc)
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
