"""Seed 004, agent context store: export / import, statistics and the ``layered-memory agent`` CLI.
Named after the seed scenarios."""

from __future__ import annotations

import io
import json
import tracemalloc
from datetime import datetime, timedelta

import numpy as np
import pytest

from server_stores import SERVER_KINDS, server_records
from click.testing import CliRunner

from layered_memory.cli import main as cli_main
from layered_memory.errors import InvalidInputError
from test_agents_support import CODER_LOG, NOW, build_mem, days_ago, edge_mem, embedder, fill, mem  # noqa: F401

# -- Requirement: Экспорт контекста агента -----------------------------------------------------------------


def test_export_to_json_without_embeddings(mem):
    """Экспорт в JSON: every interaction with its metadata, no embeddings by default."""
    a = mem.agents.create("123", "coder")
    items = fill(a)
    data = a.export()
    assert [r["interaction_id"] for r in data["interactions"]] == [i.interaction_id for i in items]  # oldest first
    row = data["interactions"][0]
    assert row["text"] == CODER_LOG[0][0] and row["success"] is False and row["error_details"].startswith("AssertionError")
    assert set(row) == {"interaction_id", "text", "interaction_type", "task_id", "timestamp", "success", "error_details", "metadata"}
    assert all("embedding" not in r for r in data["interactions"])


def test_export_with_embeddings(mem, embedder):
    """Экспорт с embeddings: include_embeddings=True adds each interaction's stored vector."""
    a = mem.agents.create("123", "coder")
    items = fill(a)
    data = a.export(include_embeddings=True)
    assert data["include_embeddings"] is True and data["dim"] == embedder.dim
    want = np.asarray(embedder.embed_documents([i.text for i in items]))
    got = np.asarray([r["embedding"] for r in data["interactions"]])
    cos = (got * want).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    assert got.shape == (len(items), embedder.dim) and cos.min() > 0.999


def test_filtered_export_by_date_range_and_type(mem):
    """Фильтрованный экспорт: only interactions in the date range and of the given types."""
    a = mem.agents.create("123", "coder")
    fill(a)  # 10..5 days ago
    data = a.export(since=days_ago(9.5), until=days_ago(4.5), interaction_type=["tool_call", "task_execution"])
    assert [r["text"][:20] for r in data["interactions"]] == [CODER_LOG[i][0][:20] for i in (1, 4, 5)]
    assert data["total_interactions"] == 3 and data["filters"]["interaction_type"] == ["tool_call", "task_execution"]
    with pytest.raises(InvalidInputError, match="must be one of"):
        a.export(interaction_type="thinking")


def test_export_format_fields(mem):
    """Формат экспорта: agent_id, export_date, total_interactions, interactions[]."""
    a = mem.agents.create("123", "coder")
    fill(a)
    data = a.export()
    assert {"agent_id", "export_date", "total_interactions", "interactions"} <= set(data)
    assert data["agent_id"] == "user123_coder" and data["total_interactions"] == len(CODER_LOG)
    assert abs(datetime.fromisoformat(data["export_date"].replace("Z", "+00:00")) - NOW) < timedelta(hours=1)


def test_export_streams_and_import_restores_agent(mem, tmp_path, embedder):
    """A streamed export file restores the agent (same interactions, searchable); importing twice is idempotent;
    a truncated file is refused."""
    a = mem.agents.create("123", "coder")
    fill(a)
    path = tmp_path / "coder.json"
    assert a.export_to(str(path), include_embeddings=True) == len(CODER_LOG)
    assert json.loads(path.read_text())["total_interactions"] == len(CODER_LOG)  # plain JSON
    before = [(i.interaction_id, i.text, i.timestamp) for i in a.list_interactions()]
    restored = mem.agents.import_from(str(path), agent_name="coder-restored")
    assert [(i.interaction_id, i.text, i.timestamp) for i in restored.list_interactions()] == before
    assert restored.search("read_chunk pytest", k=1).hits[0].text == CODER_LOG[0][0]
    a.clear()
    again = mem.agents.import_from(str(path))
    mem.agents.import_from(str(path))
    assert again.count() == len(CODER_LOG) and again.agent_id == "user123_coder"
    truncated = tmp_path / "cut.json"
    truncated.write_text("\n".join(path.read_text().splitlines()[:-2]) + "\n")
    with pytest.raises(InvalidInputError, match="total_interactions"):
        mem.agents.import_from(str(truncated), agent_name="cut")


def test_export_memory_is_bounded_by_page_size(edge_mem, embedder):
    """Streaming: the export's peak Python memory stays flat when the agent grows 3x (pages, not the whole agent)."""
    a = edge_mem.agents.create("123", "coder")
    rng = np.random.default_rng(1)

    class Sink(io.TextIOBase):
        size = 0

        def write(self, s: str) -> int:
            self.size += len(s)
            return len(s)

    def add(start: int, n: int) -> None:
        a.add_interactions([{"text": f"interaction number {i} " + "x" * 1500} for i in range(start, start + n)],
                           vectors=rng.standard_normal((n, embedder.dim)).tolist())

    def measure() -> tuple[int, int]:
        sink = Sink()
        tracemalloc.start()
        a.export_to(sink)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return peak, sink.size

    add(0, 1000)
    peak1, size1 = measure()
    add(1000, 2000)
    peak3, size3 = measure()
    assert size3 > 2.9 * size1
    assert peak3 < 1.5 * peak1 and peak3 < 0.75 * size3, (peak1, peak3, size3)


# -- Requirement: Статистика контекста -----------------------------------------------------------------------


def test_general_stats(mem):
    """Общая статистика: total_vectors, collection_size_mb, oldest_interaction, newest_interaction."""
    a = mem.agents.create("123", "coder")
    empty = a.stats()
    assert empty["total_vectors"] == 0 and empty["oldest_interaction"] is None and empty["success_rate"] is None
    items = fill(a)
    a.add_interaction("future-dated note", timestamp=(NOW + timedelta(days=400)).isoformat())
    s = a.stats()
    assert s["total_vectors"] == len(CODER_LOG) + 1
    assert s["collection_size_mb"] > 0
    assert s["oldest_interaction"] == items[0].to_doc()["timestamp"]
    assert s["newest_interaction"].startswith((NOW + timedelta(days=400)).strftime("%Y-%m-%dT%H:%M"))


def test_stats_breakdown_by_type(mem):
    """Статистика по типам: the count of each interaction_type."""
    a = mem.agents.create("123", "coder")
    fill(a)
    assert a.stats()["by_type"] == {"task_execution": 2, "tool_call": 2, "user_message": 1, "agent_response": 1}


def test_stats_success_rate(mem):
    """Статистика успешности: success_rate is the percentage of successful interactions."""
    a = mem.agents.create("123", "coder")
    fill(a)
    s = a.stats()
    assert s["success_rate"] == pytest.approx(100 * 4 / 6, abs=0.01) and s["failed"] == 2


def test_stats_timeline_per_day_and_week(mem):
    """Временная статистика: aggregates per day and per week over a period."""
    a = mem.agents.create("123", "coder")
    fill(a)  # one a day, 10..5 days ago
    s = a.stats(period_days=14)
    days = s["timeline"]
    assert len(days) == 15 and sum(d["total"] for d in days) == 6
    assert [d["total"] for d in days if d["total"]] == [1] * 6
    fails = [d for d in days if d["failed"]]
    assert len(fails) == 2 and all(d["success_rate"] == 0.0 for d in fails)
    weeks = a.stats(since=days_ago(14), granularity="week")["timeline"]
    assert sum(w["total"] for w in weeks) == 6 and all(datetime.fromisoformat(w["start"]).weekday() == 0 for w in weeks)
    assert sum(w["by_type"]["tool_call"] for w in weeks) == 2
    with pytest.raises(InvalidInputError, match="granularity"):
        a.stats(period_days=7, granularity="month")


# -- RecordStore backends and the CLI ------------------------------------------------------------------------


@pytest.mark.parametrize("kind", SERVER_KINDS)
def test_agents_on_a_server_record_store(request, tmp_path, embedder, kind):
    """Redis, a Redis Cluster or PostgreSQL as the source of truth with Qdrant Edge: the same behaviour."""
    records = server_records(request, kind)
    m = build_mem("edge", tmp_path / "v", embedder, records=records)
    try:
        a = m.agents.create("123", "coder", max_vectors=5)
        fill(a)  # 6 > 5: the oldest goes
        assert a.count() == 5 and a.list_interactions()[0].text == CODER_LOG[1][0]
        s = a.stats(period_days=14)
        assert s["newest_interaction"] == a.list_interactions()[-1].to_doc()["timestamp"]
        assert a.prune(filter={"success": False}) == 1 and a.clear() == 4
    finally:
        m.close()


def test_cli_agent_commands(tmp_path):
    """layered-memory agent create | stats | export | import | prune | clear."""
    runner = CliRunner()
    base = ["--path", str(tmp_path / "data"), "--embedder", "none"]

    def run(*args: str) -> str:
        res = runner.invoke(cli_main, [*base, "agent", *args], catch_exceptions=False)
        assert res.exit_code == 0, res.output
        return res.output

    assert json.loads(run("create", "123", "coder", "--max-vectors", "50"))["collection"] == "user123_coder_context"
    from layered_memory.engine import LayeredMemory

    with LayeredMemory.embedded(tmp_path / "data", embedder="none") as m:
        fill(m.agents.get("123", "coder"))
    stats = json.loads(run("stats", "123", "coder", "--period-days", "14"))
    assert stats["total_vectors"] == 6 and stats["by_type"]["tool_call"] == 2 and len(stats["timeline"]) == 15
    out = tmp_path / "coder.json"
    assert "exported 6 interactions" in run("export", "123", "coder", "-o", str(out))
    assert json.loads(run("export", "123", "coder", "--type", "tool_call"))["total_interactions"] == 2
    assert "removed 2 interactions" in run("prune", "123", "coder", "--filter", "success=false")
    assert "removed 0 interactions" in run("prune", "123", "coder", "--days", "30")
    assert "imported into user123_coder-copy: 6" in run("import", str(out), "--agent-name", "coder-copy")
    assert "removed 4 interactions" in run("clear", "123", "coder", "--yes")
    bad = runner.invoke(cli_main, [*base, "agent", "prune", "123", "coder"])
    assert bad.exit_code == 2 and "call clear() to delete everything" in bad.output
    bad = runner.invoke(cli_main, [*base, "agent", "create", "1_a", "b"])
    assert bad.exit_code == 2 and "USER_ID '1_a'" in bad.output  # named as the argument the user typed
