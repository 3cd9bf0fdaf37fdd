"""Issue 18.8: bulk work reports its progress (``progress_to``; the CLI draws bars) and the topic summaries of a
page are embedded in one batch, not one call per summary."""

from __future__ import annotations

import json

from click.testing import CliRunner

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.cli import main
from layered_memory.progress import progress_to
from layered_memory.testing import HashEmbedder


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=16, name="counting")
        self.batches: list[int] = []

    def embed_documents(self, texts):  # noqa: ANN001
        self.batches.append(len(texts))
        return super().embed_documents(texts)


def rows(n: int) -> list[dict]:
    # three chats, each a run of topics separated by idle gaps (idle topics close and get a summary)
    return [{"message_id": f"m{i}", "chat_id": f"c{i % 3}", "user_id": f"u{i % 3}",
             "content": f"topic {i // 30} talk {i}: {['deploy', 'tea', 'garden', 'taxes'][(i // 30) % 4]} details",
             "create_time": 1_700_000_000 + i * 60 + (i // 30) * 10_000} for i in range(n)]


def test_process_reports_progress_and_embeds_summaries_in_batches(tmp_path):
    """Inline indexing (index_mode="sync"): a page's summaries in one embedding call. In the default
    background mode the writer embeds them in its own batches (test_background_kinds.py)."""
    emb = CountingEmbedder()
    with LayeredMemory.embedded(tmp_path, embedder=emb, settings=LayeredMemorySettings(index_mode="sync")) as mem:
        mem.add_messages(rows(240))
        seen: list[tuple[str, int, int | None]] = []
        emb.batches.clear()
        with progress_to(lambda stage, done, total: seen.append((stage, done, total))):
            done = mem.process()
        assert done["threaded"] == 240 and done["topic_summaries"] >= 2
        stages = {s for s, _, _ in seen}
        assert "messages threaded" in stages and "topic summaries" in stages
        assert [d for s, d, _ in seen if s == "messages threaded"][-1] == 240
        summary_batches = [n for n in emb.batches if n == done["topic_summaries"]]
        assert summary_batches, emb.batches  # all the summaries of the page in one embedding call
        seen.clear()
        with progress_to(lambda stage, done, total: seen.append((stage, done, total))):
            n = mem.reindex()
        assert ("messages indexed", 240, None) in seen and n >= 240


def test_process_command_prints_the_counts_and_draws_bars_on_stderr(tmp_path):
    data = tmp_path / "chat.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows(90)) + "\n")
    store = ["--path", str(tmp_path / "store"), "--embedder", "none"]
    assert CliRunner().invoke(main, [*store, "ingest", str(data)]).exit_code == 0
    result = CliRunner().invoke(main, [*store, "process"])
    assert result.exit_code == 0 and "threaded 90" in result.stdout
    assert "messages threaded" in result.stderr
    quiet = CliRunner().invoke(main, [*store, "reindex", "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and "reindexed" in quiet.stdout
