"""What sets a stretch of a conversation apart from the rest of its chat, and what a summary says that
the stretch does not: the distinctive weights and the support check of the summary evaluator (seed 001
3.2.3, ``layered_memory.evaluation``).

A summarizer's likeliest mistake is not an off-topic text but a summary of the wrong part of the same
conversation: the same people, the same style, the names that come back in every session. Two
measures tell those apart:

* **distinctiveness**: a term weighs ``idf(t) = ln(1 + N / df(t))`` where the documents are the
  span's messages (one document) and the rest of the chat (``Background``: chunks of
  ``BACKGROUND_CHUNK`` consecutive messages). A word of every session ("Caroline", "work") weighs
  ``ln 2``; a word only this span has weighs ``ln(1 + N)``. Without a background every term of the
  span weighs the same (``ln 2``), as before.
* **support**: the share of the summary's distinct content terms, idf-weighted, that the span's
  messages contain (their words, their speakers' names, their dates: ``8 May 2023``, ``1:56 pm``,
  ``15 марта``, ``3月15日``). A term the rest of the chat has but the span does not is evidence of
  another part of the conversation and counts in full; a term nobody said is mostly the summary's own
  paraphrase ("mentioned", "discussed") and counts ``UNSEEN_WEIGHT`` of its weight, except a number or
  a name (an unsupported claim), which counts in full and is listed in ``unsupported``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .models import Message
from .retrieval.analyzer import Analyzer

__all__ = ["Background", "Grounding", "content_terms", "entities", "split_sentences"]

BACKGROUND_CHUNK = 20  # messages per background document
BACKGROUND_MAX = 1000  # background messages read for one evaluation (the nearest the span)
UNSEEN_WEIGHT = 0.1  # a summary term nobody in the chat said: paraphrase more often than a claim
RECURRING_ENTITY = 0.25  # weight of a span's entity the rest of the chat also names (a new one: 1)

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？；])|\n+")
_CJK_RANGE = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK = re.compile(f"[{_CJK_RANGE}]")
_TOKEN = re.compile(rf"[^\W\d_{_CJK_RANGE}][^\W{_CJK_RANGE}]*(?:['’\-][^\W{_CJK_RANGE}]+)*|\d[\d.,:/\-]*\d|\d")
_TECH = re.compile(r"\b\w+(?:[._/@:\\]\w+)+\b")
_QUOTED = re.compile(r"《([^》]{1,30})》|「([^」]{1,30})」|“([^”]{1,40})”|«([^»]{1,40})»")
# Chinese characters that make a bigram a function word (的, 了, 我们, 这个 ...): not content.
_ZH_FUNCTION = frozenset("的了是我你他她它们在有这那个吗呢吧啊就也都和不要会很还把被对到说去来上下么什没得着过与及或而且")
_MONTHS_EN = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december")
_MONTHS_RU = ("январь января", "февраль февраля", "март марта", "апрель апреля", "май мая", "июнь июня", "июль июля",
              "август августа", "сентябрь сентября", "октябрь октября", "ноябрь ноября", "декабрь декабря")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (Latin/Cyrillic punctuation followed by space, CJK punctuation, newlines)."""
    return [s.strip() for s in _SENTENCE.split(text or "") if s and s.strip()]


def content_terms(terms: Iterable[str]) -> list[str]:
    """Terms that carry content: CJK unigrams only echo their bigrams; function-character bigrams go."""
    out = []
    for t in terms:
        if len(t) == 1 and _CJK.match(t):
            continue
        if len(t) == 2 and _CJK.match(t) and (t[0] in _ZH_FUNCTION or t[1] in _ZH_FUNCTION):
            continue
        out.append(t)
    return out


def entities(analyzer: Analyzer, text: str) -> dict[frozenset[str], str]:
    """Named entities of ``text``, each as the set of its content terms -> its surface form: names
    (capitalised words inside a sentence, acronyms, mixedCase words), numbers, dates and times,
    technical tokens, quoted titles 《》「」“”«»."""
    found: list[str] = []
    for sent in split_sentences(text):
        toks = list(_TOKEN.finditer(sent))
        run: list[str] = []
        for i, m in enumerate(toks):
            w = m.group()
            name = (
                w[0].isdigit()
                or (len(w) >= 2 and w.isupper() and w.isalpha())  # acronyms: NASA, ВТБ
                or (len(w) >= 2 and not w[0].isupper() and any(c.isupper() for c in w[1:]))  # iPhone, macOS
                or (i > 0 and len(w) >= 2 and w[0].isupper() and w.casefold() not in analyzer.stopwords)
            ) and not _CJK.match(w)
            if name and not w[0].isdigit():
                run.append(w)
                continue
            if run:
                found.append(" ".join(run))
                run = []
            if name:
                found.append(w)
        if run:
            found.append(" ".join(run))
    found += [m.group() for m in _TECH.finditer(text)]
    found += [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
    out: dict[frozenset[str], str] = {}
    for e in found:
        terms = analyzer.terms(e)
        key = frozenset(content_terms(terms)) or frozenset(terms)
        if key:
            out.setdefault(key, e)
    return out


def text_of(m: Any) -> tuple[str, str]:
    """(speaker, text) of a Message, a mapping with ``content`` or a plain string."""
    if isinstance(m, Message):
        return ((m.user_name or m.user_id) if m.role == "user" else m.role), m.content
    if isinstance(m, Mapping):
        return str(m.get("user_name") or m.get("speaker") or m.get("role") or ""), str(m.get("content") or m.get("text") or "")
    return "", str(m)


def _identity(m: Any) -> tuple[str, str] | None:
    if isinstance(m, Message):
        return (m.chat_id, m.message_id)
    if isinstance(m, Mapping) and m.get("message_id") is not None:
        return (str(m.get("chat_id") or ""), str(m["message_id"]))
    return None


def _when(m: Any) -> datetime | None:
    t = m.create_time if isinstance(m, Message) else m.get("create_time") if isinstance(m, Mapping) else None
    if isinstance(t, str):
        try:
            t = datetime.fromisoformat(t)
        except ValueError:
            return None
    return t if isinstance(t, datetime) else None


def _date_words(t: datetime) -> str:
    """How a summary may write the message's date and time: 8 May 2023, 1:56 pm, 13:56, 8 мая, 5月8日."""
    h12 = t.hour % 12 or 12
    return (f"{t.day} {t.year} {t.hour}:{t.minute:02d} {h12}:{t.minute:02d} {'pm' if t.hour >= 12 else 'am'} "
            f"{_MONTHS_EN[t.month - 1]} {_MONTHS_EN[t.month - 1][:3]} {_MONTHS_RU[t.month - 1]} {t.month}")


class Background:
    """The rest of a chat, as document frequencies over chunks of ``BACKGROUND_CHUNK`` consecutive
    messages, and the entities it names. Build it once and pass it to several evaluations of the same chat.

    Example::

        bg = Background.build(analyzer, other_messages)
        evaluator.evaluate(summary, span, background=bg)
    """

    def __init__(self, df: Counter[str], n_docs: int, entity_keys: set[frozenset[str]], ids: set[tuple[str, str]],
                 texts: set[str]) -> None:
        self.df, self.n_docs, self.entity_keys, self.ids, self.texts = df, n_docs, entity_keys, ids, texts

    @classmethod
    def build(cls, analyzer: Analyzer, messages: Sequence[Any], *, exclude: Sequence[Any] = (), chunk: int = BACKGROUND_CHUNK) -> Background:
        """From ``messages`` (Messages, dicts with ``content`` or strings, in chat order), leaving out
        those of ``exclude`` (the span under evaluation: same ``(chat_id, message_id)`` or same text)."""
        skip_ids = {i for i in map(_identity, exclude) if i is not None}
        skip_texts = {text_of(m)[1] for m in exclude if _identity(m) is None}
        df: Counter[str] = Counter()
        keys: set[frozenset[str]] = set()
        ids: set[tuple[str, str]] = set()
        texts: set[str] = set()
        doc: set[str] = set()
        n_docs = in_doc = 0
        for m in messages:
            ident = _identity(m)
            text = text_of(m)[1]
            if (ident is not None and ident in skip_ids) or text in skip_texts or not text.strip():
                continue
            if ident is not None:
                ids.add(ident)
            texts.add(text)
            doc.update(content_terms(analyzer.terms(text)))
            keys.update(entities(analyzer, text))
            in_doc += 1
            if in_doc == chunk:
                df.update(doc)
                n_docs, doc, in_doc = n_docs + 1, set(), 0
        if in_doc:
            df.update(doc)
            n_docs += 1
        return cls(df, n_docs, keys, ids, texts)


class Grounding:
    """The span's terms, entities and support vocabulary, weighed against a ``Background`` (or none)."""

    def __init__(self, analyzer: Analyzer, messages: Sequence[Any], background: Background | None = None) -> None:
        self.analyzer = analyzer
        self.background = background
        turns = [text_of(m) for m in messages]
        self.texts = [t for _, t in turns if t.strip()]
        self.tf: Counter[str] = Counter()
        self.entity_counts: Counter[frozenset[str]] = Counter()
        for text in self.texts:
            self.tf.update(content_terms(analyzer.terms(text)))
            self.entity_counts.update({e: 1 for e in entities(analyzer, text)})
        said = set(self.tf)
        for who, _ in turns:
            said.update(analyzer.terms(who))
        for m in messages:
            when = _when(m)
            if when is not None:
                said.update(analyzer.terms(_date_words(when)))
        self.said = said
        bg_docs = background.n_docs if background else 0
        self._n = bg_docs + 1
        self._bg_df = background.df if background else Counter()

    def idf(self, term: str) -> float:
        df = self._bg_df.get(term, 0) + (1 if term in self.tf else 0)
        return math.log(1 + self._n / (df or 0.5))

    def weights(self, top: int) -> dict[str, float]:
        """The span's ``top`` terms by log-tf x idf, with that weight."""
        w = {t: (1.0 + math.log(n)) * self.idf(t) for t, n in self.tf.items()}
        return dict(sorted(w.items(), key=lambda kv: (-kv[1], kv[0]))[:top])

    def term_coverage(self, summary_terms: set[str], top: int) -> float:
        w = self.weights(top)
        total = sum(w.values())
        return sum(v for t, v in w.items() if t in summary_terms) / total if total else 0.0

    def entity_coverage(self, summary_terms: set[str], top: int) -> tuple[float | None, int]:
        """Share of the span's ``top`` entities the summary keeps; one the rest of the chat also names
        weighs ``RECURRING_ENTITY``. (None, 0) without entities."""
        ents = [e for e, _ in self.entity_counts.most_common(top)]
        if not ents:
            return None, 0
        known = self.background.entity_keys if self.background else set()
        w = {e: RECURRING_ENTITY if e in known else 1.0 for e in ents}
        kept = sum(v for e, v in w.items() if len(e & summary_terms) >= max(1, math.ceil(0.67 * len(e))))
        return kept / sum(w.values()), len(ents)

    def support(self, summary: str, summary_terms: set[str], unseen_weight: float = UNSEEN_WEIGHT) -> dict[str, Any]:
        """How much of the summary the span says: ``{"support", "supported", "elsewhere", "unseen",
        "claims", "unsupported"}`` (the masses are idf sums; ``unsupported``: surface forms of numbers
        and names nobody in the span said)."""
        claim_terms: set[str] = set()
        unsupported: list[str] = []
        for key, surface in entities(self.analyzer, summary).items():
            if not (_CJK.search(surface)) and len(key & self.said) < max(1, math.ceil(0.67 * len(key))):
                claim_terms |= key - self.said
                unsupported.append(surface)
        masses = {"supported": 0.0, "elsewhere": 0.0, "unseen": 0.0, "claims": 0.0}
        for t in summary_terms:
            w = self.idf(t)
            if t in self.said:
                masses["supported"] += w
            elif t in claim_terms:
                masses["claims"] += w
            elif self._bg_df.get(t):
                masses["elsewhere"] += w
            else:
                masses["unseen"] += w
        den = masses["supported"] + masses["elsewhere"] + masses["claims"] + unseen_weight * masses["unseen"]
        return {"support": masses["supported"] / den if den else 0.0, **{k: round(v, 4) for k, v in masses.items()},
                "unsupported": unsupported[:8]}
