"""The seed 001 3.2.3 summary evaluator on crafted en / ru / zh cases: a summary that omits the key fact
covers less than one that keeps it, an off-topic summary is less relevant, weights are the seed's unless
settings change them, and the LLM judge is used only with a model (its weight redistributed otherwise)."""

from __future__ import annotations

import pytest

from layered_memory.config import LayeredMemorySettings, SummaryQualitySettings
from layered_memory.evaluation import SummaryEvaluator, parse_judgement, split_sentences
from layered_memory.providers import Completion, TokenUsage, as_chat_model
from layered_memory.retrieval.analyzer import Analyzer
from layered_memory.testing import HashEmbedder

# (messages, title, keeps the key fact, omits it, off-topic)
CASES = {
    "en": (
        ["Hi! How was your week?", "Great. We booked the flight to Lisbon, it leaves on May 14 at 7:40 from Berlin.",
         "Nice, Lisbon in May is lovely. Did you book a hotel?", "Yes, a small hotel near Alfama for four nights.",
         "Don't forget the travel insurance!"],
        "Trip to Lisbon",
        "The flight to Lisbon leaves Berlin on May 14 at 7:40. They booked a hotel near Alfama for four nights.",
        "They talked about a trip and a hotel. Someone mentioned travel insurance.",
        "The laptop crashes after the graphics driver update. Rolling back the driver may help.",
    ),
    "ru": (
        ["Привет! Когда встреча с Петровым?", "Встречу с Петровым перенесли на 15 марта, она будет в Казани в офисе на Баумана.",
         "Хорошо, я возьму билеты на поезд до Казани.", "Не забудь подготовить отчёт по продажам к встрече."],
        "Встреча с Петровым в Казани",
        "Встречу с Петровым перенесли на 15 марта, она пройдёт в Казани. Нужно купить билеты на поезд и подготовить отчёт по продажам.",
        "Обсудили встречу. Нужно купить билеты и подготовить отчёт.",
        "У Ольги сломалась машина, двигатель не заводится. Ей посоветовали автосервис.",
    ),
    "zh": (
        ["周末我们去杭州玩吧？", "好啊，我订了3月15日的高铁票，早上8点出发。", "杭州西湖很漂亮，我们住在湖边的酒店。", "记得带雨伞，天气预报说有雨。"],
        "杭州周末旅行",
        "他们3月15日早上8点坐高铁去杭州，住在西湖边的酒店。要带雨伞。",
        "他们计划周末出去玩，要带雨伞。",
        "我的电脑更新以后一直死机，重装显卡驱动可能有用。",
    ),
}


@pytest.fixture(params=[None, "hash"], ids=["lexical", "embedder"])
def evaluator(request) -> SummaryEvaluator:
    return SummaryEvaluator(Analyzer(), embedder=HashEmbedder(dim=256) if request.param else None)


@pytest.mark.parametrize("lang", list(CASES))
def test_omitting_the_key_fact_lowers_coverage(evaluator, lang):
    msgs, title, keeps, omits, _ = CASES[lang]
    good, bad = evaluator.evaluate(keeps, msgs, title), evaluator.evaluate(omits, msgs, title)
    assert good["coverage"] > bad["coverage"] + 0.2
    assert good["details"]["term_coverage"] > bad["details"]["term_coverage"]
    assert good["overall_score"] > bad["overall_score"]


@pytest.mark.parametrize("lang", list(CASES))
def test_an_off_topic_summary_is_less_relevant(evaluator, lang):
    msgs, title, keeps, _, off = CASES[lang]
    good, wrong = evaluator.evaluate(keeps, msgs, title), evaluator.evaluate(off, msgs, title)
    assert good["relevance"] > wrong["relevance"]
    assert good["coverage"] > wrong["coverage"] and good["overall_score"] > wrong["overall_score"]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_named_entities_count_apart_from_terms(lang):
    msgs, title, keeps, _, _ = CASES[lang]
    ev = SummaryEvaluator(Analyzer())
    full = ev.evaluate(keeps, msgs, title)
    assert full["details"]["entities"] >= 4 and full["details"]["entity_coverage"] >= 0.75  # ru leaves out the street
    # the same summary without the date keeps the terms but loses an entity
    no_date = keeps.replace("May 14 at 7:40", "soon").replace("15 марта", "скоро")
    assert ev.evaluate(no_date, msgs, title)["details"]["entity_coverage"] < full["details"]["entity_coverage"]


def test_without_a_model_the_llm_weight_is_redistributed():
    msgs, title, keeps, _, _ = CASES["en"]
    r = SummaryEvaluator(Analyzer()).evaluate(keeps, msgs, title)
    assert r["llm_evaluation"] == {"score": None, "skipped": "no chat model configured"}
    assert r["redistributed"] == ["llm_evaluation"]
    assert r["weights"] == pytest.approx({"coverage": 0.3 / 0.7, "coherence": 0.2 / 0.7, "relevance": 0.2 / 0.7}, abs=1e-4)
    expected = (0.3 * r["coverage"] + 0.2 * r["coherence"] + 0.2 * r["relevance"]) / 0.7
    assert r["overall_score"] == pytest.approx(expected, abs=1e-3)


def test_one_sentence_has_no_coherence_to_measure():
    msgs, title, _, _, _ = CASES["en"]
    r = SummaryEvaluator(Analyzer()).evaluate("The flight to Lisbon leaves on May 14.", msgs, title)
    assert r["coherence"] is None and set(r["redistributed"]) == {"coherence", "llm_evaluation"}
    assert r["weights"] == pytest.approx({"coverage": 0.6, "relevance": 0.4}, abs=1e-4)


def test_repetition_is_not_coherence(evaluator):
    msgs, title, keeps, _, _ = CASES["en"]
    first = split_sentences(keeps)[0]
    assert evaluator.evaluate(f"{first} {first} {first}", msgs, title)["coherence"] == 0.0


def test_the_judge_is_asked_with_a_model_and_counted_in_usage():
    msgs, title, keeps, _, _ = CASES["en"]
    seen = []

    def judge(prompt: str) -> str:
        seen.append(prompt)
        return 'Sure: {"score": 9, "reason": "keeps the flight and the hotel"}'

    model = as_chat_model(judge)
    r = SummaryEvaluator(Analyzer(), model=model, operation_prefix="topic_").evaluate(keeps, msgs, title)
    assert r["llm_evaluation"] == {"score": 0.9, "reason": "keeps the flight and the hotel"}
    assert r["redistributed"] == [] and r["weights"]["llm_evaluation"] == pytest.approx(0.3)
    assert "Trip to Lisbon" in seen[0] and "Alfama" in seen[0] and keeps in seen[0]
    usage = model.usage.by_operation["topic_summary_evaluation"]
    assert usage.calls == 1 and usage.prompt_tokens > 0


def test_a_judge_without_a_score_is_redistributed_not_zero():
    msgs, title, keeps, _, _ = CASES["en"]

    class Model:
        name = "scripted"

        def complete(self, prompt, *, system=None, operation=None):
            return Completion("I cannot rate this.", TokenUsage(10, 4))

    r = SummaryEvaluator(Analyzer(), model=Model()).evaluate(keeps, msgs, title)
    assert r["llm_evaluation"]["score"] is None and "llm_evaluation" in r["redistributed"]


@pytest.mark.parametrize("answer, score", [
    ('{"score": 7, "reason": "ok"}', 0.7), ('```json\n{"score": 10}\n```', 1.0), ("Score: 4", 0.4),
    ('{"score": 0.85}', 0.85), ('{"score": 85}', 0.85), ('{"score": 1}', 0.1), ("great summary", None), ('{"score": 700}', None),
])
def test_parse_judgement(answer, score):
    got, _ = parse_judgement(answer)
    assert got == (pytest.approx(score) if score is not None else None)


def test_weights_come_from_settings():
    msgs, title, keeps, _, _ = CASES["ru"]
    s = SummaryQualitySettings(coverage_weight=1.0, coherence_weight=0.0, relevance_weight=0.0, llm_weight=0.0)
    r = SummaryEvaluator(Analyzer(), settings=s).evaluate(keeps, msgs, title)
    assert r["overall_score"] == r["coverage"] and r["weights"] == {"coverage": 1.0}
    with pytest.raises(ValueError, match="weights are all 0"):
        SummaryQualitySettings(coverage_weight=0, coherence_weight=0, relevance_weight=0, llm_weight=0)
    env = LayeredMemorySettings.model_validate({"summary_quality": {"retry_below": 0.5, "llm_judge": False}})
    assert env.summary_quality.retry_below == 0.5 and not env.summary_quality.llm_judge


def test_without_a_title_the_keywords_stand_in():
    msgs, _, keeps, _, off = CASES["zh"]
    ev = SummaryEvaluator(Analyzer())
    good, wrong = ev.evaluate(keeps, msgs, None), ev.evaluate(off, msgs, None)
    assert good["details"]["relevance_basis"] == "keywords"
    assert good["relevance"] > wrong["relevance"]


def test_empty_and_garbage_summaries_score_low():
    msgs, title, keeps, _, _ = CASES["en"]
    ev = SummaryEvaluator(Analyzer())
    assert ev.evaluate("", msgs, title)["overall_score"] == 0.0
    assert ev.evaluate("lorem ipsum dolor sit amet", msgs, title)["overall_score"] < 0.1
    assert ev.evaluate(keeps, msgs, title)["overall_score"] > 0.5


def test_embedder_proxies_can_be_turned_off():
    msgs, title, keeps, _, _ = CASES["en"]
    emb = HashEmbedder(dim=64)
    on = SummaryEvaluator(Analyzer(), embedder=emb).evaluate(keeps, msgs, title)
    off = SummaryEvaluator(Analyzer(), embedder=emb, settings=SummaryQualitySettings(embedder_proxies=False)).evaluate(keeps, msgs, title)
    assert on["details"]["coherence_method"] == "embedder" and "relevance_dense" in on["details"]
    assert off["details"]["coherence_method"] == "lexical" and "relevance_dense" not in off["details"]
    assert off["coverage"] == on["coverage"]
