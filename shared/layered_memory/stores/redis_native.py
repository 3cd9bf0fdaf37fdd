"""The ``redis.asyncio`` twin of a RedisRecordStore's sync client (see ``stores.native``).

Built from the sync client's own connection settings, so both reach the same server (or cluster)
with the same credentials, timeouts and TLS: one async client per running event loop.
"""

from __future__ import annotations

from typing import Any

import redis
import redis.asyncio as aredis
from redis.backoff import ExponentialBackoff

from .native import Dispatch, PerLoop, await_only

# Connection settings that mean the same to the sync and the asyncio client.
_SHARED = (
    "username", "password", "socket_timeout", "socket_connect_timeout", "socket_keepalive", "encoding",
    "encoding_errors", "decode_responses", "client_name", "ssl_keyfile", "ssl_certfile", "ssl_cert_reqs",
    "ssl_ca_certs", "ssl_ca_data", "ssl_check_hostname", "protocol",
)


def _options(kwargs: dict[str, Any], ssl: bool) -> dict[str, Any]:
    out = {k: kwargs[k] for k in _SHARED if k in kwargs}
    if ssl:
        out["ssl"] = True
    # As the sync client of RedisRecordStore.from_url: one quick retry of a refused or dropped
    # connection, none of a timeout (a frozen server fails after socket_timeout).
    out["retry"] = aredis.retry.Retry(ExponentialBackoff(cap=0.1, base=0.01), 1, supported_errors=(redis.exceptions.ConnectionError,))
    return out


def async_twin(client: redis.Redis | redis.RedisCluster) -> aredis.Redis | aredis.RedisCluster:
    """A new ``redis.asyncio`` client to what ``client`` connects to (call it inside the loop that uses it)."""
    if isinstance(client, redis.RedisCluster):
        manager = client.nodes_manager
        kwargs = dict(manager.connection_kwargs)
        ssl = "SSL" in getattr(kwargs.get("connection_class"), "__name__", "") or bool(kwargs.get("ssl"))
        nodes = [aredis.cluster.ClusterNode(n.host, n.port) for n in manager.startup_nodes.values()]
        twin = aredis.RedisCluster(startup_nodes=nodes, **_options(kwargs, ssl))
        await_only(twin.initialize())  # the slot map first: concurrent first commands raced its lazy start
        return twin
    pool = client.connection_pool
    kwargs = dict(pool.connection_kwargs)
    ssl = "SSL" in pool.connection_class.__name__
    if kwargs.get("path"):
        return aredis.Redis(unix_socket_path=kwargs["path"], db=kwargs.get("db", 0), **_options(kwargs, ssl))
    return aredis.Redis(host=kwargs.get("host", "localhost"), port=kwargs.get("port", 6379), db=kwargs.get("db", 0), **_options(kwargs, ssl))


async def _aclose(client: Any) -> None:
    await client.aclose()


def dispatching(client: redis.Redis | redis.RedisCluster) -> Dispatch:
    """``client`` as a :class:`~layered_memory.stores.native.Dispatch`: itself in sync code, its
    per-loop asyncio twin under ``run_native``."""
    return Dispatch(client, PerLoop(lambda: async_twin(client), _aclose))


__all__ = ["async_twin", "dispatching"]
