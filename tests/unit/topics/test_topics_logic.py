"""Pure parts of the topic and knowledge tiers: parsing model answers, similarity, segmentation, keywords, caches."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from layered_memory.config import TopicSettings
from layered_memory.knowledge.extract import validate_entities, validate_profile, validate_relations
from layered_memory.models import Message
from layered_memory.retrieval.analyzer import Analyzer
from layered_memory.topics.cache import InProcessRecentCache
from layered_memory.topics.llm import UsageMeter, parse_json
from layered_memory.topics.summaries import segment_messages
from layered_memory.topics.threader import (
    calibrated_cosine, clean_title, content_terms, keyword_title, mean_update, parse_choice, term_overlap,
)

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def msg(i: int, content: str = "hello there friend", minutes: float | None = None, chat: str = "c") -> Message:
    return Message(message_id=f"m{i}", chat_id=chat, user_id="u", content=content,
                   create_time=T0 + timedelta(minutes=i if minutes is None else minutes))


@pytest.mark.parametrize("answer, expected", [
    ("2", 1), ("主题 3", 2), ("新主题", None), ("This is a new topic", None), ("Новая тема", None),
    ("I am not sure", 0), ("7", 0), ("", 0),
])
def test_parse_choice(answer, expected):
    assert parse_choice(answer, 3) == expected


@pytest.mark.parametrize("text, expected", [
    ('[{"a": 1}]', [{"a": 1}]),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('Sure! ```\n[1, 2]\n``` hope it helps', [1, 2]),
    ('The answer is {"x": "好"} as asked', {"x": "好"}),
    ("no json here", None),
])
def test_parse_json(text, expected):
    assert parse_json(text) == expected


def test_validation_drops_bad_items():
    msgs = [msg(1, "Alice met Bob"), msg(2, "Bob likes tea")]
    ents = validate_entities({"entities": [
        {"entity_name": "Alice", "entity_type": "human", "confidence": "high"},
        {"entity_name": "Bob", "entity_type": "PERSON", "confidence": 3, "message_ids": ["m2", "zzz"]},
        {"entity_name": "", "entity_type": "PERSON"}, "junk",
    ]}, msgs)
    assert [(e["entity_name"], e["entity_type"], e["confidence"]) for e in ents] == [("Alice", "OTHER", 0.8), ("Bob", "PERSON", 1.0)]
    assert ents[0]["message_ids"] == ["m1"] and ents[1]["message_ids"] == ["m2"]  # by mention / by the model
    rels = validate_relations([{"source_entity": "alice", "target_entity": "Bob", "relation_type": "Friend Of"},
                               {"source_entity": "Alice", "target_entity": "Eve", "relation_type": "knows"}], ents, msgs)
    assert [(r["source_entity"], r["relation_type"], r["exclusive"]) for r in rels] == [("Alice", "friend_of", False)]
    assert validate_profile([1, 2]) is None
    prof = validate_profile({"profile_text": "x", "preferences": [{"key": "tea", "value": "green"}, {"value": 1}], "traits": ["calm"]})
    assert prof["preferences"] == [{"key": "tea", "value": "green", "confidence": 0.8}] and prof["traits"][0]["trait_name"] == "calm"


def test_similarity_helpers():
    assert calibrated_cosine([1, 0], [1, 0], 0.1, 0.4) == 1.0
    assert calibrated_cosine([1, 0], [0, 1], 0.1, 0.4) == 0.0
    assert calibrated_cosine([1, 0], [0.6, 0.8], 0.0, 0.8) == pytest.approx(0.6)  # raw cosine when anchors are 0 / 0.8
    assert term_overlap(["a", "b"], {"a": 3}) == 0.5 and term_overlap([], {"a": 1}) == 0.0
    mean = mean_update(mean_update(None, 0, [2, 0]), 1, [0, 3])
    assert mean == pytest.approx([0.5, 0.5])
    a = Analyzer()
    assert content_terms(a.terms("好的")) == 1 and content_terms(a.terms("ok")) == 1
    assert content_terms(a.terms("周末我们去哪里爬山")) >= 3


def test_titles_and_keywords():
    a = Analyzer()
    assert clean_title('Title: "Weekend hiking"\nmore') == "Weekend hiking"
    assert clean_title("标题：周末爬山") == "周末爬山"
    assert "hiking" in keyword_title("Hiking, hiking and more hiking near the lake", a)
    assert keyword_title("Походы в горы летом", a).split()[0] in ("походы", "горы", "летом")


def test_segments_cut_by_size_and_pause():
    msgs = [msg(i) for i in range(5)] + [msg(5, minutes=200), msg(6, minutes=201)]
    segs = segment_messages(msgs, size=3)
    assert [[m.message_id for m in s] for s in segs] == [["m0", "m1", "m2"], ["m3", "m4"], ["m5", "m6"]]


def test_settings_rules():
    with pytest.raises(ValueError, match="ambiguous_threshold"):
        TopicSettings(ambiguous_threshold=0.8, assign_threshold=0.7)
    with pytest.raises(ValueError, match="recent_cache"):
        TopicSettings(recent_cache="disk")


def test_usage_meter_totals():
    m = UsageMeter()
    m.record("a", prompt=10, completion=2, seconds=0.1, failed=False, estimated=False)
    m.record("b", prompt=5, completion=0, seconds=0.1, failed=True, estimated=True)
    snap = m.snapshot()
    assert snap["total"]["total_tokens"] == 17 and snap["total"]["failures"] == 1 and snap["total"]["estimated"]
    assert list(m.snapshot(("a",))) == ["a", "total"]


def test_in_process_cache_trims_and_expires():
    cache = InProcessRecentCache(size=3, ttl=60)
    cache.push("t", [msg(i) for i in range(5)])
    assert [m.message_id for m in cache.recent("t", "c", 10)] == ["m2", "m3", "m4"]
    got = cache.get("t", [("c", "m0"), ("c", "m4"), ("other-chat", "m4")])
    assert [m.message_id if m else None for m in got] == [None, "m4", None] and cache.recent("other", "c", 10) == []
    expired = InProcessRecentCache(size=3, ttl=-1)
    expired.push("t", [msg(1)])
    assert expired.recent("t", "c", 5) == []
