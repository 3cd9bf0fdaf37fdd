"""Unit tests need no server: every test here, in every subfolder, runs with sockets disabled (pytest-socket),
so a unit test that starts talking to a network service fails instead of quietly becoming an integration test.
Unix sockets stay allowed (asyncio's event loop uses a socketpair); subprocesses a test starts are not
guarded. Tests that need a server live in tests/integration; tests/unit/test_layout.py pins the layout."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_socket import disable_socket, enable_socket


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    disable_socket(allow_unix_socket=True)
    try:
        yield
    finally:
        enable_socket()
