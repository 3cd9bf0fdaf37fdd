"""Settings and the embedder names they accept."""

import pytest

from layered_memory import ConfigurationError, LayeredMemorySettings
from layered_memory.runtime import _resolve_embedder


def test_env_settings(monkeypatch):
    monkeypatch.setenv("LAYERED_MEMORY_MEMORY__SHORT_TERM_WINDOW", "7")
    monkeypatch.setenv("LAYERED_MEMORY_RETRIEVAL__RRF_K", "10")
    monkeypatch.setenv("LAYERED_MEMORY_REDIS__URL", "redis://127.0.0.1:6379/0")
    s = LayeredMemorySettings()
    assert (s.memory.short_term_window, s.retrieval.rrf_k, s.redis.url) == (7, 10, "redis://127.0.0.1:6379/0")


def test_summary_threshold_must_exceed_the_window():
    with pytest.raises(ValueError, match="raise summary_threshold_messages"):
        LayeredMemorySettings(memory={"short_term_window": 10, "summary_threshold_messages": 10})


def test_embedder_names():
    assert _resolve_embedder("none") is None
    assert type(_resolve_embedder("use")).__name__ == "USEEmbedder"
    emb = _resolve_embedder("openai:text-embedding-3-small@http://127.0.0.1:9/v1", "sk-test")
    assert emb.name == "text-embedding-3-small"  # built without a request
    with pytest.raises(ConfigurationError, match="openai:<model>@<base_url>"):
        _resolve_embedder("openai:missing-url")


@pytest.mark.parametrize(("field", "value"), [("message_b", 1.5), ("message_k1", -1), ("message_avgdl", 0)])
def test_message_bm25_parameters_are_checked(monkeypatch, field, value):
    monkeypatch.setenv(f"LAYERED_MEMORY_RETRIEVAL__{field.upper()}", str(value))
    with pytest.raises(ValueError, match=rf"retrieval\.{field}(.|\n)*(greater|less) than"):
        LayeredMemorySettings()
