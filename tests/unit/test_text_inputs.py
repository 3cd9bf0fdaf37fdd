"""Issue 24, "Errors that point the wrong way": text that is not text says what it is and how to fix it
(a lone surrogate was blamed on the metadata, bytes were called empty), and a token budget never cuts a
user-perceived character in half (``max_tokens=1`` kept the first code point of a ZWJ emoji)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from layered_memory import LayeredMemory
from layered_memory.errors import InvalidInputError
from layered_memory.providers.tokens import first_grapheme, fit_to_tokens, get_token_counter, grapheme_ends

FAMILY = "👨\u200d👩\u200d👧\u200d👦"  # one user-perceived character: four emoji joined by ZWJ
FLAG = "🇺🇦"  # two regional indicators
ACCENT = "e\u0301"  # e + combining acute


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[LayeredMemory]:
    m = LayeredMemory.embedded(tmp_path / "m", embedder="none")
    yield m
    m.close()


def _add(mem: LayeredMemory, content: object, **kw) -> None:
    mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content=content, **kw)


def test_a_lone_surrogate_is_blamed_on_content_with_the_fix(mem: LayeredMemory) -> None:
    with pytest.raises(InvalidInputError) as exc:
        _add(mem, "the pod crashed \ud83d at noon", metadata={"source": "slack"})
    err = exc.value
    assert err.field == "content" and "metadata" not in str(err)
    assert "lone surrogate '\\ud83d' at position 16" in err.rule and "cannot be stored as UTF-8" in err.rule
    assert "errors='replace'" in err.fix
    assert mem.get_messages([("c1", "m1")]) == [None]  # nothing written
    _add(mem, "the pod crashed \ud83d at noon".encode("utf-8", "replace").decode("utf-8"))  # the fix works
    assert mem.get_messages([("c1", "m1")])[0].content == "the pod crashed ? at noon"


@pytest.mark.parametrize("data", [b"hello from bytes", bytearray(b"hello"), memoryview(b"hello")], ids=["bytes", "bytearray", "memoryview"])
def test_bytes_content_is_called_bytes_not_empty(mem: LayeredMemory, data: object) -> None:
    with pytest.raises(InvalidInputError) as exc:
        _add(mem, data)
    assert exc.value.field == "content" and f"is {type(data).__name__}, not text" in exc.value.rule
    assert "empty" not in str(exc.value) and "decode it first" in exc.value.fix and ".decode('utf-8')" in exc.value.fix


@pytest.mark.parametrize(("content", "rule"), [("   ", "must be a non-empty string (not only whitespace)"),
                                                (42, "must be a non-empty string, got int"), (None, "got NoneType")])
def test_other_content_errors_still_say_what_is_wrong(mem: LayeredMemory, content: object, rule: str) -> None:
    with pytest.raises(InvalidInputError, match="content") as exc:
        _add(mem, content)
    assert rule in exc.value.rule


@pytest.mark.parametrize("text", [FAMILY, FLAG, ACCENT, "ab"])
def test_grapheme_ends_never_split_a_character(text: str) -> None:
    ends = grapheme_ends(text + " x")
    assert ends[0] == len(text) or text == "ab"
    assert first_grapheme(text + " tail") == (text if text != "ab" else "a")


def test_fit_to_tokens_cuts_on_grapheme_boundaries() -> None:
    count = get_token_counter()
    text = (FAMILY + " ") * 6 + ACCENT * 5 + FLAG * 4
    for budget in range(1, count(text) + 1):
        cut = fit_to_tokens(text, budget, count)
        if cut is None:
            continue
        assert count(cut) <= budget
        body = cut.removesuffix("…")
        assert len(body) in grapheme_ends(text) or body == text  # ends where a character ends
    assert fit_to_tokens(text, 0, count) is None and fit_to_tokens("short", 50, count) == "short"


@pytest.mark.parametrize("max_tokens", [1, 3, 5, 8, 12, 20])
def test_a_tiny_budget_keeps_whole_emoji_in_the_context(mem: LayeredMemory, max_tokens: int) -> None:
    _add(mem, FAMILY + " family photo from the trip to the lake " + FLAG)
    out = mem.get_context_for_user("u1", "c1", max_tokens=max_tokens)
    content = out[-1].content
    assert content.startswith(FAMILY)  # the ZWJ sequence whole, never "👨" alone or "👨\u200d…"
    body = content.removesuffix("…")
    assert len(body) in grapheme_ends(FAMILY + " family photo from the trip to the lake " + FLAG)
