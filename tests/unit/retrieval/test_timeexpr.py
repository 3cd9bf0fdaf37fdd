"""Time expressions of queries in en / ru / zh (and es / pt / fr / de / it) resolved against an anchor time."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from layered_memory.retrieval.timeexpr import resolve_time

NOW = datetime(2024, 3, 14, 15, 0, tzinfo=timezone.utc)  # a Thursday


def day(y, m, d):
    return datetime(y, m, d, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("query", "start", "last_day"),
    [
        ("what did I eat yesterday?", day(2024, 3, 13), day(2024, 3, 13)),
        ("the day before yesterday we met", day(2024, 3, 12), day(2024, 3, 12)),
        ("what did we plan last week", day(2024, 3, 4), day(2024, 3, 10)),
        ("anything this week?", day(2024, 3, 11), day(2024, 3, 17)),
        ("what happened last month", day(2024, 2, 1), day(2024, 2, 29)),
        ("three days ago I said", day(2024, 3, 11), day(2024, 3, 11)),
        ("2 weeks ago", day(2024, 2, 26), day(2024, 3, 3)),
        ("what did Anna do in May 2023?", day(2023, 5, 1), day(2023, 5, 31)),
        ("camping in June", day(2023, 6, 1), day(2023, 6, 30)),  # the latest June not after now
        ("what did she say on 7 July, 2023?", day(2023, 7, 7), day(2023, 7, 7)),
        ("on October 13, 2023 she painted", day(2023, 10, 13), day(2023, 10, 13)),
        ("the trip of 2022-08-05", day(2022, 8, 5), day(2022, 8, 5)),
        ("how often in 2023?", day(2023, 1, 1), day(2023, 12, 31)),
        ("что я ел вчера", day(2024, 3, 13), day(2024, 3, 13)),
        ("позавчера мы созвонились", day(2024, 3, 12), day(2024, 3, 12)),
        ("что обсуждали на прошлой неделе", day(2024, 3, 4), day(2024, 3, 10)),
        ("в прошлом месяце", day(2024, 2, 1), day(2024, 2, 29)),
        ("два дня назад", day(2024, 3, 12), day(2024, 3, 12)),
        ("что было 5 мая 2023", day(2023, 5, 5), day(2023, 5, 5)),
        ("в марте 2023 года", day(2023, 3, 1), day(2023, 3, 31)),
        ("我昨天吃了什么", day(2024, 3, 13), day(2024, 3, 13)),
        ("上周我们聊了什么", day(2024, 3, 4), day(2024, 3, 10)),
        ("上个月的会议", day(2024, 2, 1), day(2024, 2, 29)),
        ("去年的旅行", day(2023, 1, 1), day(2023, 12, 31)),
        ("三天前", day(2024, 3, 11), day(2024, 3, 11)),
        ("2023年5月7日的报告", day(2023, 5, 7), day(2023, 5, 7)),
        ("2023年5月", day(2023, 5, 1), day(2023, 5, 31)),
        ("¿Qué instrumento estudia Lucía (en febrero de 2024)?", day(2024, 2, 1), day(2024, 2, 29)),
        ("Welchen Lauf hat Lena geschafft (im März 2023)?", day(2023, 3, 1), day(2023, 3, 31)),
        ("Quel instrument apprend-il (en mars 2024) ?", day(2024, 3, 1), day(2024, 3, 31)),
        ("Que instrumento ela estuda (em março de 2023)?", day(2023, 3, 1), day(2023, 3, 31)),
        ("Cosa è successo a marzo 2023?", day(2023, 3, 1), day(2023, 3, 31)),
        ("el 7 de mayo de 2023", day(2023, 5, 7), day(2023, 5, 7)),
        ("am 7. Mai 2023", day(2023, 5, 7), day(2023, 5, 7)),
        ("fuimos de acampada en junio", day(2023, 6, 1), day(2023, 6, 30)),  # the latest June not after now
        ("¿Qué comí ayer?", day(2024, 3, 13), day(2024, 3, 13)),
        ("Was haben wir vorgestern besprochen?", day(2024, 3, 12), day(2024, 3, 12)),
        ("o que eu comi ontem", day(2024, 3, 13), day(2024, 3, 13)),
        ("la semana pasada", day(2024, 3, 4), day(2024, 3, 10)),
        ("letzten Monat", day(2024, 2, 1), day(2024, 2, 29)),
        ("l'année dernière", day(2023, 1, 1), day(2023, 12, 31)),
        ("la settimana scorsa", day(2024, 3, 4), day(2024, 3, 10)),
        ("diese Woche", day(2024, 3, 11), day(2024, 3, 17)),
        ("el fin de semana pasado", day(2024, 3, 9), day(2024, 3, 10)),
    ],
)
def test_resolves(query, start, last_day):
    w = resolve_time(query, NOW)
    assert w is not None, query
    assert w.start == start
    assert w.end.date() == last_day.date() and w.end > last_day


@pytest.mark.parametrize(
    "query",
    ["What may I bring to the party?", "Tell me about the march against taxes", "маяк на острове", "a second opinion",
     "how many pods crashed", "我喜欢喝绿茶", "Что подарили Анне?",
     "Was haben wir hier besprochen?", "¿Qué dijo Julio?", "life on Mars", "Mai Tai", "Wie heißt die Nichte von Mia?"],
)
def test_no_time_expression(query):
    assert resolve_time(query, NOW) is None


def test_distance_decays_outside_the_window():
    w = resolve_time("last week", NOW)
    assert w.distance(day(2024, 3, 6)) == 0
    assert 0 < w.distance(day(2024, 3, 12)) < w.distance(day(2024, 3, 20))


def test_naive_anchor_is_utc():
    assert resolve_time("yesterday", datetime(2024, 3, 14, 15)).start == day(2024, 3, 13)
