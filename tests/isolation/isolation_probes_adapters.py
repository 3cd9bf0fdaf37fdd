"""Probes of the LangChain / LangGraph and LlamaIndex adapters: every public read, write and delete path
of both, aimed at the victim's canaries (the rules are in ``isolation_probes``). Registered into
``isolation_probes.TEMPLATES``."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from layered_memory import LayeredMemory
from isolation_probes import S1, probe, run_async, uid
from isolation_world import NS, NS_DEEP, QUERY, VICTIM

# == LangChain / LangGraph ========================================================================================
LC_CALLS = (
    ("qdrant_search_memory", {"query_text": QUERY, "limit": 20}),
    ("qdrant_search_memory", {"query_text": QUERY, "limit": 20, "filters": {"session_key": S1}}),
    ("search", {"query": QUERY, "k": 20}),
    ("search", {"query": QUERY, "k": 20, "filters": {"user_id": VICTIM}}),
    ("search", {"queries": ["card PIN", "vault code"], "route": "bm25", "k": 20}),
    ("topic_search", {"query": QUERY, "k": 20}),
    ("topic_search", {"query": QUERY, "chat_id": S1, "k": 20}),
    ("list_tasks", {}),
)


def lc_call_all(tools: list[Any]) -> list[Any]:
    by_name = {t.name: t for t in tools}
    out = []
    for i, (name, args) in enumerate(LC_CALLS):
        if name in by_name:  # a tool call as an agent makes it: the ToolMessage carries the artifact too
            out.append(by_name[name].invoke({"type": "tool_call", "id": f"c{i}", "name": name, "args": args}))
    return out


@probe("langchain", control=True)
def p_lc_tools_by_kwargs(h, w, a):
    from langchain_layered_memory import create_memory_tools
    return lc_call_all(create_memory_tools(w.mem, user_id=a.user, tenant=a.tenant))
@probe("langchain", control=True)
def p_lc_tools_on_handle(h, w, a):
    from langchain_layered_memory import create_memory_tools
    return lc_call_all(create_memory_tools(h))
@probe("langchain", control=True)
def p_lc_tools_async(h, w, a):
    from langchain_layered_memory import create_memory_tools
    tools = {t.name: t for t in create_memory_tools(h)}
    return run_async(tools["search"].ainvoke({"type": "tool_call", "id": "a1", "name": "search", "args": {"query": QUERY, "k": 20}}))
@probe("langchain", control=True)
def p_lc_retriever_by_user_id(h, w, a):
    from langchain_layered_memory import LayeredMemoryRetriever
    return LayeredMemoryRetriever(memory=a.tenant_handle(w.mem), user_id=a.user, k=20).invoke(QUERY)
@probe("langchain", control=True)
def p_lc_retriever_on_handle(h, w, a):
    from langchain_layered_memory import LayeredMemoryRetriever
    r = LayeredMemoryRetriever(memory=h, k=20)
    return [r.invoke(QUERY), r.invoke(QUERY, filters={"user_id": VICTIM}, route="bm25"), run_async(r.ainvoke(QUERY))]
@probe("langchain", control=True)
def p_lc_history_messages(h, w, a):
    from langchain_layered_memory import LayeredChatMessageHistory
    hist = LayeredChatMessageHistory(h, user_id=uid(h), session_id=S1)
    return [hist.messages, run_async(hist.aget_messages())]
@probe("langchain", control=True)
def p_lc_history_context(h, w, a):
    from langchain_layered_memory import LayeredChatMessageHistory
    return LayeredChatMessageHistory(h, user_id=uid(h), session_id=S1, mode="context", query=QUERY).messages
@probe("langchain", "write")
def p_lc_history_write_and_clear(h, w, a):
    from langchain_core.messages import HumanMessage
    from langchain_layered_memory import LayeredChatMessageHistory
    hist = LayeredChatMessageHistory(h, user_id=uid(h), session_id=S1)
    hist.add_messages([HumanMessage(content="overwrite", id=w.message_ids[S1][1])])
    out = hist.messages
    hist.clear()
    return out
@probe("langchain", "write")
def p_lc_history_edit_victims(h, w, a):
    from langchain_core.messages import HumanMessage
    from langchain_layered_memory import LayeredChatMessageHistory
    hist = LayeredChatMessageHistory(h, user_id=uid(h), session_id=S1)
    return hist.edit_message(HumanMessage(content="overwritten", id=w.message_ids[S1][1]))
@probe("langchain", "write")
def p_lc_history_delete_victims(h, w, a):
    from langchain_layered_memory import LayeredChatMessageHistory
    hist = LayeredChatMessageHistory(h, user_id=uid(h), session_id=S1)
    return [hist.delete_message(w.message_ids[S1][1]), run_async(hist.adelete_message(w.message_ids[S1][2]))]


def lc_request(text: str, context: dict[str, Any]) -> Any:
    from langchain.agents.middleware.types import ModelRequest
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.messages import HumanMessage

    return ModelRequest(model=FakeListChatModel(responses=["ok"]), messages=[HumanMessage(content=text)],
                        runtime=SimpleNamespace(context=context))


def lc_middleware_view(request: Any) -> list[Any]:
    return [request.system_message, request.messages]


@probe("langchain", control=True)
def p_lc_middleware_context(h, w, a):
    from langchain_layered_memory import LayeredMemoryMiddleware
    mw = LayeredMemoryMiddleware(a.tenant_handle(w.mem), user_id=uid(h), session_id=S1)
    return mw.wrap_model_call(lc_request(QUERY, {}), lc_middleware_view)
@probe("langchain")
def p_lc_middleware_runtime_names_victim(h, w, a):
    from langchain_layered_memory import LayeredMemoryMiddleware
    mw = LayeredMemoryMiddleware(h, session_id=S1)
    return mw.wrap_model_call(lc_request(QUERY, {"user_id": VICTIM, "session_id": S1}), lc_middleware_view)
@probe("langchain", "write")
def p_lc_middleware_after_model(h, w, a):
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_layered_memory import LayeredMemoryMiddleware
    mw = LayeredMemoryMiddleware(h, user_id=uid(h), session_id=S1)
    state = {"messages": [HumanMessage(content="overwrite", id=w.message_ids[S1][2]), AIMessage(content="ok", id=w.message_ids[S1][3])]}
    return mw.after_model(state, SimpleNamespace(context={}))


def lc_store(h: LayeredMemory) -> Any:
    from langchain_layered_memory import LayeredMemoryStore
    return LayeredMemoryStore(h)


@probe("langchain", control=True)
def p_lg_store_get(h, w, a): return [lc_store(h).get(NS, "pin"), lc_store(h).get(NS_DEEP, "vault")]
@probe("langchain", control=True)
def p_lg_store_search(h, w, a):
    s = lc_store(h)
    return [s.search(NS), s.search(("memories",), filter={"kind": "secret"}), s.search((), query=QUERY, limit=50),
            s.search(NS, query=QUERY)]
@probe("langchain")
def p_lg_store_list_namespaces(h, w, a):
    s = lc_store(h)
    return [s.list_namespaces(), s.list_namespaces(prefix=("memories",)), s.list_namespaces(suffix=(VICTIM,))]
@probe("langchain", control=True)
def p_lg_store_async(h, w, a): return run_async(lc_store(h).asearch(NS, query=QUERY))
@probe("langchain", "write")
def p_lg_store_put(h, w, a): return lc_store(h).put(NS, "pin", {"text": "overwritten"})
@probe("langchain", "write")
def p_lg_store_put_new(h, w, a): return lc_store(h).put(NS_DEEP, "planted", {"text": "planted"})
@probe("langchain", "write")
def p_lg_store_delete(h, w, a): return [lc_store(h).delete(NS, "pin"), lc_store(h).delete(NS_DEEP, "vault")]


# == LlamaIndex ======================================================================================================
LI_CALLS = (
    ("qdrant_search_memory", {"query_text": QUERY, "limit": 20}),
    ("search", {"query": QUERY, "k": 20}),
    ("search", {"query": QUERY, "k": 20, "filters": {"user_id": VICTIM}}),
    ("topic_search", {"query": QUERY, "k": 20}),
    ("topic_search", {"query": QUERY, "chat_id": S1, "k": 20}),
    ("list_tasks", {}),
)


def li_call_all(tools: list[Any], *, use_async: bool = False) -> list[Any]:
    by_name = {t.metadata.name: t for t in tools}
    if use_async:
        async def go() -> list[Any]:
            return [await by_name[n].acall(**args) for n, args in LI_CALLS]
        return run_async(go())
    return [by_name[n].call(**args) for n, args in LI_CALLS]


@probe("llamaindex", control=True)
def p_li_tools_by_user_id(h, w, a):
    from llamaindex_layered_memory import LayeredMemoryToolSpec
    return li_call_all(LayeredMemoryToolSpec(a.tenant_handle(w.mem), user_id=a.user).to_tool_list())
@probe("llamaindex", control=True)
def p_li_tools_on_handle_async(h, w, a):
    from llamaindex_layered_memory import layered_memory_tools
    return li_call_all(layered_memory_tools(h), use_async=True)
@probe("llamaindex", control=True)
def p_li_retriever(h, w, a):
    from llamaindex_layered_memory import LayeredMemoryRetriever
    r = LayeredMemoryRetriever(a.tenant_handle(w.mem), user_id=a.user, k=20)
    return [r.retrieve(QUERY), run_async(r.aretrieve(QUERY))]
@probe("llamaindex", control=True)
def p_li_retriever_filters(h, w, a):
    from llamaindex_layered_memory import LayeredMemoryRetriever
    return LayeredMemoryRetriever(h, k=20, filters={"user_id": VICTIM, "session_key": S1}, route="bm25").retrieve(QUERY)
@probe("llamaindex", control=True)
def p_li_chat_memory(h, w, a):
    from llamaindex_layered_memory import LayeredChatMemory
    m = LayeredChatMemory.from_defaults(h, user_id=uid(h), session_id=S1)
    return [m.get(input=QUERY), m.get_all(), run_async(m.aget(input=QUERY))]
@probe("llamaindex", "write")
def p_li_chat_memory_write(h, w, a):
    from llama_index.core.base.llms.types import ChatMessage
    from llamaindex_layered_memory import LayeredChatMemory
    m = LayeredChatMemory.from_defaults(h, user_id=uid(h), session_id=S1)
    m.put(ChatMessage(role="user", content="attacker's turn"))
    out = m.get_all()
    m.set([ChatMessage(role="user", content="replaced")])
    m.reset()
    return out
@probe("llamaindex", control=True)
def p_li_memory_block(h, w, a):
    from llama_index.core.base.llms.types import ChatMessage
    from llamaindex_layered_memory import LayeredMemoryBlock
    block = LayeredMemoryBlock(h, user_id=uid(h), session_id=S1)
    return run_async(block.aget([ChatMessage(role="user", content=QUERY)]))
@probe("llamaindex", "write")
def p_li_memory_block_put(h, w, a):
    from llama_index.core.base.llms.types import ChatMessage
    from llamaindex_layered_memory import LayeredMemoryBlock
    block = LayeredMemoryBlock(h, user_id=uid(h), session_id=S1)
    run_async(block.aput([ChatMessage(role="user", content="flushed turn")]))
    return run_async(block.aget([]))


# == the framework vector stores' other read paths (issue 24): search by vector, MMR, the scan of a filter
@probe("langchain", control=True, index_only=True)
def p_lc_vectorstore_by_vector_and_mmr(h, w, a):
    from langchain_layered_memory import LayeredMemoryVectorStore
    store = LayeredMemoryVectorStore(h)
    vec = w.mem.embedder.embed_query(QUERY)
    return [store.similarity_search_by_vector(vec, k=20), store.max_marginal_relevance_search(QUERY, k=20, fetch_k=50),
            run_async(store.amax_marginal_relevance_search_by_vector(vec, k=20, fetch_k=50)), store.get_by_ids(["v-lc-1"])]
@probe("llamaindex", control=True)
def p_li_vector_store_scanned_filters(h, w, a):
    from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters, VectorStoreQuery
    from llamaindex_layered_memory import LayeredMemoryVectorStore
    store = LayeredMemoryVectorStore(h)
    ne = MetadataFilters(filters=[MetadataFilter(key="nothing", value="x", operator=FilterOperator.NE)])  # not run in the index
    return [store.query(VectorStoreQuery(query_str=QUERY, similarity_top_k=20, filters=ne)), store.get_nodes(), store.get_nodes(filters=ne)]
