"""RedisRecordStore: the production RecordStore (redis-py, Redis Cluster-safe keys).

Every key of a tenant starts with the hash tag ``{<prefix>:<tenant>}``, so one tenant lives in one
cluster slot and the Lua scripts and MULTI blocks below may touch all of its keys. Layout, with
``T = {prefix:tenant}:``::

    T m                    HASH  <chat_id>|<message_id> -> "<seq>:<message json>"
    T seq                  STRING per-tenant counter (INCR), never reused
    T all                  ZSET  <chat_id>|<message_id> scored by seq (scan, count); the ZSETs
                                 below hold the same members
    T pend                 ZSET  by seq: the messages pending for the index
    T s:<user>|<session>   ZSET  one user's session by seq (window)
    T u:<user>             ZSET  one user's messages by seq
    T c:<chat>             ZSET  one chat's messages by seq
    T d:<collection>       HASH  key -> document json
    T dk:<collection>      ZSET  keys at score 0, for ordered ZRANGEBYLEX listing
    T ack                  STRING a counter written after a write when ``wait_replicas`` is set (see ``_acked``)
    <prefix>:tenants       SET   every tenant that ever stored something (outside any tenant slot)
    <prefix>:schema        STRING layout version

``|`` cannot occur in ids (``models.ID_PATTERN``), so ``s:`` keys and message members are
unambiguous. A message is ``(chat_id, message_id)``: Telegram numbers each chat's messages from 1.
Message writes run as Lua scripts: atomic, and every check happens before the first write (Lua does
not roll back). Layout 1 keyed messages by message_id alone; ``setup()`` migrates it (``redis_scripts.MIGRATE_V2``).
The scripts are in ``redis_scripts.py``; the client, its errors and the durability check in
``redis_connect.py`` (``RedisConnection``, which this store extends).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import redis
from redis.commands.core import Script

from ..config import RedisSettings
from ..errors import BackendTimeout, ConfigurationError, InvalidInputError, SchemaMismatch
from ..models import Message, MessageRef
from . import redis_scripts as lua
from .base import INDEX_UPGRADES, MESSAGE_POINTS_V2
from .native import offloaded
from .redis_cache import RecordStoreRecent
from .redis_connect import RedisConnection, as_text, connect
from .sqlite import check_collection, check_limit, check_tenant, dump_doc, dump_message, load_message, ref_pairs

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 2
_BATCH = 1000  # ids per script call / per command


def _member(chat_id: str, message_id: str) -> str:
    """A message's hash field and ZSET member: ``chat_id|message_id`` (``|`` never occurs in ids)."""
    return f"{chat_id}|{message_id}"


def _ref(member: bytes | str) -> MessageRef:
    chat, _, mid = as_text(member).partition("|")
    return MessageRef(chat, mid)


def _parse(raw: bytes | str) -> Message:
    """A stored ``"<seq>:<json>"`` value as a Message with its seq."""
    data = raw if isinstance(raw, bytes) else raw.encode()
    seq, _, body = data.partition(b":")
    return load_message(body, int(seq))


def _lex_range(prefix: str, after: str) -> tuple[bytes, bytes]:
    """ZRANGEBYLEX bounds for keys starting with ``prefix`` and greater than ``after``.

    0xFF never occurs in UTF-8, so every key starting with ``prefix`` sorts below ``prefix + 0xFF``.
    """
    if after and after >= prefix:
        low = b"(" + after.encode()
    else:
        low = b"[" + prefix.encode() if prefix else b"-"
    high = b"(" + prefix.encode() + b"\xff" if prefix else b"+"
    return low, high


class RedisRecordStore(RedisConnection):
    """The RecordStore on Redis (standalone, Sentinel or Cluster; keys are Cluster-safe).

    Args:
        client: a ready ``redis.Redis`` (``decode_responses`` either way); the caller keeps owning it.
        prefix: the first part of every key; lets many stores share one database.
    """

    backend = "redis"

    def __init__(
        self, client: redis.Redis | redis.RedisCluster, prefix: str = "lm", *, wait_replicas: int = 0, wait_timeout: float = 1.0,
    ) -> None:
        if not prefix or any(c in prefix for c in "{}| "):
            raise InvalidInputError("prefix", prefix, "must be non-empty, without { } | or spaces", "use e.g. 'lm'")
        super().__init__(client, wait_replicas=wait_replicas, wait_timeout=wait_timeout)
        self.prefix = prefix
        self._registered: set[str] = set()  # tenants already in <prefix>:tenants
        self._put = Script(self.client, lua.PUT)
        self._update = Script(self.client, lua.UPDATE)
        self._delete = Script(self.client, lua.DELETE)
        self._migrate_v2 = Script(self.client, lua.MIGRATE_V2)
        self._window = Script(self.client, lua.WINDOW)
        self._range = Script(self.client, lua.RANGE)
        self._list_docs = Script(self.client, lua.LIST_DOCS)

    @classmethod
    def from_url(
        cls, url: str, *, socket_timeout: float = 5, connect_timeout: float = 2, prefix: str = "lm", cluster: bool = False,
        wait_replicas: int = 0, wait_timeout: float = 1.0,
    ) -> RedisRecordStore:
        """A store owning a new client for ``url`` (``redis://host:port/db``, ``rediss://``, ``unix://``).

        A Redis Cluster: ``redis+cluster://host:port`` (or ``rediss+cluster://``, or ``cluster=True``)
        names one node; the client discovers the others and routes each tenant's keys to its slot.

        Connects lazily: ``setup()`` is the first round trip. A refused or dropped connection gets one
        quick retry, so a server that is down fails in about ``connect_timeout`` seconds, not after
        redis-py's default backoff. A timeout is not retried: a frozen server fails after
        ``socket_timeout`` seconds (redis-py's default retry would wait twice that).

        Raises:
            ConfigurationError: the URL cannot be parsed.
        """
        client = connect(url, socket_timeout=socket_timeout, connect_timeout=connect_timeout, cluster=cluster)
        store = cls(client, prefix=prefix, wait_replicas=wait_replicas, wait_timeout=wait_timeout)
        store._owns_client = True
        return store

    @classmethod
    def from_settings(cls, settings: RedisSettings) -> RedisRecordStore:
        if not settings.url:
            raise ConfigurationError("redis.url is empty; set LAYERED_MEMORY_REDIS__URL=redis://host:6379/0")
        return cls.from_url(
            settings.url, socket_timeout=settings.socket_timeout, connect_timeout=settings.connect_timeout,
            prefix=settings.prefix, cluster=settings.cluster, wait_replicas=settings.wait_replicas,
            wait_timeout=settings.wait_timeout,
        )

    def __enter__(self) -> RedisRecordStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RedisRecordStore({self.address!r}, prefix={self.prefix!r})"

    # -- keys and acknowledgements (connection and errors: RedisConnection) ------------------------
    def _base(self, tenant: str) -> str:
        return f"{{{self.prefix}:{check_tenant(tenant)}}}:"

    @offloaded  # a node's own connection (sync only): a worker thread on the native path
    def _acked(self, tenant: str, op: str) -> None:
        """With ``wait_replicas``: return only once that many replicas have every write made so far to the
        tenant's master, so a failover never loses an acknowledged write. Redis replicates in order, so
        one counter write in the tenant's slot followed by WAIT on the same connection covers the writes
        before it, whichever connection made them.

        Raises:
            BackendTimeout: fewer replicas acknowledged within ``wait_timeout`` (the write is on the master;
                retrying is safe, writes are idempotent).
        """
        if not self.wait_replicas:
            return
        key = self._base(tenant) + "ack"
        with self._errors(op):
            conn = self.client.get_node_from_key(key).redis_connection if self.cluster else self.client
            pipe = conn.pipeline(transaction=False)  # one connection: WAIT counts this INCR and all before it
            pipe.incr(key)
            pipe.execute_command("WAIT", self.wait_replicas, int(self.wait_timeout * 1000))
            try:
                acked = int(pipe.execute()[1])
            except redis.exceptions.ResponseError as exc:  # MOVED: the slot changed master (a failover)
                if self.cluster:
                    self.client.nodes_manager.initialize()
                raise redis.exceptions.ConnectionError(f"the tenant's slot moved ({exc}); retry") from exc
        if acked < self.wait_replicas:
            raise BackendTimeout(
                f"Redis at {self.address}: {op} is on the master but {acked} of {self.wait_replicas} replicas "
                f"acknowledged it within {self.wait_timeout}s (wait_replicas); retrying is safe (writes are "
                "idempotent); check the replicas' links or lower wait_replicas",
                backend="redis", op=op,
            )

    def _register(self, tenant: str) -> None:
        if tenant not in self._registered:
            self.client.sadd(f"{self.prefix}:tenants", tenant)
            self._registered.add(tenant)

    # -- lifecycle ------------------------------------------------------------------------------
    def setup(self) -> None:
        """Check the server answers and the key layout version. Idempotent.

        Raises:
            BackendUnavailable: Redis cannot be reached.
            ConfigurationError: a single-server url (redis://) names a Redis Cluster node.
            SchemaMismatch: the keys were written by a newer layered-memory.
        """
        key = f"{self.prefix}:schema"
        with self._errors("setup"):
            if not self.cluster:
                self._refuse_cluster_node()
            self.client.set(key, SCHEMA_VERSION, nx=True)
            found = int(self.client.get(key) or 0)
        if found > SCHEMA_VERSION:
            raise SchemaMismatch(
                f"Redis keys under prefix {self.prefix!r} have layout version {found}, this layered-memory knows "
                f"up to {SCHEMA_VERSION}; upgrade layered-memory or use another prefix",
                backend="redis", op="setup",
            )
        if found < 2:
            self._upgrade_to_v2()
            with self._errors("setup"):
                self.client.set(key, SCHEMA_VERSION)
        self._check_durability()

    def _upgrade_to_v2(self) -> None:
        """Layout 1 -> 2 (messages keyed by chat and id), one atomic script per tenant.

        A script holds Redis for the tenant's whole message hash (about a second per 100k messages);
        it runs once, at the first ``setup()`` of the new version.
        """
        marker = json.dumps({"schema": 2})
        with self._errors("setup"):
            for tenant in sorted(as_text(t) for t in self.client.smembers(f"{self.prefix}:tenants")):
                base = self._base(tenant)
                moved = self._migrate_v2(
                    keys=[base + "m", base + "all", base + "pend", f"{base}d:{INDEX_UPGRADES}", f"{base}dk:{INDEX_UPGRADES}"],
                    args=[base, MESSAGE_POINTS_V2, marker],
                )
                logger.info("redis prefix %s tenant %s: %d messages moved to layout 2", self.prefix, tenant, moved)

    def recent_cache(self, *, size: int, ttl: int) -> RecordStoreRecent:
        """The seed's recent-message cache, shared by every process: on a Redis record store, the store
        itself. Its per-chat ZSETs and message hash answer the same reads from the same Redis, so a
        second copy (``RedisRecentCache``, the cache beside PostgreSQL) would only cost the write path a
        round trip per add."""
        return RecordStoreRecent(self)

    # -- messages -------------------------------------------------------------------------------
    @staticmethod
    def _message_args(base: str, rows: list[tuple[Message, str]]) -> list[str]:
        args = [base]
        for msg, data in rows:
            args += [_member(msg.chat_id, msg.message_id), data, msg.user_id, msg.session_key, msg.chat_id]
        return args

    def put_messages(self, tenant: str, messages: Sequence[Message]) -> list[bool]:
        """Insert new messages atomically (one Lua script); a stored (chat_id, message_id) is left untouched.

        New messages get ``seq`` (also set on the objects passed in).
        """
        base = self._base(tenant)
        rows = [dump_message(tenant, m) for m in messages]  # bad input fails before any write
        if not rows:
            return []
        with self._errors("put_messages"):
            seqs = self._put(keys=[base + "m", base + "seq", base + "all", base + "pend"],
                             args=self._message_args(base, rows))
            self._register(tenant)
        self._acked(tenant, "put_messages")
        for original, seq in zip(messages, seqs):
            if seq:
                original.seq = int(seq)
        return [bool(s) for s in seqs]

    def update_messages(self, tenant: str, messages: Sequence[Message], *, reindex: bool = False) -> None:
        """Overwrite stored messages by (chat_id, message_id), keeping ``seq``; the pending flag too, unless
        ``reindex`` makes them pending for the index again (in the same script).

        Raises:
            NotFoundError: a message is not stored (nothing is written then).
        """
        base = self._base(tenant)
        rows = [dump_message(tenant, m) for m in messages]
        if rows:
            with self._errors("update_messages"):
                self._update(keys=[base + "m", base + "pend"] if reindex else [base + "m"], args=self._message_args(base, rows))
            self._acked(tenant, "update_messages")

    def get_messages(self, tenant: str, refs: Sequence[MessageRef]) -> list[Message | None]:
        base = self._base(tenant)
        members = [_member(*pair) for pair in ref_pairs(refs)]
        out: list[Message | None] = []
        with self._errors("get_messages"):
            for start in range(0, len(members), _BATCH):
                raws = self.client.hmget(base + "m", members[start : start + _BATCH])
                out += [_parse(r) if r is not None else None for r in raws]
        return out

    def chat_tail(self, tenant: str, chat_id: str, limit: int) -> list[Message]:
        """A chat's newest ``limit`` messages (by seq), oldest first: one script call."""
        return self._tail(tenant, f"c:{chat_id}", limit, "chat_tail")

    def window(self, tenant: str, *, user_id: str, session_key: str, limit: int) -> list[Message]:
        return self._tail(tenant, f"s:{user_id}|{session_key}", limit, "window")

    def chat_window(self, tenant: str, *, chat_id: str, session_key: str | None = None, limit: int) -> list[Message]:
        """The chat's ZSET tail; with a session key, read deeper until ``limit`` of that session are found
        (a chat usually is its own session: the first read is the answer)."""
        limit, want = check_limit(limit), check_limit(limit)
        while True:
            tail = self._tail(tenant, f"c:{chat_id}", want, "chat_window")
            found = [m for m in tail if session_key is None or m.session_key == session_key]
            if len(found) >= limit or len(tail) < want:
                return found[-limit:] if limit else []
            want *= 4

    def _tail(self, tenant: str, zset: str, limit: int, op: str) -> list[Message]:
        """The newest ``limit`` messages of one of the tenant's ZSETs, oldest first."""
        base, limit = self._base(tenant), check_limit(limit)
        if limit == 0:
            return []
        with self._errors(op):
            raws = self._window(keys=[base + zset, base + "m"], args=[limit])
        return [_parse(r) for r in reversed(raws) if r is not None]

    def _matching(
        self, tenant: str, user_id: str | None, session_key: str | None, chat_id: str | None, after_seq: int,
        op: str, want: int = _BATCH,
    ) -> Iterator[Message]:
        """Messages matching the filters, by ascending seq, read page by page from the narrowest ZSET."""
        base = self._base(tenant)
        if user_id is not None and session_key is not None:
            zset, rest = f"{base}s:{user_id}|{session_key}", {"chat_id": chat_id}
        elif user_id is not None:
            zset, rest = f"{base}u:{user_id}", {"chat_id": chat_id}
        elif chat_id is not None:
            zset, rest = f"{base}c:{chat_id}", {"session_key": session_key}
        else:
            zset, rest = base + "all", {"session_key": session_key}
        checks = [(field, value) for field, value in rest.items() if value is not None]
        page = _BATCH if checks else max(1, min(want, _BATCH))  # exact ZSET: read no more than asked
        after = after_seq
        while True:
            with self._errors(op):
                raws = self._range(keys=[zset, base + "m"], args=[after, page])
            for raw in raws:
                if raw is None:
                    continue
                msg = _parse(raw)
                after = msg.seq or after
                if all(getattr(msg, field) == value for field, value in checks):
                    yield msg
            if len(raws) < page:
                return

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
        limit = check_limit(limit)
        out: list[Message] = []
        if limit == 0:
            return out
        for msg in self._matching(tenant, user_id, session_key, chat_id, after_seq, "scan_messages", limit):
            out.append(msg)
            if len(out) >= limit:
                break
        return out

    def count_messages(
        self, tenant: str, *, user_id: str | None = None, session_key: str | None = None, after_seq: int = 0,
        chat_id: str | None = None,
    ) -> int:
        base = self._base(tenant)
        if chat_id is not None and user_id is None and session_key is None:
            with self._errors("count_messages"):
                zset = f"{base}c:{chat_id}"
                return int(self.client.zcount(zset, f"({int(after_seq)}", "+inf") if after_seq else self.client.zcard(zset))
        if chat_id is not None or (user_id is None and session_key is not None):  # no ZSET for the pair: count by scanning
            return sum(1 for _ in self._matching(tenant, user_id, session_key, chat_id, after_seq, "count_messages"))
        if user_id is None and session_key is not None:  # no ZSET per bare session: count by scanning
            return sum(1 for _ in self._matching(tenant, None, session_key, None, after_seq, "count_messages"))
        if user_id is None:
            zset = base + "all"
        elif session_key is None:
            zset = f"{base}u:{user_id}"
        else:
            zset = f"{base}s:{user_id}|{session_key}"
        with self._errors("count_messages"):  # scores are seq
            return int(self.client.zcount(zset, f"({int(after_seq)}", "+inf") if after_seq else self.client.zcard(zset))

    def delete_messages(self, tenant: str, *, user_id: str, session_key: str | None = None) -> list[MessageRef]:
        base = self._base(tenant)
        source = f"{base}u:{user_id}" if session_key is None else f"{base}s:{user_id}|{session_key}"
        with self._errors("delete_messages"):
            ids = self._delete(keys=[base + "m", base + "all", base + "pend", source], args=[base])
        self._acked(tenant, "delete_messages")
        logger.debug("redis delete_messages tenant=%s user=%s deleted=%d", tenant, user_id, len(ids))
        return [_ref(i) for i in ids]

    def delete_refs(self, tenant: str, refs: Sequence[MessageRef]) -> list[MessageRef]:
        base = self._base(tenant)
        members = list(dict.fromkeys(_member(*pair) for pair in ref_pairs(refs)))
        gone: list[MessageRef] = []
        for start in range(0, len(members), _BATCH):
            with self._errors("delete_refs"):
                gone += [_ref(i) for i in self._delete(keys=[base + "m", base + "all", base + "pend"],
                                                       args=[base, *members[start : start + _BATCH]])]
        if members:
            self._acked(tenant, "delete_refs")
        return gone

    def tenants(self) -> list[str]:
        """Every tenant that ever stored a message or document (deleting everything keeps it listed)."""
        with self._errors("tenants"):
            return sorted(as_text(t) for t in self.client.smembers(f"{self.prefix}:tenants"))

    # -- pending for the index ------------------------------------------------------------------
    def pending_index(self, tenant: str, limit: int = 1000) -> list[MessageRef]:
        base, limit = self._base(tenant), check_limit(limit)
        if limit == 0:
            return []
        with self._errors("pending_index"):
            return [_ref(i) for i in self.client.zrange(base + "pend", 0, limit - 1)]

    def count_pending(self, tenant: str) -> int:
        base = self._base(tenant)
        with self._errors("count_pending"):
            return int(self.client.zcard(base + "pend"))

    def mark_indexed(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        base = self._base(tenant)
        members = [_member(*pair) for pair in ref_pairs(refs)]
        with self._errors("mark_indexed"):
            for start in range(0, len(members), _BATCH):
                self.client.zrem(base + "pend", *members[start : start + _BATCH])

    def mark_all_pending(self, tenant: str) -> int:
        base = self._base(tenant)
        with self._errors("mark_all_pending"):
            return int(self.client.zunionstore(base + "pend", [base + "all"]))

    # -- documents ------------------------------------------------------------------------------
    def _doc_keys(self, tenant: str, collection: str) -> tuple[str, str]:
        base = self._base(tenant)
        collection = check_collection(collection)
        return f"{base}d:{collection}", f"{base}dk:{collection}"

    def put_docs(self, tenant: str, collection: str, items: Mapping[str, Mapping[str, Any]]) -> None:
        docs, index = self._doc_keys(tenant, collection)
        values = {key: dump_doc(collection, key, doc) for key, doc in items.items()}
        if not values:
            return
        with self._errors("put_docs"):
            pipe = self.client.pipeline(transaction=True)
            pipe.hset(docs, mapping=values)
            pipe.zadd(index, dict.fromkeys(values, 0))
            pipe.execute()
            self._register(tenant)
        self._acked(tenant, "put_docs")

    def get_docs(self, tenant: str, collection: str, keys: Sequence[str]) -> list[dict[str, Any] | None]:
        docs, _ = self._doc_keys(tenant, collection)
        out: list[dict[str, Any] | None] = []
        with self._errors("get_docs"):
            for start in range(0, len(keys), _BATCH):
                raws = self.client.hmget(docs, list(keys[start : start + _BATCH]))
                out += [json.loads(r) if r is not None else None for r in raws]
        return out

    def list_docs(
        self, tenant: str, collection: str, *, prefix: str = "", after: str = "", limit: int = 1000
    ) -> list[tuple[str, dict[str, Any]]]:
        docs, index = self._doc_keys(tenant, collection)
        limit = check_limit(limit)
        if limit == 0:
            return []
        low, high = _lex_range(prefix, after)
        with self._errors("list_docs"):
            flat = self._list_docs(keys=[index, docs], args=[low, high, limit])
        return [(as_text(flat[i]), json.loads(flat[i + 1])) for i in range(0, len(flat), 2) if flat[i + 1] is not None]

    def delete_docs(self, tenant: str, collection: str, keys: Sequence[str] | None = None) -> int:
        docs, index = self._doc_keys(tenant, collection)
        with self._errors("delete_docs"):
            pipe = self.client.pipeline(transaction=True)
            if keys is None:
                pipe.hlen(docs)
                pipe.delete(docs, index)
            else:
                unique = list(dict.fromkeys(keys))
                if not unique:
                    return 0
                pipe.hdel(docs, *unique)
                pipe.zrem(index, *unique)
            n = int(pipe.execute()[0])
        self._acked(tenant, "delete_docs")
        return n

    def count_docs(self, tenant: str, collection: str, *, prefix: str = "") -> int:
        docs, index = self._doc_keys(tenant, collection)
        with self._errors("count_docs"):
            if not prefix:
                return int(self.client.hlen(docs))
            return int(self.client.zlexcount(index, *_lex_range(prefix, "")))
