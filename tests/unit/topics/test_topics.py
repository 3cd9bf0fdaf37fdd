"""Topic threading, recall, summaries and the two searches, end to end on the embedded engine with a
real offline embedder (USE) and LangChain's fake chat models for scripted replies."""

from __future__ import annotations

from datetime import timedelta

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from layered_memory.config import LayeredMemorySettings, TopicSettings
from layered_memory.engine import LayeredMemory
from layered_memory.errors import NotFoundError
from layered_memory.providers.local import USEEmbedder
from test_topics_support import T0, feed, groups

EN = [
    ("e1", "alice", "Where should we go hiking this weekend?"),
    ("e2", "bob", "The mountain trail near the lake is great for hiking"),
    ("e3", "alice", "Should we bring tents or stay at the lodge near the trail?"),
    ("e4", "bob", "ok"),
    ("e5", "carol", "My laptop keeps crashing after the system update"),
    ("e6", "bob", "Did you try rolling back the driver?", "e5"),  # a reply: inherits, whatever it says
    ("e7", "alice", "Let's bring tents then, the lodge is expensive", "e3"),
    ("e8", "carol", "The laptop crash happens when the graphics driver loads"),
]
RU = [
    ("r1", "ivan", "Куда поедем в отпуск летом? Хочу на море"),
    ("r2", "olga", "Давай в Сочи, там тёплое море и хорошие пляжи"),
    ("r3", "ivan", "Отлично, тогда надо бронировать отель у моря"),
    ("r4", "olga", "У меня сломалась машина, не заводится двигатель"),
    ("r5", "ivan", "Отвези машину в автосервис, пусть проверят двигатель и аккумулятор"),
    ("r6", "olga", "Какой отель в Сочи выберем?", "r3"),
]
ZH = [
    ("z1", "wang", "周末我们去哪里爬山？"),
    ("z2", "li", "我觉得湖边那条山路不错，风景很好"),
    ("z3", "wang", "爬山要带帐篷吗？"),
    ("z4", "li", "我的电脑更新以后一直死机"),
    ("z5", "wang", "你试试重装显卡驱动，电脑可能就不死机了"),
    ("z6", "li", "好的"),
]


@pytest.fixture(scope="module")
def embedder() -> USEEmbedder:
    return USEEmbedder()


def build(tmp_path, embedder, *, model=None, **topic_settings) -> LayeredMemory:
    settings = LayeredMemorySettings(topics=TopicSettings(**topic_settings))
    return LayeredMemory.embedded(tmp_path, embedder=embedder, chat_model=model, settings=settings)


def failing_model(prompt: str) -> str:
    raise RuntimeError("model is down")


@pytest.mark.parametrize("script, expected", [
    (EN, [0, 0, 0, 0, 1, 1, 0, 1]),
    (RU, [0, 0, 0, 1, 1, 0]),
    (ZH, [0, 0, 0, 1, 1, 1]),
], ids=["en", "ru", "zh"])
def test_threading_without_a_model(tmp_path, embedder, script, expected):
    mem = build(tmp_path, embedder)
    ids = feed(mem, "c1", script)
    assert mem.topics.pending() == len(ids)  # the write threads nothing: the messages wait in the log
    assert mem.records.count_docs("default", "topic_queue") == 0  # and the write path wrote no queue entry
    assert all(mem.topics.topic_of(i, chat_id="c1") is None for i in ids)
    done = mem.process()
    assert done["threaded"] == len(ids)
    assert mem.topics.pending() == 0
    assert groups(mem, ids) == expected
    topics = mem.topics.list("c1")
    assert [t.message_count for t in topics] == [expected.count(0), expected.count(1)]
    assert all(t.title for t in topics)  # keyword titles without a model
    # the index payload carries the topic too: search filters by it
    hits = mem.search(script[0][2], filters={"topic_id": topics[0].topic_id}, k=10).hits
    assert hits and all(h.meta["topic_id"] == topics[0].topic_id for h in hits)


def test_reply_inherits_even_when_unrelated(tmp_path, embedder):
    mem = build(tmp_path, embedder)
    feed(mem, "c1", [("a", "u1", "Where should we go hiking this weekend?"),
                     ("b", "u2", "My laptop keeps crashing after the update"),
                     ("c", "u1", "Bananas are cheap at the market today", "a")])
    mem.process()
    assert mem.topics.topic_of("c", chat_id="c1") == mem.topics.topic_of("a", chat_id="c1") != mem.topics.topic_of("b", chat_id="c1")


def test_ambiguous_band_asks_the_model(tmp_path, embedder):
    # anchors that squeeze every similarity into (0, 0.8]: each decision lands in the band and the
    # model decides (the seed prompt; the answer is a candidate number or 新主题)
    model = FakeListChatModel(responses=["Hiking plans", "新主题", "Laptop trouble", "1", "Answer: 1"])
    mem = build(tmp_path, embedder, model=model, assign_threshold=0.95, ambiguous_threshold=0.01, continuity_bonus=0.0,
                min_terms=0, similarity_floor=-1.0, similarity_topical=1.0)
    ids = feed(mem, "c1", [
        ("a", "u1", "Where should we go hiking this weekend?"),
        ("b", "u2", "My laptop keeps crashing after the update"),
        ("c", "u1", "The lake trail is nice for hiking"),
        ("d", "u2", "Try reinstalling the graphics driver"),
    ])
    mem.process()
    assert groups(mem, ids) == [0, 1, 0, 1]
    titles = [t.title for t in mem.topics.list("c1")]
    assert titles == ["Hiking plans", "Laptop trouble"]
    usage = mem.topics.usage
    assert usage["topic_decision"]["calls"] == 3 and usage["topic_title"]["calls"] == 2
    assert usage["total"]["calls"] == 5 and usage["total"]["total_tokens"] > 0


def test_a_failing_model_falls_back(tmp_path, embedder):
    mem = build(tmp_path, embedder, model=failing_model, assign_threshold=0.95, ambiguous_threshold=0.01,
                continuity_bonus=0.0, min_terms=0, similarity_floor=-1.0, similarity_topical=1.0)
    ids = feed(mem, "c1", [("a", "u1", "Where should we go hiking this weekend?"),
                           ("b", "u1", "The lake trail is nice for hiking")])
    mem.process()
    assert groups(mem, ids) == [0, 0]  # the decision falls back to the most similar topic
    topic = mem.topics.list("c1")[0]
    assert topic.title  # keyword title after the title call failed
    summary = mem.topics.summarize(topic.topic_id)
    assert summary.metadata["generation_method"] == "simple"
    assert mem.topics.usage["total"]["failures"] >= 3


@pytest.mark.parametrize("script, marker", [(RU, "море"), (ZH, "爬山")], ids=["ru", "zh"])
def test_fallback_summary_keeps_the_language(tmp_path, embedder, script, marker):
    mem = build(tmp_path, embedder, model=failing_model)
    feed(mem, "c1", script)
    mem.process()
    topic = mem.topics.list("c1")[0]
    text = mem.topics.summarize(topic.topic_id).content
    assert marker in text
    assert not any(w in text.lower() for w in ("the ", "summary", "topic"))


def test_summary_triggers_count_idle_manual_and_versions(tmp_path, embedder):
    model = FakeListChatModel(responses=[f"reply {i}" for i in range(50)])
    mem = build(tmp_path, embedder, model=model, summary_every_messages=3, idle_timeout_seconds=600)
    feed(mem, "c1", EN[:3])  # one topic, 3 messages -> the count trigger
    done = mem.process()
    assert done["topic_summaries"] == 1
    topic = mem.topics.list("c1")[0]
    first = mem.topics.summary(topic.topic_id)
    assert first.version == 1 and first.metadata["trigger"] == "count" and first.metadata["generation_method"] == "llm"
    assert first.metadata["keywords"] and abs(sum(first.metadata["keywords"].values()) - 1) < 0.01
    mem.add_message(message_id="e3b", chat_id="c1", user_id="bob", content="I will bring the tent", reply_message_id="e3",
                    create_time=T0 + timedelta(minutes=5))
    assert mem.process()["topic_summaries"] == 0  # 1 new message: below the count trigger
    # a message an hour later: the topic went idle on the chat's clock -> closed and summarized ("idle")
    feed(mem, "c1", [("late", "u9", "Anyone up for chess tonight?")], start=T0 + timedelta(hours=1))
    assert mem.process()["topic_summaries"] == 1
    versions = mem.topics.summaries(topic.topic_id)
    assert [v.version for v in versions] == [1, 2]  # the old version is kept
    assert versions[1].metadata["trigger"] == "idle" and versions[1].metadata["message_count"] == 4
    assert not mem.topics.get(topic.topic_id).is_active
    manual = mem.topics.summarize(topic.topic_id)
    assert manual.version == 3 and manual.metadata["trigger"] == "manual"
    assert len(mem.topics.summaries(topic.topic_id)) == 3


def test_scheduled_summaries_and_wall_clock_idle(tmp_path, embedder):
    mem = build(tmp_path, embedder, summary_interval_seconds=1)
    feed(mem, "c1", EN[:2])
    done = mem.process()  # the topic is days old by the wall clock: closed and summarized
    assert done["topic_summaries"] == 1
    topic = mem.topics.list("c1")[0]
    assert mem.topics.summary(topic.topic_id).metadata["trigger"] in ("schedule", "idle")
    assert mem.topics.list("c1", active_only=True) == []


def test_original_messages_by_time_range(tmp_path, embedder):
    mem = build(tmp_path, embedder)
    ids = feed(mem, "c1", EN)
    mem.process()
    topic_id = mem.topics.topic_of("e1", chat_id="c1")
    msgs = mem.topics.messages(topic_id)
    assert [m.message_id for m in msgs] == ["e1", "e2", "e3", "e4", "e7"]
    window = mem.topics.messages(topic_id, start=T0 + timedelta(minutes=1), end=T0 + timedelta(minutes=3))
    assert [m.message_id for m in window] == ["e2", "e3", "e4"]
    with pytest.raises(NotFoundError, match="topic_id='nope'"):
        mem.topics.messages("nope")
    assert len(ids) == 8


def test_short_term_recall(tmp_path, embedder):
    mem = build(tmp_path, embedder)
    chain = [("q0", "u1", "Where should we go hiking this weekend?")]
    for i in range(1, 8):
        chain.append((f"q{i}", "u1" if i % 2 else "u2", f"Reply number {i} about the hiking trail", f"q{i - 1}"))
    feed(mem, "c1", chain)
    mem.process()
    got = mem.topics.recall("q7", chat_id="c1", max_messages=20)
    assert [m.message_id for m in got] == [f"q{i}" for i in range(7)]  # chronological, without q7 itself
    capped = mem.topics.recall("q7", chat_id="c1", max_messages=3)
    assert [m.message_id for m in capped] == ["q4", "q5", "q6"]  # the newest kept
    # the reply chain alone is capped at depth 5
    from layered_memory.topics.recall import reply_chain

    assert [m.message_id for m in reply_chain(mem.get_messages, ("c1", "q6"), 5)] == ["q2", "q3", "q4", "q5", "q6"]
    assert [m.message_id for m in mem.topics.recent("c1", 3)] == ["q5", "q6", "q7"]


def test_queue_survives_a_stop(tmp_path, embedder):
    mem = build(tmp_path, embedder)
    feed(mem, "c1", EN[:4])
    mem.close()  # stopped before any threading
    mem2 = build(tmp_path, embedder)
    assert mem2.topics.pending() == 4
    mem2.process()
    assert groups(mem2, [r[0] for r in EN[:4]]) == [0, 0, 0, 0]
    assert mem2.process()["threaded"] == 0  # nothing twice
    assert mem2.topics.list("c1")[0].message_count == 4


def test_no_embedder_threads_by_terms(tmp_path):
    mem = LayeredMemory.embedded(tmp_path, embedder="none")
    ids = feed(mem, "c1", [
        ("a", "u1", "The hiking trail near the lake"),
        ("b", "u2", "Quarterly tax report deadline and invoices"),
        ("c", "u1", "The lake trail for hiking is muddy"),
        ("d", "u2", "Tax invoices for the quarterly report"),
    ], step=timedelta(minutes=10))
    mem.process()
    assert groups(mem, ids) == [0, 1, 0, 1]


def test_searches_and_context(tmp_path, embedder):
    judge = '{"score": 8, "reason": "keeps the facts"}'  # the summary judge answers after each summary (seed 3.2.3)
    model = FakeListChatModel(responses=["Hiking", "Laptop", "They will bring tents and hike the mountain trail near the lake.", judge,
                                         "The laptop crash comes from the graphics driver after the update.", judge])
    mem = build(tmp_path, embedder, model=model)
    ids = feed(mem, "c1", EN)
    mem.process()
    hiking, laptop = mem.topics.topic_of("e1", chat_id="c1"), mem.topics.topic_of("e5", chat_id="c1")
    mem.topics.summarize(hiking)
    mem.topics.summarize(laptop)
    res = mem.topics.topic_search("tents for the hiking trip", chat_id="c1", k=2, messages_per_topic=3)
    assert res.topics[0].topic_id == hiking
    assert res.topics[0].summary.startswith("They will bring tents")
    assert res.topics[0].summary_quality["llm_score"] == 0.8 and res.topics[0].summary_quality["overall_score"] > 0.3
    assert len(res.topics[0].messages) == 3
    assert "Hiking" in res.to_text() and res.to_dict()["topics"][0]["topic_id"] == hiking
    quick = mem.topics.quick_search("graphics driver crash", chat_id="c1", k=5)
    kinds = {h.meta.get("kind") for h in quick.hits}
    assert kinds == {"message", "topic_summary"}
    assert mem.topics.search_summaries("laptop driver")[0].meta["topic_id"] == laptop
    ctx = mem.get_context_for_user("carol", "c1", query="laptop crash")
    memory = [c.content for c in ctx if c.kind == "memory"]
    assert memory and 'topic "Laptop":' in memory[0]
    assert len(ids) == 8


def test_scope_isolation(tmp_path, embedder):
    mem = build(tmp_path, embedder)
    feed(mem, "c1", [("a", "u1", "Where should we go hiking this weekend?"), ("b", "u1", "The lake trail is great for hiking")])
    feed(mem, "c2", [("x", "u2", "My laptop keeps crashing after the update")])
    other = mem.tenant("acme")
    feed(other, "c1", [("a", "u1", "Secret merger plans for next quarter")])
    mem.process()
    other.process()
    t1 = mem.topics.topic_of("a", chat_id="c1")
    mem.topics.summarize(t1)
    mem.topics.summarize(mem.topics.topic_of("x", chat_id="c2"))
    assert [t.topic_id for t in mem.topics.list("c1")] == [t1]
    assert other.topics.topic_of("a", chat_id="c1") != t1 and len(other.topics.list("c1")) == 1
    assert other.topics.search_summaries("hiking trail") == []
    u2 = mem.for_user("u2")
    assert [h.meta["topic_id"] for h in u2.topics.search_summaries("hiking trail laptop")] == [mem.topics.topic_of("x", chat_id="c2")]
    assert u2.topics.list("c1") == []
    with pytest.raises(NotFoundError):
        u2.topics.summary(t1)
    assert all(t.topic_id != t1 for t in u2.topics.topic_search("hiking trail").topics)


async def test_async_twins(tmp_path, embedder):
    mem = build(tmp_path, embedder)
    feed(mem, "c1", EN[:2])
    await mem.topics.aprocess()
    res = await mem.topics.atopic_search("hiking")
    assert res.topics and res.topics[0].message_count == 2


def test_recent_cache_comes_from_the_record_store_seam(tmp_path):
    """The topic tier asks the RecordStore for a shared cache (``recent_cache``) instead of probing
    ``records.client`` / ``.prefix`` / ``.backend``: any store offering one gets it used (issue 11)."""
    from layered_memory.errors import InvalidInputError
    from layered_memory.stores.sqlite import SQLiteRecordStore
    from layered_memory.topics.cache import InProcessRecentCache

    shared = InProcessRecentCache(size=5, ttl=60)
    asked: list[tuple[int, int]] = []

    class SharedCacheStore(SQLiteRecordStore):
        def recent_cache(self, *, size: int, ttl: int) -> InProcessRecentCache:
            asked.append((size, ttl))
            return shared

    settings = LayeredMemorySettings(topics=TopicSettings(recent_cache_size=7, recent_cache_ttl_seconds=99))
    mem = LayeredMemory.from_stores(SharedCacheStore(str(tmp_path / "r.sqlite3")), None, embedder="none", settings=settings)
    try:
        assert mem.topics.cache is shared and asked == [(7, 99)]
        feed(mem, "c1", [("a", "u1", "Where should we go hiking?")])
        assert [m.message_id for m in shared.recent("default", "c1", 5)] == ["a"]
    finally:
        mem.close()
    plain = LayeredMemorySettings(topics=TopicSettings(recent_cache="redis"))
    with pytest.raises(InvalidInputError, match="shared cache"):
        LayeredMemory.embedded(tmp_path / "plain", embedder="none", settings=plain)
