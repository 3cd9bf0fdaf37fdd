"""Group chats (issue 28): who is in a chat decides what a member's context holds.

A chat of three in en/ru/zh: each member's context holds the others' recent messages, older messages
and topic summaries; a user of another chat and another tenant get nothing; a private chat's message
never appears in a group member's context; a chat declared private refuses a second human and stores
nothing. Run on the embedded store and on every server record store."""

from __future__ import annotations

import pytest

from server_stores import SERVER_KINDS, server_records

from layered_memory import InvalidInputError, LayeredMemory, LayeredMemorySettings, NotFoundError
from layered_memory.testing import HashEmbedder

T0 = 1_714_550_400  # 2024-05-01T08:00:00Z

CHATS = {
    "en": ("tg:-100", [("alice", "Alice", "I am bringing the lemon cake on Saturday"),
                       ("bob", "Bob", "I will bring two bottles of sparkling water"),
                       ("carol", "Carol", "I can bring the folding chairs from my garage")]),
    "ru": ("tg:-200", [("alice", "Алиса", "Я принесу лимонный торт в субботу"),
                       ("bob", "Борис", "Я принесу две бутылки газированной воды"),
                       ("carol", "Катя", "Я могу принести складные стулья из гаража")]),
    "zh": ("tg:-300", [("alice", "爱丽丝", "我周六带柠檬蛋糕"),
                       ("bob", "鲍勃", "我会带两瓶气泡水"),
                       ("carol", "卡罗尔", "我可以从车库带折叠椅")]),
}


@pytest.fixture(params=["embedded", *SERVER_KINDS])
def mem(request, tmp_path):
    settings = LayeredMemorySettings()
    settings.memory.short_term_window = 4
    if request.param == "embedded":
        m = LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=64), settings=settings)
    else:
        from layered_memory.stores.qdrant_server import QdrantVectorIndex

        records = server_records(request, request.param)
        m = LayeredMemory.from_stores(records, QdrantVectorIndex.in_memory(), embedder=HashEmbedder(dim=64), settings=settings)
    yield m
    m.close()


def write_group(mem: LayeredMemory, lang: str, *, filler: int = 6) -> str:
    """The three members' plans, then ``filler`` newer turns that push them out of the window."""
    chat, turns = CHATS[lang]
    rows = [{"message_id": f"{lang}.{i}", "chat_id": chat, "user_id": user, "user_name": name, "content": text,
             "create_time": T0 + 60 * i} for i, (user, name, text) in enumerate(turns)]
    rows += [{"message_id": f"{lang}.f{i}", "chat_id": chat, "user_id": ("alice", "bob", "carol")[i % 3],
              "content": f"ok {i}", "create_time": T0 + 600 + 60 * i} for i in range(filler)]
    mem.add_messages(rows)
    mem.flush()
    return chat


def context_text(mem: LayeredMemory, user: str, chat: str, query: str) -> str:
    return "\n".join(m.content for m in mem.get_context_for_user(user, chat, query=query, max_tokens=4000))


@pytest.mark.parametrize("lang", sorted(CHATS))
def test_each_member_sees_the_others_recent_and_older_messages(mem, lang):
    chat = write_group(mem, lang, filler=0)
    _, turns = CHATS[lang]
    for user, _, _ in turns:  # the window of each member holds all three plans
        window = [m.content for m in mem.get_context_for_user(user, chat) if m.kind == "window"]
        assert window == [t for _, _, t in turns], (user, window)
    assert mem.chats.get(chat) == {"chat_id": chat, "kind": "group", "declared": False, "members": ["alice", "bob", "carol"]}


@pytest.mark.parametrize("lang", sorted(CHATS))
def test_an_older_message_of_another_member_is_recalled(mem, lang):
    chat = write_group(mem, lang, filler=8)  # the plans are older than the window now
    _, turns = CHATS[lang]
    bobs = turns[1][2]
    assert bobs in context_text(mem, "alice", chat, query=bobs)  # Alice asks about what Bob said
    assert bobs in context_text(mem.for_user("carol"), None, chat, query=bobs)  # a bound handle: the same
    hits = mem.for_user("alice").search(bobs, k=3).hits
    assert hits and hits[0].meta["user_id"] == "bob"


def test_non_members_other_tenants_and_private_chats_stay_apart(mem):
    chat = write_group(mem, "en", filler=8)
    mem.add_message(message_id="p1", chat_id="dm:alice", user_id="alice", content="my private lemon cake recipe uses 3 lemons",
                    create_time=T0)
    mem.chats.declare("dm:alice", "private")
    mem.add_message(message_id="x1", chat_id="tg:-999", user_id="dave", content="who brings the lemon cake?", create_time=T0)
    dave = mem.for_user("dave")
    for text in (context_text(mem, "dave", chat, "lemon cake"), context_text(mem, "dave", "tg:-999", "lemon cake")):
        assert "Saturday" not in text and "3 lemons" not in text
    assert dave.search("lemon cake Saturday").hits == [h for h in dave.search("lemon cake Saturday").hits if h.meta["user_id"] == "dave"]
    assert dave.get_session_messages(None, chat) == []
    with pytest.raises(NotFoundError):
        dave.chats.get(chat)
    other = mem.tenant("beta")
    assert "Saturday" not in context_text(other, "alice", chat, "lemon cake")
    assert other.search("lemon cake").hits == []
    for member in ("bob", "carol"):  # a group member never sees another member's private chat
        assert "3 lemons" not in context_text(mem, member, chat, "lemon cake recipe lemons")
        assert all(h.meta["channel_id"] != "dm:alice" for h in mem.for_user(member).search("lemon cake recipe", k=20).hits)
    assert "3 lemons" in context_text(mem, "alice", chat, "lemon cake recipe lemons")  # her own other chat


def test_a_declared_private_chat_refuses_a_second_human_and_stores_nothing(mem):
    mem.chats.declare("dm:ann", "private")
    mem.add_message(message_id="1", chat_id="dm:ann", user_id="ann", content="hello bot")
    mem.add_message(message_id="2", chat_id="dm:ann", user_id="bot-7", role="assistant", content="hello Ann")  # the bot
    with pytest.raises(InvalidInputError, match=r"user_id='bob'.*declared private to 'ann'.*declare the chat a group"):
        mem.add_messages([{"message_id": "3", "chat_id": "dm:ann", "user_id": "ann", "content": "fine"},
                          {"message_id": "4", "chat_id": "dm:ann", "user_id": "bob", "content": "let me in"}])
    assert mem.get_messages([("dm:ann", "3"), ("dm:ann", "4")]) == [None, None]  # the whole batch was refused
    assert mem.chats.get("dm:ann")["members"] == ["ann"]
    assert [m.content for m in mem.get_session_messages("ann", "dm:ann")] == ["hello bot", "hello Ann"]
    write_group(mem, "en", filler=0)
    with pytest.raises(InvalidInputError, match=r"has 3 human members \(alice, bob, carol\); declare it a group"):
        mem.chats.declare("tg:-100", "private")


def test_declared_members_are_the_membership(mem):
    chat = write_group(mem, "en", filler=0)
    mem.chats.declare(chat, "group", members=["alice", "bob"])  # carol left the chat
    assert mem.chats.get(chat)["members"] == ["alice", "bob"]
    assert mem.chats.list("carol") == []
    assert "lemon cake" not in context_text(mem, "carol", chat, "lemon cake")
    assert [m.user_id for m in mem.for_user("carol").get_session_messages(None, chat)] == ["carol"]  # her own stay hers
    with pytest.raises(InvalidInputError, match="not a declared member"):
        mem.add_message(message_id="late", chat_id=chat, user_id="carol", content="back again")
    with pytest.raises(InvalidInputError, match="cannot declare"):
        mem.for_user("alice").chats.declare(chat, "group", members=["alice", "mallory"])


def test_group_summary_covers_every_member(mem):
    mem.settings.memory.summary_threshold_messages = 6
    chat = write_group(mem, "en", filler=9)
    mem.process()
    summary = mem.get_summary("alice", chat)
    assert summary is not None and summary == mem.get_summary("carol", chat)  # one summary of the chat
    assert mem.get_summary("dave", chat) is None


def test_adapter_sessions_named_alike_stay_two_conversations(mem):
    """The adapters key a session by user (seed 002): their chats start as personal, so a second user's
    session with the same name is theirs, and writing into the chat joins nobody to it."""
    from langchain_core.messages import HumanMessage
    from langchain_layered_memory import LayeredChatMessageHistory

    LayeredChatMessageHistory(mem, user_id="alice", session_id="default").add_message(HumanMessage("my PIN is 4821"))
    LayeredChatMessageHistory(mem, user_id="bob", session_id="default").add_message(HumanMessage("hello"))
    mem.add_message(message_id="x", chat_id="default", user_id="mallory", content="what is the PIN?")
    assert mem.chats.get("default") == {"chat_id": "default", "kind": "personal", "declared": True, "members": []}
    for user, own in (("bob", "hello"), ("mallory", "what is the PIN?")):
        assert [m.content for m in mem.get_session_messages(user, "default")] == [own]
        assert "4821" not in context_text(mem, user, "default", "PIN")
        assert all(h.meta["user_id"] == user for h in mem.for_user(user).search("PIN hello", k=10).hits)
    assert "4821" in context_text(mem, "alice", "default", "PIN")


def test_memberships_of_a_store_written_before_chats_are_learned_once(tmp_path):
    from layered_memory.chats import CHAT_SESSIONS, CHATS, MEMBERS, META, SESSION_CHATS, USER_CHATS

    with LayeredMemory.embedded(tmp_path, embedder="none") as m:
        write_group(m, "en", filler=0)
        m.add_messages([{"message_id": f"a{i}", "chat_id": "s1", "user_id": u, "content": "hi", "metadata": {"source": "llamaindex"}}
                        for i, u in enumerate(("ann", "ben"))])
        for collection in (CHATS, MEMBERS, USER_CHATS, SESSION_CHATS, CHAT_SESSIONS, META):  # what an older version left
            m.records.delete_docs("default", collection)
    with LayeredMemory.embedded(tmp_path, embedder="none") as m:
        assert m.chats.get("tg:-100")["members"] == ["alice", "bob", "carol"]
        assert m.chats.get("s1")["kind"] == "personal"  # the LlamaIndex sessions of ann and ben stay apart
        assert [x.content for x in m.get_session_messages("ann", "s1")] == ["hi"] and len(m.get_session_messages("ben", "s1")) == 1
        assert m.chats.registry.backfill("default") == 0  # once


def test_a_context_reads_each_membership_once_and_the_next_one_reads_again(mem):
    """One context reads each membership document once (``ChatRegistry.snapshot``: its window, its summary
    and every recalled turn's neighbour share one view), and the view ends with the call: a member who joins
    between two contexts is in the second."""
    chat = write_group(mem, "en")
    records, reads = mem._core.records, []
    real = records.list_docs

    def spy(tenant, collection, **kw):
        reads.append((tenant, collection, kw.get("prefix")))
        return real(tenant, collection, **kw)

    records.list_docs = spy
    try:
        assert "sparkling water" in context_text(mem, "alice", chat, "what is Bob bringing?")
        assert reads and len(reads) == len(set(reads)), reads
        assert "dave" not in mem.chats.get(chat)["members"]
        mem.add_message(message_id="en.d", chat_id=chat, user_id="dave", user_name="Dave", content="I bring the napkins",
                        create_time=T0 + 3600)
        mem.flush()
        assert "dave" in mem.chats.get(chat)["members"]
        assert "napkins" in context_text(mem, "alice", chat, "who brings the napkins?")
        assert "napkins" in context_text(mem, "dave", chat, "who brings napkins?")
    finally:
        records.list_docs = real


def test_a_member_chat_that_carries_the_whole_session_is_its_only_source(mem):
    """When every chat carrying a session is one of the user's chats, those chats hold all of the session
    (the user's own turns and the bot's replies too): the window and a turn's neighbour are read from them
    alone, and they are the same as when the user's own messages are read besides."""
    chat = write_group(mem, "en")
    mem.add_message(message_id="en.bot", chat_id=chat, user_id="bot", role="assistant", content="Noted, see you Saturday",
                    create_time=T0 + 3000)
    calls: list[str] = []
    records = mem._core.records
    real_window, real_chat = records.window, records.chat_window
    records.window = lambda *a, **k: calls.append("window") or real_window(*a, **k)
    records.chat_window = lambda *a, **k: calls.append("chat_window") or real_chat(*a, **k)
    try:
        got = [m.message_id for m in mem.get_session_messages("carol", chat, limit=4)]
    finally:
        records.window, records.chat_window = real_window, real_chat
    assert calls == ["chat_window"]
    everyone = sorted(records.scan_messages(mem.tenant_id, session_key=chat), key=lambda m: m.seq or 0)
    assert got == [m.message_id for m in everyone][-4:] and got[-1] == "en.bot"
