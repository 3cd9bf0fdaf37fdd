"""Issue 10, bug 11: the durability of each record store is checked (Redis), a setting (SQLite) and
documented; a timed-out Redis write is reported truthfully and safe to retry."""

from __future__ import annotations

import logging
import os
import re
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from layered_memory import LayeredMemory
from layered_memory.config import LayeredMemorySettings
from layered_memory.errors import BackendTimeout
from layered_memory.stores.redis import RedisRecordStore
from layered_memory.stores.sqlite import SQLiteRecordStore


# -- bug 11: SQLite ------------------------------------------------------------------------------------
def test_sqlite_synchronous_defaults_to_full_and_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with LayeredMemory.embedded(tmp_path / "a", embedder="none") as m:
        assert m.records.synchronous == "FULL"  # type: ignore[attr-defined]
    monkeypatch.setenv("LAYERED_MEMORY_SQLITE__SYNCHRONOUS", "normal")
    settings = LayeredMemorySettings()
    assert settings.sqlite.synchronous == "NORMAL"
    with LayeredMemory.embedded(tmp_path / "b", embedder="none", settings=settings) as m:
        assert m.records.synchronous == "NORMAL"  # type: ignore[attr-defined]
    monkeypatch.setenv("LAYERED_MEMORY_SQLITE__SYNCHRONOUS", "OFF")  # not offered: loses acknowledged writes
    with pytest.raises(ValueError, match="synchronous"):
        LayeredMemorySettings()
    assert SQLiteRecordStore(str(tmp_path / "c.sqlite3"), synchronous="EXTRA").synchronous == "EXTRA"


def test_sqlite_pending_clears_skip_the_fsync_and_the_setting_comes_back(tmp_path: Path) -> None:
    """Clearing pending index work is derived state (a lost clear re-indexes a batch): its commit runs at
    NORMAL; every durable write, before and after it, at the store's setting, even when it fails."""
    from layered_memory.models import Message

    store = SQLiteRecordStore(str(tmp_path / "r.sqlite3"), synchronous="FULL")
    store.setup()
    m = Message.build({"message_id": "m1", "chat_id": "c", "user_id": "u", "content": "hello"})
    store.put_messages("t", [m])
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    levels = []
    store._conn.set_trace_callback(lambda sql: levels.append(sql) if sql.startswith("PRAGMA synchronous =") else None)
    store.mark_indexed("t", [m.ref])
    assert levels == ["PRAGMA synchronous = NORMAL", "PRAGMA synchronous = FULL"]
    assert store.count_pending("t") == 0
    store._conn.set_trace_callback(None)
    with pytest.raises(RuntimeError), store._write("mark_indexed", derived=True):
        raise RuntimeError("a failure inside the relaxed transaction")
    assert store._conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert store.synchronous == "FULL"


def test_sqlite_path_setting_is_honoured(tmp_path: Path) -> None:
    """``SQLiteSettings.path`` was ignored by ``embedded`` and ``from_settings``."""
    records = tmp_path / "elsewhere" / "records-of-acme.sqlite3"
    settings = LayeredMemorySettings(data_dir=str(tmp_path / "data"), embedder="none")
    settings.sqlite.path = str(records)
    with LayeredMemory.from_settings(settings) as m:
        m.add_message(message_id="m1", chat_id="c1", user_id="u1", content="hello")
    assert records.exists() and not (tmp_path / "data" / "records.sqlite3").exists()
    with sqlite3.connect(records) as conn:
        assert conn.execute("SELECT message_id FROM messages").fetchall() == [("m1",)]
    with LayeredMemory.from_settings(settings) as m:
        assert m.get_messages(["m1"], chat_id="c1")[0] is not None


# -- bug 11: Redis -------------------------------------------------------------------------------------
def _durability_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "layered_memory.stores.redis" and "append" in r.getMessage()]


@pytest.mark.redis
def test_redis_without_appendonly_warns_once_per_server(redis_server: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="layered_memory.stores.redis")
    for prefix in ("a", "b"):
        store = RedisRecordStore.from_url(redis_server.url, prefix=prefix)
        store.setup()
        store.close()
    warnings = [r for r in _durability_records(caplog) if r.levelno == logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    text = warnings[0].getMessage()
    assert f"127.0.0.1:{redis_server.port}" in text and "appendonly no" in text
    assert "appendonly yes" in text and "appendfsync everysec" in text


@pytest.mark.redis
@pytest.mark.parametrize(("appendonly", "fsync", "warns"), [("yes", "everysec", False), ("yes", "always", False), ("yes", "no", True)])
def test_redis_warns_unless_appendfsync_is_durable(
    redis_binary: str, tmp_path: Path, caplog: pytest.LogCaptureFixture, appendonly: str, fsync: str, warns: bool
) -> None:
    from redis_server import RedisServer

    server = RedisServer(redis_binary, "--dir", str(tmp_path))  # the append-only file goes there
    admin = redis.Redis.from_url(server.url)
    try:
        admin.config_set("appendfsync", fsync)
        admin.config_set("appendonly", appendonly)
        caplog.set_level(logging.INFO, logger="layered_memory.stores.redis")
        store = RedisRecordStore.from_url(server.url, prefix="p")
        store.setup()
        store.close()
    finally:
        admin.config_set("appendonly", "no")  # a server with an AOF takes seconds to stop
        admin.close()
        server.stop()
    warnings = [r.getMessage() for r in _durability_records(caplog) if r.levelno == logging.WARNING]
    assert bool(warnings) is warns, warnings
    if warns:
        assert "appendfsync no" in warnings[0] and "everysec" in warnings[0]


@pytest.mark.redis
def test_redis_with_config_disabled_is_tolerated(redis_binary: str, caplog: pytest.LogCaptureFixture) -> None:
    """Managed Redis services often rename or disable CONFIG: the store opens and says it could not check."""
    from redis_server import RedisServer

    server = RedisServer(redis_binary, "--rename-command", "CONFIG", "")
    try:
        caplog.set_level(logging.INFO, logger="layered_memory.stores.redis")
        with LayeredMemory.from_urls(redis_url=server.url, embedder="none") as m:
            assert m.add_message(message_id="m1", chat_id="c1", user_id="u1", content="hello").seq == 1
        records = _durability_records(caplog)
        assert [r.levelno for r in records] == [logging.INFO] and "cannot read its persistence settings" in records[0].getMessage()
    finally:
        server.stop()


@pytest.mark.redis
def test_frozen_redis_timeout_tells_the_truth_and_a_retry_returns_the_stored_message(redis_server: Any) -> None:
    """A frozen server used to raise after 2 x socket_timeout (redis-py retried the timeout) with a
    message saying "within 5s"; the timed-out write could still be applied. Now a timeout is not
    retried, the message says so, and a retry of the (idempotent) add_message is safe."""
    settings = LayeredMemorySettings(embedder="none")
    settings.redis.socket_timeout = 0.5
    mem = LayeredMemory.from_urls(redis_url=redis_server.url, embedder="none", settings=settings)
    try:
        mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content="first")  # registers the session
        os.kill(redis_server.proc.pid, signal.SIGSTOP)
        try:
            with pytest.raises(BackendTimeout) as exc:
                mem.add_message(message_id="m2", chat_id="c1", user_id="u1", content="second")
        finally:
            os.kill(redis_server.proc.pid, signal.SIGCONT)
        text = str(exc.value)
        # the add's first command times out (the read of the batch's stored copies, then the write)
        assert re.search(r"within 0\.5s during (get|put)_messages", text), text
        assert "may still have been applied" in text and "retrying is safe" in text
        probe = redis.Redis.from_url(redis_server.url)
        deadline = time.monotonic() + 10
        while not probe.ping() and time.monotonic() < deadline:  # the server answers again
            time.sleep(0.05)
        probe.close()
        again = mem.add_message(message_id="m2", chat_id="c1", user_id="u1", content="second")
        assert again.content == "second" and again.message_id == "m2"
        assert [m.message_id for m in mem.get_session_messages("u1", "c1")] == ["m1", "m2"]  # stored once
        assert mem.add_message(message_id="m2", chat_id="c1", user_id="u1", content="second") == again
    finally:
        mem.close()

