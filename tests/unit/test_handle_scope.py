"""A handle only narrows: ``tenant()`` / ``for_user()`` pin the tenant, adapters' ``tenant=`` / ``user_id=`` too.

The engine itself (what ``embedded`` returns) opens any tenant; a handle it made cannot step into
another tenant, through the engine or through an adapter built on it (issue 24). The attack suite
(``tests/isolation``) runs the same paths against canaries on every backend."""

from __future__ import annotations

import pytest

from layered_memory import InvalidInputError, LayeredMemory
from layered_memory.testing import HashEmbedder


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path, embedder=HashEmbedder(dim=32))
    yield m
    m.close()


def test_the_engine_opens_any_tenant_and_its_handles_only_narrow(mem):
    acme, beta = mem.tenant("acme"), mem.tenant("beta")
    assert (acme.tenant_id, beta.tenant_id) == ("acme", "beta")
    with pytest.raises(InvalidInputError, match=r"tenant='beta'.*bound to tenant 'acme'.*cannot reach another tenant.*engine itself"):
        acme.tenant("beta")
    user = acme.for_user("u1")
    with pytest.raises(InvalidInputError, match="bound to tenant 'acme'"):
        user.tenant("beta")
    same = user.tenant("acme")  # its own tenant: the same scope, still bound to the user
    assert (same.tenant_id, same.bound_user) == ("acme", "u1")
    with pytest.raises(InvalidInputError, match="bound to tenant 'default'"):
        mem.for_user("u1").tenant("acme")  # a user handle of the default tenant stays there too


def test_a_refused_tenant_writes_nothing(mem):
    user = mem.tenant("acme").for_user("u1")
    with pytest.raises(InvalidInputError):
        user.tenant("beta").add_message(message_id="m1", chat_id="c1", content="hello")
    assert mem.tenant("beta").search("hello", route="bm25").hits == []


def test_adapters_refuse_a_tenant_outside_their_handle(mem):
    from langchain_layered_memory import LayeredMemoryVectorStore as LangChainStore
    from langchain_layered_memory import create_memory_tools
    from llamaindex_layered_memory import LayeredChatMemory
    from llamaindex_layered_memory import LayeredMemoryVectorStore as LlamaIndexStore

    user = mem.tenant("acme").for_user("u1")
    for build in (lambda: LangChainStore(user, tenant="beta"), lambda: LlamaIndexStore(user, tenant="beta"),
                  lambda: create_memory_tools(user, tenant="beta"),
                  lambda: LayeredChatMemory.from_dict({"tenant": "beta", "user_id": "u1", "session_id": "s1"}, mem=user)):
        with pytest.raises(InvalidInputError, match="bound to tenant 'acme'"):
            build()
    # from the engine itself, a saved tenant and user are restored in that order (tenant, then user)
    restored = LayeredChatMemory.from_dict({"tenant": "beta", "user_id": "u2", "session_id": "s1"}, mem=mem)
    assert restored.tenant == "beta" and restored.user_id == "u2"


def test_a_handle_narrowed_to_its_own_scope_is_that_handle(mem):
    """``tenant()`` / ``for_user()`` are light views over the shared runtime: narrowing a handle to the scope
    it already has hands back the handle itself (its facets built once, e.g. the documents the context reads
    through ``handle.for_user(user)``); from a wider scope a new handle, and never a wider one."""
    acme = mem.tenant("acme")
    user = acme.for_user("u1")
    assert acme.tenant("acme") is acme and user.tenant("acme") is user and user.for_user("u1") is user
    assert user.for_user("u1").documents is user.documents
    assert mem.tenant("acme") is not acme and acme.for_user("u1") is not user
    assert (acme.for_user("u1").tenant_id, acme.for_user("u1").bound_user) == ("acme", "u1")
    assert mem.tenant("default") is not mem  # the engine's own tenant, pinned: a handle that cannot leave it
    with pytest.raises(InvalidInputError, match="bound to tenant 'default'"):
        mem.tenant("default").tenant("acme")
    with pytest.raises(InvalidInputError):
        user.for_user("u2")


def test_process_on_a_bound_handle_does_the_whole_tenants_work(mem):
    """``process()`` is the tenant's background work: through a handle bound to u1 it refreshes u2's session
    summary too (the summaries are refreshed unbound, not through the handle's scope), as on the engine."""
    mem.settings.memory.short_term_window = 2
    mem.settings.memory.summary_threshold_messages = 3
    for user in ("u1", "u2"):
        mem.add_messages([{"message_id": f"{user}-{i}", "chat_id": f"c-{user}", "user_id": user, "session_key": "s1",
                           "content": f"{user} note {i}: the deploy runs on port {8000 + i}"} for i in range(6)])
    done = mem.for_user("u1").process()
    assert done["summaries"] == 2
    assert mem.get_summary("u1", "s1") and mem.get_summary("u2", "s1")
