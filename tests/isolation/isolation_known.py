"""The probes that fail on the current code, by issue 10 bug: each is ``xfail(strict=True)``.

Remove an entry when its fix lands (the probe then XPASSes, a failure under strict)."""

from __future__ import annotations

import fnmatch

#: (probe name pattern, backends or None for all, reason)
CORE = ("sqlite-core", "redis-core")
B1 = "bug 1: core mode (no vector index) ignores the bound user in search"
B2 = "bug 2: an empty user id fails open and searches the whole tenant"
B3 = "bug 3: items and the LangGraph store ignore for_user"
B4 = "bug 4: task memory is keyed by task_id alone"
B5 = "bug 5: message_id is unique per tenant, not per chat; add_message returns the other chat's message"
KNOWN: list[tuple[str, tuple[str, ...] | None, str]] = [
    *[(f"engine/{n}[mallory]", CORE, B1) for n in (
        "search", "search_bm25", "search_dense", "search_queries_list", "search_filter_user_victim",
        "search_filter_session", "search_filter_chat")],
    ("engine/asearch[mallory]", CORE, B1),
    ("tools/qdrant_search_memory*[mallory]", CORE, B1),
    ("tools/aqdrant_search_memory[mallory]", CORE, B1),
    ("tools/search_tool*[mallory]", CORE, B1),
    ("tools/asearch_tool[mallory]", CORE, B1),
    ("langchain/lc_retriever_*[mallory]", CORE, B1),
    ("langchain/lc_tools_*[mallory]", CORE, B1),
    ("llamaindex/li_retriever*[mallory]", CORE, B1),
    ("llamaindex/li_tools_*[mallory]", CORE, B1),
    ("tools/bind_empty_user*", None, B2),
    ("tools/topic_search_tool_empty_user", None, B2),
    ("langchain/create_memory_tools_empty_user", None, B2),
    ("langchain/retriever_empty_user", None, B2),
    ("llamaindex/tool_spec_empty_user", None, B2),
    ("llamaindex/retriever_empty_user", None, B2),
    ("engine/items_get[mallory]", None, B3),
    ("engine/items_search_*[mallory]", None, B3),
    ("engine/items_query_*[mallory]", None, B3),
    ("engine/items_overwrite[mallory]", None, B3),
    ("engine/items_add_to_victim_ns[mallory]", None, B3),
    ("engine/items_delete[mallory]", None, B3),
    ("langchain/lg_store_get[mallory]", None, B3),
    ("langchain/lg_store_search[mallory]", None, B3),
    ("langchain/lg_store_async[mallory]", None, B3),
    ("langchain/lg_store_put*[mallory]", None, B3),
    ("langchain/lg_store_delete[mallory]", None, B3),
    ("engine/get_task_memory[mallory]", None, B4),
    ("engine/add_tool_result_*[mallory]", None, B4),
    ("engine/clear_victim_task_memory[mallory]", None, B4),
    ("engine/add_message_42_other_chat[mallory]", None, B5),
    ("engine/add_message_victims_id[mallory]", None, B5),
    ("engine/bug5_mallory_42_returns_own", None, B5),
]


def known_failure(name: str, backend: str) -> str | None:
    for pattern, backends, reason in KNOWN:
        if fnmatch.fnmatchcase(name, pattern.replace("[", "[[]")) and (backends is None or backend in backends):
            return reason
    return None
