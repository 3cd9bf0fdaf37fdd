"""Issue 10 bugs 5 and 6 on every backend, each on a fresh engine: message ids are per chat, and
clearing a session deletes exactly that session (``telegram:1`` is a key prefix of ``telegram:10``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest

from isolation_world import BACKENDS, POSTGRES, REDIS, T0, backend_marks, build, redis_fixture
from layered_memory import InvalidInputError, LayeredMemory


@pytest.fixture(params=[pytest.param(b, marks=backend_marks(b)) for b in BACKENDS])
def engine(request: pytest.FixtureRequest, tmp_path) -> Iterator[LayeredMemory]:
    redis_url = request.getfixturevalue(redis_fixture(request.param)) if request.param in REDIS else None
    postgres_url = request.getfixturevalue("postgres_url") if request.param in POSTGRES else None
    mem, closers = build(request.param, str(tmp_path), redis_url, f"bug{uuid.uuid4().hex[:10]}", postgres_url)
    yield mem
    mem.close()
    for close in closers:
        close()


def session(mem: LayeredMemory, user: str, chat: str, n: int = 6) -> None:
    mem.for_user(user).add_messages([
        {"message_id": f"{user}.{chat}.{i}", "chat_id": chat, "user_id": user, "role": "user" if i % 2 == 0 else "assistant",
         "content": f"message {i} about the vault in {chat}", "create_time": T0 + timedelta(minutes=i)}
        for i in range(n)
    ])
    mem.refresh_summary(user, chat, force=True)


def state(mem: LayeredMemory, user: str, chat: str) -> tuple:
    return (mem.get_summary(user, chat), chat in mem.list_sessions(user),
            [m.message_id for m in mem.get_session_messages(user, chat)])


def test_clear_session_leaves_the_sessions_it_prefixes(engine):
    session(engine, "victim", "telegram:1")
    session(engine, "victim", "telegram:10")
    before = state(engine, "victim", "telegram:10")
    assert before[0] and before[1] and len(before[2]) == 6
    assert engine.for_user("victim").clear_session(None, "telegram:1") == 6
    assert state(engine, "victim", "telegram:1") == (None, False, [])
    assert state(engine, "victim", "telegram:10") == before


def test_clearing_the_empty_session_is_an_error(engine):
    session(engine, "victim", "telegram:1")
    session(engine, "victim", "web:7")
    before = [state(engine, "victim", s) for s in ("telegram:1", "web:7")]
    with pytest.raises(InvalidInputError):
        engine.for_user("victim").clear_session(None, "")
    assert [state(engine, "victim", s) for s in ("telegram:1", "web:7")] == before


def test_clear_session_none_clears_only_that_user(engine):
    """The documented "all sessions" form (``session_id=None``) stays within the user, also in a group chat
    they share (both wrote in it: both are members and see each other's messages)."""
    session(engine, "victim", "telegram:1")
    session(engine, "mallory", "telegram:1")
    before = state(engine, "victim", "telegram:1")
    assert any(i.startswith("mallory.") for i in before[2])  # a group: the victim sees mallory's turns too
    assert engine.for_user("mallory").clear_session(None) == 6
    _, listed, ids = state(engine, "mallory", "telegram:1")
    assert not listed and not any(i.startswith("mallory.") for i in ids)  # hers are gone, the victim's stay
    after = state(engine, "victim", "telegram:1")
    assert after[1:] == (before[1], [i for i in before[2] if not i.startswith("mallory.")])
    # the group's summary covered mallory's turns: rebuilt from what is left (here it all fits in the window)
    assert "mallory" not in (after[0] or "")


def test_message_id_is_per_chat(engine):
    alice = engine.for_user("alice").add_message(message_id="42", chat_id="telegram:100", user_id="alice", content="alice wrote 42")
    bob = engine.for_user("bob").add_message(message_id="42", chat_id="telegram:200", user_id="bob", content="bob wrote 42")
    assert (alice.chat_id, alice.content) == ("telegram:100", "alice wrote 42")
    assert (bob.chat_id, bob.user_id, bob.content) == ("telegram:200", "bob", "bob wrote 42")
    assert [m.content for m in engine.get_session_messages("alice", "telegram:100")] == ["alice wrote 42"]
    assert [m.content for m in engine.get_session_messages("bob", "telegram:200")] == ["bob wrote 42"]
    for user, other in (("alice", "bob"), ("bob", "alice")):
        texts = [h.text for h in engine.for_user(user).search("wrote 42", route="bm25").hits]
        assert texts == [f"{user} wrote 42"], f"{user} sees {texts}"
        assert not any(other in str(m) for m in engine.for_user(user).get_session_messages(None, f"telegram:{100 if user == 'alice' else 200}"))
    again = engine.for_user("bob").add_message(message_id="42", chat_id="telegram:200", user_id="bob", content="bob wrote 42")
    assert again.seq == bob.seq  # idempotency stays
