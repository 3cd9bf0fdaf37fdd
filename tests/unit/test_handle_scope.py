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
