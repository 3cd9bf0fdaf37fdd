"""Probes of the arguments that name a scope (issue 24): a handle made by ``tenant()`` or ``for_user()``
can only narrow. Re-opening the victim's tenant from an attacker's handle, or passing ``tenant=`` /
``user_id=`` to an adapter built on it, must be refused or see only the attacker's own scope.
Registered into ``isolation_probes.TEMPLATES``; the victim's own runs are the controls (her handle
re-opening her own tenant finds her canaries, so the paths are not vacuous)."""

from __future__ import annotations

from isolation_probes import S1, probe, run_async, uid
from isolation_world import QUERY, VICTIM


def home(w):  # the victim's tenant
    return w.mem.tenant_id


# == engine handles =================================================================================================
@probe("engine", control=True)
def p_tenant_reopen_search(h, w, a): return h.tenant(home(w)).search(QUERY, k=20)
@probe("engine", control=True)
def p_tenant_reopen_context(h, w, a): return h.tenant(home(w)).get_context_for_user(uid(h), S1, query=QUERY)
@probe("engine", control=True)
def p_tenant_reopen_documents(h, w, a): return h.tenant(home(w)).documents.vector_rag(QUERY, k=20)
@probe("engine", control=True)
def p_tenant_reopen_repos(h, w, a): return h.tenant(home(w)).documents.search_repos(QUERY, k=20)
@probe("engine", control=True)
def p_tenant_reopen_topics(h, w, a): return h.tenant(home(w)).topics.topic_search(QUERY, k=20)
@probe("engine", control=True)
def p_tenant_reopen_items(h, w, a): return h.tenant(home(w)).items.search((), query=QUERY, limit=100)
@probe("engine", control=True)
def p_tenant_reopen_async(h, w, a): return run_async(h.tenant(home(w)).asearch(QUERY, k=20))
@probe("engine", control=True)
def p_tenant_reopen_for_victim(h, w, a): return h.tenant(home(w)).for_user(VICTIM).search(QUERY, k=20)
@probe("engine", control=True)
def p_for_victim_then_tenant(h, w, a): return h.for_user(VICTIM).tenant(home(w)).search(QUERY, k=20)


# == adapter constructors: tenant= and user_id= on a handle ==========================================================
@probe("langchain", control=True)
def p_lc_vectorstore_tenant_arg(h, w, a):
    from langchain_layered_memory import LayeredMemoryVectorStore
    return LayeredMemoryVectorStore(h, tenant=home(w)).similarity_search(QUERY, k=20)
@probe("langchain", control=True)
def p_lc_vectorstore_user_arg(h, w, a):
    from langchain_layered_memory import LayeredMemoryVectorStore
    return LayeredMemoryVectorStore(h, user_id=VICTIM).similarity_search(QUERY, k=20)
@probe("langchain", control=True)
def p_lc_tools_tenant_arg(h, w, a):
    from langchain_layered_memory import create_memory_tools
    tools = {t.name: t for t in create_memory_tools(h, tenant=home(w))}
    return tools["search"].invoke({"query": QUERY, "k": 20})
@probe("langchain", control=True)
def p_lc_document_tools_tenant_arg(h, w, a):
    from langchain_layered_memory import create_document_tools
    tools = {t.name: t for t in create_document_tools(h, tenant=home(w))}
    return tools["vector_rag"].invoke({"query": QUERY, "k": 20})
@probe("llamaindex", control=True)
def p_li_vector_store_tenant_arg(h, w, a):
    from llama_index.core.vector_stores.types import VectorStoreQuery
    from llamaindex_layered_memory import LayeredMemoryVectorStore
    store = LayeredMemoryVectorStore(h, tenant=home(w))
    return store.query(VectorStoreQuery(query_str=QUERY, query_embedding=w.mem.embedder.embed_query(QUERY), similarity_top_k=20))
@probe("llamaindex", control=True)
def p_li_vector_store_user_arg(h, w, a):
    from llama_index.core.vector_stores.types import VectorStoreQuery
    from llamaindex_layered_memory import LayeredMemoryVectorStore
    store = LayeredMemoryVectorStore(h, user_id=VICTIM)
    return store.query(VectorStoreQuery(query_str=QUERY, query_embedding=w.mem.embedder.embed_query(QUERY), similarity_top_k=20))
@probe("llamaindex", control=True)
def p_li_chat_memory_from_dict_tenant(h, w, a):
    from llamaindex_layered_memory import LayeredChatMemory
    m = LayeredChatMemory.from_dict({"tenant": home(w), "user_id": uid(h), "session_id": S1}, mem=h)
    return [m.get(input=QUERY), m.get_all()]
