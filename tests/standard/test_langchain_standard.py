"""LangChain's own standard suites (langchain-tests) over the adapters: one standard base per class,
nothing overridden. The memory is shared by the module (BM25 only: dense is irrelevant here)."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from typing import Any

from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import RetrieversIntegrationTests, ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_layered_memory import (
    LayeredMemoryRetriever,
    ListTasksTool,
    MemorySearchTool,
    QdrantSearchMemoryTool,
    TopicSearchTool,
    create_memory_tools,
)
from layered_memory import LayeredMemory


@functools.lru_cache(maxsize=1)
def memory() -> LayeredMemory:
    path = tempfile.mkdtemp(prefix="lm-standard-")
    mem = LayeredMemory.embedded(path, embedder="none")
    atexit.register(shutil.rmtree, path, True)
    atexit.register(mem.close)
    mem.add_messages(
        {"message_id": f"m{i}", "chat_id": "telegram:1", "user_id": "u1", "role": "user" if i % 2 == 0 else "assistant",
         "content": f"docker note {i}: how to install docker on ubuntu, step {i}", "create_time": f"2024-01-15T10:{i:02d}:00Z"}
        for i in range(8)
    )
    mem.create_task("u1", "Renew the TLS certificate", due="2024-02-01T00:00:00Z")
    return mem


def tool(name: str) -> BaseTool:
    return next(t for t in create_memory_tools(memory(), user_id="u1") if t.name == name)


class TestRetriever(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[LayeredMemoryRetriever]:
        return LayeredMemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": memory(), "user_id": "u1"}

    @property
    def retriever_query_example(self) -> str:
        return "install docker"


class TestQdrantSearchMemoryUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return QdrantSearchMemoryTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"memory": memory(), "user_id": "u1"}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query_text": "install docker", "limit": 3, "filters": {"role": "user"}}


class TestQdrantSearchMemoryIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return tool("qdrant_search_memory")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query_text": "install docker", "limit": 3, "filters": {"role": "user"}}


class TestSearchUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return MemorySearchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"memory": memory()}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"queries": ["install docker", "ubuntu"], "filters": {"role": "assistant"}, "k": 3, "route": "bm25"}


class TestSearchIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return tool("search")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"queries": ["install docker", "ubuntu"], "filters": {"role": "assistant"}, "k": 3, "route": "hybrid"}


class TestTopicSearchUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return TopicSearchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"memory": memory(), "user_id": "u1"}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "docker installation", "k": 3}


class TestTopicSearchIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return tool("topic_search")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "docker installation", "k": 3}


class TestListTasksUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> type[BaseTool]:
        return ListTasksTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        return {"memory": memory(), "user_id": "u1"}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"status": "open"}


class TestListTasksIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return tool("list_tasks")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"status": "open"}
