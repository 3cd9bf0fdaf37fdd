"""Probes of the document and repository paths (issue 14): ``mem.documents``, the shared document
tools and both adapters' document tools, aimed at the victim's private upload and private repository
(seeded by ``isolation_world.seed_documents``). Registered into ``isolation_probes.TEMPLATES``."""

from __future__ import annotations

from isolation_probes import S1, bound, probe, run_async, uid
from isolation_world import DOC_NAME, QUERY, REPO_NAME, repo_dir

from layered_memory.documents import tools as doc_tools


# == engine ========================================================================================================
@probe("engine", control=True)
def p_docs_vector_rag(h, w, a): return h.documents.vector_rag(QUERY, k=20)
@probe("engine", control=True)
def p_docs_vector_rag_filter_source(h, w, a): return h.documents.vector_rag(QUERY, k=20, filters={"source": DOC_NAME})
@probe("engine", control=True)
def p_docs_avector_rag(h, w, a): return run_async(h.documents.avector_rag(QUERY, k=20))
@probe("engine")
def p_docs_list(h, w, a): return h.documents.list_documents()  # sources and titles: a leak would be the listing
@probe("engine", control=True)
def p_repos_search(h, w, a): return h.documents.search_repos(QUERY, k=20)
@probe("engine", control=True)
def p_repos_search_repo_path(h, w, a): return h.documents.search_repos(QUERY, repo=REPO_NAME, path="vault.py", language="python", k=20)
@probe("engine", control=True)
def p_context_with_documents(h, w, a): return h.get_context_for_user(uid(h), S1, query=QUERY, include_documents=True)
@probe("engine")
def p_repos_list(h, w, a): return h.documents.list_repos()  # names and roots only: a leak would be the registration


@probe("engine", "write")
def p_docs_delete_victims(h, w, a): return h.documents.delete_document(DOC_NAME)
@probe("engine", "write")
def p_docs_overwrite_victims(h, w, a): return h.documents.index_document("# Vault\n\nplanted by the attacker\n", name=DOC_NAME)
@probe("engine", "write")
def p_repos_delete_victims(h, w, a): return h.documents.delete_repo(REPO_NAME)
@probe("engine", "write")
def p_docs_reindex(h, w, a): return h.documents.reindex()


# == shared tools and adapters ======================================================================================
@probe("tools", control=True)
def p_vector_rag_tool(h, w, a): return doc_tools.vector_rag_tool(bound(h, a, w), QUERY, k=20)
@probe("tools", control=True)
def p_search_repos_tool(h, w, a): return doc_tools.search_repos_tool(bound(h, a, w), QUERY, repo=REPO_NAME, k=20)
@probe("tools", "write")
def p_index_repo_tool_victims_tree(h, w, a):  # no roots: the agent cannot read the victim's tree at all
    return doc_tools.index_repo_tool(bound(h, a, w), repo_dir(w))


@probe("langchain", control=True)
def p_lc_document_tools(h, w, a):
    from langchain_layered_memory import create_document_tools

    tools = {t.name: t for t in create_document_tools(w.mem, user_id=a.user, tenant=a.tenant)}
    return [tools["vector_rag"].invoke({"query": QUERY, "k": 20}), tools["search_repos"].invoke({"query": QUERY, "k": 20})]


@probe("llamaindex", control=True)
def p_li_document_tools(h, w, a):
    from llamaindex_layered_memory import layered_document_tools

    tools = {t.metadata.name: t for t in layered_document_tools(bound(h, a, w))}
    return [tools["vector_rag"].call(query=QUERY, k=20).content, tools["search_repos"].call(query=QUERY, k=20).content]
