"""Seed 004, agent context store: memory management (clear, prune, size limits) and automatic size management
(the periodic monitor, its events, the SSE example). Named after the seed scenarios."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest

from layered_memory.agents.models import DEFAULT_MAX_VECTORS
from layered_memory.agents.monitor import DEFAULT_INTERVAL, AgentSizeMonitor
from layered_memory.errors import InvalidInputError, NotFoundError
from layered_memory.stores.base import MANUAL_OPTIMIZE
from test_agents_support import CODER_LOG, build_mem, days_ago, edge_mem, embedder, fill, mem  # noqa: F401

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "agent_sse.py"

# -- Requirement: Управление памятью агента ---------------------------------------------------------------


def test_clear_removes_all_vectors_of_agent(mem):
    """Очистка всей памяти: clear deletes every vector (and document) of the agent and says how many."""
    a = mem.agents.create("123", "coder")
    other = mem.agents.create("123", "researcher")
    fill(a)
    other.add_interaction("kept")
    assert a.clear() == len(CODER_LOG)
    assert a.count() == 0 and a.list_interactions() == [] and a.search("pytest", k=5).hits == []
    assert other.count() == 1
    a.add_interaction("usable after clear")
    assert a.count() == 1


def test_prune_older_than_30_days(mem):
    """Pruning старых записей: prune(days=30) deletes every vector older than 30 days, nothing newer."""
    a = mem.agents.create("123", "coder")
    for d in (90, 45, 31, 29, 1, 0):
        a.add_interaction(f"interaction from {d} days ago", timestamp=days_ago(d))
    assert a.prune(days=30) == 3
    assert sorted(i.text for i in a.list_interactions()) == sorted(
        f"interaction from {d} days ago" for d in (29, 1, 0)
    )
    assert a.count() == 3 and len(a.search("interaction days ago", k=10).hits) == 3
    assert a.prune(days=30) == 0
    with pytest.raises(InvalidInputError, match="days=-1"):
        a.prune(days=-1)


def test_pruning_by_size_max_vectors(mem):
    """Pruning по размеру: above max_vectors the oldest vectors are deleted automatically down to the limit."""
    a = mem.agents.create("123", "coder", max_vectors=5)
    for i in range(5):
        a.add_interaction(f"step {i}", timestamp=days_ago(10 - i))
    a.add_interactions([{"text": f"late step {i}", "timestamp": days_ago(1 - i / 10)} for i in range(3)])
    texts = [i.text for i in a.list_interactions()]
    assert texts == ["step 3", "step 4", "late step 0", "late step 1", "late step 2"]
    assert a.count() == 5
    assert a.set_max_vectors(2) == 3 and a.count() == 2


def test_selective_prune_by_filter(mem):
    """Selective pruning: prune(filter={"success": False}) deletes only the failures."""
    a = mem.agents.create("123", "coder")
    fill(a)
    assert a.prune(filter={"success": False}) == 2
    assert a.count() == 4 and a.count({"success": False}) == 0
    assert all(i.success for i in a.list_interactions())
    assert a.prune(filter={"interaction_type": "tool_call", "timestamp_to": days_ago(5.5)}) == 1
    assert a.prune(days=7, filter={"interaction_type": "user_message"}) == 1  # days AND filter


def test_prune_with_empty_filter_is_refused(mem):
    """Destructive safety: prune() and prune(filter={}) are refused rather than deleting everything."""
    a = mem.agents.create("123", "coder")
    fill(a)
    for kwargs in ({}, {"filter": {}}, {"filter": {"success": None}}):
        with pytest.raises(InvalidInputError, match="call clear"):
            a.prune(**kwargs)
    assert a.count() == len(CODER_LOG)


def test_interaction_id_is_idempotent(mem):
    """Re-sending an interaction with the same id and timestamp stores it once; another timestamp is refused."""
    a = mem.agents.create("123", "coder")
    a.add_interaction("once", interaction_id="i-1", timestamp=days_ago(1))
    a.add_interaction("once", interaction_id="i-1", timestamp=days_ago(1))
    assert a.count() == 1 and len(a.list_interactions()) == 1
    with pytest.raises(InvalidInputError, match="already stored with timestamp"):
        a.add_interaction("once", interaction_id="i-1", timestamp=days_ago(2))


# -- Requirement: Автоматическое управление размером ------------------------------------------------------


def test_configurable_max_vectors_default_1m(mem):
    """Конфигурируемые лимиты: max_vectors is set at creation (default 1,000,000) and can be changed."""
    assert mem.agents.create("123", "coder").max_vectors == DEFAULT_MAX_VECTORS == 1_000_000
    assert mem.agents.create("123", "small", max_vectors=100).max_vectors == 100
    assert mem.agents.get("123", "small").max_vectors == 100
    assert mem.agents.create("123", "small", max_vectors=200).max_vectors == 200  # updated
    with pytest.raises(InvalidInputError, match="max_vectors=0"):
        mem.agents.create("123", "tiny", max_vectors=0)


def test_monitoring_checks_active_agents_every_interval(edge_mem):
    """Мониторинг размера collection: the check runs every interval (24 h by default) over active agents only."""
    assert AgentSizeMonitor(edge_mem).interval == DEFAULT_INTERVAL.total_seconds() == 86400
    idle = edge_mem.agents.create("123", "idle", max_vectors=10)
    idle.add_interactions([{"text": f"old {i}"} for i in range(9)])  # 90%, but idle from now on
    time.sleep(2.2)
    active = edge_mem.agents.create("123", "coder", max_vectors=10)
    fill(active)  # 6 of 10: no event yet
    mon = edge_mem.agents.monitor(interval=0.05, active_within=timedelta(seconds=2))
    seen: list = []
    mon.subscribe(seen.append)
    mon.start()
    deadline = time.monotonic() + 30
    while mon.checks < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    active.add_interactions([{"text": f"more {i}"} for i in range(2)])  # 8 of 10
    deadline = time.monotonic() + 30
    while not seen and time.monotonic() < deadline:
        time.sleep(0.02)
    mon.stop()
    assert mon.checks >= 2
    assert seen and {(e.kind, e.agent_name) for e in seen} == {("size_warning", "coder")}


def test_warning_at_80_percent_of_limit(mem):
    """Предупреждение о приближении к лимиту: at 80% of max_vectors a size_warning event goes to callbacks and
    to async subscribers (what an SSE endpoint forwards)."""
    a = mem.agents.create("123", "coder", max_vectors=10)
    mem.agents.create("456", "coder", max_vectors=10).add_interaction("one")
    for i in range(7):
        a.add_interaction(f"step {i}")
    mon = mem.agents.monitor()
    assert mon.check_once() == []  # 70%
    a.add_interaction("step 7")
    got: list = []
    mon.subscribe(got.append)

    async def main() -> list:
        stream = mon.events(user_id="123")
        events = await mon.acheck_once()
        first = await asyncio.wait_for(stream.__anext__(), 5)
        await stream.aclose()
        return [events, first]

    events, first = asyncio.run(main())
    assert [e.kind for e in events] == ["size_warning"] and got == events
    assert first.kind == "size_warning" and first.user_id == "123" and first.total_vectors == 8 and first.usage == 0.8
    sse = first.to_sse()
    assert sse.startswith("event: size_warning\ndata: ") and json.loads(sse.split("data: ", 1)[1])["max_vectors"] == 10


def test_auto_prune_oldest_20_percent_at_limit(mem):
    """Автоматический pruning при лимите: at 100% the monitor deletes the oldest 20% and reports it."""
    a = mem.agents.create("123", "coder", max_vectors=10)
    a.add_interactions([{"text": f"step {i}", "timestamp": days_ago(20 - i)} for i in range(10)])
    events = mem.agents.monitor().check_once()
    assert [(e.kind, e.removed, e.total_vectors) for e in events] == [("auto_pruned", 2, 8)]
    assert [i.text for i in a.list_interactions()][:2] == ["step 2", "step 3"]
    assert a.count() == 8


def test_sse_example_streams_size_warning(tmp_path, embedder):
    """Предупреждение ... через SSE: examples/agent_sse.py forwards the monitor's events as text/event-stream."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    spec = importlib.util.spec_from_file_location("agent_sse_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    m = build_mem("edge", tmp_path / "v", embedder)
    app = example.create_app(m, interval=3600)
    with TestClient(app) as client:
        created = client.post("/agents/123/coder", json={"max_vectors": 5}).json()
        assert created["collection"] == "user123_coder_context"
        for i in range(4):
            assert client.post("/agents/123/coder/interactions", json={"text": f"step {i}"}).status_code == 201
        with client.stream("GET", "/agents/123/events?limit=1") as resp:
            assert resp.headers["content-type"].startswith("text/event-stream")
            lines = (line for line in resp.iter_lines() if line)
            assert next(lines).startswith(": connected")  # subscribed: the check below cannot be missed
            checker = threading.Thread(target=lambda: client.post("/agents/check"))
            checker.start()
            body = [next(lines), next(lines)]
            checker.join()
    assert body[0] == "event: size_warning"
    data = json.loads(body[1].removeprefix("data: "))
    assert data["agent_name"] == "coder" and data["total_vectors"] == 4 and data["usage"] == 0.8
    m.close()


def test_optimize_is_a_maintenance_call(mem):
    """Agent.optimize() builds HNSW on Qdrant Edge (a no-op elsewhere); search results stay the same, and the
    monitor can run it in its background check."""
    a = mem.agents.create("123", "coder")
    fill(a)
    before = [h.id for h in a.search("pytest read_chunk failures", k=3).hits]
    changed = a.optimize()
    assert changed in (True, False)
    if MANUAL_OPTIMIZE not in mem.index.capabilities:
        assert changed is False
    assert [h.id for h in a.search("pytest read_chunk failures", k=3).hits] == before
    assert mem.agents.monitor(optimize=True).check_once() == []


def test_delete_agent_removes_everything_and_stale_handles_cannot_resurrect_it(mem):
    """Agents.delete removes the interactions, the per-agent collection and the registration, and says how many
    interactions went; a handle opened before cannot write it back into existence."""
    a = mem.agents.create("123", "coder")
    fill(a)
    stale = mem.agents.get("123", "coder")
    assert mem.agents.delete("123", "coder") == len(CODER_LOG)
    if a.info.collection_mode == "per_agent":
        assert not mem.index.has_collection(a.collection)
    assert mem.agents.list("123") == []
    with pytest.raises(NotFoundError):
        stale.add_interaction("after delete")
    with pytest.raises(NotFoundError):
        mem.agents.get("123", "coder")
    b = mem.agents.create("123", "coder")  # a fresh one starts empty
    assert b.count() == 0


def test_limit_changed_by_another_handle_applies(mem):
    a = mem.agents.create("123", "coder", max_vectors=100)
    mem.agents.create("123", "coder", max_vectors=3)
    fill(a)  # a's info still says 100; the registry says 3
    assert a.count() == 3
