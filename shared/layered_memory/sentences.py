"""Sentences of a message or a summary: split after . ! ? (and 。！？ without a space) and at line breaks, never
after an abbreviation or an initial. Used by the extractive session summaries, the context's summary fitting
and the index's ``sentences`` vectors (``index.indexer.Indexer.sentence_texts``), so all three cut alike."""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")

_ABBREVIATION = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|approx|mr|mrs|ms|dr|prof|st|no|fig|cf|jr|sr|inc|ltd|т\.\s?е|т\.\s?д|т\.\s?п|др|см|напр|г)|(?<![\w.])[A-ZА-ЯЁ])\.$",
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after . ! ? … (and 。！？ without a space) and at line breaks, but not
    after an abbreviation ("e.g.", "i.e.", "Dr.", "т.е.") or an initial ("J. Smith")."""
    out: list[str] = []
    buf = ""
    for part in _SENTENCE.split(text):
        part = part.strip()
        if not part:
            continue
        buf = f"{buf} {part}" if buf else part
        if _ABBREVIATION.search(buf):
            continue
        out.append(buf)
        buf = ""
    if buf:
        out.append(buf)
    return out


__all__ = ["split_sentences"]
