"""Scripts a plain ``\\w`` regex reads wrong, and how BM25 reads them instead (``Analyzer.terms``).

* **Words with combining marks**: Indic scripts (Devanagari to Sinhala), Arabic, Hebrew, Syriac, Thaana, Tibetan. A word is its
  letters *and* its vowel signs, viramas and points (Unicode categories ``M*``), which ``\\w`` does not match: the
  analyzer used to cut "किताब" (book) into क, त, ब at its vowel signs, and vocalised Arabic ("كِتَابٌ") at every
  haraka. A word is now kept whole (Arabic harakat, tatweel and Hebrew points left out, so a vocalised spelling
  meets the plain one) and, in Arabic, Persian and Hindi, also by its Snowball stem ("المدرسة" -> ``مدرس``,
  "किताबें" -> ``किताब``): the word's form with its article, suffixes or plural meets the question's.
* **Scripts written without spaces between words**: Thai, Lao, Myanmar, Khmer. A run is read as overlapping pairs
  of clusters (a base character with the marks that follow it), as a CJK run is read as character bigrams: a word
  of the question meets the same word inside a longer run ("ร้านอาหาร" in "ฉันกินข้าวที่ร้านอาหารไทย").

Measured in ``benchmarks/retrieval_components.py --scripts`` (docs/search.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

import Stemmer

__all__ = ["BLOCKS", "MARKED", "UNSPACED", "cluster_bigrams", "marked_terms"]


def _char_class(ranges: Iterable[tuple[int, int]]) -> str:
    """The letters, marks and digits of ``ranges`` as a regex character class body (ranges of code points)."""
    keep = [c for lo, hi in ranges for c in range(lo, hi + 1) if unicodedata.category(chr(c))[0] in "LMN"]
    parts: list[str] = []
    start = prev = keep[0]
    for c in keep[1:] + [-1]:
        if c != prev + 1:
            parts.append(f"\\u{start:04x}" if start == prev else f"\\u{start:04x}-\\u{prev:04x}")
            start = c
        prev = c
    return "".join(parts)


# Hebrew, Arabic, Syriac, Thaana, NKo and the rest to Arabic Extended-A; the Indic scripts through Sinhala; Tibetan
_MARKED_BLOCKS = [(0x0590, 0x08FF), (0x0900, 0x0DFF), (0x0F00, 0x0FFF)]
# Thai, Lao, Myanmar, Khmer
_UNSPACED_BLOCKS = [(0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF)]
MARKED = _char_class(_MARKED_BLOCKS)
UNSPACED = _char_class(_UNSPACED_BLOCKS)
# the whole blocks, as a few ranges: what a plain word must not take (a short class keeps the word pattern fast)
BLOCKS = "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _MARKED_BLOCKS + _UNSPACED_BLOCKS)

_POINTS_RE = re.compile("[\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u0640\u06d6-\u06ed]")  # Hebrew points, harakat, tatweel
_PERSIAN = frozenset("\u067e\u0686\u0698\u06af\u06a9\u06cc")  # پ چ ژ گ ک ی
_URDU = frozenset("\u0679\u0688\u0691\u06ba\u06be\u06c1\u06d2")  # ٹ ڈ ڑ ں ھ ہ ے: no stemmer fits
_STEMMERS: dict[str, Stemmer.Stemmer] = {}


def _stemmer(word: str) -> Stemmer.Stemmer | None:
    """The Snowball stemmer of ``word``'s language when its script tells it: Arabic or Persian (by the letters only
    Persian uses; Urdu by its own: none), Hindi for Devanagari; None otherwise."""
    first = word[0]
    if "\u0600" <= first <= "\u06ff" or "\u0750" <= first <= "\u077f" or "\u08a0" <= first <= "\u08ff":  # Arabic script
        chars = set(word)
        if chars & _URDU:
            return None
        lang = "persian" if chars & _PERSIAN else "arabic"
    elif "\u0900" <= first <= "\u097f":
        lang = "hindi"
    else:
        return None
    if lang not in _STEMMERS:
        _STEMMERS[lang] = Stemmer.Stemmer(lang)
    return _STEMMERS[lang]


def marked_terms(token: str, stem: bool = True) -> list[str]:
    """A word of a script with combining marks: its form without Arabic harakat, tatweel or Hebrew points, and its
    Snowball stem when that differs (Arabic, Persian, Hindi)."""
    word = _POINTS_RE.sub("", token) or token
    out = [word]
    stemmer = _stemmer(word) if stem else None
    if stemmer is not None:
        s = stemmer.stemWord(word)
        if s and s != word:
            out.append(s)
    return out


def cluster_bigrams(run: str) -> list[str]:
    """A run of a script written without spaces: its overlapping pairs of clusters (a base character and the marks
    after it); a run of one cluster is itself."""
    clusters: list[str] = []
    for ch in run:
        if clusters and unicodedata.category(ch)[0] == "M":
            clusters[-1] += ch
        else:
            clusters.append(ch)
    if len(clusters) == 1:
        return clusters
    return [clusters[i] + clusters[i + 1] for i in range(len(clusters) - 1)]
