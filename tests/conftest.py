"""Shared fixtures. Keep this file small: backend-specific fixtures live next to their tests.

Redis: ``redis_url`` is ``$LAYERED_MEMORY_TEST_REDIS_URL`` when set, else a private ``redis-server``
started for the session on a free port (skipped with a reason when the binary is missing).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

REDIS_URL_ENV = "LAYERED_MEMORY_TEST_REDIS_URL"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A throwaway ``redis-server`` process (no persistence) on 127.0.0.1."""

    def __init__(self, binary: str, *extra_args: str) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no", *extra_args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"redis-server on port {self.port} did not answer PING within 10 s")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


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
