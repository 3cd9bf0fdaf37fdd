"""Text analysis for BM25: the same ``terms()`` for documents and queries.

Pipeline: NFKC, then one regex pass that yields CJK runs and word-like tokens (letters and digits
joined by ``. _ - / \\ : @ ? = & % ~ +``), then per token:

* a plain word (``Installing``, ``установка``) is casefolded, dropped if it is a stopword, and
  stemmed with the Snowball stemmer of its script (Latin -> english, Cyrillic -> russian, Greek -> greek,
  via PyStemmer; other scripts are kept as they are);
* a word of a script with combining marks (Indic, Arabic, Hebrew, Tibetan) is kept whole, marks and all,
  and a run of Thai, Lao, Myanmar or Khmer (written without spaces) becomes pairs of clusters: ``scripts``;
* a technical token is kept whole (casefolded, unstemmed) AND split into parts, so that
  ``psycopg2.OperationalError`` is findable as itself, as ``psycopg2``, ``operationalerror``,
  ``operational`` and ``error``; ``/etc/app/config.yaml`` as itself, ``config.yaml``, ``config``,
  ``yaml``; ``CrashLoopBackOff`` as itself and ``crash``/``loop``/``back``/``off``; versions
  ``v1.2.3`` also as ``1.2.3`` and ``1.2``; e-mails and URLs as themselves and their host parts.
  Parts shorter than two characters are dropped;
* a CJK run (Han, Hiragana, Katakana) becomes overlapping character bigrams plus its character
  unigrams (``cjk_unigrams=False``: bigrams only, a one-character run still gives its unigram).
  Measured in ``benchmarks/retrieval_components.py --cjk`` (20 Chinese queries, each with a hard
  negative): bigrams only top-1 17/20, MRR 0.854; bigrams + unigrams top-1 18/20, MRR 0.950, and
  the relevant doc still above its hard negative 20/20 (高铁票 vs 火车票: the rarer bigrams
  dominate). Unigrams rescue queries whose word is split in the text (买票 / 买了两张票).
* a Korean word (a run of Hangul syllables, also where it follows a Latin word without a space:
  "Redis에서" is ``redi`` and ``에서``) is kept whole and, from three syllables on, also as its overlapping
  syllable bigrams (``hangul_bigrams=False``: whole words only). Korean attaches its particles and endings
  to the word ("서울에서", "서울입니다", "회의가"), so a whole word alone rarely meets the question's; the
  bigram of a two-syllable stem ("서울", "회의": most nouns) does, as Lucene's CJK analyzer bigrams Hangul.
  Measured in ``benchmarks/retrieval_components.py --korean`` (docs/search.md).

Russian gets one documented extension over Snowball: a stem of six or more letters ending in a
consonant + ``к`` loses the ``к``, so the ``-ка`` nominalisations meet their verbs
(``установка``/``установить``, ``проверка``/``проверить``, ``настройка``/``настроить``).
BM25 adds a second one (``with_prefixes``, applied by the encoder and the scorer, not by ``terms()``):
a Cyrillic stem of six letters or more also counts by its first six, so the words Snowball leaves apart
by derivation meet (``переезжает``/``переездом``, ``пробежала``/``пробежку``).
Latin script is English by default. A text whose function words are Spanish, German, French, Portuguese
or Italian by a clear majority (``languages.latin_language``) also drops that language's stopwords, and
each of its other words gets that language's Snowball stem beside the default term ("mudamos" ->
``mudamo``, ``mud``; "Häuser" -> ``häuser``, ``haus``): a derived or inflected word meets its root,
and a query too short to tell its language still meets the default terms. English texts do not change.
If every token of a text is a stopword, the stopwords are kept (a query "who is it" still has terms).
"""

from __future__ import annotations

import hashlib

import logging
import re
import unicodedata
from collections.abc import Sequence

import Stemmer

from .languages import LATIN_LANGUAGES, LATIN_STOPWORDS, latin_language
from .scripts import BLOCKS, MARKED, UNSPACED, cluster_bigrams, marked_terms

logger = logging.getLogger(__name__)

__all__ = ["Analyzer", "EN_STOPWORDS", "PREFIX_LEN", "RU_STOPWORDS", "text_key", "with_prefixes"]


def text_key(text: str) -> str:
    """The key of a text up to case and whitespace (a message point's ``text_key``): a message whose key
    is the query's is the query verbatim, and comes first in a search (``rerank.verbatim``)."""
    return hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()[:16]

EN_STOPWORDS = frozenset(
    """a an and are as at be been being but by did do does doing for from had has have having he her hers him his
    how i if in into is it its itself me my myself of on or our ours she so than that the their theirs them then
    there these they this those to too was we were what when where which while who whom why will with would you
    your yours yourself am can could should just also about up out very s t don doesn didn isn wasn""".split()
)
RU_STOPWORDS = frozenset(
    """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только ее её мне было вот от
    меня еще ещё нет о из ему теперь когда даже ну вдруг ли если уже или ни быть был него до вас нибудь опять уж
    вам ведь там потом себя ничего ей может они тут где есть надо ней для мы тебя их чем была сам чтоб без будто
    чего раз тоже себе под будет ж тогда кто этот того потому этого какой совсем ним здесь этом один почти мой
    тем чтобы нее неё сейчас были куда зачем всех никогда можно при наконец два об другой хоть после над больше
    тот через эти нас про всего них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть
    том нельзя такой им более всегда конечно всю между это""".split()
)

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005\u3006"
_HANGUL = "\uac00-\ud7a3"  # precomposed syllables: a Korean word with its particles ("서울에서")
_WORD = rf"[^\W_{_CJK}{_HANGUL}{BLOCKS}]+"
_JOIN = r"[._\-/\\:@?=&%~+]+"
# a word first (the common case: its class holds none of the other groups' characters, so the order is only speed)
_TOKEN_RE = re.compile(rf"(?P<word>{_WORD}(?:{_JOIN}{_WORD})*[+#]*)|(?P<cjk>[{_CJK}]+)|(?P<hangul>[{_HANGUL}]+)"
                       rf"|(?P<unspaced>[{UNSPACED}]+)|(?P<marked>[{MARKED}]+)")
_LEVEL1_RE = re.compile(r"[/\\:@?=&%~]+")  # path, URL, e-mail, query-string separators
_LEVEL2_RE = re.compile(r"[._\-+#]+")  # dotted names, snake_case, kebab-case
_CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
_VERSION_RE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)*", re.IGNORECASE)
_RU_CONSONANTS = frozenset("бвгджзйклмнпрстфхцчшщ")
PREFIX_LEN = 6
_STEM_CACHE_MAX = 200_000


def with_prefixes(terms: Sequence[str]) -> list[str]:
    """``terms`` and, after them, the first ``PREFIX_LEN`` letters of each Cyrillic stem of that length or
    more, marked ``*`` (``переезд`` -> ``переез*``): what BM25 indexes and queries.

    Snowball's Russian stemmer strips inflectional endings; a derived word keeps its own stem: the verb
    of a question and the noun of the answer ("В какой город переезжает Вера?" / "С переездом решено:
    Лиссабон") keep different stems. Their shared prefix is a second, weaker match: the same word still matches on both
    its stem and its prefix, a derived one on the prefix alone. The stems stay, so vectors written
    before this rule still match a query by their stems (and by prefix after a reindex). Measured on
    the Russian questions of the synthetic sets, BM25 alone, R@5: chats 0.406 -> 0.422, assistant chats
    0.613 -> 0.644; English loses with the same rule (LoCoMo R@5 -0.6: Snowball's English stems already
    meet derivations), so it is Cyrillic only. ``docs/retrieval.md`` has the tables."""
    extra = [t[:PREFIX_LEN] + "*" for t in terms if len(t) >= PREFIX_LEN and "\u0400" <= t[0] <= "\u04ff" and t.isalpha()]
    return [*terms, *extra] if extra else list(terms)


def _plain(tok: str) -> bool:
    """A plain word: letters only, lower, upper or capitalised (not camelCase, not a code)."""
    return tok.isalpha() and (tok.islower() or tok.isupper() or tok[1:].islower())


def _latin(ch: str) -> bool:
    """A Latin letter, accented ones included (``é``, ``ü``, ``ñ``)."""
    return "a" <= ch <= "z" or "A" <= ch <= "Z" or "\u00c0" <= ch <= "\u024f"


def _script(ch: str) -> str:
    if "a" <= ch <= "z":
        return "en"
    if "\u0400" <= ch <= "\u04ff":
        return "ru"
    if "\u0370" <= ch <= "\u03ff":
        return "el"
    return ""


class Analyzer:
    """Terms for BM25 and the language of a text.

    ``Analyzer()`` is cheap to build, holds a bounded stem cache and is safe to share across
    threads for reading (the cache is a plain dict; races only recompute a stem).
    """

    def __init__(self, *, stem: bool = True, stopwords: bool = True, cjk_unigrams: bool = True, hangul_bigrams: bool = True) -> None:
        self.stem = stem
        self.stopwords = EN_STOPWORDS | RU_STOPWORDS if stopwords else frozenset()
        self.cjk_unigrams = cjk_unigrams
        self.hangul_bigrams = hangul_bigrams
        self._stemmers = {"en": Stemmer.Stemmer("english"), "ru": Stemmer.Stemmer("russian")}
        self._cache: dict[str, str] = {}
        self._lang_cache: dict[tuple[str, str], str] = {}

    # ------------------------------------------------------------------ public

    def terms(self, text: str) -> list[str]:
        """BM25 terms of ``text`` (documents and queries alike), in text order, duplicates kept."""
        if not text:
            return []
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
        out: list[str] = []
        dropped: list[str] = []
        plain: list[tuple[str, int]] = []  # each plain word and the position of its term (-1: a stopword)
        for m in _TOKEN_RE.finditer(text):
            cjk = m.group("cjk")
            if cjk is not None:
                self._cjk(cjk, out)
                continue
            hangul = m.group("hangul")
            if hangul is not None:
                self._hangul(hangul, out)
                continue
            if m.group("word") is None:  # Thai, Lao, Myanmar, Khmer; or a word with combining marks (scripts.py)
                out += self._script_terms(m)
                continue
            tok = m.group("word")
            if tok.isalpha() and (tok.islower() or tok.isupper() or tok[1:].islower()):  # _plain, inlined: the write path
                w = tok.casefold()
                if w in self.stopwords:
                    dropped.append(w)
                    plain.append((w, -1))
                    continue
                plain.append((w, len(out)))
                out.append(self._stem(w))
            else:
                self._compound(tok, out)
        lang = self._language({w for w, _ in plain}, text) if len(plain) > 1 else None
        if lang is not None:
            out = self._in_language(lang, out, plain) or out
        if not out and dropped:
            return [self._stem(w) for w in dropped]
        return out

    def _in_language(self, lang: str, out: list[str], plain: list[tuple[str, int]]) -> list[str]:
        """``out`` for a text in ``lang``: its stopwords dropped, and beside each other word's default term its
        stem in ``lang`` when that differs (a query that is too short to tell still meets the default terms)."""
        stop = LATIN_STOPWORDS[lang] if self.stopwords else frozenset()
        word_at = {i: w for w, i in plain if i >= 0}
        res: list[str] = []
        for i, t in enumerate(out):
            w = word_at.get(i)
            if w is None:
                res.append(t)
                continue
            if w in stop:
                continue
            res.append(t)
            t2 = self._stem_in(lang, w)
            if t2 is not None and t2 != t:
                res.append(t2)
        return res

    def spans(self, text: str) -> tuple[str, list[tuple[int, int, tuple[str, ...]]]]:
        """The NFKC text and, per token, ``(start, end, terms)`` in it (CJK: one span per bigram).

        Stopwords are kept here (with their stem) so a snippet can still be cut at word ends.
        """
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
        out: list[tuple[int, int, tuple[str, ...]]] = []
        found = list(_TOKEN_RE.finditer(text))
        words = {tok.casefold() for m in found if (tok := m.group("word")) is not None and _plain(tok)}  # as terms() decides
        lang = self._language(words, text) if len(words) > 1 else None
        for m in found:
            start = m.start()
            cjk = m.group("cjk")
            if cjk is not None:
                if len(cjk) == 1:
                    out.append((start, start + 1, (cjk,)))
                else:
                    for i in range(len(cjk) - 1):
                        out.append((start + i, start + i + 2, (cjk[i : i + 2], cjk[i], cjk[i + 1])))
                continue
            hangul = m.group("hangul")
            if hangul is not None:
                terms_h: list[str] = []
                self._hangul(hangul, terms_h)
                out.append((start, m.end(), tuple(terms_h)))
                continue
            if m.group("word") is None:
                out.append((start, m.end(), tuple(self._script_terms(m))))
                continue
            tok = m.group("word")
            terms: list[str] = []
            if _plain(tok):
                terms.append(self._stem(tok.casefold()))
                t2 = self._stem_in(lang, tok.casefold()) if lang is not None else None
                if t2 is not None and t2 != terms[-1]:
                    terms.append(t2)
            else:
                self._compound(tok, terms)
            out.append((start, m.end(), tuple(terms)))
        return text, out

    def detect_lang(self, text: str) -> str:
        """"en", "ru", "zh", "ja" or "other", by script counts (and English stopwords for Latin)."""
        if not unicodedata.is_normalized("NFKC", text):
            text = unicodedata.normalize("NFKC", text)
        latin = cyr = han = kana = other = 0
        for ch in text:
            if ch.isascii():
                if ch.isalpha():
                    latin += 1
            elif "\u0400" <= ch <= "\u04ff":
                cyr += 1
            elif "\u3040" <= ch <= "\u30ff":
                kana += 1
            elif "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff":
                han += 1
            elif ch.isalpha():
                if unicodedata.category(ch) == "Ll" or unicodedata.category(ch) == "Lu":
                    # accented Latin (é, ü) counts as Latin but marks the text as not plain English
                    if "\u00c0" <= ch <= "\u024f":
                        latin += 1
                        other += 0.5
                        continue
                other += 1
        if kana and kana + han >= max(latin, cyr, other):
            return "ja"
        if han and han >= max(latin, cyr, other):
            return "zh"
        if cyr and cyr >= max(latin, other):
            return "ru" if not re.search("[іїєґ]", text, re.IGNORECASE) else "other"
        if latin and latin >= other:
            words = re.findall(r"[a-z]{2,}", text.casefold())
            hits = sum(w in EN_STOPWORDS for w in words)
            if (hits and (other == 0 or hits >= 2)) or (len(words) <= 3 and other == 0):
                return "en"
        return "other"

    # ------------------------------------------------------------------ internals

    def _stem(self, w: str) -> str:
        if not self.stem:
            return w
        s = self._cache.get(w)
        if s is not None:
            return s
        lang = _script(w[0])
        if lang == "en":
            s = self._stemmers["en"].stemWord(w)
        elif lang == "ru":
            s = self._stemmers["ru"].stemWord(w.replace("ё", "е"))
            if len(s) >= 6 and s[-1] == "к" and s[-2] in _RU_CONSONANTS:
                s = s[:-1]
        elif lang == "el":
            if "el" not in self._stemmers:
                self._stemmers["el"] = Stemmer.Stemmer("greek")
            s = self._stemmers["el"].stemWord(w)
        else:
            s = w
        if len(self._cache) >= _STEM_CACHE_MAX:
            self._cache.clear()
        self._cache[w] = s
        return s

    def _language(self, words: set[str], text: str) -> str | None:
        """The Latin-script language of a text other than English, from its distinct casefolded plain ``words``
        (``languages.latin_language``), or None."""
        return latin_language(words, EN_STOPWORDS, text) if self.stem else None

    def _stem_in(self, lang: str, w: str) -> str | None:
        """``w``'s Snowball stem in ``lang`` (a Latin-script word only; None for another script)."""
        if not _latin(w[0]):
            return None
        key = (lang, w)
        s = self._lang_cache.get(key)
        if s is None:
            stemmer = self._stemmers.get(lang)
            if stemmer is None:
                stemmer = self._stemmers[lang] = Stemmer.Stemmer(LATIN_LANGUAGES[lang])
            s = stemmer.stemWord(w)
            if len(self._lang_cache) >= _STEM_CACHE_MAX:
                self._lang_cache.clear()
            self._lang_cache[key] = s
        return s

    def _word(self, part: str, out: list[str], seen: set[str]) -> None:
        """A part of a technical token: camelCase split, stopword filter, stem; parts < 2 chars dropped."""
        if part.isalpha() and not _plain(part):
            whole = part.casefold()
            if whole not in seen:
                seen.add(whole)
                out.append(whole)
            pieces = _CAMEL_RE.findall(part)
        else:
            pieces = [part]
        for p in pieces:
            if len(p) < 2:
                continue
            w = p.casefold()
            if w in self.stopwords:
                continue
            if w.isalpha():
                w = self._stem(w)
            if w not in seen:
                seen.add(w)
                out.append(w)

    def _compound(self, tok: str, out: list[str]) -> None:
        whole = tok.casefold()
        seen = {whole}
        out.append(whole)
        v = _VERSION_RE.fullmatch(tok)
        if v:
            for extra in (whole.lstrip("v"), f"{v.group(1)}.{v.group(2)}"):
                if extra not in seen:
                    seen.add(extra)
                    out.append(extra)
            return
        if tok.isdigit():
            return
        for seg in _LEVEL1_RE.split(tok):
            if not seg:
                continue
            subs = _LEVEL2_RE.split(seg)
            if len(subs) > 1 and seg != tok:
                s = seg.casefold().rstrip("+#")
                if s and s not in seen:
                    seen.add(s)
                    out.append(s)
            if len(subs) == 1 and seg == tok:
                # a single alphanumeric token: camelCase (CrashLoopBackOff) or letters+digits (E4012)
                if tok.isalpha():
                    self._word(tok, out, seen)
                continue
            for sub in subs:
                if sub:
                    self._word(sub, out, seen)

    def _script_terms(self, m: re.Match[str]) -> list[str]:
        """A run of a script written without spaces, or a word with combining marks (``scripts``)."""
        run = m.group("unspaced")
        return cluster_bigrams(run) if run is not None else marked_terms(m.group("marked").casefold(), self.stem)

    def _hangul(self, word: str, out: list[str]) -> None:
        out.append(word)
        if self.hangul_bigrams and len(word) > 2:
            out.extend(word[i : i + 2] for i in range(len(word) - 1))

    def _cjk(self, run: str, out: list[str]) -> None:
        n = len(run)
        if n == 1:
            out.append(run)
            return
        out.extend(run[i : i + 2] for i in range(n - 1))
        if self.cjk_unigrams:
            out.extend(run)
