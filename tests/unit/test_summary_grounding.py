"""Issue 24: the summary evaluator tells summaries of the same chat apart. Crafted three-session chats in
en / ru / zh (the same two people, names that come back every session): scored against the middle
session's messages, with the other two as the background, its own summary beats the first session's
summary (same people, same style); a claim the messages do not support lowers the score and is named."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from layered_memory.config import SummaryQualitySettings
from layered_memory.evaluation import Background, SummaryEvaluator, support_penalty
from layered_memory.grounding import Grounding
from layered_memory.retrieval.analyzer import Analyzer
from layered_memory.testing import HashEmbedder


def session(name: str, day: int, turns: list[tuple[str, str]]) -> list[dict]:
    t0 = datetime(2024, 3, day, 18, 0, tzinfo=timezone.utc)
    return [{"message_id": f"{name}-{i}", "chat_id": "c1", "user_name": who, "content": text, "create_time": t0 + timedelta(minutes=i)}
            for i, (who, text) in enumerate(turns)]


# (three sessions, the middle one's summary, the first one's summary, a claim nobody made)
CHATS = {
    "en": (
        [session("s1", 2, [("Anna", "Hi Boris! Big news: I start at Lumen Labs on Monday."),
                           ("Boris", "Congrats Anna! Rex says congrats too, he is wagging his tail."),
                           ("Anna", "Lumen Labs builds solar batteries, I will be a data analyst there."),
                           ("Boris", "Let's celebrate. Rex and I could come to your place on Friday."),
                           ("Anna", "Friday works. I'll bake the lemon cake.")]),
         session("s2", 9, [("Boris", "Hi Anna! The kitchen renovation started today, total chaos."),
                           ("Anna", "Oh no, how is Rex coping with the noise?"),
                           ("Boris", "Rex hides under the bed. The contractor quoted 4,000 euros for the kitchen."),
                           ("Anna", "That's a lot. Did you pick the tiles?"),
                           ("Boris", "Grey ceramic tiles, and the plumber comes on Thursday."),
                           ("Anna", "Lumen Labs is busy too, but I can help you paint on Sunday."),
                           ("Boris", "Thanks Anna, Rex will be happy to see you.")]),
         session("s3", 16, [("Anna", "Hi Boris, I signed up for the Berlin marathon in September!"),
                            ("Boris", "Wow Anna. Rex would love to run with you."),
                            ("Anna", "My coach at the Lumen Labs running club says 16 weeks of training."),
                            ("Boris", "Take Rex on the short runs then."),
                            ("Anna", "Deal. The first long run is 18 km on Saturday.")])],
        "Boris's kitchen renovation has started: the contractor quoted 4,000 euros, they chose grey ceramic tiles "
        "and the plumber comes on Thursday. Anna offered to help paint on Sunday.",
        "Anna told Boris she starts at Lumen Labs on Monday as a data analyst. Boris and Rex will come to celebrate "
        "on Friday and Anna will bake a lemon cake.",
        "Boris also bought a villa in Nice for 900,000 euros.",
    ),
    "ru": (
        [session("s1", 2, [("Анна", "Борис, привет! Новость: с понедельника я работаю в Люмен Лабс."),
                           ("Борис", "Поздравляю, Анна! Рекс тоже радуется, виляет хвостом."),
                           ("Анна", "Люмен Лабс делает солнечные батареи, я буду там аналитиком данных."),
                           ("Борис", "Надо отметить. Мы с Рексом можем зайти к тебе в пятницу."),
                           ("Анна", "Пятница подходит. Я испеку лимонный пирог.")]),
         session("s2", 9, [("Борис", "Анна, привет! Сегодня начался ремонт кухни, полный хаос."),
                           ("Анна", "Ой, а как Рекс переносит шум?"),
                           ("Борис", "Рекс прячется под кроватью. Подрядчик насчитал за кухню 4000 евро."),
                           ("Анна", "Дорого. Плитку уже выбрали?"),
                           ("Борис", "Серая керамическая плитка, а сантехник придёт в четверг."),
                           ("Анна", "В Люмен Лабс тоже завал, но в воскресенье могу помочь покрасить стены."),
                           ("Борис", "Спасибо, Анна, Рекс будет рад тебя видеть.")]),
         session("s3", 16, [("Анна", "Борис, привет! Я записалась на Берлинский марафон в сентябре!"),
                            ("Борис", "Ничего себе, Анна. Рекс с радостью побегал бы с тобой."),
                            ("Анна", "Тренер из бегового клуба Люмен Лабс говорит, нужно 16 недель подготовки."),
                            ("Борис", "Тогда бери Рекса на короткие пробежки."),
                            ("Анна", "Договорились. Первая длинная пробежка 18 км в субботу.")])],
        "У Бориса начался ремонт кухни: подрядчик насчитал 4000 евро, выбрали серую керамическую плитку, "
        "сантехник придёт в четверг. Анна предложила помочь покрасить стены в воскресенье.",
        "Анна рассказала Борису, что с понедельника работает в Люмен Лабс аналитиком данных. Борис с Рексом "
        "зайдут в пятницу отметить, Анна испечёт лимонный пирог.",
        "Ещё Борис купил виллу в Ницце за 900000 евро.",
    ),
    "zh": (
        [session("s1", 2, [("王芳", "李强,好消息!我下周一开始在光明实验室上班。"),
                           ("李强", "恭喜王芳!旺财也在摇尾巴祝贺你。"),
                           ("王芳", "光明实验室做太阳能电池,我在那里当数据分析师。"),
                           ("李强", "我们庆祝一下吧。周五我带旺财去你家。"),
                           ("王芳", "周五可以。我来烤柠檬蛋糕。")]),
         session("s2", 9, [("李强", "王芳,今天厨房装修开工了,一团乱。"),
                           ("王芳", "哎呀,旺财受得了噪音吗?"),
                           ("李强", "旺财躲在床底下。装修队给厨房报价四千欧元。"),
                           ("王芳", "好贵。瓷砖选好了吗?"),
                           ("李强", "灰色的陶瓷瓷砖,水管工周四来。"),
                           ("王芳", "光明实验室也很忙,不过周日我可以帮你刷墙。"),
                           ("李强", "谢谢王芳,旺财见到你会很高兴。")]),
         session("s3", 16, [("王芳", "李强,我报名了九月的柏林马拉松!"),
                            ("李强", "哇,王芳。旺财肯定想跟你一起跑。"),
                            ("王芳", "光明实验室跑步俱乐部的教练说要训练十六周。"),
                            ("李强", "那短距离就带上旺财吧。"),
                            ("王芳", "一言为定。周六第一次长跑十八公里。")])],
        "李强家的厨房装修开工了:装修队报价四千欧元,选了灰色陶瓷瓷砖,水管工周四来。王芳周日帮忙刷墙。",
        "王芳告诉李强她周一开始在光明实验室当数据分析师。李强周五带旺财去庆祝,王芳烤柠檬蛋糕。",
        "李强还在尼斯花九十万欧元买了一栋别墅。",
    ),
}


@pytest.fixture(params=[None, "hash"], ids=["lexical", "embedder"])
def evaluator(request) -> SummaryEvaluator:
    return SummaryEvaluator(Analyzer(), embedder=HashEmbedder(dim=256) if request.param else None)


@pytest.mark.parametrize("lang", list(CHATS))
def test_the_sessions_own_summary_beats_another_sessions(evaluator, lang):
    (s1, s2, s3), own, other, _ = CHATS[lang]
    mine = evaluator.evaluate(own, s2, background=s1 + s3)
    theirs = evaluator.evaluate(other, s2, background=s1 + s3)
    assert mine["overall_score"] > theirs["overall_score"] + 0.05
    assert mine["coverage"] > theirs["coverage"] and mine["support"] > theirs["support"]
    assert mine["details"]["background_docs"] == 1  # ten messages: one chunk


@pytest.mark.parametrize("lang", list(CHATS))
def test_names_of_every_session_weigh_little(lang):
    (s1, s2, s3), _, _, _ = CHATS[lang]
    a = Analyzer()
    ground = Grounding(a, s2, Background.build(a, s1 + s3))
    recurring = {"en": "rex", "ru": a.terms("Рекс")[0], "zh": "旺财"}[lang]
    only_here = {"en": "plumber", "ru": a.terms("сантехник")[0], "zh": "瓷砖"}[lang]
    assert ground.idf(only_here) > 1.3 * ground.idf(recurring)
    assert list(Grounding(a, s2).weights(3))  # no background: every term weighs the same, still ranked by tf


@pytest.mark.parametrize("lang", list(CHATS))
def test_an_unsupported_claim_lowers_the_score_and_is_named(evaluator, lang):
    (s1, s2, s3), own, _, claim = CHATS[lang]
    sep = "" if lang == "zh" else " "
    clean = evaluator.evaluate(own, s2, background=s1 + s3)
    claimed = evaluator.evaluate(own + sep + claim, s2, background=s1 + s3)
    assert claimed["overall_score"] < clean["overall_score"]
    assert claimed["support"] < clean["support"]
    if lang != "zh":  # names are told by their capitals; Chinese has none, its claim counts as unsupported terms
        assert {"Nice", "Ницце"} & set(claimed["details"]["support"]["unsupported"])
        assert claimed["details"]["support_penalty"] < clean["details"]["support_penalty"]
    assert clean["details"]["support"]["unsupported"] == []


def test_the_messages_dates_and_speakers_support_a_summary():
    (_, s2, _), _, _, _ = CHATS["en"]
    ev = SummaryEvaluator(Analyzer())
    right = ev.evaluate("On 9 March 2024 Boris told Anna about the kitchen renovation.", s2)
    wrong = ev.evaluate("On 14 June 2023 Boris told Anna about the kitchen renovation.", s2)
    assert right["details"]["support"]["unsupported"] == []
    assert set(wrong["details"]["support"]["unsupported"]) >= {"14", "June", "2023"}
    assert right["overall_score"] > wrong["overall_score"]
    as_strings = ev.evaluate("On 9 March 2024 Boris told Anna about the kitchen renovation.", [m["content"] for m in s2])
    assert "2024" in as_strings["details"]["support"]["unsupported"]  # plain strings carry no date


def test_the_background_leaves_out_the_span_and_can_be_built_once():
    (s1, s2, s3), own, _, _ = CHATS["en"]
    ev = SummaryEvaluator(Analyzer())
    rest = ev.evaluate(own, s2, background=s1 + s3)
    whole = ev.evaluate(own, s2, background=s1 + s2 + s3)  # the whole chat: the span's own messages are skipped
    built = ev.evaluate(own, s2, background=Background.build(Analyzer(), s1 + s3))
    for r in (whole, built):
        assert {k: r[k] for k in ("coverage", "relevance", "support", "overall_score")} == {
            k: rest[k] for k in ("coverage", "relevance", "support", "overall_score")}
    texts = ev.evaluate(own, [m["content"] for m in s2], background=[m["content"] for m in s1 + s2 + s3])
    assert texts["details"]["background_docs"] == 1  # strings: the span's texts are left out


def test_grounded_off_scores_the_plain_weighted_mean_without_background():
    """``grounded=False`` is the evaluator as it was before issue 24."""
    (s1, s2, s3), own, other, _ = CHATS["en"]
    ev = SummaryEvaluator(Analyzer(), settings=SummaryQualitySettings(grounded=False))
    r = ev.evaluate(other, s2, background=s1 + s3)
    assert r["details"]["background_docs"] == 0 and r["details"]["support_penalty"] == 1.0
    assert r["overall_score"] == r["details"]["weighted_mean"]
    # the failure issue 24 reported: the other session's (more coherent) summary wins without grounding
    assert r["overall_score"] > ev.evaluate(own, s2, background=s1 + s3)["overall_score"]


def test_support_penalty():
    assert support_penalty(1.0) == 1.0 and support_penalty(0.4) == 1.0
    assert support_penalty(0.2) == pytest.approx(0.25)  # (0.2 / 0.4) ** 2
    assert support_penalty(1.0, claims=2) == pytest.approx(0.81)
    assert support_penalty(0.0) == 0.0
