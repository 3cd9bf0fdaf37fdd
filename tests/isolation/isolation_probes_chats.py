"""Probes of group chats (issue 28): the victim and a friend share a group chat whose members the platform
declared; the victim's other chats are declared private. A non-member (mallory) and another tenant see
nothing of the group through any path, and cannot join it by writing; the victim's runs are the
controls (a member sees the group). Registered into ``isolation_probes.TEMPLATES``."""

from __future__ import annotations

from isolation_probes import S1, probe, run_async, uid
from isolation_world import FRIEND, GROUP, QUERY


# == reads of the group chat ========================================================================================
@probe("engine", control=True)
def p_group_context(h, w, a): return h.get_context_for_user(uid(h), GROUP, query=QUERY)
@probe("engine", control=True)
def p_group_context_no_vector(h, w, a): return h.get_context_for_user(uid(h), GROUP, include_vector=False)
@probe("engine", control=True)
def p_group_session_messages(h, w, a): return [h.get_session_messages(uid(h), GROUP), h.get_session_messages(uid(h), GROUP, limit=3)]
@probe("engine", control=True)
def p_group_get_messages(h, w, a): return h.get_messages(w.message_ids[GROUP], chat_id=GROUP)
@probe("engine", control=True)
def p_group_search_chat(h, w, a): return h.search(QUERY, filters={"chat_id": GROUP}, k=20)
@probe("engine", control=True)
def p_group_search_friend(h, w, a): return h.search(QUERY, filters={"user_id": FRIEND}, k=20)
@probe("engine", control=True)
def p_group_summary(h, w, a): return [h.refresh_summary(uid(h), GROUP, force=True), h.get_summary(uid(h), GROUP)]
@probe("engine", control=True)
def p_group_topics(h, w, a):
    return [h.topics.list(GROUP), h.topics.recent(GROUP), h.topics.topic_search(QUERY, chat_id=GROUP, k=20),
            h.topics.quick_search(QUERY, chat_id=GROUP, k=20)]
@probe("engine", control=True)
def p_group_recall(h, w, a): return h.topics.recall(w.message_ids[GROUP][-1], chat_id=GROUP)
@probe("engine", control=True)
def p_group_context_async(h, w, a): return run_async(h.aget_context_for_user(uid(h), GROUP, query=QUERY))
@probe("engine")
def p_group_chat_info(h, w, a): return [h.chats.get(GROUP), h.chats.list(uid(h))]  # ids only


# == writes: joining the group or a private chat by writing in it ====================================================
@probe("engine", "write")
def p_join_group_by_writing(h, w, a):
    h.add_message(message_id="join.1", chat_id=GROUP, user_id=uid(h), content="hello everyone")
    return h.get_context_for_user(uid(h), GROUP, query=QUERY)
@probe("engine", "write")
def p_join_private_chat_by_writing(h, w, a):
    h.add_message(message_id="join.2", chat_id=S1, user_id=uid(h), content="hello")
    return h.get_context_for_user(uid(h), S1, query=QUERY)
@probe("engine", "write")
def p_declare_group_membership(h, w, a): return h.chats.declare(GROUP, "group", members=[uid(h)])
@probe("engine", "write")
def p_declare_private_chat_a_group(h, w, a): return h.chats.declare(S1, "group")


# == adapters on the group chat ======================================================================================
@probe("langchain", control=True)
def p_lc_group_history(h, w, a):
    from langchain_layered_memory import LayeredChatMessageHistory
    return LayeredChatMessageHistory(h, user_id=uid(h), session_id=GROUP).messages
@probe("langchain", control=True)
def p_lc_group_context_mode(h, w, a):
    from langchain_layered_memory import LayeredChatMessageHistory
    return LayeredChatMessageHistory(h, user_id=uid(h), session_id=GROUP, mode="context", query=QUERY).messages
@probe("llamaindex", control=True)
def p_li_group_memory(h, w, a):
    from llamaindex_layered_memory import LayeredChatMemory
    m = LayeredChatMemory.from_defaults(h, user_id=uid(h), session_id=GROUP)
    return [m.get(input=QUERY), m.get_all()]
