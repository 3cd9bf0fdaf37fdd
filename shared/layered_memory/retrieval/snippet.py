"""Query-biased snippets: the window of a text that holds the most distinct query terms.

Matching uses the analyzer, so stems, technical-token parts, CJK bigrams and the Russian stems'
prefixes (``with_prefixes``: a derived word) count the same way as in retrieval. The snippet is cut
from the NFKC form of the text (identical for ordinary text), at whitespace where the script has it
(never inside a Latin or Cyrillic word; CJK is cut anywhere), with "…" at each cut end. Pure
function, no I/O.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .analyzer import PREFIX_LEN, Analyzer, with_prefixes

logger = logging.getLogger(__name__)

__all__ = ["make_snippet", "ELLIPSIS"]

ELLIPSIS = "…"
_MAX_MATCHES = 2000  # bound the window search on very long texts


def make_snippet(text: str, query_terms: Sequence[str] | str, analyzer: Analyzer, width: int = 160) -> str:
    """At most ``width`` characters of ``text`` (plus "…" marks) around the best query match.

    ``query_terms`` are analyzer terms (``analyzer.terms(query)``) or the raw query string.
    Without any match the snippet is the start of the text. The snippet is cut from the original
    text (its NFKC form only when normalization changed the length, e.g. ligatures).
    """
    if width <= 0:
        raise ValueError(f"snippet width must be > 0, got {width}")
    if isinstance(query_terms, str):
        query_terms = analyzer.terms(query_terms)
    norm, spans = analyzer.spans(text)
    if len(norm) == len(text):  # NFKC kept the length (full-width punctuation, most text): cut the original
        norm = text
    if len(norm) <= width:
        return norm.strip()
    qset = set(query_terms)
    prefixes = {t[:-1] for t in with_prefixes(sorted(qset)) if t.endswith("*")}  # a derived word matches by them

    def hit(terms: tuple[str, ...]) -> set[str]:
        found = qset.intersection(terms)
        if prefixes:
            for x in terms:
                p = x[:PREFIX_LEN]
                if p in prefixes and len(x) >= PREFIX_LEN:
                    found.add(p + "*")
        return found

    matches = [(s, e, found) for s, e, t in spans if (found := hit(t))][:_MAX_MATCHES]
    if not matches:
        return _cut(norm, 0, 0, width)
    best = (0, 0, 0)  # (distinct terms, hits, -start index)
    best_ij = (0, 0)
    j = 0
    for i in range(len(matches)):
        j = max(j, i)
        while j + 1 < len(matches) and matches[j + 1][1] - matches[i][0] <= width:
            j += 1
        found: set[str] = set()
        for _, _, t in matches[i : j + 1]:
            found |= t
        score = (len(found), j - i + 1, -i)
        if score > best:
            best, best_ij = score, (i, j)
    i, j = best_ij
    return _cut(norm, matches[i][0], min(matches[j][1], matches[i][0] + width), width)


def _cut(text: str, ws: int, we: int, width: int) -> str:
    """Window of ``width`` chars containing [ws, we), a little context before, snapped to spaces."""
    n = len(text)
    slack = width - (we - ws)
    start = max(0, ws - slack // 3)
    end = min(n, start + width)
    if end == n:
        start = max(0, end - width)
    if start > 0 and not text[start - 1].isspace() and _spaced(text[start]):
        k = text.find(" ", start, ws) if ws > start else -1
        start = k + 1 if k >= 0 else start
    if end < n and not text[end].isspace() and _spaced(text[end - 1]):
        k = text.rfind(" ", max(we, start), end)
        end = k if k > start else end
    body = text[start:end].strip()
    return (ELLIPSIS if start > 0 else "") + body + (ELLIPSIS if end < n else "")


def _spaced(ch: str) -> bool:
    """True for characters of scripts that separate words with spaces (not CJK)."""
    return not ("\u3040" <= ch <= "\u30ff" or "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff")
