"""SQLiteRecordStore: the embedded RecordStore (stdlib ``sqlite3``, one file, WAL).

One connection shared by every thread (``check_same_thread=False``) behind an ``RLock``: the engine
calls the store from worker threads for its async API. Every write is one ``BEGIN IMMEDIATE``
transaction, so a failed batch leaves nothing behind, and ``seq`` comes from a per-tenant counter
row updated in the same transaction (never reused, even after deletes).

Example::

    store = SQLiteRecordStore("memory.sqlite3")
    store.setup()
    store.put_messages("default", [Message.build({...})])
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from pydantic_core import PydanticSerializationError

from ..config import SQLiteSettings
from ..errors import BackendError, BackendTimeout, BackendUnavailable, InvalidInputError, NotFoundError, SchemaMismatch
from ..models import Message, MessageRef, check_id
from .base import INDEX_UPGRADES, MESSAGE_POINTS_V2

logger = logging.getLogger(__name__)

DEFAULT_FILENAME = "records.sqlite3"
BUSY_TIMEOUT_MS = 5_000
_CHUNK = 500  # ids per IN (...) clause, well under SQLite's variable limit

# Each entry moves the schema one version up; never edit a released entry, append a new one.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE messages (
        tenant TEXT NOT NULL,
        message_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        user_id TEXT NOT NULL,
        session_key TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        create_time TEXT NOT NULL,
        json TEXT NOT NULL,
        indexed INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant, message_id)
    ) WITHOUT ROWID;
    CREATE INDEX messages_session ON messages (tenant, user_id, session_key, seq);
    CREATE INDEX messages_seq ON messages (tenant, seq);
    CREATE INDEX messages_chat ON messages (tenant, chat_id, seq);
    CREATE INDEX messages_pending ON messages (tenant, indexed, seq);
    CREATE TABLE tenant_seq (tenant TEXT PRIMARY KEY, last_seq INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE docs (
        tenant TEXT NOT NULL,
        collection TEXT NOT NULL,
        key TEXT NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (tenant, collection, key)
    ) WITHOUT ROWID;
    """,
    # v2: a message is (tenant, chat_id, message_id); Telegram ids are per chat. Every message is
    # pending for the index again, and a marker per tenant tells the Indexer to move its points to the
    # new per-chat point ids (reusing their vectors: nothing is embedded again).
    f"""
    CREATE TABLE messages_v2 (
        tenant TEXT NOT NULL,
        chat_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        user_id TEXT NOT NULL,
        session_key TEXT NOT NULL,
        create_time TEXT NOT NULL,
        json TEXT NOT NULL,
        indexed INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant, chat_id, message_id)
    ) WITHOUT ROWID;
    INSERT INTO messages_v2 (tenant, chat_id, message_id, seq, user_id, session_key, create_time, json, indexed)
        SELECT tenant, chat_id, message_id, seq, user_id, session_key, create_time, json, 0 FROM messages;
    INSERT OR IGNORE INTO docs (tenant, collection, key, json)
        SELECT DISTINCT tenant, '{INDEX_UPGRADES}', '{MESSAGE_POINTS_V2}', '{{"schema":2}}' FROM messages;
    DROP TABLE messages;
    ALTER TABLE messages_v2 RENAME TO messages;
    CREATE INDEX messages_session ON messages (tenant, user_id, session_key, seq);
    CREATE INDEX messages_seq ON messages (tenant, seq);
    CREATE INDEX messages_chat ON messages (tenant, chat_id, seq);
    CREATE INDEX messages_pending ON messages (tenant, indexed, seq);
    """,
]


# -- record helpers (redis.py uses them too: one set of rules and messages for both backends) ---------
def check_tenant(tenant: object) -> str:
    return check_id("tenant", tenant)  # type: ignore[return-value]


def check_collection(collection: object) -> str:
    return check_id("collection", collection)  # type: ignore[return-value]


MAX_LIMIT = 2**62  # SQLite integers are 64-bit; larger limits raised OverflowError


def check_limit(limit: object) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= MAX_LIMIT:
        raise InvalidInputError("limit", limit, f"must be an int from 0 to {MAX_LIMIT}", "pass e.g. limit=10")
    return limit


def dump_message(tenant: str, msg: object) -> tuple[Message, str]:
    """The message as stored (its tenant set to the store's tenant) and its JSON without ``seq``.

    Raises:
        InvalidInputError: not a Message, or metadata that JSON cannot hold.
    """
    if not isinstance(msg, Message):
        raise InvalidInputError("messages", msg, "must hold Message objects", "build them with Message.build(dict)")
    if msg.tenant != tenant:
        msg = msg.model_copy(update={"tenant": tenant})
    try:
        return msg, msg.model_dump_json(exclude={"seq"})
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"message {msg.message_id!r} metadata", msg.metadata, f"is not JSON serializable ({exc})",
            "keep metadata to str, numbers, bools, None, lists and dicts",
        ) from None


def load_message(raw: str | bytes, seq: int) -> Message:
    msg = Message.model_validate_json(raw)
    msg.seq = seq
    return msg


def dump_doc(collection: str, key: object, doc: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidInputError(f"{collection} key", key, "must be a non-empty string", "use str keys")
    if not isinstance(doc, Mapping):
        raise InvalidInputError(f"{collection}[{key!r}]", doc, "must be a dict", "store a JSON object")
    try:
        return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{collection}[{key!r}]", doc, f"is not JSON serializable ({exc})",
            "convert datetimes to ISO strings and objects to dicts (model_dump(mode='json'))",
        ) from None


def prefix_end(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix`` (None: no bound)."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        if last < 0x10FFFF:
            return "".join(chars) + chr(last + 1)
    return None


def ref_pairs(refs: Sequence[MessageRef]) -> list[tuple[str, str]]:
    """Refs as plain (chat_id, message_id) tuples; a bare message_id is refused (ids repeat across chats).

    Raises:
        InvalidInputError: an item that is not a (chat_id, message_id) pair.
    """
    out = []
    for r in refs:
        if isinstance(r, (str, bytes)) or not isinstance(r, (tuple, list)) or len(r) != 2:
            raise InvalidInputError(
                "refs", r, "must be a (chat_id, message_id) pair (message ids are unique per chat only)",
                "pass MessageRef(chat_id, message_id) or a 2-tuple",
            )
        out.append((str(r[0]), str(r[1])))
    return out


def not_stored(tenant: str | None, ref: MessageRef) -> str:
    where = f" in tenant {tenant!r}" if tenant else ""
    return f"message_id={ref.message_id!r} of chat_id={ref.chat_id!r} is not stored{where}; add it with put_messages first"


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class SQLiteRecordStore:
    """The RecordStore on one SQLite file (or ``":memory:"``).

    Args:
        path: a file path (its directory must exist) or ``":memory:"``.
        synchronous: SQLite's ``PRAGMA synchronous`` in WAL mode; ``FULL`` (default) survives a power
            loss (one WAL fsync per write), ``NORMAL`` an application crash only; ``EXTRA`` equals FULL
            in WAL mode. See ``SQLiteSettings``.
    """

    backend = "sqlite"

    def __init__(self, path: str = ":memory:", *, synchronous: str = "FULL") -> None:
        if not isinstance(synchronous, str) or synchronous.upper() not in ("OFF", "NORMAL", "FULL", "EXTRA"):
            raise InvalidInputError("synchronous", synchronous, "must be OFF, NORMAL, FULL or EXTRA", "use FULL")
        self.path = path
        self._lock = threading.RLock()
        with self._errors("open"):
            self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(f"PRAGMA synchronous = {synchronous.upper()}")
            level = self._conn.execute("PRAGMA synchronous").fetchone()[0]
        self.synchronous = ("OFF", "NORMAL", "FULL", "EXTRA")[level]  # as SQLite reports it

    @classmethod
    def from_settings(cls, settings: SQLiteSettings, data_dir: str) -> SQLiteRecordStore:
        """A ready store (``setup()`` done) at ``settings.path`` or ``<data_dir>/records.sqlite3``."""
        path = settings.path or os.path.join(data_dir, DEFAULT_FILENAME)
        if path != ":memory:":
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        store = cls(path, synchronous=settings.synchronous)
        store.setup()
        return store

    def __enter__(self) -> SQLiteRecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SQLiteRecordStore({self.path!r})"

    # -- plumbing -------------------------------------------------------------------------------
    @contextmanager
    def _errors(self, op: str) -> Iterator[None]:
        """Translate sqlite3 errors into BackendError subclasses (the only place that does)."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if "locked" in text or "busy" in text:
                raise BackendTimeout(
                    f"SQLite file {self.path!r} stayed locked for {BUSY_TIMEOUT_MS} ms during {op}: {text}; "
                    "another process holds a write transaction, or use one store per file",
                    backend="sqlite", op=op,
                ) from exc
            if "unable to open" in text or "readonly" in text or "disk" in text:
                raise BackendUnavailable(
                    f"cannot open or write SQLite file {self.path!r} during {op}: {text}; "
                    "check that the directory exists and is writable",
                    backend="sqlite", op=op,
                ) from exc
            if "no such table" in text:
                raise SchemaMismatch(
                    f"SQLite file {self.path!r} has no layered-memory tables ({text}); call store.setup() first",
                    backend="sqlite", op=op,
                ) from exc
            raise BackendError(f"SQLite {op} failed on {self.path!r}: {text}", backend="sqlite", op=op) from exc
        except sqlite3.Error as exc:
            raise BackendError(f"SQLite {op} failed on {self.path!r}: {exc}", backend="sqlite", op=op) from exc

    @contextmanager
    def _read(self, op: str) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors(op):
            yield self._conn

    @contextmanager
    def _write(self, op: str, *, derived: bool = False) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: commit on success, roll back on any exception.

        ``derived``: the transaction writes only state that can be recomputed (the cleared pending
        flags), so its commit skips the fsync (``synchronous=NORMAL`` for it alone): a power
        loss may undo it, which re-indexes a batch. The next durable commit syncs the WAL up to it, and
        the adds waiting on this connection no longer wait for a sync they do not need."""
        with self._lock, self._errors(op):
            relaxed = derived and self.synchronous in ("FULL", "EXTRA")
            if relaxed:
                self._conn.execute("PRAGMA synchronous = NORMAL")
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                except BaseException:
                    self._conn.execute("ROLLBACK")
                    raise
                self._conn.execute("COMMIT")
            finally:
                if relaxed:
                    self._conn.execute(f"PRAGMA synchronous = {self.synchronous}")

    # -- lifecycle ------------------------------------------------------------------------------
    def setup(self) -> None:
        """Apply the MIGRATIONS not yet applied. Idempotent.

        Raises:
            SchemaMismatch: the file was written by a newer layered-memory.
        """
        with self._write("setup") as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = row[0] or 0
            if current > len(MIGRATIONS):
                raise SchemaMismatch(
                    f"SQLite file {self.path!r} has schema version {current}, this layered-memory knows up to "
                    f"{len(MIGRATIONS)}; upgrade layered-memory or use another file",
                    backend="sqlite", op="setup",
                )
            for version in range(current + 1, len(MIGRATIONS) + 1):
                for statement in MIGRATIONS[version - 1].split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
                logger.info("sqlite %s: schema migrated to version %d", self.path, version)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def recent_cache(self, *, size: int, ttl: int) -> None:
        """None: an embedded store has no cache shared between processes (the topic tier keeps one in process)."""
        return None

    # -- messages -------------------------------------------------------------------------------
    def put_messages(self, tenant: str, messages: Sequence[Message]) -> list[bool]:
        """Insert new messages in one transaction; a stored (chat_id, message_id) is left untouched.

        New messages get ``seq`` (also set on the objects passed in, after the commit).
        """
        tenant = check_tenant(tenant)
        rows = [dump_message(tenant, m) for m in messages]  # bad input fails before any write
        if not rows:
            return []
        result: list[bool] = []
        fresh: list[tuple[Message, int]] = []
        with self._write("put_messages") as conn:
            row = conn.execute("SELECT last_seq FROM tenant_seq WHERE tenant = ?", (tenant,)).fetchone()
            seq = row[0] if row else 0
            start = seq
            for original, (msg, data) in zip(messages, rows):
                cur = conn.execute(
                    "INSERT OR IGNORE INTO messages (tenant, chat_id, message_id, seq, user_id, session_key,"
                    " create_time, json, indexed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0)",
                    (tenant, msg.chat_id, msg.message_id, seq + 1, msg.user_id, msg.session_key,
                     msg.create_time.isoformat(), data),
                )
                new = cur.rowcount == 1
                if new:
                    seq += 1
                    fresh.append((original, seq))
                result.append(new)
            if seq != start:
                conn.execute(
                    "INSERT INTO tenant_seq (tenant, last_seq) VALUES (?, ?)"
                    " ON CONFLICT (tenant) DO UPDATE SET last_seq = excluded.last_seq",
                    (tenant, seq),
                )
        for original, s in fresh:
            original.seq = s
        logger.debug("sqlite put_messages tenant=%s new=%d of %d", tenant, len(fresh), len(rows))
        return result

    def update_messages(self, tenant: str, messages: Sequence[Message], *, reindex: bool = False) -> None:
        """Overwrite stored messages by (chat_id, message_id), keeping ``seq``; the indexed flag too, unless
        ``reindex`` makes them pending for the index again (in the same transaction).

        Raises:
            NotFoundError: a message is not stored (nothing is written then).
        """
        tenant = check_tenant(tenant)
        rows = [dump_message(tenant, m) for m in messages]
        pending = ", indexed = 0" if reindex else ""
        with self._write("update_messages") as conn:
            for msg, data in rows:
                cur = conn.execute(
                    f"UPDATE messages SET user_id = ?, session_key = ?, create_time = ?, json = ?{pending}"
                    " WHERE tenant = ? AND chat_id = ? AND message_id = ?",
                    (msg.user_id, msg.session_key, msg.create_time.isoformat(), data,
                     tenant, msg.chat_id, msg.message_id),
                )
                if cur.rowcount == 0:
                    raise NotFoundError(not_stored(tenant, msg.ref))

    def get_messages(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        tenant, pairs = check_tenant(tenant), ref_pairs(refs)
        by_chat: dict[str, list[str]] = {}
        for chat, mid in dict.fromkeys(pairs):
            by_chat.setdefault(chat, []).append(mid)
        found: dict[tuple[str, str], Message] = {}
        with self._read("get_messages") as conn:
            for chat, message_ids in by_chat.items():  # one primary-key range per chat
                for chunk in _chunks(message_ids):
                    marks = ",".join("?" * len(chunk))
                    for mid, raw, seq in conn.execute(
                        "SELECT message_id, json, seq FROM messages"
                        f" WHERE tenant = ? AND chat_id = ? AND message_id IN ({marks})",
                        (tenant, chat, *chunk),
                    ):
                        found[(chat, mid)] = load_message(raw, seq)
        return [found.get(pair) for pair in pairs]

    def window(self, tenant: str, *, user_id: str, session_key: str, limit: int) -> list[Message]:
        tenant, limit = check_tenant(tenant), check_limit(limit)
        with self._read("window") as conn:
            rows = conn.execute(
                "SELECT json, seq FROM messages WHERE tenant = ? AND user_id = ? AND session_key = ?"
                " ORDER BY seq DESC LIMIT ?",
                (tenant, user_id, session_key, limit),
            ).fetchall()
        return [load_message(raw, seq) for raw, seq in reversed(rows)]

    def chat_window(self, tenant: str, *, chat_id: str, session_key: str | None = None, limit: int) -> list[Message]:
        tenant, limit = check_tenant(tenant), check_limit(limit)
        where, params = self._where(tenant, None, session_key, chat_id)
        with self._read("chat_window") as conn:  # (tenant, chat_id, seq) index, newest first
            rows = conn.execute(f"SELECT json, seq FROM messages WHERE {where} ORDER BY seq DESC LIMIT ?", (*params, limit)).fetchall()
        return [load_message(raw, seq) for raw, seq in reversed(rows)]

    @staticmethod
    def _where(
        tenant: str, user_id: str | None, session_key: str | None, chat_id: str | None
    ) -> tuple[str, list[Any]]:
        clauses, params = ["tenant = ?"], [tenant]
        for column, value in (("user_id", user_id), ("session_key", session_key), ("chat_id", chat_id)):
            if value is not None:
                clauses.append(f"{column} = ?")
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
        where, params = self._where(tenant, user_id, session_key, chat_id)
        with self._read("scan_messages") as conn:
            rows = conn.execute(
                f"SELECT json, seq FROM messages WHERE {where} AND seq > ? ORDER BY seq LIMIT ?",
                (*params, after_seq, limit),
            ).fetchall()
        return [load_message(raw, seq) for raw, seq in rows]

    def count_messages(
        self, tenant: str, *, user_id: str | None = None, session_key: str | None = None, after_seq: int = 0,
        chat_id: str | None = None,
    ) -> int:
        where, params = self._where(check_tenant(tenant), user_id, session_key, chat_id)
        with self._read("count_messages") as conn:
            return conn.execute(f"SELECT COUNT(*) FROM messages WHERE {where} AND seq > ?", [*params, after_seq]).fetchone()[0]

    def delete_messages(self, tenant: str, *, user_id: str, session_key: str | None = None) -> list[MessageRef]:
        where, params = self._where(check_tenant(tenant), user_id, session_key, None)
        with self._write("delete_messages") as conn:
            ids = [MessageRef(*r) for r in conn.execute(
                f"SELECT chat_id, message_id FROM messages WHERE {where} ORDER BY seq", params)]
            conn.execute(f"DELETE FROM messages WHERE {where}", params)
        logger.debug("sqlite delete_messages tenant=%s user=%s deleted=%d", tenant, user_id, len(ids))
        return ids

    def delete_refs(self, tenant: str, refs: Sequence[MessageRef]) -> list[MessageRef]:
        tenant, pairs = check_tenant(tenant), list(dict.fromkeys(ref_pairs(refs)))
        with self._write("delete_refs") as conn:
            gone = [p for p in pairs if conn.execute(
                "DELETE FROM messages WHERE tenant = ? AND chat_id = ? AND message_id = ?", (tenant, *p)).rowcount]
        return [MessageRef(*p) for p in gone]

    def tenants(self) -> list[str]:
        with self._read("tenants") as conn:
            rows = conn.execute(
                "SELECT DISTINCT tenant FROM messages UNION SELECT DISTINCT tenant FROM docs ORDER BY 1"
            ).fetchall()
        return [r[0] for r in rows]

    # -- pending for the index ------------------------------------------------------------------
    def pending_index(self, tenant: str, limit: int = 1000) -> list[MessageRef]:
        tenant, limit = check_tenant(tenant), check_limit(limit)
        with self._read("pending_index") as conn:
            rows = conn.execute(
                "SELECT chat_id, message_id FROM messages WHERE tenant = ? AND indexed = 0 ORDER BY seq LIMIT ?",
                (tenant, limit),
            ).fetchall()
        return [MessageRef(*r) for r in rows]

    def count_pending(self, tenant: str) -> int:
        tenant = check_tenant(tenant)
        with self._read("count_pending") as conn:
            return int(conn.execute("SELECT COUNT(*) FROM messages WHERE tenant = ? AND indexed = 0", (tenant,)).fetchone()[0])

    def mark_indexed(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        tenant = check_tenant(tenant)
        with self._write("mark_indexed", derived=True) as conn:
            conn.executemany(
                "UPDATE messages SET indexed = 1 WHERE tenant = ? AND chat_id = ? AND message_id = ?",
                [(tenant, *pair) for pair in ref_pairs(refs)],
            )

    def mark_all_pending(self, tenant: str) -> int:
        tenant = check_tenant(tenant)
        with self._write("mark_all_pending") as conn:
            conn.execute("UPDATE messages SET indexed = 0 WHERE tenant = ? AND indexed = 1", (tenant,))
            return conn.execute("SELECT COUNT(*) FROM messages WHERE tenant = ?", (tenant,)).fetchone()[0]

    # -- documents ------------------------------------------------------------------------------
    def put_docs(self, tenant: str, collection: str, items: Mapping[str, Mapping[str, Any]]) -> None:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        rows = [(tenant, collection, key, dump_doc(collection, key, doc)) for key, doc in items.items()]
        if not rows:
            return
        with self._write("put_docs") as conn:
            conn.executemany(
                "INSERT INTO docs (tenant, collection, key, json) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (tenant, collection, key) DO UPDATE SET json = excluded.json",
                rows,
            )

    def get_docs(self, tenant: str, collection: str, keys: Sequence[str]) -> list[dict[str, Any] | None]:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        found: dict[str, dict[str, Any]] = {}
        with self._read("get_docs") as conn:
            for chunk in _chunks(list(dict.fromkeys(keys))):
                marks = ",".join("?" * len(chunk))
                for key, raw in conn.execute(
                    f"SELECT key, json FROM docs WHERE tenant = ? AND collection = ? AND key IN ({marks})",
                    (tenant, collection, *chunk),
                ):
                    found[key] = json.loads(raw)
        return [found.get(k) for k in keys]

    @staticmethod
    def _key_range(prefix: str, after: str) -> tuple[str, list[str]]:
        """SQL for ``key`` starting with ``prefix`` and greater than ``after``, as an index range."""
        clauses: list[str] = []
        params: list[str] = []
        if after and after >= prefix:
            clauses.append("key > ?")
            params.append(after)
        elif prefix:
            clauses.append("key >= ?")
            params.append(prefix)
        end = prefix_end(prefix) if prefix else None
        if end is not None:
            clauses.append("key < ?")
            params.append(end)
        return "".join(f" AND {c}" for c in clauses), params

    def list_docs(
        self, tenant: str, collection: str, *, prefix: str = "", after: str = "", limit: int = 1000
    ) -> list[tuple[str, dict[str, Any]]]:
        tenant, collection, limit = check_tenant(tenant), check_collection(collection), check_limit(limit)
        where, params = self._key_range(prefix, after)
        with self._read("list_docs") as conn:
            rows = conn.execute(
                f"SELECT key, json FROM docs WHERE tenant = ? AND collection = ?{where} ORDER BY key LIMIT ?",
                (tenant, collection, *params, limit),
            ).fetchall()
        return [(key, json.loads(raw)) for key, raw in rows]

    def delete_docs(self, tenant: str, collection: str, keys: Sequence[str] | None = None) -> int:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        with self._write("delete_docs") as conn:
            if keys is None:
                return conn.execute("DELETE FROM docs WHERE tenant = ? AND collection = ?", (tenant, collection)).rowcount
            deleted = 0
            for chunk in _chunks(list(dict.fromkeys(keys))):
                marks = ",".join("?" * len(chunk))
                deleted += conn.execute(
                    f"DELETE FROM docs WHERE tenant = ? AND collection = ? AND key IN ({marks})",
                    (tenant, collection, *chunk),
                ).rowcount
            return deleted

    def count_docs(self, tenant: str, collection: str, *, prefix: str = "") -> int:
        tenant, collection = check_tenant(tenant), check_collection(collection)
        where, params = self._key_range(prefix, "")
        with self._read("count_docs") as conn:
            return conn.execute(
                f"SELECT COUNT(*) FROM docs WHERE tenant = ? AND collection = ?{where}", (tenant, collection, *params)
            ).fetchone()[0]
