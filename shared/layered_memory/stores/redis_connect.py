"""Connecting to Redis: a Redis Cluster client from one node's URL, and the warning for a server whose
persistence settings lose acknowledged writes (``RedisRecordStore`` reads them once per server)."""

from __future__ import annotations

import logging

import redis
from redis.retry import Retry

from ..errors import BackendUnavailable, ConfigurationError

logger = logging.getLogger("layered_memory.stores.redis")  # the store's logger: one place to silence

__all__ = ["cluster_client", "warn_durability"]


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
