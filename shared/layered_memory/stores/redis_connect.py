"""Connecting to Redis: a client from a URL (a single server, or a Redis Cluster from one node's URL), the
translation of redis-py's errors, the refusal of a cluster node opened as a single server, and the
warning for a server whose persistence settings lose acknowledged writes. ``RedisRecordStore``
(``redis.py``) is the record store on top: its key layout, scripts and record operations.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from ..errors import BackendError, BackendTimeout, BackendUnavailable, ConfigurationError, InvalidInputError, NotFoundError
from ..models import MessageRef
from .redis_native import dispatching
from .sqlite import not_stored

logger = logging.getLogger("layered_memory.stores.redis")  # the store's logger: one place to silence

__all__ = ["RedisConnection", "as_text", "cluster_client", "connect", "warn_durability"]

_DURABILITY_CHECKED: set[str] = set()  # server addresses whose persistence settings were read (warn once each)


def as_text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def connect(url: str, *, socket_timeout: float, connect_timeout: float, cluster: bool) -> redis.Redis | redis.RedisCluster:
    """A client for ``url``; ``redis+cluster://`` / ``rediss+cluster://`` (or ``cluster``) names one node of a
    Redis Cluster. A refused or dropped connection gets one quick retry, a timeout none (see
    ``RedisRecordStore.from_url``).

    Raises:
        ConfigurationError: the URL cannot be parsed.
    """
    scheme, sep, rest = url.partition("://")
    if sep and scheme.endswith("+cluster"):
        url, cluster = f"{scheme.removesuffix('+cluster')}://{rest}", True
    retry = Retry(ExponentialBackoff(cap=0.1, base=0.01), 1, supported_errors=(redis.exceptions.ConnectionError,))
    try:
        if cluster:
            return cluster_client(url, socket_timeout, connect_timeout, retry)
        return redis.Redis.from_url(url, socket_timeout=socket_timeout, socket_connect_timeout=connect_timeout, retry=retry)
    except ValueError as exc:
        raise ConfigurationError(
            f"redis url {url!r} is not valid ({exc}); use redis://host:6379/0, rediss://... or unix:///path.sock"
        ) from None


def cluster_client(url: str, socket_timeout: float, connect_timeout: float, retry: Retry) -> redis.RedisCluster:
    """A cluster client from one node's URL. A cluster has database 0 only; the URL's path must say 0 or nothing.

    Connects at once (it reads the slot map): an unreachable node is a BackendUnavailable naming it."""
    db = url.partition("://")[2].partition("/")[2].partition("?")[0]
    if db not in ("", "0"):
        raise ConfigurationError(
            f"redis url {url!r} names database {db}, and a Redis Cluster has database 0 only; drop the /{db}"
        )
    try:
        return redis.RedisCluster.from_url(
            url, socket_timeout=socket_timeout, socket_connect_timeout=connect_timeout, retry=retry,
        )
    except redis.exceptions.RedisClusterException as exc:
        raise BackendUnavailable(
            f"Redis Cluster at {url.rpartition('@')[2]!r} cannot be reached ({exc}); check the address, and that "
            "the node runs with cluster-enabled yes (or drop +cluster / cluster=True for a single server)",
            backend="redis", op="connect",
        ) from None


def warn_durability(address: str, conf: dict[str, str]) -> None:
    """One WARNING when a server's persistence settings lose acknowledged writes on a restart or a crash."""
    appendonly, fsync = conf.get("appendonly"), conf.get("appendfsync")
    if appendonly == "no":
        logger.warning(
            "Redis at %s runs with appendonly no: messages it acknowledged are lost when redis-server "
            "stops or crashes (RDB snapshots keep at most the last snapshot). Set appendonly yes and "
            "appendfsync everysec (loses at most ~1 s of writes) or always (loses none): "
            "CONFIG SET appendonly yes; CONFIG SET appendfsync everysec; CONFIG REWRITE", address,
        )
    elif appendonly == "yes" and fsync == "no":
        logger.warning(
            "Redis at %s runs with appendfsync no: the OS decides when the append-only file reaches the "
            "disk, so a power loss or OS crash loses recent acknowledged messages. Set appendfsync "
            "everysec or always (CONFIG SET appendfsync everysec; CONFIG REWRITE)", address,
        )


class RedisConnection:
    """A Redis server or cluster as the record store uses it: its client (and the client's redis.asyncio
    twin on the native path), its address for messages, and every redis-py error a ``BackendError`` that
    names the server and the fix.

    Args:
        client: a ready ``redis.Redis`` or ``redis.RedisCluster``; the caller keeps owning it.
        wait_replicas, wait_timeout: replicas that must acknowledge each write (``RedisRecordStore._acked``).
    """

    def __init__(self, client: redis.Redis | redis.RedisCluster, *, wait_replicas: int = 0, wait_timeout: float = 1.0) -> None:
        self.client = dispatching(client)  # the client itself; its redis.asyncio twin under run_native (stores.native)
        self._owns_client = False  # from_url() sets it: close() closes only a client we built
        self.cluster = isinstance(client, redis.RedisCluster)
        if self.cluster:  # every key of a tenant shares the {prefix:tenant} hash tag: one slot per tenant
            kwargs = client.nodes_manager.connection_kwargs
            node = client.nodes_manager.startup_nodes and next(iter(client.nodes_manager.startup_nodes.values()))
            self.address = f"cluster {node.host}:{node.port}" if node else "cluster"
        else:
            kwargs = client.connection_pool.connection_kwargs
            self.address = kwargs.get("path") or f"{kwargs.get('host', '?')}:{kwargs.get('port', '?')}"
        self._timeout = kwargs.get("socket_timeout")
        if isinstance(wait_replicas, bool) or not isinstance(wait_replicas, int) or wait_replicas < 0:
            raise InvalidInputError("wait_replicas", wait_replicas, "must be an int >= 0", "use 0 (no replicas) or 1")
        self.wait_replicas, self.wait_timeout = wait_replicas, wait_timeout

    # -- errors ---------------------------------------------------------------------------------
    @contextmanager
    def _errors(self, op: str) -> Iterator[None]:
        """Translate redis-py errors into BackendError subclasses (the only place that does)."""
        try:
            yield
        except redis.exceptions.TimeoutError as exc:
            raise BackendTimeout(
                f"Redis at {self.address} did not answer within {self._wait_text()} during {op} ({exc}); "
                "the command may still have been applied (writes are idempotent: retrying is safe); "
                "check the server load or raise socket_timeout",
                backend="redis", op=op,
            ) from exc
        except redis.exceptions.ConnectionError as exc:
            raise BackendUnavailable(
                f"cannot reach Redis at {self.address} during {op} ({exc}); "
                "start redis-server there or fix the URL (redis://host:port/db)",
                backend="redis", op=op,
            ) from exc
        except (redis.exceptions.ClusterDownError, redis.exceptions.RedisClusterException) as exc:
            raise BackendUnavailable(
                f"the Redis Cluster at {self.address} cannot serve {op} ({type(exc).__name__}: {exc}); "
                "wait for the cluster to recover (a failover takes about cluster-node-timeout) or check its nodes",
                backend="redis", op=op,
            ) from exc
        except redis.exceptions.MovedError as exc:  # only a single-server client sees MOVED: a cluster client follows it
            raise self._cluster_node_error(f"it answered {op} with MOVED {exc}") from None
        except redis.exceptions.ResponseError as exc:
            if str(exc).startswith("NOTFOUND "):  # a script's check: "NOTFOUND <chat_id>|<message_id>" (redis_scripts)
                chat, _, mid = str(exc).split()[1].partition("|")
                raise NotFoundError(not_stored(None, MessageRef(chat, mid))) from None
            raise BackendError(f"Redis at {self.address} refused {op}: {exc}", backend="redis", op=op) from exc
        except redis.exceptions.RedisError as exc:
            raise BackendError(f"Redis {op} failed at {self.address}: {exc}", backend="redis", op=op) from exc

    def _cluster_node_error(self, evidence: str) -> ConfigurationError:
        return ConfigurationError(
            f"Redis at {self.address} is a Redis Cluster node ({evidence}), and a redis:// url opens a single "
            f"server; use redis+cluster://{self.address} (rediss+cluster:// with TLS, or cluster=True) so the "
            "client follows the cluster's slots"
        )

    def _refuse_cluster_node(self) -> None:
        """A single-server client on a cluster node works only for the keys of that node's slots: refuse it."""
        try:
            enabled = str(self.client.info("cluster").get("cluster_enabled", 0)) == "1"
        except redis.exceptions.ResponseError:  # INFO disabled (some managed Redis): a MOVED reply says it later
            return
        if enabled:
            raise self._cluster_node_error("cluster_enabled:1")

    def _wait_text(self) -> str:
        """How long a timed-out call waited: socket_timeout times the attempts the client's retry makes."""
        attempts = 1
        get_retry = getattr(self.client, "get_retry", None)
        retry = get_retry() if get_retry is not None else None
        if retry is not None and redis.exceptions.TimeoutError in getattr(retry, "_supported_errors", ()):
            attempts += max(getattr(retry, "_retries", 0), 0)
        if attempts == 1:
            return f"{self._timeout}s"
        return f"{self._timeout}s x {attempts} attempts (socket_timeout, retried by the client)"

    def _check_durability(self) -> None:
        """Warn once per server when acknowledged writes would not survive a redis-server restart."""
        if self.address in _DURABILITY_CHECKED:
            return
        _DURABILITY_CHECKED.add(self.address)
        try:
            if self.cluster:  # every master keeps its own slots: each one's settings count
                servers = [(f"{n.host}:{n.port}", self.client.config_get("append*", target_nodes=n))
                           for n in self.client.get_primaries()]
            else:
                servers = [(self.address, self.client.config_get("append*"))]
        except redis.exceptions.RedisError as exc:  # managed Redis often disables CONFIG: nothing to check
            logger.info("Redis at %s: cannot read its persistence settings (%s); make sure it runs with "
                        "appendonly yes and appendfsync everysec or always", self.address, exc)
            return
        for address, conf in servers:
            warn_durability(address, {as_text(k): as_text(v) for k, v in conf.items()})

    def native_async(self) -> bool:  # every method may run under stores.native.run_native (I/O on redis.asyncio)
        return True

    def close(self) -> None:
        self.client.close_native()
        if self._owns_client:
            self.client.close()
