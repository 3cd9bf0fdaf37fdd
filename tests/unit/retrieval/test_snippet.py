import pytest

from layered_memory.retrieval import Analyzer, make_snippet


@pytest.fixture(scope="module")
def an():
    return Analyzer()


FILLER = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 6


def test_short_text_returned_whole(an):
    assert make_snippet("hello world", "world", an) == "hello world"


def test_window_around_best_match_with_ellipses(an):
    text = FILLER + "The deploy failed with CrashLoopBackOff after installing psycopg2. " + FILLER
    snip = make_snippet(text, an.terms("installed psycopg2 crash"), an, width=80)
    assert "psycopg2" in snip and "CrashLoopBackOff" in snip
    assert snip.startswith("…") and snip.endswith("…")
    assert len(snip) <= 82


def test_prefers_window_with_most_distinct_terms(an):
    text = "server " + FILLER + "the server crashed with E4012 at night " + FILLER + "server"
    snip = make_snippet(text, "server E4012", an, width=60)
    assert "E4012" in snip and "server" in snip


def test_cuts_at_word_boundaries(an):
    text = FILLER + "needle " + FILLER
    snip = make_snippet(text, "needle", an, width=50)
    inner = snip.strip("…")
    for word in inner.split():
        assert word.strip(".,") in {"Lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "needle"}


def test_cyrillic(an):
    text = "Мы долго обсуждали погоду и планы. " * 5 + "Потом решили установить новый сервер. " + "Дальше был ужин. " * 5
    snip = make_snippet(text, "установка сервера", an, width=60)
    assert "установить новый сервер" in snip and snip.startswith("…")


def test_a_russian_derived_word_is_a_match(an):
    """The snippet finds what BM25 found: "переезжает" meets "переездом" by the stems' prefix."""
    text = "Мы долго обсуждали погоду и планы. " * 5 + "С переездом решено: Лиссабон, с октября. " + "Дальше был ужин. " * 5
    snip = make_snippet(text, "Когда переезжает Вера?", an, width=60)
    assert "С переездом решено: Лиссабон" in snip and snip.startswith("…")


def test_cjk(an):
    text = "今天天气很好我们去公园散步了" * 5 + "明天我要买高铁票去上海" + "晚上吃了火锅非常开心" * 5
    snip = make_snippet(text, "高铁票", an, width=20)
    assert "高铁票" in snip and snip.startswith("…") and snip.endswith("…")
    assert len(snip.strip("…")) <= 20


def test_no_match_gives_start(an):
    snip = make_snippet(FILLER, "zebra", an, width=40)
    assert snip.startswith("Lorem") and snip.endswith("…")


def test_bad_width(an):
    with pytest.raises(ValueError):
        make_snippet("x", "x", an, width=0)


def test_snippet_keeps_the_original_characters():
    text = "我下个月要去上海出差，帮我订高铁票，二等座就行。" * 12
    snippet = make_snippet(text, "高铁票", Analyzer(), width=40)
    assert "高铁票" in snippet and "，" in snippet and "," not in snippet
