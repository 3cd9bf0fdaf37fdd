"""The RecordStore conformance suite (``layered_memory.testing``) over every backend: SQLite in memory and
on disk, Redis. Backend-specific checks (Redis faults) follow."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from layered_memory.errors import BackendError, BackendUnavailable
from layered_memory.stores.base import RecordStore
from layered_memory.stores.sqlite import SQLiteRecordStore
from layered_memory.testing import RecordStoreConformance
from layered_memory.testing.record_store import A, msg


class TestSQLiteInMemory(RecordStoreConformance):
    @pytest.fixture
    def store(self) -> Iterator[RecordStore]:  # ":memory:" cannot be reopened: no opener
        s = SQLiteRecordStore(":memory:")
        s.setup()
        yield s
        s.close()


class TestSQLiteFile(RecordStoreConformance):
    @pytest.fixture
    def opener(self, tmp_path: Any) -> Any:
        path = str(tmp_path / "records.sqlite3")
        return lambda: SQLiteRecordStore(path)


@pytest.mark.redis
class TestRedis(RecordStoreConformance):
    @pytest.fixture
    def opener(self, redis_url: str, redis_prefix: str) -> Any:
        from layered_memory.stores.redis import RedisRecordStore

        return lambda: RedisRecordStore.from_url(redis_url, prefix=redis_prefix)


@pytest.mark.postgres
class TestPostgres(RecordStoreConformance):
    @pytest.fixture
    def opener(self, postgres_url: str, postgres_schema: str) -> Any:
        from layered_memory.stores.postgres import PostgresRecordStore

        return lambda: PostgresRecordStore(postgres_url, schema=postgres_schema)


@pytest.mark.postgres
@pytest.mark.redis
class TestPostgresWithRedisCache(RecordStoreConformance):
    """Postgres for the records, Redis beside it as the shared recent-message cache (seed 001, 2.5)."""

    @pytest.fixture
    def opener(self, postgres_url: str, postgres_schema: str, redis_url: str, redis_prefix: str) -> Any:
        from layered_memory.stores.postgres import PostgresRecordStore

        return lambda: PostgresRecordStore(postgres_url, schema=postgres_schema, cache_url=redis_url, cache_prefix=redis_prefix)


@pytest.mark.postgres
@pytest.mark.redis
class TestPostgresWithRedisClusterCache(RecordStoreConformance):
    """The recent cache on a Redis Cluster (``redis+cluster://``) beside Postgres."""

    @pytest.fixture
    def opener(self, postgres_url: str, postgres_schema: str, redis_cluster_url: str, redis_cluster_prefix: str) -> Any:
        from layered_memory.stores.postgres import PostgresRecordStore

        return lambda: PostgresRecordStore(
            postgres_url, schema=postgres_schema, cache_url=redis_cluster_url, cache_prefix=redis_cluster_prefix
        )


def test_a_suite_test_cannot_be_silently_overridden() -> None:
    with pytest.raises(TypeError, match=r"test_count_messages overrides a RecordStoreConformance test.*xfail"):
        type("TestCheating", (RecordStoreConformance,), {"test_count_messages": lambda self, store: None})

    @pytest.mark.xfail(reason="this backend counts lazily")
    def test_count_messages(self: Any, store: RecordStore) -> None: ...

    type("TestHonest", (RecordStoreConformance,), {"test_count_messages": test_count_messages})


# -- Redis faults -----------------------------------------------------------------------------------
@pytest.mark.redis
def test_redis_closed_port_fails_fast_and_names_the_address(redis_binary: str) -> None:
    from layered_memory.stores.redis import RedisRecordStore

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = RedisRecordStore.from_url(f"redis://127.0.0.1:{port}/0")
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match=f"127.0.0.1:{port}") as info:
        store.setup()
    assert time.monotonic() - started < 3
    assert info.value.backend == "redis" and info.value.op == "setup"
    store.close()


@pytest.mark.redis
def test_redis_server_stopped_mid_use_gives_a_backend_error(redis_server: Any, redis_prefix: str) -> None:
    from layered_memory.stores.redis import RedisRecordStore

    store = RedisRecordStore.from_url(redis_server.url, prefix=redis_prefix)
    store.setup()
    store.put_messages(A, [msg("m1")])
    redis_server.stop()
    started = time.monotonic()
    with pytest.raises(BackendError, match=f"127.0.0.1:{redis_server.port}"):
        store.window(A, user_id="u1", session_key="s1", limit=10)
    assert time.monotonic() - started < 3
    store.close()
