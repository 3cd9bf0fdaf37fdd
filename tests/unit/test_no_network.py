"""tests/unit runs with network sockets disabled (tests/unit/conftest.py)."""

from __future__ import annotations

import socket

import pytest
from pytest_socket import SocketBlockedError


def test_a_unit_test_cannot_open_a_network_socket() -> None:
    with pytest.raises(SocketBlockedError):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)
