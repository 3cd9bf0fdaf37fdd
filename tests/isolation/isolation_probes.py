"""The probe table: every public read, write and delete path of the engine, the shared tools and
both adapters, aimed at the victim's canaries by each attacker.

A *template* is ``fn(h, w)``: ``h`` the attacker's handle, ``w`` the World; ``uid(h)`` is the user
the attacker acts as (its bound user, else ``"victim"``: the same user id in another tenant). Each
template runs once per attacker (and on each backend, in ``test_probes.py``):

- ``read``: whatever comes back must not contain the victim's token; a ``LayeredMemoryError`` is fine;
- ``write``: the same, and the victim's data (read through an unbound handle) must be unchanged;
- ``reject``: must raise a clear error (``LayeredMemoryError`` or ``ValueError``), never run.

Templates marked ``control=True`` also run as the victim (``test_control``): there the token must
come back, which proves the path reaches the canary and the probe is not vacuous.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from layered_memory import LayeredMemory
from layered_memory import tools as shared
from isolation_world import (
    EVIL, MALLORY, MSG42, NS, NS_DEEP, QUERY, SESSIONS, TASK, TASK_IDS, VICTIM, World,
)

S1 = SESSIONS[0]
FAR_FUTURE = "2100-01-01T00:00:00Z"


@dataclass(frozen=True)
class Attacker:
    name: str
    tenant: str | None  # None: the victim's tenant
    user: str | None  # the bound user (None: an unbound handle of another tenant)

    def handle(self, mem: LayeredMemory) -> LayeredMemory:
        h = mem.tenant(self.tenant) if self.tenant else mem
        return h.for_user(self.user) if self.user else h

    def tenant_handle(self, mem: LayeredMemory) -> LayeredMemory:
        return mem.tenant(self.tenant) if self.tenant else mem


ATTACKERS = (
    Attacker("mallory", None, MALLORY),  # another user of the same tenant
    Attacker("evil", EVIL, None),  # another tenant, unbound
    Attacker("evil.victim", EVIL, VICTIM),  # the same user id in another tenant
)
VICTIM_SELF = Attacker("victim", None, VICTIM)  # the positive control


@dataclass(frozen=True)
class Template:
    path: str  # engine | tools | langchain | llamaindex
    name: str
    fn: Callable[[LayeredMemory, World, Attacker], Any]
    kind: str = "read"
    control: bool = False
    index_only: bool = False  # the feature needs a vector index (agents): not generated in core mode


@dataclass(frozen=True)
class Probe:
    path: str
    name: str  # "<path>/<template>[<attacker>]"
    run: Callable[[World], Any]
    kind: str
    index_only: bool
    attacker: str
    control_run: Callable[[World], Any] | None = field(default=None, compare=False)


def uid(h: LayeredMemory) -> str:
    return h.bound_user or VICTIM


TEMPLATES: list[Template] = []


def probe(path: str, kind: str = "read", *, control: bool = False, index_only: bool = False) -> Callable[..., Any]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        TEMPLATES.append(Template(path, fn.__name__.removeprefix("p_"), fn, kind, control, index_only))
        return fn
    return register


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)


# == engine: messages, search, context ==================================================================
@probe("engine", control=True)
def p_search(h, w, a): return h.search(QUERY, k=20)
@probe("engine", control=True)
def p_search_bm25(h, w, a): return h.search(QUERY, k=20, route="bm25")
@probe("engine", control=True)
def p_search_dense(h, w, a): return h.search(QUERY, k=20, route="dense")
@probe("engine", control=True)
def p_search_queries_list(h, w, a): return h.search(["card PIN", "vault code", "bank password"], k=20)
@probe("engine", control=True)
def p_search_filter_user_victim(h, w, a): return h.search(QUERY, filters={"user_id": VICTIM}, k=20)
@probe("engine", control=True)
def p_search_filter_session(h, w, a): return h.search(QUERY, filters={"session_key": S1}, k=20)
@probe("engine", control=True)
def p_search_filter_chat(h, w, a): return h.search(QUERY, filters={"chat_id": S1}, k=20)
@probe("engine")
def p_search_filter_kind_topic_summary(h, w, a): return h.search(QUERY, filters={"kind": "topic_summary"}, k=20)
@probe("engine")
def p_search_filter_kind_item(h, w, a): return h.search(QUERY, filters={"kind": "item"}, k=20)
@probe("engine")
def p_search_filter_tenant_default(h, w, a): return h.search(QUERY, filters={"tenant": "default"}, k=20)
@probe("engine", control=True)
def p_asearch(h, w, a): return run_async(h.asearch(QUERY, k=20))
@probe("engine", control=True)
def p_get_messages(h, w, a): return h.get_messages([(s, i) for s in SESSIONS for i in w.message_ids[s]] + [(S1, MSG42)])
@probe("engine", control=True)
def p_get_session_messages(h, w, a): return [h.get_session_messages(uid(h), s) for s in SESSIONS]
@probe("engine", control=True)
def p_get_session_messages_window(h, w, a): return h.get_session_messages(uid(h), S1, limit=2)
@probe("engine", control=True)
def p_context(h, w, a): return h.get_context_for_user(uid(h), S1, query=QUERY)
@probe("engine", control=True)
def p_context_other_session(h, w, a): return h.get_context_for_user(uid(h), "telegram:2", query=QUERY)
@probe("engine", control=True)
def p_context_with_victim_task(h, w, a): return h.get_context_for_user(uid(h), "telegram:2", query="hello", task_id=TASK_IDS[0])
@probe("engine", control=True)
def p_context_no_vector(h, w, a): return h.get_context_for_user(uid(h), S1, include_vector=False)
@probe("engine", control=True)
def p_get_summary(h, w, a): return [h.get_summary(uid(h), s) for s in SESSIONS]
@probe("engine")
def p_get_summary_quality(h, w, a): return [h.get_summary_quality(uid(h), s) for s in SESSIONS]  # scores, never text
@probe("engine", control=True)
def p_refresh_summary(h, w, a): return h.refresh_summary(uid(h), S1, force=True)
@probe("engine")
def p_list_sessions(h, w, a): return h.list_sessions(uid(h))  # ids only: a leak would be the registration itself
@probe("engine", control=True)
def p_get_user_data(h, w, a): return h.get_user_data(uid(h))
@probe("engine", control=True)
def p_get_task_memory(h, w, a): return [h.get_task_memory(t) for t in TASK_IDS]
@probe("engine", control=True)
def p_list_tasks(h, w, a): return h.list_tasks(uid(h))
@probe("engine", control=True)
def p_get_task(h, w, a): return h.get_task(uid(h), TASK)
@probe("engine")
def p_index_status(h, w, a): return h.status()  # counts and errors of the handle's own tenant (refused when bound)
@probe("engine")
def p_index_flush(h, w, a): return [h.flush(30), run_async(h.aflush(30))]


# == engine: items ==========================================================================================
@probe("engine", control=True)
def p_items_get(h, w, a): return [h.items.get(NS, "pin"), h.items.get(NS_DEEP, "vault")]
@probe("engine", control=True)
def p_items_search_ns(h, w, a): return h.items.search(NS, limit=100)
@probe("engine", control=True)
def p_items_search_all(h, w, a): return h.items.search((), limit=100)
@probe("engine", control=True)
def p_items_search_filter(h, w, a): return h.items.search(("memories",), filter={"kind": "secret"}, limit=100)
@probe("engine", control=True)
def p_items_query_all(h, w, a): return h.items.search((), query=QUERY, limit=100)
@probe("engine", control=True)
def p_items_query_ns(h, w, a): return h.items.search(NS, query=QUERY, limit=100)
@probe("engine")
def p_items_list_namespaces(h, w, a): return h.items.list_namespaces(limit=1000)  # names only


# == engine: topics, knowledge, agents =======================================================================
@probe("engine", control=True)
def p_topics_list(h, w, a): return [h.topics.list(s) for s in SESSIONS]
@probe("engine")  # no control: the close_idle probe may have closed the victim's topics
def p_topics_list_active(h, w, a): return [h.topics.list(s, active_only=True) for s in SESSIONS]
@probe("engine", control=True)
def p_topics_get(h, w, a): return [h.topics.get(t) for t in w.topic_ids]
@probe("engine", control=True)
def p_topics_summary(h, w, a): return [h.topics.summary(t) for t in w.topic_ids]
@probe("engine", control=True)
def p_topics_summaries(h, w, a): return [h.topics.summaries(t) for t in w.topic_ids]
@probe("engine")
def p_topics_evaluate_summary(h, w, a): return [h.topics.evaluate_summary(t) for t in w.topic_ids]
@probe("engine", control=True)
def p_topics_messages(h, w, a): return [h.topics.messages(t) for t in w.topic_ids]
@probe("engine")
def p_topics_topic_of(h, w, a): return h.topics.topic_of(w.message_ids[S1][0], chat_id=S1)  # an id only
@probe("engine", control=True)
def p_topics_recent(h, w, a): return [h.topics.recent(s) for s in SESSIONS]
@probe("engine", control=True)
def p_topics_recall(h, w, a): return h.topics.recall(w.message_ids[S1][-1], chat_id=S1)
@probe("engine", control=True)
def p_topics_recall_42(h, w, a): return h.topics.recall(MSG42, chat_id=S1)
@probe("engine", control=True)
def p_topics_search_summaries(h, w, a): return h.topics.search_summaries(QUERY, k=20)
@probe("engine", control=True)
def p_topics_search_summaries_chat(h, w, a): return h.topics.search_summaries(QUERY, chat_id=S1, k=20)
@probe("engine", control=True)
def p_topics_search_summaries_user(h, w, a): return h.topics.search_summaries(QUERY, user_id=VICTIM, k=20)
@probe("engine", control=True)
def p_topics_quick_search(h, w, a): return h.topics.quick_search(QUERY, k=20)
@probe("engine", control=True)
def p_topics_quick_search_chat(h, w, a): return h.topics.quick_search(QUERY, chat_id=S1, k=20)
@probe("engine", control=True)
def p_topics_topic_search(h, w, a): return h.topics.topic_search(QUERY, k=20)
@probe("engine", control=True)
def p_topics_topic_search_chat(h, w, a): return h.topics.topic_search(QUERY, chat_id=S1, k=20)
@probe("engine", control=True)
def p_topics_topic_search_user(h, w, a): return h.topics.topic_search(QUERY, user_id=VICTIM, k=20)
@probe("engine", control=True)
def p_knowledge_search_entities(h, w, a): return h.knowledge.search_entities(QUERY, k=20)
@probe("engine", control=True)
def p_knowledge_profile(h, w, a): return h.knowledge.get_profile(uid(h))
@probe("engine", control=True)
def p_knowledge_profile_victim(h, w, a): return h.knowledge.get_profile(VICTIM)
@probe("engine", control=True)
def p_knowledge_query_graph(h, w, a): return h.knowledge.query_graph("Vault Zurich", direction="both", include_superseded=True)
@probe("engine", control=True)
def p_knowledge_relations(h, w, a): return h.knowledge.relations("Victoria Bank")
@probe("engine", index_only=True)
def p_agents_list(h, w, a): return [h.agents.list(), h.agents.list(uid(h))]  # registrations: ids only
@probe("engine", control=True, index_only=True)
def p_agents_get_victims(h, w, a):
    agent = h.agents.get(VICTIM, "coder")
    return [agent.search(QUERY), agent.list_interactions(), agent.export()]
@probe("engine", control=True, index_only=True)
def p_agents_own_per_agent(h, w, a):
    agent = h.agents.create(uid(h), "coder")
    return [agent.search(QUERY, k=20), agent.search(QUERY, route="bm25"), agent.list_interactions(), agent.export(), agent.stats()]
@probe("engine", control=True, index_only=True)
def p_agents_own_shared(h, w, a):
    agent = h.agents.create(uid(h), "helper", collection_mode="shared")
    return [agent.search(QUERY, k=20), agent.search(QUERY, task_id=TASK_IDS[0]), agent.list_interactions(), agent.export()]


# == engine: writes and deletes aimed at the victim ===============================================================
@probe("engine", "write")
def p_add_message_victims_id(h, w, a):
    return h.add_message(message_id=w.message_ids[S1][0], chat_id=S1, user_id=uid(h), content="overwritten by the attacker")
@probe("engine", "write")
def p_add_message_42_other_chat(h, w, a):
    return h.add_message(message_id=MSG42, chat_id="telegram:2", user_id=uid(h), content="attacker's own message 42")
@probe("engine", "write")
def p_add_message_as_victim(h, w, a):
    return h.add_message(message_id="x.1", chat_id=S1, user_id=VICTIM, content="posing as the victim")
@probe("engine", "write")
def p_clear_victim_session(h, w, a): return h.clear_session(VICTIM, S1)
@probe("engine", "write")
def p_clear_victim_all_sessions(h, w, a): return h.clear_session(VICTIM)
@probe("engine", "write")
def p_clear_own_session_same_key(h, w, a): return h.clear_session(uid(h), S1)
@probe("engine", "write")
def p_edit_victims_message(h, w, a): return h.edit_message(S1, w.message_ids[S1][0], content="overwritten by the attacker")
@probe("engine", "write")
def p_edit_victims_42_metadata(h, w, a): return h.edit_message(S1, MSG42, metadata={"planted": True})
@probe("engine", "write")
def p_edit_victims_summarized_message(h, w, a):  # covered by the victim's summaries and facts: nothing may go stale
    return h.edit_message(SESSIONS[1], w.message_ids[SESSIONS[1]][0], content="overwritten", edit_time=FAR_FUTURE)
@probe("engine", "write")
def p_delete_victims_message(h, w, a): return h.delete_message(S1, w.message_ids[S1][0])
@probe("engine", "write")
def p_delete_victims_42(h, w, a): return h.delete_message(S1, MSG42)
@probe("engine", "write")
def p_delete_every_victim_message(h, w, a): return [h.delete_message(s, i) for s in SESSIONS for i in w.message_ids[s]]
@probe("engine", "write")
def p_aedit_adelete_victims(h, w, a):
    return [run_async(h.aedit_message(S1, w.message_ids[S1][1], content="overwritten")), run_async(h.adelete_message(S1, w.message_ids[S1][2]))]
@probe("engine", "write")
def p_set_victim_user_data(h, w, a): return h.set_user_data(VICTIM, {"vault": "changed"}, merge=False)
@probe("engine", "write")
def p_delete_victim_user_data(h, w, a): return h.delete_user_data(VICTIM)
@probe("engine", "write")
def p_add_tool_result_victim_user(h, w, a): return h.add_tool_result(TASK_IDS[0], "injected result", user_id=VICTIM)
@probe("engine", "write")
def p_add_tool_result_victim_task(h, w, a): return h.add_tool_result(TASK_IDS[1], "injected result")
@probe("engine", "write")
def p_clear_victim_task_memory(h, w, a): return h.clear_task_memory(TASK_IDS[0])
@probe("engine", "write")
def p_create_victim_task(h, w, a): return h.create_task(VICTIM, "injected task", task_id=TASK)
@probe("engine", "write")
def p_update_victim_task(h, w, a): return h.update_task(VICTIM, TASK, title="changed")
@probe("engine", "write")
def p_complete_task_by_id(h, w, a): return h.complete_task(uid(h), TASK)
@probe("engine", "write")
def p_items_overwrite(h, w, a): return h.items.put(NS, "pin", {"text": "overwritten"})
@probe("engine", "write")
def p_items_add_to_victim_ns(h, w, a): return h.items.put(NS, "planted", {"text": "planted", "kind": "secret"})
@probe("engine", "write")
def p_items_delete(h, w, a): return [h.items.delete(NS, "pin"), h.items.delete(NS_DEEP, "vault")]
@probe("engine", "write")
def p_topics_summarize_victims(h, w, a): return h.topics.summarize(w.topic_ids[0])
@probe("engine", "write")
def p_topics_close_idle(h, w, a): return h.topics.close_idle(FAR_FUTURE)
@probe("engine", "write")
def p_knowledge_extract_victims(h, w, a): return h.knowledge.extract(w.topic_ids[0])
@probe("engine", "write", index_only=True)
def p_agents_delete_victims(h, w, a): return h.agents.delete(VICTIM, "coder")
@probe("engine", "write", index_only=True)
def p_agents_write_victims(h, w, a):
    agent = h.agents.create(VICTIM, "coder")
    return [agent.add_interaction("planted", interaction_id="vi-coder"), agent.clear()]
@probe("engine", "write", index_only=True)
def p_agents_own_shared_clear(h, w, a):
    agent = h.agents.create(uid(h), "helper", collection_mode="shared")
    return [agent.prune(days=0), agent.prune(filter={"task_id": TASK_IDS[0]}), agent.set_max_vectors(1), agent.clear()]
@probe("engine", "write", index_only=True)
def p_agents_import_victims_export(h, w, a):
    export = w.mem.agents.get(VICTIM, "coder").export()
    export["interactions"] = [{**i, "text": "planted"} for i in export["interactions"]]
    return h.agents.import_from(io.StringIO(json.dumps(export)))


# == the shared tools (layered_memory.tools) ======================================================================
def bound(h: LayeredMemory, a: Attacker, w: World) -> LayeredMemory | None:
    return shared.bind(w.mem, a.user, a.tenant) if a.user or a.tenant else h


@probe("tools", control=True)
def p_qdrant_search_memory(h, w, a): return shared.qdrant_search_memory(bound(h, a, w), QUERY, limit=20)
@probe("tools", control=True)
def p_qdrant_search_memory_session(h, w, a): return shared.qdrant_search_memory(bound(h, a, w), QUERY, 20, {"session_key": S1})
@probe("tools", control=True)
def p_aqdrant_search_memory(h, w, a): return run_async(shared.aqdrant_search_memory(h, QUERY, limit=20))
@probe("tools", control=True)
def p_search_tool(h, w, a): return shared.search_tool(bound(h, a, w), QUERY, k=20)
@probe("tools", control=True)
def p_search_tool_bm25(h, w, a): return shared.search_tool(h, QUERY, k=20, route="bm25")
@probe("tools", control=True)
def p_search_tool_filter_user(h, w, a): return shared.search_tool(h, QUERY, {"user_id": VICTIM}, k=20)
@probe("tools", control=True)
def p_asearch_tool(h, w, a): return run_async(shared.asearch_tool(h, query=QUERY, k=20))
@probe("tools", control=True)
def p_topic_search_tool(h, w, a): return shared.topic_search_output(bound(h, a, w), QUERY, k=20)
@probe("tools", control=True)
def p_topic_search_tool_chat(h, w, a): return shared.topic_search_output(h, QUERY, chat_id=S1, k=20)
@probe("tools", control=True)
def p_topic_search_tool_user(h, w, a): return shared.topic_search_output(h, QUERY, k=20, user_id=VICTIM)
@probe("tools", control=True)
def p_atopic_search_tool(h, w, a): return run_async(shared.atopic_search_output(h, QUERY, k=20))
@probe("tools", control=True)
def p_list_tasks_tool(h, w, a): return shared.list_tasks_output(bound(h, a, w), uid(h))
@probe("tools", control=True)
def p_list_tasks_tool_victim(h, w, a): return shared.list_tasks_output(h, VICTIM)
@probe("tools", control=True)
def p_alist_tasks_tool(h, w, a): return run_async(shared.alist_tasks_output(h, None if h.bound_user else VICTIM))


# == empty user ids (bug 2) and other one-off probes ===================================================================
@dataclass(frozen=True)
class Special:
    path: str
    name: str
    fn: Callable[[World], Any]
    kind: str = "reject"


def _lc_retriever_empty(w: World) -> Any:
    from langchain_layered_memory import LayeredMemoryRetriever
    return LayeredMemoryRetriever(memory=w.mem, user_id="", k=20).invoke(QUERY)


def _li_retriever_empty(w: World) -> Any:
    from llamaindex_layered_memory import LayeredMemoryRetriever
    return LayeredMemoryRetriever(w.mem, user_id="", k=20).retrieve(QUERY)


def _lc_tools_empty(w: World) -> Any:
    from langchain_layered_memory import create_memory_tools
    from isolation_probes_adapters import lc_call_all
    return lc_call_all(create_memory_tools(w.mem, user_id=""))


def _li_tools_empty(w: World) -> Any:
    from llamaindex_layered_memory import LayeredMemoryToolSpec
    from isolation_probes_adapters import li_call_all
    return li_call_all(LayeredMemoryToolSpec(w.mem, user_id="").to_tool_list())


def _lc_history_empty(w: World) -> Any:
    from langchain_layered_memory import LayeredChatMessageHistory
    return LayeredChatMessageHistory(w.mem, user_id="", session_id=S1).messages


def _lc_middleware_empty(w: World) -> Any:
    from langchain_layered_memory import LayeredMemoryMiddleware
    from isolation_probes_adapters import lc_middleware_view, lc_request
    return LayeredMemoryMiddleware(w.mem, user_id="", session_id=S1).wrap_model_call(lc_request(QUERY, {}), lc_middleware_view)


def _li_chat_memory_empty(w: World) -> Any:
    from llamaindex_layered_memory import LayeredChatMemory
    return LayeredChatMemory.from_defaults(w.mem, user_id="", session_id=S1).get(input=QUERY)


def _li_block_empty(w: World) -> Any:
    from llamaindex_layered_memory import LayeredMemoryBlock
    return run_async(LayeredMemoryBlock(w.mem, user_id="", session_id=S1).aget([]))


SPECIALS: list[Special] = [
    Special("tools", "bind_empty_user", lambda w: shared.search_tool(shared.bind(w.mem, ""), QUERY, k=20)),
    Special("tools", "bind_empty_user_evil_tenant", lambda w: shared.search_tool(shared.bind(w.mem, "", EVIL), QUERY, k=20)),
    Special("engine", "for_user_empty", lambda w: w.mem.for_user("").search(QUERY)),
    Special("engine", "context_empty_user", lambda w: w.mem.get_context_for_user("", S1, query=QUERY)),
    Special("langchain", "create_memory_tools_empty_user", _lc_tools_empty),
    Special("langchain", "retriever_empty_user", _lc_retriever_empty),
    Special("langchain", "history_empty_user", _lc_history_empty),
    Special("langchain", "middleware_empty_user", _lc_middleware_empty),
    Special("llamaindex", "tool_spec_empty_user", _li_tools_empty),
    Special("llamaindex", "retriever_empty_user", _li_retriever_empty),
    Special("llamaindex", "chat_memory_empty_user", _li_chat_memory_empty),
    Special("llamaindex", "memory_block_empty_user", _li_block_empty),
    # the tool functions never raise: an empty user must not widen them to the tenant
    Special("tools", "topic_search_tool_empty_user", lambda w: shared.topic_search_output(w.mem, QUERY, k=20, user_id=""), "read"),
    Special("tools", "list_tasks_tool_empty_user", lambda w: shared.list_tasks_output(w.mem, ""), "read"),
    # bug 5 from the victim's side: mallory's message 42 must not replace or reveal the victim's
    Special("engine", "bug5_mallory_42_returns_own", lambda w: _mallory_42(w), "write"),
]


def _mallory_42(w: World) -> Any:
    stored = w.mem.for_user(MALLORY).add_message(message_id=MSG42, chat_id="telegram:3", user_id=MALLORY, content="mallory's 42")
    assert stored.content == "mallory's 42" and stored.user_id == MALLORY, f"add_message returned another message: {stored!r}"
    return stored


def expand(templates: list[Template] = TEMPLATES, attackers: tuple[Attacker, ...] = ATTACKERS) -> list[Probe]:
    """Templates x attackers, plus the special probes (attacker ``-``)."""
    out = []
    for t in templates:
        for a in attackers:
            out.append(Probe(t.path, f"{t.path}/{t.name}[{a.name}]", _bind(t, a), t.kind, t.index_only, a.name))
    for s in SPECIALS:
        out.append(Probe(s.path, f"{s.path}/{s.name}", s.fn, s.kind, False, "-"))
    return out


def controls(templates: list[Template] = TEMPLATES) -> list[Probe]:
    return [Probe(t.path, f"{t.path}/{t.name}[victim]", _bind(t, VICTIM_SELF), "control", t.index_only, "victim")
            for t in templates if t.control]


def _bind(t: Template, a: Attacker) -> Callable[[World], Any]:
    def run(w: World) -> Any:
        return t.fn(a.handle(w.mem), w, a)
    run.__name__ = f"{t.name}[{a.name}]"
    return run


import isolation_probes_adapters  # noqa: E402,F401  (registers the LangChain / LlamaIndex probes into TEMPLATES)
import isolation_probes_documents  # noqa: E402,F401  (registers the document probes into TEMPLATES)
import isolation_probes_native  # noqa: E402,F401  (registers the native async probes into TEMPLATES)
import isolation_probes_scope  # noqa: E402,F401  (registers the scope-argument probes into TEMPLATES)
import isolation_probes_chats  # noqa: E402,F401  (registers the group-chat probes into TEMPLATES)

if __import__("importlib.util").util.find_spec("mcp") is not None:  # the serve extra: MCP and HTTP probes
    import isolation_probes_remote  # noqa: E402,F401
