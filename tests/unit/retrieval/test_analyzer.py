
import pytest

from layered_memory.retrieval import Analyzer, BM25Scorer
from layered_memory.retrieval.analyzer import with_prefixes


@pytest.fixture(scope="module")
def an():
    return Analyzer()


def test_english_stemming_matches_inflections(an):
    assert set(an.terms("installing")) == set(an.terms("installed")) == set(an.terms("Install"))
    assert an.terms("The paintings") == an.terms("painting")


def test_russian_stemming_matches_inflections(an):
    assert an.terms("установить") == an.terms("установка") == an.terms("Установку")
    assert an.terms("проверка") == an.terms("проверить")
    assert an.terms("серверы") == an.terms("сервер")
    assert an.terms("ёлка") == an.terms("елка")


def test_stopwords_dropped_but_kept_when_alone(an):
    assert an.terms("the cat and a dog") == ["cat", "dog"]
    assert an.terms("и кот") == ["кот"]
    assert an.terms("who is it")  # a stopword-only query still has terms


def test_mixed_language_text(an):
    terms = an.terms("Я installed новый сервер yesterday")
    assert "instal" in terms and "сервер" in terms and "yesterday" in terms


def test_nfkc_and_casefold(an):
    assert an.terms("ＡＢＣ１２３") == an.terms("abc123")
    assert an.terms("STRASSE") == an.terms("straße")


@pytest.mark.parametrize(
    "token, findable_by",
    [
        ("E4012", ["E4012", "e4012"]),
        ("psycopg2.OperationalError", ["psycopg2.OperationalError", "psycopg2", "OperationalError", "operational error"]),
        ("/etc/app/config.yaml", ["/etc/app/config.yaml", "config.yaml", "config", "yaml"]),
        ("CrashLoopBackOff", ["CrashLoopBackOff", "crashloopbackoff", "crash loop"]),
        ("snake_case_name", ["snake_case_name", "snake", "case"]),
        ("v1.2.3", ["v1.2.3", "1.2.3", "1.2"]),
        ("john.doe@example.com", ["john.doe@example.com", "example.com", "john"]),
        ("https://docs.example.com/guide?x=1", ["https://docs.example.com/guide?x=1", "docs.example.com", "guide"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
    ],
)
def test_technical_tokens_whole_and_parts(an, token, findable_by):
    doc = set(an.terms(f"log line with {token} inside"))
    assert token.casefold().lstrip("/") in doc
    for q in findable_by:
        q_terms = an.terms(q)
        assert q_terms and set(q_terms) <= doc, (q, q_terms, doc)


def test_whole_technical_token_outranks_parts():
    an = Analyzer()
    docs = ["crash loop back off in the pod", "pod status CrashLoopBackOff again", "nothing relevant"]
    scorer = BM25Scorer([an.terms(d) for d in docs])
    top, _ = scorer.top_k(an.terms("CrashLoopBackOff"), 3)
    assert top[0] == 1


def test_cjk_bigrams(an):
    assert an.terms("高铁票") == ["高铁", "铁票", "高", "铁", "票"]
    assert Analyzer(cjk_unigrams=False).terms("高铁票") == ["高铁", "铁票"]
    assert an.terms("票") == ["票"]
    assert an.terms("我 买 票") == ["我", "买", "票"]
    assert "東京" in an.terms("東京の天気")


@pytest.mark.parametrize("unigrams", [True, False])
def test_chinese_query_prefers_exact_bigrams_over_hard_negative(unigrams):
    an = Analyzer(cjk_unigrams=unigrams)
    docs = ["我昨天买了火车票去北京", "我昨天买了高铁票去上海", "今天天气很好"]
    scorer = BM25Scorer([an.terms(d) for d in docs])
    top, _ = scorer.top_k(an.terms("高铁票"), 3)
    assert top[0] == 1
    top, _ = scorer.top_k(an.terms("火车票"), 3)
    assert top[0] == 0


def test_chinese_split_word_found_with_unigrams(an):
    docs = ["我昨天买了两张票", "我昨天买了两本书", "今天天气很好"]
    scorer = BM25Scorer([an.terms(d) for d in docs])
    assert scorer.top_k(an.terms("买票"), 3)[0][0] == 0


def test_korean_words_whole_and_as_syllable_bigrams(an):
    assert an.terms("서울에서 회의가") == ["서울에서", "서울", "울에", "에서", "회의가", "회의", "의가"]
    assert an.terms("서울") == ["서울"]  # a two-syllable word is its own bigram
    assert Analyzer(hangul_bigrams=False).terms("서울에서 회의가") == ["서울에서", "회의가"]
    assert an.terms("Redis에서 에러") == ["redi", "에서", "에러"]  # split from the Latin word written against it
    assert set(an.terms("서울")) <= set(an.terms("다음 주에 서울에서 만나요"))


def test_a_korean_question_finds_its_noun_behind_another_particle(an):
    docs = ["다음 주에 서울에서 회의가 있어요", "다음 주에 부산에서 회의가 있어요", "오늘 날씨가 좋네요"]
    scorer = BM25Scorer([an.terms(d) for d in docs])
    assert scorer.top_k(an.terms("서울 회의는 언제예요?"), 3)[0][0] == 0
    whole = Analyzer(hangul_bigrams=False)  # whole words: "서울" meets neither "서울에서" nor anything else
    assert BM25Scorer([whole.terms(d) for d in docs]).get_scores(whole.terms("서울")).max() == 0


def test_a_word_keeps_its_vowel_signs_and_points(an):
    """Devanagari vowel signs, Tamil's virama, Arabic harakat and Hebrew points are combining marks, which a plain
    word regex does not match: the word fell apart at each of them (किताब -> क, त, ब)."""
    assert an.terms("किताब") == ["किताब"]
    assert an.terms("किताबें")[:2] == ["किताबें", "किताब"]  # the plural, and its Hindi stem
    assert an.terms("வணக்கம் நண்பரே") == ["வணக்கம்", "நண்பரே"]
    assert an.terms("كِتَابٌ جَدِيدٌ") == an.terms("كتاب جديد") == ["كتاب", "جديد"]  # vowelled and plain meet
    assert an.terms("שָׁלוֹם") == an.terms("שלום") == ["שלום"]
    assert an.terms("Redis में error") == ["redi", "में", "म", "error"]  # split from the Latin word beside it
    assert an.terms("ދިވެހި ބަސް") == ["ދިވެހި", "ބަސް"] and an.terms("ܫܠܡܐ ܥܠܡܐ") == ["ܫܠܡܐ", "ܥܠܡܐ"]  # Thaana, Syriac: no stem


def test_arabic_persian_hindi_and_greek_words_meet_their_other_forms(an):
    assert "مدرس" in an.terms("المدرسة") and "مدرس" in an.terms("مدرسة")  # the article and the feminine ending
    assert "کتاب" in an.terms("کتاب‌ها")  # a Persian plural after a zero-width non-joiner
    assert set(an.terms("लड़कों")) & set(an.terms("लड़के"))
    assert an.terms("ταξιδιού") == an.terms("ταξίδι") == ["ταξιδ"]
    assert an.terms("ٹرین") == ["ٹرین"]  # Urdu: no Snowball stemmer fits, the word stays whole


def test_thai_is_read_as_cluster_pairs_so_a_word_is_found_inside_a_run(an):
    assert an.terms("ร้านอาหาร") == ["ร้า", "าน", "นอ", "อา", "าห", "หา", "าร"]  # a vowel or tone mark stays on its letter
    docs = ["เมื่อวานฉันไปกินข้าวที่ร้านอาหารญี่ปุ่น", "เมื่อวานฉันไปซื้อของที่ห้างสรรพสินค้า", "วันนี้อากาศดี"]
    scorer = BM25Scorer([an.terms(d) for d in docs])
    assert scorer.top_k(an.terms("ร้านอาหาร"), 3)[0][0] == 0
    text, spans = an.spans("ร้านอาหาร ดี")
    assert [(s, e) for s, e, _ in spans] == [(0, 9), (10, 12)] and spans[1][2] == ("ดี",)


def test_detect_lang(an):
    assert an.detect_lang("I installed the server yesterday") == "en"
    assert an.detect_lang("Я установил сервер вчера") == "ru"
    assert an.detect_lang("我昨天买了高铁票") == "zh"
    assert an.detect_lang("東京の天気は晴れです") == "ja"
    assert an.detect_lang("Bonjour, je suis très content") == "other"
    assert an.detect_lang("안녕하세요") == "other"
    assert an.detect_lang("") == "other"


def test_spans_point_into_text(an):
    text, spans = an.spans("Installing psycopg2 高铁票 서울에서")
    assert [text[s:e] for s, e, _ in spans] == ["Installing", "psycopg2", "高铁", "铁票", "서울에서"]
    assert spans[0][2] == ("instal",) and spans[-1][2] == ("서울에서", "서울", "울에", "에서")


def test_bm25_adds_a_russian_stems_prefix_and_nothing_else(an):
    """``with_prefixes``: a Cyrillic stem of six letters or more also counts by its first six (marked ``*``),
    so a derived word meets its root; English, codes, CJK and short stems are left as they are."""
    question, answer = an.terms("Когда переезжает Вера?"), an.terms("С переездом решено: Лиссабон")
    assert not set(question) & set(answer) - {"вер"}  # Snowball leaves the verb and the noun apart
    assert "переез*" in set(with_prefixes(question)) & set(with_prefixes(answer))
    assert with_prefixes(an.terms("пробежала")) == ["пробежа", "пробеж*"]
    assert with_prefixes(an.terms("пробежку")) == ["пробеж", "пробеж*"]  # the -ка rule first, then the prefix
    for text in ("relocating to Lisbon", "psycopg2.OperationalError E4012", "我们买了高铁票", "дом сад кот"):
        assert with_prefixes(an.terms(text)) == an.terms(text)
    assert not any(t.endswith("*") for t in an.terms("Когда переезжает Вера?"))  # terms() itself is unchanged
