"""The bm25 route (sparse vectors + Qdrant's IDF modifier) ranks like rank_bm25 on the same terms (the
analyzer's, with the Russian stems' prefixes that BM25 adds: ``with_prefixes``)."""

from __future__ import annotations

import math
import random
from datetime import datetime, timedelta, timezone

import pytest
from rank_bm25 import BM25Okapi

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.retrieval.analyzer import Analyzer, with_prefixes

WORDS = (
    "kubernetes pod crash deploy billing token redis cache postgres migration staging error timeout "
    "config secret rotate backup queue worker latency отпуск поездка ресторан билет встреча проект "
    "高铁 上海 出差 会议 报告"
).split()


class QdrantIdfBM25(BM25Okapi):
    """rank_bm25 with Qdrant's IDF (ln(1 + (N - n + 0.5) / (n + 0.5))) instead of its epsilon floor."""

    def _calc_idf(self, nd):
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


@pytest.mark.parametrize("seed", [1, 2])
def test_bm25_route_matches_rank_bm25(tmp_path, seed):
    rng = random.Random(seed)
    docs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25))) for _ in range(150)]
    analyzer = Analyzer()
    corpus = [with_prefixes(analyzer.terms(d)) for d in docs]
    settings = LayeredMemorySettings()
    settings.retrieval.index_context = "text"
    settings.retrieval.message_avgdl = sum(map(len, corpus)) / len(corpus)  # messages have their own BM25 parameters
    reference = QdrantIdfBM25(corpus, k1=settings.retrieval.message_k1, b=settings.retrieval.message_b)
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    with LayeredMemory.embedded(tmp_path, embedder="none", settings=settings) as mem:
        mem.add_messages([
            {"message_id": f"d{i}", "chat_id": "c", "user_id": "u", "content": d, "create_time": t0 + timedelta(seconds=i)}
            for i, d in enumerate(docs)
        ])
        for _ in range(25):
            query = " ".join(rng.sample(WORDS, rng.randint(1, 4)))  # distinct terms: the query side weighs each once
            expected = reference.get_scores(with_prefixes(analyzer.terms(query)))
            hits = mem.search(query, k=10, route="bm25").hits
            got = [(int(h.id[1:]), h.score) for h in hits]
            want = sorted(((i, s) for i, s in enumerate(expected) if s > 0), key=lambda x: -x[1])[:10]
            assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-4), query
            for i, score in got:  # the same documents, up to the order of equal scores
                assert expected[i] == pytest.approx(score, rel=1e-4)


def test_a_russian_question_finds_the_derived_word_and_prefers_the_same_word(tmp_path):
    """"Когда переезжает Вера?" shares no Snowball stem with "С переездом решено: Лиссабон" (verb against
    noun); the stems' common prefix finds it, and a message with the question's own word ranks above it.
    One chat per message: a message's BM25 document holds the turn before it in its chat."""
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    texts = ["С переездом решено: Лиссабон, с октября.", "Погода всё время меняется: то дождь, то солнце.",
             "Вера переезжает к сестре на выходные.", "Сегодня я приготовила пирог с вишней."]
    with LayeredMemory.embedded(tmp_path, embedder="none") as mem:
        mem.add_messages([{"message_id": f"m{i}", "chat_id": f"c{i}", "user_id": "u", "content": t, "create_time": t0 + timedelta(minutes=i)}
                          for i, t in enumerate(texts)])
        mem.flush()
        ids = [h.id for h in mem.search("Когда переезжает?", k=4, route="bm25").hits]
    assert ids[:2] == ["m2", "m0"], ids


def test_documents_and_items_find_a_russian_derived_word_too(tmp_path):
    """Every BM25 of the engine indexes the prefixes (the encoder writes them), not only the messages'."""
    with LayeredMemory.embedded(tmp_path, embedder="none") as mem:
        mem.documents.index_document("Переезд назначен на октябрь, коробки уже собраны.", name="plan")
        mem.documents.index_document("Погода всё время меняется: то дождь, то солнце.", name="weather")
        mem.items.put(("notes",), "move", {"text": "Переезд в Лиссабон решён"})
        mem.items.put(("notes",), "cake", {"text": "Пирог с вишней удался"})
        mem.flush()
        assert [h.meta["source"] for h in mem.documents.vector_rag("Когда переезжаем?", k=2, route="bm25").hits] == ["plan"]
        assert [it.key for it in mem.items.search(("notes",), query="Куда переезжаем?", limit=2)] == ["move"]


def test_a_korean_question_finds_the_message_without_an_embedder(tmp_path):
    """Without an embedder the search is BM25 alone: "서울" must meet "서울에서", "Redis" meet "Redis에서"."""
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    texts = ["다음 주에 서울에서 회의가 있어요", "다음 주에 부산에서 회의가 있어요", "Redis에서 에러가 계속 나요", "서버에서 경고가 계속 나요"]
    with LayeredMemory.embedded(tmp_path, embedder="none") as mem:
        mem.add_messages([{"message_id": f"m{i}", "chat_id": f"c{i}", "user_id": "u", "content": t, "create_time": t0 + timedelta(minutes=i)}
                          for i, t in enumerate(texts)])
        mem.flush()
        assert mem.search("서울 회의는 언제예요?", k=4).hits[0].id == "m0"
        assert mem.search("Redis 에러", k=4).hits[0].id == "m2"
