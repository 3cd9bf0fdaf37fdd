"""Record stores on the server backends for parametrized tests: the same test on Redis, a three-master
Redis Cluster and PostgreSQL (each started once per session by the fixtures in ``tests/conftest.py``).

    @pytest.fixture(params=SERVER_KINDS)
    def records(request):
        return server_records(request, request.param)
"""

from __future__ import annotations

from typing import Any

import pytest

SERVER_KINDS = ("redis", "cluster", "postgres")


def server_records(request: pytest.FixtureRequest, kind: str) -> Any:
    """A fresh, set-up RecordStore of ``kind`` (its keys / schema are removed by the fixtures afterwards)."""
    if kind == "redis":
        from layered_memory.stores.redis import RedisRecordStore

        return RedisRecordStore.from_url(request.getfixturevalue("redis_url"), prefix=request.getfixturevalue("redis_prefix"))
    if kind == "cluster":
        from layered_memory.stores.redis import RedisRecordStore

        return RedisRecordStore.from_url(
            request.getfixturevalue("redis_cluster_url"), prefix=request.getfixturevalue("redis_cluster_prefix")
        )
    if kind == "postgres":
        from layered_memory.stores.postgres import PostgresRecordStore

        store = PostgresRecordStore(request.getfixturevalue("postgres_url"), schema=request.getfixturevalue("postgres_schema"))
        store.setup()
        return store
    raise ValueError(f"unknown server kind {kind!r}: one of {SERVER_KINDS}")
