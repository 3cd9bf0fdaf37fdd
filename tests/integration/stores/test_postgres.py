"""PostgreSQL beyond the conformance suite: the engine on seed 001's layout (``from_urls`` /
``LAYERED_MEMORY_POSTGRES__URL``, Redis beside it as the recent cache), schema migrations, connection
errors, and a server restarted mid-ingest. A real cluster (tests/postgres_server.py), never a mock."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory import BackendUnavailable, LayeredMemory, LayeredMemorySettings
from layered_memory.errors import BackendError, ConfigurationError, SchemaMismatch
from layered_memory.testing.record_store import A, msg

pytestmark = pytest.mark.postgres
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def store_for(url: str, schema: str, **kwargs: Any) -> Any:
    from layered_memory.stores.postgres import PostgresRecordStore

    return PostgresRecordStore(url, schema=schema, **kwargs)


def rows(n: int, user: str = "u1", session: str = "s1", start: int = 0) -> list[dict[str, Any]]:
    return [{"message_id": f"m{i}", "chat_id": session, "user_id": user, "role": "user" if i % 2 else "assistant",
             "content": f"message {i} about the payments pod" if i % 3 else f"Привет {i} 你好",
             "create_time": T0 + timedelta(minutes=i)} for i in range(start, start + n)]


# -- the engine ---------------------------------------------------------------------------------------
@pytest.mark.redis
def test_from_settings_postgres_with_the_redis_recent_cache(monkeypatch, postgres_url, postgres_schema, redis_url, redis_prefix):
    from layered_memory.stores.postgres import PostgresRecordStore
    from layered_memory.stores.redis_cache import RedisRecentCache

    monkeypatch.setenv("LAYERED_MEMORY_POSTGRES__URL", postgres_url)
    monkeypatch.setenv("LAYERED_MEMORY_POSTGRES__SCHEMA_NAME", postgres_schema)
    monkeypatch.setenv("LAYERED_MEMORY_REDIS__URL", redis_url)
    monkeypatch.setenv("LAYERED_MEMORY_REDIS__PREFIX", redis_prefix)
    settings = LayeredMemorySettings()
    settings.memory.short_term_window = 2
    settings.memory.summary_threshold_messages = 4
    mem = LayeredMemory.from_settings(settings, embedder="none")
    try:
        assert isinstance(mem.records, PostgresRecordStore) and mem.records.schema == postgres_schema
        assert isinstance(mem.records.recent_cache(size=10, ttl=60), RedisRecentCache)
        mem.add_messages(rows(6))
        assert mem.add_message(rows(1)[0]).seq == 1  # idempotent
        assert [h.id for h in mem.search("payments pod", k=10).hits][:1] in (["m1"], ["m2"], ["m4"], ["m5"])
        assert [m.message_id for m in mem.get_context_for_user("u1", "s1") if m.kind == "window"] == ["m5"]  # m4 is a reply: a window never opens with one
        assert mem.tenant("other").search("payments pod").hits == []
        assert isinstance(mem.topics.cache, RedisRecentCache)
        mem.add_message(rows(1, session="s2", start=10)[0])
        cached = mem.records.recent_cache(size=10, ttl=60).recent(mem.tenant_id, "s2", 10)
        assert [m.message_id for m in cached] == ["m10"]  # the topic tier wrote through Redis, shared by every process
    finally:
        mem.close()
    again = LayeredMemory.from_urls(
        postgres_url=postgres_url, embedder="none",
        settings=settings.model_copy(update={"postgres": settings.postgres.model_copy(update={"schema_name": postgres_schema})}),
    )
    try:
        assert again.records.recent_cache(size=10, ttl=60) is None  # no Redis configured: the tier keeps one in process
        assert again.records.count_messages(again.tenant_id, user_id="u1") == 7
    finally:
        again.close()


def test_from_urls_needs_a_record_store_url():
    with pytest.raises(ConfigurationError, match="postgres_url or redis_url"):
        LayeredMemory.from_urls(qdrant_url="http://localhost:6333")


# -- schema ---------------------------------------------------------------------------------------------
def test_migrations_are_versioned_idempotent_and_refuse_a_newer_schema(postgres_url, postgres_schema):
    import psycopg

    from layered_memory.stores.postgres_schema import MIGRATIONS

    stores = [store_for(postgres_url, postgres_schema) for _ in range(3)]
    threads = [threading.Thread(target=s.setup) for s in stores]  # processes starting together
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stores[0].put_messages(A, [msg("m1")])
    with psycopg.connect(postgres_url) as conn:
        versions = conn.execute(f'SELECT version FROM "{postgres_schema}".lm_schema_version ORDER BY 1').fetchall()
        assert [v for (v,) in versions] == list(range(1, len(MIGRATIONS) + 1))
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (postgres_schema,))}
        assert {"lm_messages_session", "lm_messages_seq", "lm_messages_chat", "lm_messages_pending", "lm_messages_topic"} <= indexes
        conn.execute(f'INSERT INTO "{postgres_schema}".lm_schema_version (version) VALUES (%s)', (len(MIGRATIONS) + 1,))
    for s in stores:
        s.close()
    newer = store_for(postgres_url, postgres_schema)
    with pytest.raises(SchemaMismatch, match="upgrade layered-memory"):
        newer.setup()
    newer.close()


def test_bad_schema_name_and_pool_size_are_input_errors(postgres_url):
    from layered_memory.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="schema"):
        store_for(postgres_url, 'x"; DROP TABLE y; --')
    with pytest.raises(InvalidInputError, match="pool size"):
        store_for(postgres_url, "ok", min_size=5, max_size=2)
    with pytest.raises(ConfigurationError, match="postgresql://"):
        store_for("host=db port", "ok")


def test_doc_keys_with_nul_are_refused_and_never_match(postgres_url, postgres_schema):
    from layered_memory.errors import InvalidInputError

    s = store_for(postgres_url, postgres_schema)
    s.setup()
    with pytest.raises(InvalidInputError, match="NUL"):
        s.put_docs(A, "c", {"a\x00b": {}})
    s.put_docs(A, "c", {"a": {"v": 1}})
    assert s.get_docs(A, "c", ["a\x00", "a"]) == [None, {"v": 1}]
    assert s.scan_messages(A, user_id="u1\x00") == [] and s.count_messages(A, user_id="\x00") == 0
    s.close()


# -- connection errors: one clear error naming backend, address and fix, within the timeout --------------
def _refused(url: str, match: str, fix: str) -> None:
    s = store_for(url, "lm_errors", connect_timeout=2)
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match=match) as info:
        s.setup()
    waited = time.monotonic() - started
    text = str(info.value)
    assert info.value.backend == "postgres" and info.value.op == "setup"
    assert "PostgreSQL" in text and fix in text and "lm-secret" not in text and "wrong-pw" not in text
    assert waited < 2 + 3  # connect_timeout, plus the overloaded machine's slack
    s.close()


def test_wrong_port_password_and_database(postgres_url):
    from postgres_server import DATABASE, PASSWORD

    from redis_server import free_port

    port = free_port()
    _refused(f"postgresql://lm:{PASSWORD}@127.0.0.1:{port}/{DATABASE}", f"127.0.0.1:{port}", "start PostgreSQL there")
    _refused(postgres_url.replace(PASSWORD, "wrong-pw"), "password authentication failed", "check the user and password")
    _refused(postgres_url.replace(f"/{DATABASE}", "/nosuchdb"), 'database "nosuchdb" does not exist', "create the database")


def test_calls_before_setup_name_the_fix(postgres_url, postgres_schema):
    s = store_for(postgres_url, postgres_schema)
    with pytest.raises(SchemaMismatch, match="call store.setup"):
        s.count_messages(A)
    s.close()


# -- faults: the server restarted mid-ingest ---------------------------------------------------------------
def test_restart_mid_ingest_loses_no_acknowledged_write_and_the_pool_recovers(postgres_server):
    """A writer thread ingests while the server crashes (immediate shutdown: no checkpoint, WAL recovery)
    and comes back. While it is down every call fails with BackendUnavailable naming the address; the
    writer retries the failed batch (writes are idempotent); every acknowledged message is stored once,
    seq never repeats, and the same store object works again without being reopened."""
    s = store_for(postgres_server.url, "lm_fault", connect_timeout=2, max_size=4)
    s.setup()
    acked: list[str] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    progress = threading.Condition()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            batch = [msg(f"w{i}", n=i), msg(f"w{i + 1}", n=i + 1)]
            try:
                s.put_messages(A, batch)
            except BackendError as exc:
                errors.append(exc)
                time.sleep(0.05)
                continue  # retry the same batch
            with progress:
                acked.extend(m.message_id for m in batch)
                progress.notify_all()
            i += 2

    def wait_for(predicate: Any) -> None:
        with progress:
            assert progress.wait_for(predicate, timeout=60), "the writer made no progress"

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        wait_for(lambda: len(acked) >= 40)
        postgres_server.stop(immediate=True)
        before = len(acked)
        deadline = time.monotonic() + 30
        while not errors and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(BackendUnavailable, match=f"127.0.0.1:{postgres_server.port}"):
            s.window(A, user_id="u1", session_key="s1", limit=5)
        postgres_server.start()
        wait_for(lambda: len(acked) >= before + 40)
    finally:
        stop.set()
        thread.join(60)
    assert errors and all(isinstance(e, BackendUnavailable) and f"127.0.0.1:{postgres_server.port}" in str(e) for e in errors)
    stored = s.scan_messages(A, limit=100_000)
    ids = [m.message_id for m in stored]
    assert set(acked) <= set(ids) and len(ids) == len(set(ids))
    seqs = [m.seq for m in stored]
    assert seqs == sorted(set(seqs))  # type: ignore[type-var]
    assert s.count_messages(A) == len(ids)
    s.close()


def test_a_user_without_rights_gets_the_grant_to_ask_for(postgres_url, postgres_schema):
    import psycopg

    from postgres_server import DATABASE

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS lm_reader")
        conn.execute("CREATE ROLE lm_reader LOGIN PASSWORD 'reader-pw'")
        conn.execute(f"REVOKE CREATE ON DATABASE {DATABASE} FROM PUBLIC")
    reader_url = postgres_url.replace("lm:lm-secret@", "lm_reader:reader-pw@")
    s = store_for(reader_url, postgres_schema, connect_timeout=2)
    try:
        with pytest.raises(BackendError, match="GRANT CREATE ON DATABASE") as info:
            s.setup()
        assert info.value.backend == "postgres" and "lm_reader@127.0.0.1" in str(info.value)
        assert "reader-pw" not in str(info.value)
    finally:
        s.close()
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("DROP OWNED BY lm_reader")
            conn.execute("DROP ROLE lm_reader")
