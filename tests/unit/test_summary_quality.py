"""Summary quality in the loop (issue 16): every new topic / session summary version is scored and stored
with its score; a model summary below ``retry_below`` is written again by the fallback and the better one
kept; the score shows in ``topic_search``, ``search_summaries`` and ``layered-memory topics show``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from click.testing import CliRunner
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from layered_memory.cli import main
from layered_memory.config import LayeredMemorySettings, MemorySettings, SummaryQualitySettings, TopicSettings
from layered_memory.engine import LayeredMemory
from layered_memory.errors import InvalidInputError, NotFoundError
from layered_memory.testing import HashEmbedder
from test_topics_support import T0, feed

HIKE = [
    ("h1", "alice", "Where should we go hiking this weekend? Maybe the Lakeview trail"),
    ("h2", "bob", "The Lakeview trail near Lake Tahoe is great for hiking, about 12 km"),
    ("h3", "alice", "Should we bring tents or stay at the Pine lodge near the trail?"),
    ("h4", "bob", "Let's bring tents, the Pine lodge costs 180 dollars a night"),
]
GOOD = "Alice and Bob plan to hike the Lakeview trail near Lake Tahoe, about 12 km. They will bring tents instead of the Pine lodge."
JUDGE = '{"score": 8, "reason": "keeps the trail and the tents"}'
NO_SCORE = "I am not sure."


def build(tmp_path, model=None, embedder=None, **quality) -> LayeredMemory:
    settings = LayeredMemorySettings(
        # one topic, no model calls while threading except its title; summaries only when asked
        topics=TopicSettings(summary_every_messages=100, ambiguous_threshold=0.5, assign_threshold=0.5, continuity_bonus=1.0),
        summary_quality=SummaryQualitySettings(**quality),
    )
    return LayeredMemory.embedded(tmp_path, embedder=embedder or HashEmbedder(dim=64), chat_model=model, settings=settings)


def one_topic(mem) -> str:
    feed(mem, "c1", HIKE)
    mem.process()
    topic_id = mem.topics.topic_of("h1", chat_id="c1")
    assert all(mem.topics.topic_of(m[0], chat_id="c1") == topic_id for m in HIKE)
    return topic_id


def test_garbage_from_the_model_is_retried_and_the_better_version_kept(tmp_path):
    # title, then the summary (garbage) and its judge, then the retry (extractive) and its judge
    model = FakeListChatModel(responses=["Hiking at Lake Tahoe", "lorem ipsum dolor sit amet", NO_SCORE, JUDGE])
    mem = build(tmp_path, model)
    topic_id = one_topic(mem)
    summary = mem.topics.summarize(topic_id)
    q = summary.metadata["quality"]
    assert summary.metadata["generation_method"] == "simple" and "Lakeview" in summary.content
    assert q["retried"] and [a["generation_method"] for a in q["attempts"]] == ["llm", "simple"]
    garbage, retry = (a["overall_score"] for a in q["attempts"])
    assert garbage < 0.25 <= retry and q["overall_score"] == retry
    assert q["llm_evaluation"]["score"] == 0.8
    usage = mem.topics.usage
    assert usage["topic_summary_evaluation"]["calls"] == 2 and usage["topic_summary_evaluation"]["total_tokens"] > 0


def test_a_good_model_summary_is_kept_without_a_retry(tmp_path):
    model = FakeListChatModel(responses=["Hiking at Lake Tahoe", GOOD, JUDGE])
    mem = build(tmp_path, model)
    topic_id = one_topic(mem)
    summary = mem.topics.summarize(topic_id)
    q = summary.metadata["quality"]
    assert summary.content == GOOD and summary.metadata["generation_method"] == "llm"
    assert not q.get("retried") and q["overall_score"] >= 0.25 and q["redistributed"] == []
    assert set(q) >= {"coverage", "coherence", "relevance", "llm_evaluation", "overall_score", "weights"}


def test_retry_off_keeps_the_garbage_but_scores_it(tmp_path):
    model = FakeListChatModel(responses=["Hiking at Lake Tahoe", "lorem ipsum dolor sit amet", NO_SCORE])
    mem = build(tmp_path, model, retry_below=0.0)
    summary = mem.topics.summarize(one_topic(mem))
    assert summary.content == "lorem ipsum dolor sit amet" and summary.metadata["quality"]["overall_score"] < 0.1


def test_scores_are_persisted_per_version_and_shown(tmp_path):
    mem = build(tmp_path, embedder="none")  # no model: extractive summaries, the judge's weight redistributed
    topic_id = one_topic(mem)
    first = mem.topics.summarize(topic_id)
    feed(mem, "c1", [("h5", "carol", "I can drive us to Lake Tahoe on Saturday at 7", "h4")], start=T0 + timedelta(minutes=5))
    mem.process()
    second = mem.topics.summarize(topic_id)
    assert first.metadata["quality"]["redistributed"] == ["llm_evaluation"]
    mem.close()

    mem = build(tmp_path, embedder="none")  # reopened: the scores come from the record store
    versions = mem.topics.summaries(topic_id)
    assert [v.version for v in versions] == [1, 2]
    assert [v.metadata["quality"]["overall_score"] for v in versions] == [
        first.metadata["quality"]["overall_score"], second.metadata["quality"]["overall_score"]]
    assert versions[1].metadata["quality"]["details"]["relevance_basis"] == "title"
    # on demand: the same score for the same version; unknown versions and topics are named
    again = mem.topics.evaluate_summary(topic_id, version=1)
    assert again["overall_score"] == first.metadata["quality"]["overall_score"]
    assert mem.topics.evaluate_summary(topic_id)["overall_score"] == second.metadata["quality"]["overall_score"]
    with pytest.raises(NotFoundError, match="has no version 7"):
        mem.topics.evaluate_summary(topic_id, version=7)
    with pytest.raises(NotFoundError, match="topic_id='nope'"):
        mem.topics.evaluate_summary("nope")
    # visible in the searches' output
    hit = mem.topics.topic_search("tents at Lake Tahoe", chat_id="c1", k=1).topics[0]
    assert hit.summary_quality["overall_score"] == second.metadata["quality"]["overall_score"]
    assert hit.to_dict()["summary_quality"] == hit.summary_quality and "(quality " in mem.topics.topic_search("tents").to_text()
    assert mem.topics.search_summaries("Lake Tahoe tents")[0].meta["quality"] == hit.summary_quality["overall_score"]
    mem.close()

    runner = CliRunner()
    base = ["--path", str(tmp_path), "--embedder", "none"]
    shown = runner.invoke(main, [*base, "topics", "show", topic_id], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert f"quality: overall {second.metadata['quality']['overall_score']:.2f}" in shown.output
    assert "v1 " in shown.output and "v2 " in shown.output and "weights redistributed from llm_evaluation" in shown.output
    listed = runner.invoke(main, [*base, "topics", "list", "c1"], catch_exceptions=False)
    assert topic_id in listed.output
    missing = runner.invoke(main, [*base, "topics", "show", "nope"])
    assert missing.exit_code == 2 and "topic_id='nope'" in missing.output


def test_a_bound_handle_cannot_evaluate_a_foreign_topic(tmp_path):
    mem = build(tmp_path)
    topic_id = one_topic(mem)
    mem.topics.summarize(topic_id)
    assert mem.for_user("alice").topics.evaluate_summary(topic_id)["overall_score"] > 0
    with pytest.raises(NotFoundError):
        mem.for_user("mallory").topics.evaluate_summary(topic_id)
    with pytest.raises(NotFoundError):
        mem.tenant("other").topics.evaluate_summary(topic_id)


# -- session summaries ("Previous context summary") -----------------------------------------------------
SESSION = [
    "I am moving our backend to Kubernetes next week", "Start with a staging namespace in Frankfurt",
    "Our payments pod fails with CrashLoopBackOff after the deploy", "Check kubectl logs for the payments pod",
    "The payments pod needs 512 MB more memory", "Raise the memory limit of the payments deployment",
    "Kubernetes staging works now, production on Monday", "Remember the Frankfurt region for production too",
    "What about the database migration?", "Run the Postgres migration before the payments deploy",
]


def session_mem(tmp_path, model=None, embedder=None, **quality) -> LayeredMemory:
    settings = LayeredMemorySettings(memory=MemorySettings(short_term_window=2, summary_threshold_messages=4),
                                     topics=TopicSettings(enabled=False), summary_quality=SummaryQualitySettings(**quality))
    return LayeredMemory.embedded(tmp_path, embedder=embedder or "none", chat_model=model, settings=settings)


def add_session(mem, texts, start=0):
    mem.add_messages([{"message_id": f"m{start + i}", "chat_id": "s1", "user_id": "u1", "user_name": "Anna",
                       "role": "user" if i % 2 == 0 else "assistant", "content": t,
                       "create_time": T0 + timedelta(minutes=start + i)} for i, t in enumerate(texts)])


def test_session_summary_garbage_is_replaced_by_the_extractive_one(tmp_path):
    model = FakeListChatModel(responses=["zzz qqq", NO_SCORE, JUDGE])
    mem = session_mem(tmp_path, model)
    add_session(mem, SESSION[:6])
    mem.process()
    info = mem.get_summary_quality("u1", "s1")
    assert info["method"] == "extractive" and info["version"] == 1
    q = info["quality"]
    assert q["retried"] and [a["generation_method"] for a in q["attempts"]] == ["llm", "extractive"]
    assert q["attempts"][0]["overall_score"] < q["attempts"][1]["overall_score"] == q["overall_score"]
    assert "Kubernetes" in mem.get_summary("u1", "s1")
    assert mem.chat_model.usage.by_operation["session_summary_evaluation"].calls == 2


def test_session_summary_versions_keep_their_scores(tmp_path):
    model = FakeListChatModel(responses=["Anna moves the backend to Kubernetes; the payments pod crashes with CrashLoopBackOff.", JUDGE])
    mem = session_mem(tmp_path, model)
    add_session(mem, SESSION[:6])
    mem.process()
    v1 = mem.get_summary_quality("u1", "s1")
    assert v1["method"] == "llm" and v1["quality"]["llm_evaluation"]["score"] == 0.8 and v1["history"] == []
    add_session(mem, SESSION[6:], start=6)
    mem.process()
    v2 = mem.get_summary_quality("u1", "s1")
    assert v2["version"] == 2 and v2["history"] == [
        {"version": 1, "method": "llm", "updated": v1["updated"], "overall_score": v1["quality"]["overall_score"]}]
    assert v2["quality"]["overall_score"] > 0
    assert mem.get_summary_quality("u1", "other") is None
    mem.close()
    with session_mem(tmp_path) as reopened:
        assert reopened.get_summary_quality("u1", "s1") == v2  # persisted


def test_a_summary_refreshed_in_get_context_is_scored_by_process(tmp_path):
    mem = session_mem(tmp_path, embedder=HashEmbedder(dim=64))  # no model: the request path refreshes (extractive)
    add_session(mem, SESSION)
    ctx = mem.get_context_for_user("u1", "s1", include_vector=False)
    assert ctx[0].kind == "summary"
    assert mem.get_summary_quality("u1", "s1")["quality"] is None  # not embedded on the request path
    mem.process()
    q = mem.get_summary_quality("u1", "s1")["quality"]
    assert q["overall_score"] > 0.25 and q["details"]["coherence_method"] == "embedder"


def test_engine_level_evaluate_summary(tmp_path):
    mem = session_mem(tmp_path)
    good = mem.evaluate_summary("The payments pod crashes with CrashLoopBackOff; raise its memory by 512 MB.", SESSION, "Payments pod")
    bad = mem.evaluate_summary("They discussed some things.", SESSION, "Payments pod")
    assert good["overall_score"] > bad["overall_score"] and good["coverage"] > bad["coverage"]
    as_dicts = mem.evaluate_summary("The payments pod crashes.", [{"content": t} for t in SESSION])
    assert as_dicts["details"]["relevance_basis"] == "keywords"
    with pytest.raises(InvalidInputError, match="messages="):
        mem.evaluate_summary("x", "one message")
    with pytest.raises(InvalidInputError, match=r"messages\[1\]"):
        mem.evaluate_summary("x", ["ok", 5])
    with pytest.raises(InvalidInputError, match="summary="):
        mem.evaluate_summary(None, SESSION)
    with pytest.raises(InvalidInputError, match="title="):
        mem.evaluate_summary("x", SESSION, title=3)


async def test_async_twins(tmp_path):
    mem = session_mem(tmp_path)
    r = await mem.aevaluate_summary("The payments pod crashes.", SESSION, "Payments")
    assert r["overall_score"] > 0
    assert await mem.aget_summary_quality("u1", "s1") is None


# -- issue 24: the rest of the chat is the evaluator's background ----------------------------------------
LAPTOP = [
    ("l1", "carol", "My laptop crashes after the graphics driver update"),
    ("l2", "dave", "Roll back the graphics driver to the previous version"),
    ("l3", "carol", "The rollback worked, the laptop is stable now"),
]


def test_a_topic_summary_is_weighed_against_the_rest_of_its_chat(tmp_path):
    mem = build(tmp_path, embedder="none")
    feed(mem, "c1", LAPTOP)
    feed(mem, "c1", HIKE, start=T0 + timedelta(hours=5))
    mem.process()
    hike, laptop = mem.topics.topic_of("h1", chat_id="c1"), mem.topics.topic_of("l1", chat_id="c1")
    assert hike != laptop
    mem.topics.summarize(hike)
    q = mem.topics.evaluate_summary(hike)
    assert q["details"]["background_docs"] == 1 and q["support"] > 0.9  # the laptop thread; the extractive summary is all supported
    with build(tmp_path / "off", embedder="none", grounded=False) as off:
        feed(off, "c1", LAPTOP)
        feed(off, "c1", HIKE, start=T0 + timedelta(hours=5))
        off.process()
        off.topics.summarize(off.topics.topic_of("h1", chat_id="c1"))
        assert off.topics.evaluate_summary(off.topics.topic_of("h1", chat_id="c1"))["details"]["background_docs"] == 0


def test_a_session_summary_is_weighed_against_the_rest_of_the_session(tmp_path):
    mem = session_mem(tmp_path)
    add_session(mem, SESSION)
    mem.process()
    q = mem.get_summary_quality("u1", "s1")["quality"]
    assert q["details"]["background_docs"] == 1  # the short-term window after the summarized span
    assert q["support"] > 0.9 and q["details"]["support"]["unsupported"] == []


def test_engine_level_evaluate_summary_takes_a_background(tmp_path):
    mem = session_mem(tmp_path)
    earlier = ["We bought the Frankfurt office furniture in March", "The office chairs cost 300 euros each"]
    own = mem.evaluate_summary("Raise the memory limit of the payments pod after CrashLoopBackOff.", SESSION, background=earlier)
    stale = mem.evaluate_summary("They bought office chairs for 300 euros each in Frankfurt in March.", SESSION, background=earlier)
    assert own["details"]["background_docs"] == 1 and own["overall_score"] > stale["overall_score"]
    assert "300" in stale["details"]["support"]["unsupported"]
    with pytest.raises(InvalidInputError, match="background="):
        mem.evaluate_summary("x", SESSION, background="one message")
    with pytest.raises(InvalidInputError, match=r"background\[0\]"):
        mem.evaluate_summary("x", SESSION, background=[7])
