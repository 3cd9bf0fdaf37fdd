"""Latin-script languages other than English: told by their function words, stemmed beside the default."""

import re

import pytest

from layered_memory.retrieval import Analyzer
from layered_memory.retrieval.analyzer import EN_STOPWORDS
from layered_memory.retrieval.languages import latin_language


@pytest.fixture(scope="module")
def an():
    return Analyzer()


def _lang(text: str) -> str | None:
    return latin_language({w.casefold() for w in re.findall(r"[^\W\d_]+", text)}, EN_STOPWORDS, text)


@pytest.mark.parametrize("text, lang", [
    ("¿Qué puesto aceptó Diego?", "es"),                      # one function word and the ¿ mark
    ("Nos mudamos a Valencia en primavera, ¿sabes?", "es"),
    ("Wir sind im Frühling nach Leipzig umgezogen", "de"),
    ("Nous avons déménagé à Lyon au printemps et nous aimons la ville.", "fr"),
    ("Nós mudamos para o Porto e a cidade é linda.", "pt"),
    ("A mudança está decidida: Lisboa a partir de outubro.", "pt"),  # a tie with Spanish, broken by the ç
    ("Ci siamo trasferiti a Torino e la città è bella.", "it"),
])
def test_a_text_is_told_by_its_function_words(text, lang):
    assert _lang(text) == lang


@pytest.mark.parametrize("text", [
    "I was in the park and he is so happy",                  # English shares "a", "in", "so" with others
    "Stay at the hotel in Madrid for la fiesta",             # a foreign word or two in English
    "See ya, Calvin! Stay awesome. Catch ya later.",         # one Spanish word, twice
    "Nos mudamos a Valencia en primavera",                   # Spanish, French and Portuguese tie: no decision
    "mudanza Valencia",                                      # too short to tell
    "Bebês mudam o sono completamente.",                     # Italian "o", "sono" against the Portuguese ê: no decision
])
def test_english_ties_and_short_texts_are_no_decision(text):
    assert _lang(text) is None


def test_english_terms_do_not_change(an):
    assert an.terms("I was in the park and he is so happy") == ["park", "happi"]
    assert an.terms("Stay at the hotel in Madrid for la fiesta") == ["stay", "hotel", "madrid", "la", "fiesta"]


def test_a_spanish_or_german_word_meets_its_inflection(an):
    """Without its own stemmer "mudamos" and "mudaremos" share nothing, nor "Häuser" and "Haus"."""
    assert "mud" in set(an.terms("Nos mudamos a Valencia en primavera, ¿sabes?")) & set(an.terms("¿Cuándo nos mudaremos?"))
    assert "haus" in set(an.terms("Wir haben zwei Häuser am See gekauft.")) & set(an.terms("Wie groß ist das Haus?"))
    assert "das" not in an.terms("Wie groß ist das Haus?")  # German stopwords are dropped in a German text


def test_the_default_term_stays_beside_the_language_stem(an):
    """A query too short to tell its language has the default terms only; a Spanish message keeps them too."""
    assert set(an.terms("mudanza")) <= set(an.terms("La mudanza está decidida: Lisboa desde octubre."))


def test_snippet_spans_carry_the_language_stem(an):
    _, spans = an.spans("Wir haben zwei Häuser am See gekauft.")
    assert any("haus" in terms for _, _, terms in spans)


def test_search_finds_a_spanish_inflection_and_a_german_plural(tmp_path):
    from datetime import datetime, timedelta, timezone

    from layered_memory import LayeredMemory

    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    texts = ["Nos mudamos a Valencia en primavera, ¿sabes?", "La semana pasada llovió mucho, ¿verdad?",
             "Wir haben zwei Häuser am See gekauft.", "Der Hund vom Nachbarn hat wieder die ganze Nacht gebellt."]
    with LayeredMemory.embedded(tmp_path, embedder="none") as mem:  # BM25 alone: the analyzer decides
        mem.add_messages([{"message_id": f"m{i}", "chat_id": f"c{i}", "user_id": "u", "content": t, "create_time": t0 + timedelta(minutes=i)}
                          for i, t in enumerate(texts)])
        mem.flush()
        assert [h.id for h in mem.search("¿Cuándo nos mudaremos?", k=2, route="bm25").hits] == ["m0"]
        assert [h.id for h in mem.search("Wie groß ist das Haus?", k=2, route="bm25").hits] == ["m2"]
