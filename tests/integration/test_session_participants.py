"""Who is in a chat (issue 28): a bot that stores its replies under its own user_id (the author, as in Feishu
or Slack) keeps them in the window of the users it talks to, named as a bot (``memory.bot_user_ids``) or not
(a ``role="assistant"`` message of an unknown id is the bot's). In a group chat every member's window holds
the others' messages; a user who is not a member of a chat sees nothing of it."""

from __future__ import annotations

import pytest

from server_stores import SERVER_KINDS, server_records

from layered_memory import LayeredMemory, LayeredMemorySettings

BOT = "bot-42"


def rows(chat: str, user: str, n: int, start: int) -> list[dict]:
    out = []
    for i in range(n):
        author, role = (user, "user") if i % 2 == 0 else (BOT, "assistant")
        out.append({"message_id": f"{chat}.{start + i}", "chat_id": chat, "user_id": author, "role": role,
                    "content": f"{role} turn {start + i} in {chat}", "create_time": 1_700_000_000 + start + i})
    return out


@pytest.fixture(params=["sqlite", *SERVER_KINDS])
def mem(request, tmp_path):
    settings = LayeredMemorySettings()
    settings.memory.short_term_window = 4
    settings.memory.bot_user_ids = [BOT]
    if request.param == "sqlite":
        m = LayeredMemory.embedded(tmp_path, embedder="none", settings=settings)
    elif request.param == "redis":  # through from_urls, as a user configures it
        url = request.getfixturevalue("redis_url")
        settings.redis.prefix = request.getfixturevalue("redis_prefix")
        m = LayeredMemory.from_urls(redis_url=url, embedder="none", settings=settings)
    else:
        m = LayeredMemory.from_stores(server_records(request, request.param), None, embedder="none", settings=settings)
    yield m
    m.close()


def test_bot_replies_stored_under_the_bots_id_stay_in_the_window(mem):
    mem.add_messages(rows("dm:ann", "ann", 6, 0))
    window = [c.content for c in mem.get_context_for_user("ann", "dm:ann") if c.kind == "window"]
    assert window == ["user turn 2 in dm:ann", "assistant turn 3 in dm:ann", "user turn 4 in dm:ann",
                      "assistant turn 5 in dm:ann"]


def test_without_bot_ids_the_bots_replies_still_belong_to_the_chat(tmp_path):
    with LayeredMemory.embedded(tmp_path, embedder="none") as m:
        m.add_messages(rows("dm:ann", "ann", 4, 0))
        assert [c.content for c in m.get_context_for_user("ann", "dm:ann") if c.kind == "window"] == [
            "user turn 0 in dm:ann", "assistant turn 1 in dm:ann", "user turn 2 in dm:ann", "assistant turn 3 in dm:ann"]
        assert m.chats.get("dm:ann")["members"] == ["ann"]  # the bot is never a member


def test_a_group_window_holds_every_members_messages_and_nothing_for_others(mem):
    mem.add_messages(rows("group:1", "ann", 4, 0) + rows("group:1", "bob", 4, 10) + rows("dm:bob", "bob", 4, 20))
    ann = [c.content for c in mem.get_context_for_user("ann", "group:1") if c.kind == "window"]
    assert ann == ["user turn 10 in group:1", "assistant turn 11 in group:1", "user turn 12 in group:1",
                   "assistant turn 13 in group:1"]  # bob wrote them: ann is a member of the group too
    assert [c for c in mem.get_context_for_user("ann", "dm:bob") if c.kind == "window"] == []  # bob's private chat
    assert [c for c in mem.for_user("carol").get_context_for_user(None, "group:1") if c.kind == "window"] == []
