"""What an edit or a delete does to the tiers derived from a message (issue 24, "Edits"): the session summary
and the topic summary that quote it are marked stale, left out of the context and rewritten without the old
text; an edited message is re-threaded when it no longer fits its topic; long-term facts extracted from it
are marked stale (left out of the context when nothing else supports them) and the new text is extracted
again. The chat model is scripted: it answers each tier's prompt from the words it was shown."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.config import TopicSettings
from layered_memory.errors import BackendError
from layered_memory.testing import HashEmbedder

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
CITIES = ("Zurich", "Kazan", "Lisbon")
OLD = "zebrafault"  # the word an edit or a delete must take out of every summary


class Scripted:
    """A chat model that answers from the words of its prompt (a summary repeats the cities and the canary
    it was shown; extraction finds the cities; the judge gives 8)."""

    name = "edits-scripted"

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, prompt: str, *, system: str | None = None, operation: str | None = None) -> str:
        self.calls += 1
        head = prompt.lstrip()
        shown = [w for w in (*CITIES, OLD, "deploy", "payments") if w in prompt]
        if head.startswith("Write a short title"):
            return "Trip and deploy"
        if head.startswith("Extract the important entities"):
            return json.dumps({"entities": [{"entity_name": c, "entity_type": "LOCATION", "description": f"the city {c}"}
                                            for c in CITIES if c in prompt]})
        if head.startswith("Extract the relations"):
            return json.dumps({"relations": []})
        if head.startswith("Build a profile"):
            return json.dumps({"profile_text": "travels a lot", "preferences": [{"key": "city", "value": c} for c in CITIES if c in prompt],
                               "traits": []})
        if head.startswith("Rate how well"):
            return "8"
        if head.startswith(("Summarize", "Merge", "You maintain")):
            return "Summary: " + " ".join(shown)
        return "1"


def rows(texts: list[str], chat: str = "c1", user: str = "u1", *, replies: bool = False) -> list[dict[str, Any]]:
    """Messages m0, m1, ...; ``replies``: each replies to the one before (one topic, whatever the words)."""
    return [{"message_id": f"m{i}", "chat_id": chat, "user_id": user, "role": "user" if i % 2 == 0 else "assistant",
             "content": t, "create_time": T0 + timedelta(minutes=i), "reply_message_id": f"m{i - 1}" if replies and i else None}
            for i, t in enumerate(texts)]


TRIP = [f"we fly to Zurich for the payments {OLD} review", "the Zurich flight leaves at nine",
        "book the hotel in Zurich near the station", "the Zurich hotel is booked", "pack warm clothes for Zurich",
        "the Zurich trip is all set"]


def make(tmp_path: Any, *, model: Any = None, embedder: Any = None) -> LayeredMemory:
    s = LayeredMemorySettings(index_mode="sync", topics=TopicSettings(summary_every_messages=3))
    s.memory.short_term_window = 2
    s.memory.summary_threshold_messages = 3
    chat = model.complete if model is not None else None  # a str -> str callable: the engine wraps it
    return LayeredMemory.embedded(tmp_path, embedder=embedder or HashEmbedder(), chat_model=chat, settings=s)


def summary_line(mem: LayeredMemory, user: str = "u1", session: str = "c1") -> str | None:
    ctx = mem.get_context_for_user(user, session, include_vector=False)
    return next((c.content for c in ctx if c.kind == "summary"), None)


@pytest.mark.parametrize("change", ["edit", "delete"])
def test_session_summary_without_a_chat_model_is_rebuilt_at_once(tmp_path: Any, change: str) -> None:
    mem = make(tmp_path)
    mem.add_messages(rows(TRIP))
    assert OLD in (summary_line(mem) or "")
    if change == "edit":
        mem.edit_message("c1", "m0", content="we fly to Zurich for the payments review")
    else:
        assert mem.delete_message("c1", "m0")
    quality = mem.get_summary_quality("u1", "c1")
    assert quality is not None and [w["message_id"] for w in quality["stale"]] == ["m0"]
    line = summary_line(mem)  # the extractive summary is cheap: rebuilt by the context itself
    assert line and OLD not in line and "Zurich" in line
    assert mem.get_summary_quality("u1", "c1")["stale"] == []
    assert OLD not in (mem.get_summary("u1", "c1") or "")
    mem.close()


def test_session_summary_with_a_chat_model_is_left_out_until_process(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(TRIP))
    mem.process()
    assert OLD in (summary_line(mem) or "")
    mem.edit_message("c1", "m0", content="we fly to Zurich for the payments review")
    assert summary_line(mem) is None  # stale: it quotes the replaced text
    assert mem.get_summary_quality("u1", "c1")["stale"]
    mem.close()
    with make(tmp_path, model=Scripted()) as again:  # a new process: the stale mark is durable
        again.process()
        line = summary_line(again)
        assert line and OLD not in line and "Zurich" in line
        assert again.get_summary_quality("u1", "c1")["history"][-1]["stale"] is True


def test_topic_summary_is_marked_stale_and_rewritten_without_the_old_text(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(TRIP))
    mem.process()
    topic = mem.topics.topic_of("m0", chat_id="c1")
    assert topic is not None and OLD in mem.topics.summary(topic).content  # type: ignore[union-attr]
    version = mem.topics.summary(topic).version  # type: ignore[union-attr]
    before = mem.get_context_for_user("u1", "c1", query="Zurich payments review")
    assert 'topic "' in before.text and OLD in before.text  # the summary is a context line until the edit
    mem.edit_message("c1", "m0", content="we fly to Zurich for the payments review")
    doc = mem.topics.store.get([topic])[0]
    assert doc is not None and [w["message_id"] for w in doc["summary_stale"]] == ["m0"]
    hits = mem.topics.search_summaries("Zurich payments", k=5)
    assert hits and hits[0].meta.get("stale") is True  # search says so until it is rewritten
    after = mem.get_context_for_user("u1", "c1", query="Zurich payments review")
    assert 'topic "' not in after.text and OLD not in after.text  # the context leaves it out
    mem.process()
    assert mem.topics.topic_of("m0", chat_id="c1") == topic  # still about the trip: stays in its topic
    latest = mem.topics.summary(topic)
    assert latest is not None and latest.version == version + 1 and OLD not in latest.content and "Zurich" in latest.content
    assert "summary_stale" not in mem.topics.store.get([topic])[0]  # type: ignore[operator]
    assert not mem.topics.search_summaries("Zurich payments", k=5)[0].meta.get("stale")
    assert mem.doctor()["ok"]
    mem.close()


def test_an_edited_message_that_no_longer_fits_is_threaded_again(tmp_path: Any) -> None:
    mem = make(tmp_path)
    mem.add_messages(rows(TRIP))
    mem.process()
    trip = mem.topics.topic_of("m4", chat_id="c1")
    count = mem.topics.get(trip).message_count  # type: ignore[arg-type]
    mem.edit_message("c1", "m4", content="kubernetes ingress certificates expired yesterday evening")
    assert mem.topics.topic_of("m4", chat_id="c1") == trip  # decided by the next process(), off the write path
    done = mem.process()
    assert done["rethreaded"] == 1
    moved = mem.topics.topic_of("m4", chat_id="c1")
    assert moved not in (None, trip)
    assert mem.topics.get(trip).message_count == count - 1  # type: ignore[arg-type]
    assert "m4" not in [m.message_id for m in mem.topics.messages(trip)]  # type: ignore[arg-type]
    assert [m.message_id for m in mem.topics.messages(moved)] == ["m4"]  # type: ignore[arg-type]
    mem.edit_message("c1", "m5", content="the Zurich trip is all set now")  # a small fix: stays
    assert mem.process()["rethreaded"] == 0 and mem.topics.topic_of("m5", chat_id="c1") == trip
    assert mem.doctor()["ok"] and mem.topics.pending() == 0
    mem.close()


def test_deleting_a_topics_messages_updates_and_finally_removes_it(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    trip = rows(TRIP, replies=True)
    trip[0]["user_id"] = "u2"  # u2 took part with m0 only
    mem.add_messages(trip)
    mem.process()
    topic = mem.topics.topic_of("m0", chat_id="c1")
    assert sorted(mem.topics.store.get([topic])[0]["user_ids"]) == ["u1", "u2"]  # type: ignore[index]
    assert mem.delete_message("c1", "m0")
    doc = mem.topics.store.get([topic])[0]
    assert doc["message_count"] == 5 and "m0" not in doc["recent"] and doc["summary_stale"]  # type: ignore[index]
    assert doc["user_ids"] == ["u1"]  # type: ignore[index]  # u2's only message went: u2 no longer took part
    mem.process()
    assert OLD not in mem.topics.summary(topic).content  # type: ignore[union-attr,arg-type]
    for i in range(1, 6):
        mem.delete_message("c1", f"m{i}")
    assert mem.topics.list("c1") == [] and mem.topics.store.summaries(topic) == []  # type: ignore[arg-type]
    assert mem.topics.search_summaries("Zurich", k=5) == []
    assert mem.doctor()["ok"]
    mem.close()


def test_facts_from_an_edited_or_deleted_message_are_marked_stale(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(["I moved to Kazan last spring", "Kazan is lovely in May", "we also visited Lisbon once",
                           "Lisbon had great food", "I might go back to Lisbon", "Lisbon again next year"], replies=True))
    mem.process()
    kazan = mem.knowledge.search_entities("Kazan")[0]
    assert kazan["sources"] == ["m0", "m1"] and kazan["metadata"]["stale"] == []
    before = mem.get_context_for_user("u1", "c1", query="Kazan Lisbon").text
    assert "Kazan (LOCATION)" in before and "city=Lisbon" in before  # the fact and the preference are context lines
    mem.edit_message("c1", "m0", content="I moved to Zurich last spring")
    mem.delete_message("c1", "m1")
    kazan = mem.knowledge.search_entities("Kazan")[0]
    assert {(w["message_id"], w["reason"]) for w in kazan["metadata"]["stale"]} == {("m0", "edit"), ("m1", "delete")}
    assert mem.knowledge.search_entities("Lisbon")[0]["metadata"]["stale"] == []  # other messages' facts stay as they were
    profile = mem.knowledge.get_profile("u1")
    assert profile is not None and [w["message_id"] for w in profile["stale"]] == ["m0"]
    prefs = {p["value"]: p for p in profile["preferences"]}  # built from m0, m2 and m4 together
    assert [w["message_id"] for w in prefs["Lisbon"]["stale"]] == ["m0"]
    lines = mem.get_context_for_user("u1", "c1", query="Kazan Lisbon").text
    assert "Kazan" not in lines  # only edited or deleted messages said it: left out of the context
    assert "city=Lisbon" in lines  # m2 and m4 still support it
    mem.process()  # the edited message is extracted again
    zurich = mem.knowledge.search_entities("Zurich")[0]
    assert zurich["entity_name"] == "Zurich" and zurich["sources"] == ["m0"] and zurich["metadata"]["stale"] == []
    mem.close()


def test_clear_session_takes_its_messages_out_of_topics_and_facts(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    trip = rows(TRIP, replies=True) + [{"message_id": "m6", "chat_id": "c1", "user_id": "u2", "role": "user",
                                         "content": "the Zurich trip sounds great", "create_time": T0 + timedelta(minutes=6),
                                         "reply_message_id": "m5"}]
    kazan = rows(["I moved to Kazan last spring", "Kazan is lovely in May", "the Kazan flat has a balcony",
                  "Kazan winters are cold"], chat="c2", replies=True)
    mem.add_messages(trip + kazan)
    mem.process()
    shared, own = mem.topics.topic_of("m0", chat_id="c1"), mem.topics.topic_of("m0", chat_id="c2")
    assert shared and own and shared != own and mem.topics.topic_of("m6", chat_id="c1") == shared
    assert sorted(mem.topics.store.get([shared])[0]["user_ids"]) == ["u1", "u2"]  # type: ignore[index]
    assert mem.knowledge.search_entities("Kazan")[0]["metadata"]["stale"] == []
    assert "Kazan (LOCATION)" in mem.get_context_for_user("u1", "c1", query="Kazan").text

    assert mem.clear_session("u1", "c2") == 4  # every message of the topic: the topic goes with its summaries
    assert mem.topics.list("c2") == [] and mem.topics.store.summaries(own) == []  # type: ignore[arg-type]
    assert not [h for h in mem.topics.search_summaries("Kazan", k=5) if h.id == own]
    stale = mem.knowledge.search_entities("Kazan")[0]["metadata"]["stale"]
    assert {(w["chat_id"], w["message_id"], w["reason"]) for w in stale} == {("c2", f"m{i}", "delete") for i in range(4)}
    assert "Kazan" not in mem.get_context_for_user("u1", "c1", query="Kazan").text  # only the cleared session said it
    assert mem.knowledge.search_entities("Zurich")[0]["metadata"]["stale"] == []  # another session's facts stay

    assert mem.clear_session("u1", "c1") == 6  # u2's reply keeps the topic: it stays, without u1
    doc = mem.topics.store.get([shared])[0]
    assert doc is not None and doc["message_count"] == 1 and doc["user_ids"] == ["u2"] and doc["summary_stale"]
    assert [m.message_id for m in mem.topics.messages(shared)] == ["m6"]  # type: ignore[arg-type]
    assert OLD not in mem.get_context_for_user("u2", "c1", query="Zurich payments review").text  # stale: left out
    mem.process()
    latest = mem.topics.summary(shared)  # type: ignore[arg-type]
    assert latest is not None and OLD not in latest.content
    assert OLD not in (mem.get_summary("u2", "c1") or "")  # the group's session summary, rebuilt from what is left
    assert mem.doctor()["ok"]
    mem.close()


def test_a_clear_interrupted_after_the_record_delete_is_finished_on_the_next_open(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(["I moved to Kazan last spring", "Kazan is lovely in May", "the Kazan flat has a balcony"], replies=True))
    mem.process()
    topic = mem.topics.topic_of("m0", chat_id="c1")
    assert topic and mem.knowledge.search_entities("Kazan")[0]["metadata"]["stale"] == []
    index_delete = mem.index.delete

    def dies(*args: Any, **kwargs: Any) -> None:  # the records are gone; the process stops before the index and tiers
        raise BackendError("injected fault", backend="test", op="delete")

    mem.index.delete = dies  # type: ignore[method-assign]
    with pytest.raises(BackendError):
        mem.clear_session("u1", "c1")
    mem.index.delete = index_delete  # type: ignore[method-assign]
    assert mem.get_messages([("c1", "m0")]) == [None] and mem.topics.store.get([topic])[0] is not None
    mem.close()
    with make(tmp_path, model=Scripted()) as again:  # the open drains the clear intent
        assert again.topics.store.get([topic])[0] is None and again.topics.list("c1") == []
        assert {w["message_id"] for w in again.knowledge.search_entities("Kazan")[0]["metadata"]["stale"]} == {"m0", "m1", "m2"}
        assert "Kazan" not in again.get_context_for_user("u1", "c1", query="Kazan").text
        assert again.doctor()["ok"]


def test_a_delete_in_one_chat_never_stales_a_fact_from_another_chats_message_with_the_same_id(tmp_path: Any) -> None:
    # Telegram numbers each chat's messages from 1: "m0" of c2 is not "m0" of c1
    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(["I moved to Kazan last spring", "Kazan is lovely in May", "the Kazan flat has a balcony"], replies=True)
                     + rows(["Kazan has a great kremlin", "the weather today is grey", "it may rain all week"], chat="c2", replies=True))
    mem.process()
    kazan = mem.knowledge.search_entities("Kazan")[0]
    assert {"c1", "c2"} <= set(kazan["metadata"]["chat_ids"]) and ["c2", "m0"] in kazan["source_refs"]
    assert ["c2", "m1"] not in kazan["source_refs"] and ["c1", "m1"] in kazan["source_refs"]
    mem.delete_message("c2", "m0")  # the kremlin: said in c2
    mem.delete_message("c2", "m1")  # the weather: its id is also c1's "Kazan is lovely in May"
    stale = mem.knowledge.search_entities("Kazan")[0]["metadata"]["stale"]
    assert [(w["chat_id"], w["message_id"]) for w in stale] == [("c2", "m0")]  # only the message that said it
    assert "Kazan (LOCATION)" in mem.get_context_for_user("u1", "c2", query="Kazan").text  # c1 still says it
    mem.clear_session("u1", "c1")
    assert "Kazan (LOCATION)" not in mem.get_context_for_user("u1", "c2", query="Kazan").text  # now nothing does
    mem.close()


def test_a_fact_written_before_source_refs_is_still_read_by_id_within_its_chats(tmp_path: Any) -> None:
    from layered_memory.knowledge.graph import ENTITIES, add_refs, confirm, unsupported

    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(["I moved to Kazan last spring", "Kazan is lovely in May", "the Kazan flat has a balcony"], replies=True))
    mem.process()
    eid = mem.knowledge.search_entities("Kazan")[0]["entity_id"]
    doc = mem.records.get_docs("default", ENTITIES, [eid])[0]
    legacy = {k: v for k, v in doc.items() if k != "source_refs"}  # as an older release wrote it
    mem.records.put_docs("default", ENTITIES, {eid: legacy})
    add_refs(legacy, "c9", ["m7"])
    assert "source_refs" not in legacy  # pairs for its newest sources only would read the older ones as gone
    for m in legacy["sources"]:
        mem.delete_message("c1", m)
    stale = mem.records.get_docs("default", ENTITIES, [eid])[0]["stale"]
    assert unsupported(mem.records.get_docs("default", ENTITIES, [eid])[0]) and {w["message_id"] for w in stale} == set(legacy["sources"])
    fresh = {"sources": ["m0"], "source_refs": [["c1", "m0"]], "stale": [{"chat_id": "c2", "message_id": "m0"}]}
    assert not unsupported(fresh)  # c2's m0 is another message
    confirm(fresh, ["m0"], "c1")
    assert fresh["stale"] == [{"chat_id": "c2", "message_id": "m0"}]  # found again in c1: c2's entry stays
    mem.close()


def test_deleting_a_members_last_message_in_a_group_marks_the_groups_summary_stale(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    trip = rows(TRIP, replies=True)
    trip[0]["user_id"] = "u2"  # u2's only message in the chat holds the canary
    mem.add_messages(trip)
    mem.process()
    assert OLD in (mem.get_summary("u1", "c1") or "")  # the group's summary of everyone's messages
    assert mem.delete_message("c1", "m0")
    assert OLD not in mem.get_context_for_user("u1", "c1", query="Zurich payments review").text  # stale: left out
    mem.process()
    assert OLD not in (mem.get_summary("u1", "c1") or "") and "Zurich" in (mem.get_summary("u1", "c1") or "")
    mem.close()


@pytest.mark.parametrize("change", ["edit", "delete"])
def test_the_topic_tools_leave_out_a_stale_summary_until_it_is_rewritten(tmp_path: Any, change: str) -> None:
    from layered_memory.tools import topic_search_tool

    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(TRIP, replies=True))
    mem.process()
    assert OLD in topic_search_tool(mem, "Zurich payments review")  # the summary and its keywords quote m0
    assert any(OLD in h.text for h in mem.topics.quick_search("Zurich payments review").hits)
    if change == "edit":
        mem.edit_message("c1", "m0", content="we fly to Zurich for the payments review")
    else:
        mem.delete_message("c1", "m0")
    shown = topic_search_tool(mem, "Zurich payments review")  # what a model calling the tool reads
    assert "pack warm clothes" in shown and OLD not in shown and "Summary:" not in shown  # the topic, without its summary
    assert not any(OLD in h.text for h in mem.topics.quick_search("Zurich payments review").hits)
    found = mem.topics.search_summaries("Zurich payments", k=5)
    if change == "edit":
        assert found[0].meta.get("stale") is True  # the API still returns it, flagged
    else:
        assert found == []  # a delete redacts the summaries written over the message: no point until the next version
    mem.process()
    shown = topic_search_tool(mem, "Zurich payments review")
    assert "Summary:" in shown and OLD not in shown
    mem.close()


def test_a_profile_whose_every_message_was_cleared_leaves_the_context(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    mem.add_messages(rows(["I moved to Kazan last spring", "Kazan is lovely in May", "the Kazan flat has a balcony"], replies=True)
                     + rows(["we also visited Lisbon once", "Lisbon had great food", "I might go back to Lisbon"], chat="c2", replies=True))
    mem.process()
    assert ["c2", "m0"] in mem.knowledge.get_profile("u1")["source_refs"]  # type: ignore[index]  # both chats built it
    assert "profile: travels a lot" in mem.get_context_for_user("u1", "c9", query="where do I live?").text
    mem.clear_session("u1", "c1")
    assert "profile: travels a lot" in mem.get_context_for_user("u1", "c9", query="where do I live?").text  # c2 still supports it
    mem.clear_session("u1", "c2")
    assert "profile:" not in mem.get_context_for_user("u1", "c9", query="where do I live?").text
    assert mem.knowledge.get_profile("u1") is not None  # kept, marked: facts are never deleted by a clear
    mem.close()


@pytest.mark.parametrize("change", ["edit", "delete"])
def test_a_topic_titled_from_a_changed_message_is_titled_again(tmp_path: Any, change: str) -> None:
    from layered_memory.tools import topic_search_tool

    mem = make(tmp_path)  # no chat model: a topic is titled by its first message's keywords
    mem.add_messages(rows(TRIP, replies=True))
    mem.process()
    topic = mem.topics.topic_of("m1", chat_id="c1")
    assert OLD in mem.topics.get(topic).title  # type: ignore[arg-type,union-attr]
    if change == "edit":
        mem.edit_message("c1", "m0", content="we fly to Zurich for the quarterly review")
    else:
        mem.delete_message("c1", "m0")
    title = mem.topics.get(topic).title  # type: ignore[arg-type,union-attr]
    assert OLD not in title and "zurich" in title.casefold()
    assert OLD not in topic_search_tool(mem, "Zurich trip")
    mem.delete_message("c1", "m3")  # not the title's message: the title stays
    assert mem.topics.get(topic).title == title  # type: ignore[arg-type,union-attr]
    mem.close()


def test_with_a_chat_model_the_next_summary_titles_it_again(tmp_path: Any) -> None:
    model = Scripted()
    mem = make(tmp_path, model=model)
    mem.add_messages(rows(TRIP, replies=True))
    mem.process()
    topic = mem.topics.topic_of("m1", chat_id="c1")
    mem.delete_message("c1", "m0")
    doc = mem.topics.store.get([topic])[0]
    assert doc["title"] == "flight zurich leaves nine" and doc["title_stale"]  # type: ignore[index]  # keywords until then
    mem.process()  # the summary quoted m0: rewritten, and the model titles the topic from its first message now
    doc = mem.topics.store.get([topic])[0]
    assert doc["title"] == "Trip and deploy" and "title_stale" not in doc  # type: ignore[index,operator]
    mem.close()


def test_a_delete_redacts_the_summary_versions_written_over_the_message(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    trip = rows(TRIP, replies=True)
    trip[0]["user_id"] = "u2"  # u2 deletes its message; u1 reads the topic's history
    mem.add_messages(trip)
    mem.process()
    topic = mem.topics.topic_of("m1", chat_id="c1")
    u1 = mem.for_user("u1")
    assert [OLD in v.content for v in u1.topics.summaries(topic)] == [True]  # type: ignore[arg-type]
    assert OLD in (u1.topics.get(topic).keywords or {})  # type: ignore[arg-type,union-attr]
    mem.delete_message("c1", "m0")
    versions = u1.topics.summaries(topic)  # type: ignore[arg-type]
    assert [v.content for v in versions] == [""] and OLD not in str(versions[0].metadata)
    assert OLD not in str(u1.topics.get(topic))  # type: ignore[arg-type]  # the topic's keywords went with them
    assert mem.doctor()["ok"]  # no point is expected until the next version
    mem.process()
    versions = u1.topics.summaries(topic)  # type: ignore[arg-type]
    assert len(versions) == 2 and versions[-1].content and not any(OLD in v.content for v in versions)
    assert mem.topics.search_summaries("Zurich", k=5) and mem.doctor()["ok"]
    mem.close()


def test_a_version_written_before_the_deleted_message_stays_whole(tmp_path: Any) -> None:
    mem = make(tmp_path, model=Scripted())
    trip = rows(TRIP + [f"the {OLD} review moved to Friday", "noted, Friday then", "see you in Zurich"], replies=True)
    mem.add_messages([{**r, "content": r["content"].replace(f" {OLD}", "")} if r["message_id"] == "m0" else r for r in trip[:6]])
    mem.process()
    topic = mem.topics.topic_of("m1", chat_id="c1")
    mem.add_messages(trip[6:])
    mem.process()
    before = [v.content for v in mem.topics.summaries(topic)]  # type: ignore[arg-type]
    assert len(before) == 2 and OLD not in before[0] and OLD in before[1]
    mem.delete_message("c1", "m6")  # said after the first version was written
    after = [v.content for v in mem.topics.summaries(topic)]  # type: ignore[arg-type]
    assert after == [before[0], ""]
    mem.close()


@pytest.mark.parametrize("model", [False, True])
def test_get_summary_never_returns_a_summary_that_quotes_a_deleted_message(tmp_path: Any, model: bool) -> None:
    mem = make(tmp_path, model=Scripted() if model else None)
    trip = rows(TRIP, replies=True)
    trip[0]["user_id"] = "u2"  # another member's message, in the group's summary u1 reads
    mem.add_messages(trip)
    mem.process()
    mem.get_context_for_user("u1", "c1")  # without a model, the context writes the extractive summary
    assert OLD in (mem.get_summary("u1", "c1") or "")
    mem.delete_message("c1", "m0")
    if model:
        assert mem.get_summary("u1", "c1") is None  # left out until process(), as the context does
        mem.process()
    summary = mem.get_summary("u1", "c1")
    assert summary and OLD not in summary and "Zurich" in summary
    mem.close()
