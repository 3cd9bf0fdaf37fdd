"""Crash points: a child process is killed (``os._exit``) before each write of each multi-step write or
delete, and once after the last write (before ``close``); the store is then reopened here and must be in
line after open + ``process()``: records, index points, topic membership and counters (``mem.doctor()``
finds nothing), and no deleted text comes back from search. The default run kills at the first, the
middle and the last write and after the last; ``-m slow`` at every one. ``edit_message`` and ``delete_message``
also check that no summary quotes the changed message once the change landed.

How: this file also runs as a script (a "zygote" started with a clean interpreter, so no Rust or BLAS
threads exist yet); it forks one child per kill point. A child builds the starting state, then counts
every write call on its RecordStore and VectorIndex instances (the real stores, wrapped to count) and
exits with code 42 when the count reaches its kill point. A first child per operation runs to the end
and reports how many writes the operation makes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from layered_memory import LayeredMemory
from layered_memory.config import LayeredMemorySettings

KILLED = 42
CANARY = "zebracanary"
T0 = datetime(2024, 5, 1, 9, tzinfo=timezone.utc)
RECORD_WRITES = ("put_messages", "update_messages", "delete_messages", "mark_indexed", "mark_all_pending", "put_docs", "delete_docs")
INDEX_WRITES = ("upsert", "delete", "set_payload", "drop_collection")


class HashEmbedder:
    """Deterministic 16-d vectors from a hash: semantics do not matter here, only that points exist."""

    name = "hash-test"
    dim = 16

    def embed_documents(self, texts):
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)

    @staticmethod
    def _vec(text: str) -> list[float]:
        return [b / 255 - 0.5 for b in hashlib.sha256(text.encode()).digest()[:16]]


def settings() -> LayeredMemorySettings:
    # Kill points count the writes of one operation: inline indexing keeps them deterministic (the
    # background writer's own kill test is in test_background_writer.py).
    s = LayeredMemorySettings(index_mode="sync")
    s.topics.summary_every_messages = 3  # process() writes topic summaries (points) too
    s.topics.similarity_floor, s.topics.similarity_topical = 0.0, 0.8
    s.memory.short_term_window, s.memory.summary_threshold_messages = 2, 3  # sessions get a summary
    return s


def open_mem(spec: dict[str, Any], where: str) -> LayeredMemory:
    if spec["backend"] == "sqlite":
        return LayeredMemory.embedded(where, embedder=HashEmbedder(), settings=settings())
    from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
    from layered_memory.stores.redis import RedisRecordStore

    records = RedisRecordStore.from_url(spec["redis_url"], prefix=f"{spec['prefix']}{Path(where).name}")
    index = QdrantEdgeVectorIndex(os.path.join(where, "vectors"))
    return LayeredMemory.from_stores(records, index, embedder=HashEmbedder(), settings=settings())


def msg(i: int, content: str, session: str = "s1", user: str = "u1") -> dict[str, Any]:
    return {
        "message_id": f"m{i}", "chat_id": session, "user_id": user, "session_key": session, "content": content,
        "role": "user" if i % 2 else "assistant", "create_time": T0 + timedelta(minutes=i),
    }


LINES = [
    "the payments pod fails with CrashLoopBackOff", f"{CANARY} secret card PIN is 4417", "check kubectl logs previous",
    "we rolled back the deploy", "the pod is healthy again now", "thanks for the help with the pods",
]


def _agent(mem: LayeredMemory, n: int = 0, old: bool = False) -> Any:
    agent = mem.agents.create("u1", "bot")
    for i in range(n):
        ts = T0 + timedelta(minutes=i) if old and i < n - 1 else datetime.now(timezone.utc)
        agent.add_interaction(f"{CANARY} step {i} of the task", interaction_id=f"i{i}", timestamp=ts)
    return agent


# name -> (setup, operation); the operation is what gets killed
OPS: dict[str, tuple[Any, Any]] = {
    "add_messages": (
        lambda m: m.add_messages([msg(1, LINES[0])]),
        lambda m: m.add_messages([msg(i, LINES[i - 1]) for i in (2, 3, 4)]),
    ),
    "clear_session": (
        lambda m: (m.add_messages([msg(i, LINES[i - 1]) for i in (1, 2, 3, 4)] + [msg(5, LINES[4], "s2")]), m.process(),
                   m.get_context_for_user("u1", "s1")),
        lambda m: m.clear_session("u1", "s1"),
    ),
    "process": (
        lambda m: m.add_messages([msg(i, LINES[(i - 1) % 6], "s1" if i < 6 else "s2") for i in range(1, 9)]),
        lambda m: m.process(),
    ),
    "agent_add": (lambda m: _agent(m, 1), lambda m: m.agents.get("u1", "bot").add_interaction(f"{CANARY} new step", interaction_id="new")),
    "agent_prune": (lambda m: _agent(m, 4, old=True), lambda m: m.agents.get("u1", "bot").prune(days=1)),
    "agent_clear": (lambda m: _agent(m, 3), lambda m: m.agents.get("u1", "bot").clear()),
    "items_put": (
        lambda m: m.items.put(("notes", "u1"), "k1", {"text": "old note about tea"}),
        lambda m: (m.items.put(("notes", "u1"), "k1", {"text": f"{CANARY} new note"}), m.items.put(("notes", "u2"), "k2", {"text": "green tea"})),
    ),
    "items_delete": (
        lambda m: (m.items.put(("notes", "u1"), "k1", {"text": f"{CANARY} note"}), m.items.put(("notes", "u1"), "k2", {"text": "tea"})),
        lambda m: m.items.delete(("notes", "u1"), "k1"),
    ),
    # mem.edit_message / delete_message of the canary message, after threading, summaries and a context
    "edit_message": (
        lambda m: _threaded(m), lambda m: m.edit_message("s1", "m2", content="my card PIN is gone, I changed it"),
    ),
    "delete_message": (lambda m: _threaded(m), lambda m: m.delete_message("s1", "m2")),
}
REDIS_OPS = ("add_messages", "clear_session", "edit_message", "delete_message")
EDIT_OPS = ("edit_message", "delete_message")


def _threaded(mem: LayeredMemory) -> None:
    """Six turns in s1 (the canary in m2) threaded, with topic summaries and the session's summary."""
    mem.add_messages([msg(i, LINES[i - 1]) for i in range(1, 7)] + [msg(7, LINES[4], "s2")])
    mem.process()
    mem.get_context_for_user("u1", "s1")
    assert CANARY in (mem.get_summary("u1", "s1") or ""), "the setup must summarize the canary"


# -- the child side ------------------------------------------------------------------------------------------
def _arm(mem: LayeredMemory, kill_at: int | None) -> list[int]:
    """Count write calls on the real stores; exit at call ``kill_at`` (before it runs)."""
    count = [0]

    def wrap(obj: Any, name: str) -> None:
        original = getattr(obj, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            count[0] += 1
            if count[0] == kill_at:
                os._exit(KILLED)
            return original(*args, **kwargs)

        setattr(obj, name, counted)

    for name in RECORD_WRITES:
        wrap(mem.records, name)
    for name in INDEX_WRITES:
        wrap(mem.index, name)
    return count


def _run(spec: dict[str, Any], op: str, where: str, kill_at: int | None) -> None:
    """In a forked child: set up (or open the copied starting state), arm, run, report the write count
    (count mode) or die at ``kill_at``; ``kill_at=0``: only build the starting state."""
    try:
        mem = open_mem(spec, where)
        setup, operation = OPS[op]
        if kill_at == 0 or spec["backend"] != "sqlite":
            setup(mem)
            if kill_at == 0:
                mem.close()
                os._exit(0)
        count = _arm(mem, kill_at)
        operation(mem)
        if kill_at is None:
            Path(where, "writes.txt").write_text(str(count[0]))
            mem.close()
            os._exit(0)
        os._exit(KILLED)  # the kill point after the last write: no close, no flush
    except BaseException as exc:  # noqa: BLE001 - report, never return into the zygote's loop
        Path(where).mkdir(parents=True, exist_ok=True)
        Path(where, "error.txt").write_text(f"{type(exc).__name__}: {exc}")
        os._exit(3)


def _fork(spec: dict[str, Any], op: str, where: str, kill_at: int | None) -> int:
    pid = os.fork()
    if pid == 0:
        _run(spec, op, where, kill_at)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def zygote(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Embedded: the starting state is built once per operation and copied for each kill point."""
    out = []
    for op in spec["ops"]:
        seed = os.path.join(spec["base"], f"{op}-seed")

        def prepare(where: str) -> None:
            if spec["backend"] == "sqlite":
                shutil.copytree(seed, where)

        if spec["backend"] == "sqlite" and _fork(spec, op, seed, 0) != 0:
            raise RuntimeError(f"{op}: building the starting state failed: {Path(seed, 'error.txt').read_text()}")
        probe = os.path.join(spec["base"], f"{op}-count")
        prepare(probe)
        rc = _fork(spec, op, probe, None)
        if rc != 0:
            raise RuntimeError(f"{op}: the uncrashed run failed: {Path(probe, 'error.txt').read_text()}")
        writes = int(Path(probe, "writes.txt").read_text())
        every = range(1, writes + 2)  # before each write, and after the last one
        for k in every if spec["every"] else sorted({1, writes // 2 + 1, writes, writes + 1} & set(every)):
            where = os.path.join(spec["base"], f"{op}-{k}")
            prepare(where)
            out.append({"op": op, "kill_at": k, "writes": writes, "where": where, "rc": _fork(spec, op, where, k)})
    return out


# -- the test side --------------------------------------------------------------------------------------------
def _crash(tmp_path: Path, backend: str, ops: tuple[str, ...], redis_url: str | None = None, *, every: bool = False) -> dict[str, Any]:
    """Run the zygote; ``every``: all kill points, else the first, middle and last write and after the last."""
    spec = {"backend": backend, "base": str(tmp_path), "ops": list(ops), "redis_url": redis_url,
            "prefix": f"crash{uuid.uuid4().hex[:8]}", "every": every}
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, __file__, json.dumps(spec)], capture_output=True, text=True, env=env, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    by_op: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_op.setdefault(r["op"], []).append(r)
    return {"spec": spec, **by_op}  # type: ignore[dict-item]


def check_in_line(mem: LayeredMemory, where: str, op: str = "") -> None:
    """After open + process(): the doctor finds nothing (items: no stale point either), and no message text
    without a record is found. After an edit or a delete of the canary message, no summary quotes it either."""
    mem.process()
    report = mem.doctor()
    assert report["ok"], (where, report)
    for h in mem.search(CANARY, route="bm25", k=50).hits:  # a hit is a stored message whose text (or previous turn) says it
        m = mem.get_messages([(h.meta["channel_id"], h.id)])[0]
        assert m is not None, (where, h.id)
        turns = mem.get_session_messages(m.user_id, m.session_key)
        at = [t.ref for t in turns].index(m.ref)
        assert CANARY in m.content + (turns[at - 1].content if at else ""), (where, h.id, "an edited text is still indexed")
    if op in EDIT_OPS and not any(CANARY in t.content for t in mem.get_session_messages("u1", "s1")):
        assert CANARY not in (mem.get_summary("u1", "s1") or ""), (where, "the session summary quotes a changed message")
        for t in mem.topics.list("s1"):
            latest = mem.topics.summary(t.topic_id)
            assert latest is None or CANARY not in latest.content, (where, "a topic summary quotes a changed message")
        assert CANARY not in str(mem.get_context_for_user("u1", "s1", query=CANARY)), where
    if any(i.agent_name == "bot" for i in mem.agents.list()):
        agent = mem.agents.get("u1", "bot")
        assert agent.count() == len(agent.list_interactions(limit=1000)), where
    if mem.settings.topics.enabled:
        assert mem.topics.pending() == 0, where


@pytest.fixture(scope="module")
def embedded_crashes(tmp_path_factory):
    return _crash(tmp_path_factory.mktemp("crash"), "sqlite", tuple(OPS))


@pytest.fixture(scope="module")
def redis_crashes(tmp_path_factory, redis_url):
    return _crash(tmp_path_factory.mktemp("crash-redis"), "redis", REDIS_OPS, redis_url)


@pytest.fixture(scope="module")
def embedded_crashes_every(tmp_path_factory):
    return _crash(tmp_path_factory.mktemp("crash-every"), "sqlite", tuple(OPS), every=True)


@pytest.fixture(scope="module")
def redis_crashes_every(tmp_path_factory, redis_url):
    return _crash(tmp_path_factory.mktemp("crash-redis-every"), "redis", REDIS_OPS, redis_url, every=True)


def _check_all(crashes: dict[str, Any], op: str) -> int:
    spec = crashes["spec"]
    results = crashes[op]
    assert results and all(r["rc"] == KILLED for r in results), [(r["kill_at"], r["rc"]) for r in results]
    for r in results:
        with open_mem(spec, r["where"]) as mem:
            check_in_line(mem, r["where"], op)
    return len(results)


@pytest.mark.parametrize("op", list(OPS))
def test_crash_points_embedded(embedded_crashes, op):
    assert _check_all(embedded_crashes, op) >= 2


@pytest.mark.redis
@pytest.mark.parametrize("op", REDIS_OPS)
def test_crash_points_redis(redis_crashes, op):
    assert _check_all(redis_crashes, op) >= 2


# Every kill point: about 10 minutes on a busy 2-core machine (more with the edit ops).
@pytest.mark.slow
@pytest.mark.parametrize("op", list(OPS))
def test_crash_points_every_step_embedded(embedded_crashes_every, op):
    assert _check_all(embedded_crashes_every, op) >= 3


@pytest.mark.slow
@pytest.mark.redis
@pytest.mark.parametrize("op", REDIS_OPS)
def test_crash_points_every_step_redis(redis_crashes_every, op):
    assert _check_all(redis_crashes_every, op) >= 3


if __name__ == "__main__":
    print(json.dumps(zygote(json.loads(sys.argv[1]))))
