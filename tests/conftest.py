"""Shared fixtures. Keep this file small: backend-specific fixtures live next to their tests.

Redis: ``redis_url`` is ``$LAYERED_MEMORY_TEST_REDIS_URL`` when set, else a private ``redis-server``
started for the session on a free port (skipped with a reason when the binary is missing).
``redis_cluster_url``: a private three-master Redis Cluster for the session (``redis+cluster://``).
PostgreSQL: ``postgres_url`` is ``$LAYERED_MEMORY_TEST_POSTGRES_URL`` when set, else a throwaway cluster
(``tests/postgres_server.py``) for the session; ``postgres_schema`` gives each test its own schema.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator

import pytest
from postgres_server import PostgresServer, find_bin_dir
from redis_server import RedisCluster, RedisServer

REDIS_URL_ENV = "LAYERED_MEMORY_TEST_REDIS_URL"
POSTGRES_URL_ENV = "LAYERED_MEMORY_TEST_POSTGRES_URL"


@pytest.fixture(scope="session")
def redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not on PATH: install it (apt-get install redis-server) or set " + REDIS_URL_ENV)
    return binary


@pytest.fixture(scope="session")
def redis_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A Redis URL for the whole session (db 0); tests isolate themselves with ``redis_prefix``."""
    if os.environ.get(REDIS_URL_ENV):
        yield os.environ[REDIS_URL_ENV]
        return
    server = RedisServer(request.getfixturevalue("redis_binary"))
    yield server.url
    server.stop()


@pytest.fixture
def redis_server(redis_binary: str) -> Iterator[RedisServer]:
    """A private server for one test (fault tests stop it mid-use)."""
    server = RedisServer(redis_binary)
    yield server
    server.stop()


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A fresh key prefix per test; its keys are removed afterwards (SCAN, never KEYS)."""
    import redis

    prefix = f"t{uuid.uuid4().hex[:10]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    try:
        for pattern in (f"{{{prefix}:*", f"{prefix}:*"):
            keys = list(client.scan_iter(match=pattern, count=1000))
            for start in range(0, len(keys), 500):
                client.delete(*keys[start : start + 500])
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_cluster_url(redis_binary: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Three ``redis-server --cluster-enabled yes`` masters joined by ``redis-cli --cluster create``."""
    cli = shutil.which("redis-cli")
    if cli is None:
        pytest.skip("redis-cli is not on PATH: install redis-tools (apt-get install redis-server brings it)")
    cluster = RedisCluster(redis_binary, cli, str(tmp_path_factory.mktemp("redis-cluster")))
    yield cluster.url
    cluster.stop()


@pytest.fixture
def redis_cluster_prefix(redis_cluster_url: str) -> Iterator[str]:
    """A fresh key prefix per test on the cluster; its keys are removed afterwards (SCAN on every master)."""
    import redis

    prefix = f"t{uuid.uuid4().hex[:10]}"
    yield prefix
    client = redis.RedisCluster.from_url(redis_cluster_url.replace("redis+cluster://", "redis://"))
    try:
        for pattern in (f"{{{prefix}:*", f"{prefix}:*"):
            for key in list(client.scan_iter(match=pattern, count=1000)):
                client.delete(key)
    finally:
        client.close()


@pytest.fixture(scope="session")
def postgres_bin_dir() -> str:
    found = find_bin_dir()
    if found is None:
        pytest.skip("PostgreSQL's initdb/postgres are not on PATH nor in /usr/lib/postgresql/*/bin: install them "
                    "(apt-get install postgresql) or set " + POSTGRES_URL_ENV)
    pytest.importorskip("psycopg_pool", reason='the postgres extra is missing: pip install -e ".[postgres]"')
    return found


@pytest.fixture(scope="session")
def postgres_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A PostgreSQL URL for the whole session; tests isolate themselves with ``postgres_schema``."""
    if os.environ.get(POSTGRES_URL_ENV):
        yield os.environ[POSTGRES_URL_ENV]
        return
    server = PostgresServer(request.getfixturevalue("postgres_bin_dir"))
    yield server.url
    server.destroy()


@pytest.fixture
def postgres_server(postgres_bin_dir: str) -> Iterator[PostgresServer]:
    """A private cluster for one test (fault tests restart it mid-use)."""
    server = PostgresServer(postgres_bin_dir)
    yield server
    server.destroy()


@pytest.fixture
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """A fresh PostgreSQL schema per test, dropped afterwards."""
    import psycopg

    schema = f"t{uuid.uuid4().hex[:10]}"
    yield schema
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
