"""Long-term tier: extraction through scripted fake chat models (fenced and bare JSON), provenance,
superseded facts, graph queries with depth and relation filters, profiles (cached), isolation."""

from __future__ import annotations

import json

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from llama_index.core.llms import MockLLM

from layered_memory.config import LayeredMemorySettings, TopicSettings
from layered_memory.engine import LayeredMemory
from layered_memory.errors import InvalidInputError
from layered_memory.providers.local import USEEmbedder
from test_topics_support import T0, feed

CHAT = [
    ("k1", "alice", "I work at Google in Zurich now"),
    ("k2", "bob", "Nice! My friend Carol also works at Google", "k1"),  # replies: one topic, no model decisions
    ("k3", "alice", "I love spicy food, by the way", "k2"),
]
ENTITIES_1 = [
    {"entity_name": "Alice", "entity_type": "PERSON", "confidence": 0.9, "mentions": 2, "description": "works at Google", "message_ids": ["k1", "k3"]},
    {"entity_name": "Google", "entity_type": "ORGANIZATION", "confidence": 0.95, "mentions": 2, "description": "a company"},
    {"entity_name": "Zurich", "entity_type": "LOCATION", "description": "a city"},
    {"entity_name": "Carol", "entity_type": "PERSON", "description": "Bob's friend", "message_ids": ["k2"]},
    {"entity_type": "PERSON"},  # invalid: dropped
]
RELATIONS_1 = [
    {"source_entity": "Alice", "target_entity": "Google", "relation_type": "works_at", "exclusive": True, "message_ids": ["k1"]},
    {"source_entity": "Google", "target_entity": "Zurich", "relation_type": "located_in", "message_ids": ["k1"]},
    {"source_entity": "Carol", "target_entity": "Google", "relation_type": "works_at", "exclusive": True},
    {"source_entity": "Alice", "target_entity": "Nobody", "relation_type": "knows"},  # unknown entity: dropped
]
PROFILE_ALICE = {"profile_text": "Works at Google in Zurich, likes spicy food",
                 "preferences": [{"key": "food", "value": "spicy", "confidence": 0.9}], "traits": [{"trait_name": "outgoing"}]}
PROFILE_BOB = {"profile_text": "Alice's friend", "preferences": [], "traits": []}


def fenced(obj) -> str:
    return "Here you go:\n```json\n" + json.dumps(obj, ensure_ascii=False) + "\n```"


@pytest.fixture(scope="module")
def embedder() -> USEEmbedder:
    return USEEmbedder()


def scripted_mem(tmp_path, embedder, replies):
    settings = LayeredMemorySettings(topics=TopicSettings(summary_every_messages=50))
    model = FakeListChatModel(responses=replies)
    return LayeredMemory.embedded(tmp_path, embedder=embedder, chat_model=model, settings=settings)


def first_round(tmp_path, embedder, extra=()):
    replies = ["Work and food",  # topic title
               fenced(ENTITIES_1), json.dumps(RELATIONS_1), fenced(PROFILE_ALICE), json.dumps(PROFILE_BOB), *extra]
    mem = scripted_mem(tmp_path, embedder, replies)
    feed(mem, "c1", CHAT)
    mem.process()
    topic = mem.topics.topic_of("k1", chat_id="c1")
    assert mem.topics.topic_of("k3", chat_id="c1") == topic
    stats = mem.knowledge.extract(topic)
    assert stats == {"entities": 4, "relations": 3, "superseded": 0, "profiles": 2}
    return mem, topic


def test_extraction_graph_and_provenance(tmp_path, embedder):
    mem, _ = first_round(tmp_path, embedder)
    kn = mem.knowledge
    alice = kn.search_entities("Alice")[0]
    assert alice["entity_name"] == "Alice" and alice["sources"] == ["k1", "k3"]
    assert kn.search_entities("Zurich", entity_types=["LOCATION"])[0]["entity_name"] == "Zurich"
    carol = kn.search_entities("Carol")[0]
    assert carol["sources"] == ["k2"]  # provenance from the model's message_ids
    graph = kn.query_graph("Alice", max_depth=1)
    assert {n["name"] for n in graph["nodes"]} == {"Alice", "Google"}
    graph2 = kn.query_graph("Alice", max_depth=2)
    assert {n["name"] for n in graph2["nodes"]} == {"Alice", "Google", "Zurich"}
    assert {e["type"] for e in graph2["edges"]} == {"works_at", "located_in"}
    only = kn.query_graph("Alice", max_depth=2, relation_types=["works_at"])
    assert {n["name"] for n in only["nodes"]} == {"Alice", "Google"}
    both = kn.query_graph("Google", max_depth=1, direction="both")
    assert {n["name"] for n in both["nodes"]} == {"Google", "Alice", "Carol", "Zurich"}
    assert kn.query_graph("Nobody") == {"nodes": [], "edges": []}
    with pytest.raises(InvalidInputError, match="direction"):
        kn.query_graph("Alice", direction="up")
    usage = kn.usage
    assert usage["extract_entities"]["calls"] == 1 and usage["build_profile"]["calls"] == 2
    assert usage["total"]["total_tokens"] > 0


def test_incremental_update_supersedes_and_keeps_history(tmp_path, embedder):
    entities_2 = [{"entity_name": "Alice", "entity_type": "PERSON", "description": "moved to Yandex", "message_ids": ["k4"]},
                  {"entity_name": "Yandex", "entity_type": "ORGANIZATION", "description": "a company", "message_ids": ["k4"]}]
    relations_2 = [{"source_entity": "Alice", "target_entity": "Yandex", "relation_type": "works_at", "exclusive": True, "message_ids": ["k4"]}]
    profile_2 = {"profile_text": "Works at Yandex", "preferences": [{"key": "food", "value": "mild"}], "traits": []}
    mem, topic = first_round(tmp_path, embedder, extra=[json.dumps(entities_2), fenced(relations_2), json.dumps(profile_2)])
    assert mem.knowledge.get_profile("alice")["preferences"][0]["value"] == "spicy"  # cached from now on
    feed(mem, "c1", [("k4", "alice", "I quit Google and now work at Yandex, also prefer mild food now", "k1")], start=T0.replace(minute=10))
    mem.process()
    assert mem.topics.topic_of("k4", chat_id="c1") == topic
    stats = mem.knowledge.extract(topic)  # only k4 is new
    assert stats["superseded"] == 1 and stats["profiles"] == 1
    rels = {(r["target"], r["status"]) for r in mem.knowledge.relations("Alice")}
    assert rels == {("Google", "superseded"), ("Yandex", "current")}
    old = next(r for r in mem.knowledge.relations("Alice") if r["target"] == "Google")
    assert old["superseded_by"] and old["sources"] == ["k1"]
    assert {n["name"] for n in mem.knowledge.query_graph("Alice", max_depth=1)["nodes"]} == {"Alice", "Yandex"}
    assert len(mem.knowledge.query_graph("Alice", max_depth=1, include_superseded=True)["edges"]) == 2
    alice = mem.knowledge.search_entities("Alice")[0]
    assert alice["description"] == "moved to Yandex" and alice["metadata"]["history"][0]["description"] == "works at Google"
    profile = mem.knowledge.get_profile("alice")  # the update invalidated the cache
    prefs = {(p["value"], p["status"]) for p in profile["preferences"]}
    assert prefs == {("spicy", "superseded"), ("mild", "current")}
    assert profile["history"][0]["profile_text"].startswith("Works at Google")


def test_bad_json_is_dropped_and_llamaindex_mock_works(tmp_path, embedder):
    settings = LayeredMemorySettings(topics=TopicSettings(summary_every_messages=3))
    mem = LayeredMemory.embedded(tmp_path, embedder=embedder, chat_model=MockLLM(max_tokens=5), settings=settings)
    feed(mem, "c1", CHAT)
    done = mem.process()  # summary (count trigger) -> knowledge job; MockLLM answers are not JSON
    assert done["topic_summaries"] == 1 and done["knowledge_jobs"] == 1
    assert mem.knowledge.search_entities("Alice") == []
    assert mem.knowledge.usage["extract_entities"]["calls"] == 1


def test_context_and_isolation(tmp_path, embedder):
    mem, topic = first_round(tmp_path, embedder, extra=["Alice works at Google; she likes spicy food."])
    mem.topics.summarize(topic)
    ctx = mem.get_context_for_user("alice", "c1", query="Where does Alice work?")
    block = next(c.content for c in ctx if c.kind == "memory")
    assert "profile: Works at Google" in block and 'topic "Work and food": Alice works at Google' in block
    assert "fact: Alice" not in block  # the topic summary says what the fact says: not both (issue 28)
    bob = mem.for_user("bob")
    assert bob.knowledge.get_profile()["profile_text"] == "Alice's friend"
    with pytest.raises(InvalidInputError):
        bob.knowledge.get_profile("alice")
    # bob wrote k2 (Carol, Google) but not k1/k3: Alice's facts are not his
    names = [e["entity_name"] for e in bob.knowledge.search_entities("Alice Carol")]
    assert names[0] == "Carol" and "Alice" not in names
    assert bob.knowledge.query_graph("Alice") == {"nodes": [], "edges": []}
    assert mem.for_user("zed").knowledge.search_entities("Google") == []
    assert mem.tenant("other").knowledge.search_entities("Alice") == []


def test_entities_are_index_points_found_by_meaning(tmp_path, embedder):
    mem, _ = first_round(tmp_path, embedder)
    from layered_memory.index import Eq, FilterSpec

    spec = FilterSpec.of(Eq("tenant", "default"), Eq("kind", "entity"))
    assert mem.index.count(mem.settings.qdrant.collection_prefix + "messages", filter=spec.to_qdrant()) == 4
    assert all(h.meta.get("kind") == "message" for h in mem.search("Alice Google").hits)  # messages only, unless asked
    top = mem.knowledge.search_entities("an employer, a company", entity_types=["ORGANIZATION", "LOCATION"], k=2)
    assert top[0]["entity_name"] == "Google" and top[0]["relevance"] > 0
    # a store whose index lacks the entity points (written before, or an index rebuilt) indexes them on first search
    mem.index.delete(mem.settings.qdrant.collection_prefix + "messages", filter=spec.to_qdrant())
    reopened = LayeredMemory.from_stores(mem.records, mem.index, embedder=embedder)
    assert reopened.knowledge.search_entities("Alice")[0]["entity_name"] == "Alice"
    assert mem.index.count(mem.settings.qdrant.collection_prefix + "messages", filter=spec.to_qdrant()) == 4


def test_entity_search_in_core_mode_uses_the_same_scope(tmp_path, embedder):
    mem, _ = first_round(tmp_path, embedder)
    core = LayeredMemory.from_stores(mem.records, None, embedder="none")  # the same records, no vector index
    assert core.knowledge.search_entities("Alice")[0]["entity_name"] == "Alice"
    names = [e["entity_name"] for e in core.for_user("bob").knowledge.search_entities("Alice Carol")]
    assert names[0] == "Carol" and "Alice" not in names
    assert core.for_user("zed").knowledge.search_entities("Google") == []
    assert core.knowledge.search_entities("Zurich", entity_types=["PERSON"]) == []
