"""The text a search embeds: a question without the short clause it opens with.

People ask a memory the way they talk: "Remind me, what is my daughter's name?", "Quick question:
which city do I live in now?", "Напомни, как зовут мою дочь?". To a small embedding model the opening
clause is half of a short question, and it pulls the query towards any turn that talks about
reminding or remembering ("I remember you helped me with something similar a while ago..."): with
``multilingual-e5-small`` the question above is closer to "How often should I repeat this?" (0.836)
than to "My daughter Elsa starts school this year" (0.832); without "Remind me," the order flips
(0.798 against 0.843).

So the dense side embeds the question's core (``retrieval.drop_preamble``, on by default; measured in
docs/retrieval.md "A question's preamble"). BM25, the route confidence and every second-stage signal
still read the whole query, so a preamble that does carry a word the search needs ("About my car, when
is the service due?") keeps it there. The rule is punctuation, not a word list, so it reads every
language alike, and it leaves alone whatever might not be filler:

* only a question (it ends with "?" or "？"): keyword queries, statements and tool results are embedded whole;
* the opening clause ends at the first ``,`` ``:`` (or ``，`` ``：``) and is at most four words (six
  characters of Chinese or Japanese);
* it holds nothing rare-looking (``confidence.rare_terms``: numbers, codes, names inside the sentence,
  quoted phrases): "According to John, ..." and "2024年1月，..." are kept whole;
* the rest holds no further separator (a list, "Pizza, pasta or sushi: ...?", is kept whole) and is the
  longer part, at least three words (four characters of those).
"""

from __future__ import annotations

import re
from typing import Any

from .confidence import rare_terms

__all__ = ["dense_query", "question_core"]

_OPENING = re.compile(r"^\s*([^,:;，：；、?？]{1,60}?)\s*[,:，：]\s*(\S.*)$", re.DOTALL)
_SEPARATOR = re.compile(r"[,:;，：；、]")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")  # kana and CJK ideographs (Korean writes spaces)
_MAX_WORDS = 4
_MAX_CHARS = 6  # a text without spaces (Chinese, Japanese): characters, not words
_MIN_REST_WORDS = 3
_MIN_REST_CHARS = 4


def _size(text: str) -> tuple[int, bool]:
    """(size, in words): the characters of a text written without spaces (Chinese, Japanese), else its
    whitespace-separated words."""
    if _UNSPACED.search(text):
        return len("".join(text.split())), False
    return len(text.split()), True


def question_core(text: str) -> str | None:
    """The question ``text`` without its short opening clause, or None when it has none to drop."""
    stripped = text.strip()
    if not stripped.endswith(("?", "？")):
        return None
    m = _OPENING.match(stripped)
    if m is None:
        return None
    opening, rest = m.group(1), m.group(2).strip()
    if _SEPARATOR.search(rest) or rare_terms(opening):
        return None
    size, spaced = _size(opening)
    rest_size, rest_spaced = _size(rest)
    if size > (_MAX_WORDS if spaced else _MAX_CHARS):
        return None
    if rest_size < (_MIN_REST_WORDS if rest_spaced else _MIN_REST_CHARS) or len(rest) <= len(opening):
        return None
    return rest


def dense_query(text: str, settings: Any) -> str:
    """What a search embeds for ``text``: its core when ``settings.drop_preamble`` (a ``RetrievalSettings``)
    and it has one, else ``text``."""
    return (question_core(text) or text) if settings.drop_preamble else text
