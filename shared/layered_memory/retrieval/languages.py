"""Which Latin-script language a text is written in, by its function words (model-free, per text).

English is the analyzer's default for Latin script; a text whose function words are, by a clear
majority, Spanish, German, French, Portuguese or Italian is that language: the analyzer then drops
that language's stopwords and adds its Snowball stem beside the default term (``Analyzer.terms``).

The rule: count each language's stopwords among the text's distinct plain words, and one more for each
letter or sign of its own the text holds (``¿ ¡ ñ`` Spanish, ``ß ä ö ü`` German, ``ã õ`` Portuguese,
``ç ê â ô`` French and Portuguese, ``è ù`` French and Italian, ...); the language with the most, at
least two and more than English's, wins, and only alone (a tie, e.g. Spanish and Portuguese on "a ...
de", is no decision). Short texts ("Qué bien") are usually no decision: they keep the default terms,
which every text still carries, so a short query still meets a long message.
"""

from __future__ import annotations

import re

__all__ = ["LATIN_LANGUAGES", "LATIN_STOPWORDS", "latin_language"]

# language -> Snowball algorithm (PyStemmer)
LATIN_LANGUAGES = {"es": "spanish", "de": "german", "fr": "french", "pt": "portuguese", "it": "italian"}

LATIN_STOPWORDS = {
    "es": frozenset("""de la que el en y a los del se las por un para con no una su al lo como más mas pero sus le ya o
        este esta estos estas ese esa esos esas eso esto sí si porque entre cuando muy sin sobre también me hasta hay
        donde quien desde todo todos nos durante uno unos les ni contra otro otros otra otras ante ellos ella ellas e
        mí mi mis tú tu tus te ti yo él nosotros nosotras vosotros os algo algunos algunas nada mucho muchos poco
        qué cómo cuándo dónde cuál quién estoy estás está estamos están estaba estaban fue fueron era eran soy eres
        es somos son sea ser he has ha hemos han había tengo tiene tienen tenemos""".split()),
    "de": frozenset("""der die das den dem des ein eine einen einem einer eines und oder aber doch sondern denn weil dass
        daß wenn als wie ob zu zum zur im in ins am an auf aus bei mit nach von vor über unter um durch für gegen
        ohne bis seit ist sind war waren bin bist sei wird werden wurde wurden hat haben hatte hatten habe hast ich
        du er sie es wir ihr mich mir dich dir sich uns euch ihn ihm ihnen mein meine meinen meinem meiner dein
        deine sein seine seinen ihre ihren unser unsere nicht kein keine auch noch schon nur so sehr ja nein man
        was wer wo wann warum welche welcher welches welchen diese dieser dieses diesem diesen jetzt hier da dann""".split()),
    "fr": frozenset("""le la les de des du un une et à au aux en dans sur pour par avec sans sous ce cet cette ces qui que
        quoi dont où est sont était être avoir a ont ai as avons avez je tu il elle nous vous ils elles me te se moi
        toi lui leur leurs mon ma mes ton ta tes son sa ses notre nos votre vos ne pas plus mais ou donc car comme
        si y on très aussi tout tous bien quel quelle quand comment pourquoi""".split()),
    "pt": frozenset("""de a o que e do da em um para é com não uma os no se na por mais as dos como mas foi ao ele das
        tem à seu sua ou ser quando muito há nos já está eu também só pelo pela até isso ela entre era depois sem
        mesmo aos ter seus quem nas me esse eles estão você tinha foram essa num nem suas meu às minha têm numa
        pelos elas havia seja qual será nós tenho lhe deles essas esses pelas este dele tu te vocês vos meus minhas
        teu tua nosso nossa dela esta estes estas isto aquilo estou estamos onde porque sobre""".split()),
    "it": frozenset("""di a da in con su per tra fra il lo la i gli le un uno una e è ed o ma che chi cui non più come
        dove quando perché se anche ci si mi ti vi ne io tu lui lei noi voi loro mio mia miei mie tuo tua suo sua
        nostro nostra del della dei delle al alla ai alle dal dalla nel nella sul sulla sono sei siamo siete ho hai
        ha abbiamo avete hanno era erano questo questa questi queste quello quella cosa""".split()),
}

_MARKS: dict[str, tuple[str, ...]] = {  # a letter or sign one or a few of the languages write and Spanish / English do not share
    "¿": ("es",), "¡": ("es",), "ñ": ("es",), "ß": ("de",), "ä": ("de",), "ö": ("de",), "ü": ("de",), "œ": ("fr",), "ë": ("fr",),
    "ï": ("fr",), "î": ("fr",), "û": ("fr",), "ã": ("pt",), "õ": ("pt",), "ç": ("fr", "pt"), "ê": ("fr", "pt"), "â": ("fr", "pt"),
    "ô": ("fr", "pt"), "è": ("fr", "it"), "ù": ("fr", "it"), "à": ("fr", "it", "pt"), "ì": ("it",), "ò": ("it",)}
_MARKS_RE = re.compile(f"[{''.join(_MARKS)}]", re.IGNORECASE)

_BY_WORD: dict[str, tuple[str, ...]] = {}
for _lang, _words in LATIN_STOPWORDS.items():
    for _w in _words:
        _BY_WORD[_w] = (*_BY_WORD.get(_w, ()), _lang)
_ANY = frozenset(_BY_WORD)


def latin_language(words: set[str], english: frozenset[str], text: str = "") -> str | None:
    """The language of a text from its distinct casefolded plain ``words`` (one of ``LATIN_LANGUAGES``), or
    None (English, a tie, or too few function words to tell). ``english``: the English stopwords the
    caller drops; ``text``: the text itself, for its marks."""
    en = len(words & english)
    ours = words & _ANY
    marks = {ch.lower() for ch in _MARKS_RE.findall(text)} if not text.isascii() else set()
    if len(ours) + len(marks) <= max(en, 1):  # no language can have two hits and more than English: the usual case
        return None
    hits: dict[str, int] = {}
    for w in ours:
        for lang in _BY_WORD[w]:
            hits[lang] = hits.get(lang, 0) + 1
    for mark in marks:
        for lang in _MARKS[mark]:
            hits[lang] = hits.get(lang, 0) + 1
    best = max(hits.values())
    if best < 2 or best <= en:
        return None
    winners = [lang for lang, n in hits.items() if n == best]
    return winners[0] if len(winners) == 1 else None
