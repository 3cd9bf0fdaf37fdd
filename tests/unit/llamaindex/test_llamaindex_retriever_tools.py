"""LayeredMemoryRetriever (with a real offline embedder, inside a RetrieverQueryEngine), the tool spec
(names, schemas, outputs identical to the shared formats; parity with the LangChain adapter is in
test_tools_parity.py), topic_search,
and LlamaIndex embeddings / LLMs handed to the engine."""

from __future__ import annotations

import json
import re

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, TextNode
from test_llamaindex_support import HashEmbedding, seed, use_embedder

from layered_memory import InvalidInputError, LayeredMemory, LayeredMemorySettings
from layered_memory.config import SummaryQualitySettings
from layered_memory import tools as shared
from llamaindex_layered_memory import LayeredMemoryRetriever, LayeredMemoryToolSpec, layered_memory_tools


@pytest.fixture(scope="module")
def semantic(tmp_path_factory):
    """A real offline embedder (USE): ranking by meaning, not by shared words."""
    m = LayeredMemory.embedded(tmp_path_factory.mktemp("semantic"), embedder=use_embedder())
    seed(m)
    yield m
    m.close()


@pytest.fixture
def mem(tmp_path):
    m = LayeredMemory.embedded(tmp_path / "mem", embedder=HashEmbedding())
    seed(m)
    yield m
    m.close()


# -- retriever ------------------------------------------------------------------------------------
def test_retriever_returns_nodes_with_the_hit_metadata(semantic) -> None:
    retriever = LayeredMemoryRetriever(semantic, user_id="u1", k=3, route="dense")
    nodes = retriever.retrieve("which city does the user live in?")
    assert len(nodes) == 3 and all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in nodes)
    assert nodes[0].node.node_id == "a1"  # by meaning: "moved to Kazan"
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)
    meta = nodes[0].node.metadata
    assert meta["role"] == "user" and meta["session_key"] == "tg:1" and meta["user_id"] == "u1"
    assert meta["date"].startswith("2024-03-01T10:00:00") and meta["route_used"] == "dense" and meta["message_id"] == "a1"
    llm_view = nodes[0].node.get_content(metadata_mode="llm")
    assert "session_key: tg:1" in llm_view and "hash" not in llm_view and "Kazan" in llm_view
    assert all(n.node.metadata["user_id"] == "u1" for n in retriever.retrieve("Lisbon bank PIN"))


async def test_aretrieve_is_native_async(semantic, monkeypatch) -> None:
    retriever = LayeredMemoryRetriever(semantic, user_id="u1", k=2, filters={"session_key": "tg:3"})

    def blocked(*a, **kw):
        raise AssertionError("the sync _retrieve ran on the event loop")

    monkeypatch.setattr(retriever, "_retrieve", blocked)
    nodes = await retriever.aretrieve("container permission problem")
    assert {n.node.node_id for n in nodes} == {"a4", "a5"}


def test_retriever_fails_early_on_bad_settings(mem) -> None:
    with pytest.raises(InvalidInputError, match=r"route='fuzzy': must be one of hybrid, bm25, dense"):
        LayeredMemoryRetriever(mem, route="fuzzy")
    with pytest.raises(InvalidInputError, match=r"k=0: must be an integer from 1 to 100"):
        LayeredMemoryRetriever(mem, k=0)
    with pytest.raises(InvalidInputError, match=r"filters.*colour"):
        LayeredMemoryRetriever(mem, filters={"colour": "red"})
    with pytest.raises(TypeError, match="needs a layered_memory.LayeredMemory"):
        LayeredMemoryRetriever("mem")  # type: ignore[arg-type]


def test_retriever_in_a_query_engine(semantic) -> None:
    engine = RetrieverQueryEngine.from_args(LayeredMemoryRetriever(semantic, user_id="u1", k=2), llm=MockLLM())
    response = engine.query("what dish do I love?")
    assert response.source_nodes[0].node.node_id == "a3"
    assert "pelmeni" in str(response)  # MockLLM echoes the prompt: the retrieved text reached the model
    assert "9911" not in str(response)


# -- tools ------------------------------------------------------------------------------------------
def test_tool_spec_names_descriptions_and_schemas(mem) -> None:
    tools = LayeredMemoryToolSpec(mem, user_id="u1").to_tool_list()
    assert [t.metadata.name for t in tools] == list(shared.TOOL_NAMES)
    assert tools[0].metadata.description == shared.QDRANT_SEARCH_MEMORY_DESCRIPTION
    schema = tools[0].metadata.get_parameters_dict()
    assert schema["required"] == ["query_text"] and set(schema["properties"]) == {"query_text", "limit", "filters"}
    assert set(tools[1].metadata.get_parameters_dict()["properties"]) == {"queries", "filters", "k", "route", "query"}
    assert [t.metadata.name for t in layered_memory_tools(mem, "u1", names=["search", "list_tasks"])] == ["search", "list_tasks"]
    with pytest.raises(ValueError, match="'recall' is not a tool of this spec"):
        LayeredMemoryToolSpec(mem).to_tool_list(["recall"])


def test_tool_outputs_are_the_shared_formats(mem) -> None:
    u1 = mem.for_user("u1")
    tools = {t.metadata.name: t for t in layered_memory_tools(mem, user_id="u1")}
    out = tools["qdrant_search_memory"].call(query_text="docker socket permission", limit=2, filters={"role": "user"})
    assert out.content == shared.qdrant_search_memory(u1, "docker socket permission", 2, {"role": "user"})
    assert out.content.startswith("Found 2 relevant message(s):\n\n### Message 1\n**Role:** user\n**Time:** 2024-04-01T12:00:00Z")
    assert tools["qdrant_search_memory"].call(query_text="  ").content == shared.QUERY_TEXT_REQUIRED
    assert tools["qdrant_search_memory"].call(query_text="x", filters={"user_id": "u2"}).content.startswith("Error searching memory: filters.user_id")
    res = tools["search"].call(queries=["docker", "kazan"], k=3, route="bm25")
    assert res.raw_output == shared.search_tool(u1, ["docker", "kazan"], k=3, route="bm25")
    assert json.loads(res.content) == json.loads(json.dumps(res.raw_output))  # the model reads JSON
    assert tools["list_tasks"].call(status="done").content == "No tasks with status done."
    assert LayeredMemoryToolSpec(mem).list_tasks().startswith("Error listing tasks: user_id=None")  # unbound: no user to list


async def test_async_tools_equal_sync_tools(mem) -> None:
    tools = layered_memory_tools(mem, user_id="u1")
    qdrant, search, topics, tasks = tools
    assert unordered((await qdrant.acall(query_text="kazan")).content) == unordered(qdrant.call(query_text="kazan").content)
    a, b = (await search.acall(query="kazan", k=20)).raw_output, search.call(query="kazan", k=20).raw_output
    assert sorted(a["hits"], key=lambda h: h["id"]) == sorted(b["hits"], key=lambda h: h["id"])  # equal scores: any order
    assert (await topics.acall(query="kazan")).content == topics.call(query="kazan").content
    assert (await tasks.acall()).content == tasks.call().content


def test_topic_search_tool_after_threading(mem) -> None:
    mem.process()  # threads messages into topics
    mem.flush()  # the summaries' dense vectors come from the writer: both calls below see the same index
    spec = LayeredMemoryToolSpec(mem, user_id="u1")
    text = spec.topic_search("docker permission")
    assert text == shared.topic_search_tool(mem.for_user("u1"), "docker permission")
    other = spec.topic_search("Lisbon bank PIN")
    assert "9911" not in text and "9911" not in other and "I live in Lisbon" not in other
    assert spec.topic_search("").startswith(shared.TOPIC_SEARCH_ERROR_PREFIX)


def unordered(text: str) -> tuple[str, list[str]]:
    """Header plus the message blocks without their numbers: hits with equal fused scores may come
    back in either order from one call to the next."""
    head, _, rest = text.partition("\n\n")
    return head, sorted(re.sub(r"^### Message \d+\n", "", b) for b in rest.split("\n\n---\n\n"))


# -- LlamaIndex embeddings and LLMs handed to the engine --------------------------------------------
def test_llamaindex_embedding_and_llm_through_the_engine(tmp_path) -> None:
    emb = HashEmbedding()
    llm = MockLLM(max_tokens=6)
    # MockLLM's "text text ..." would score below the summary quality threshold and be replaced by the
    # extractive summary (issue 16); the retry is off here, where the point is the model's own text.
    settings = LayeredMemorySettings(summary_quality=SummaryQualitySettings(retry_below=0.0))
    with LayeredMemory.embedded(tmp_path / "m", embedder=emb, chat_model=llm, settings=settings) as m:
        assert m.embedder.dim == 64 and m.chat_model is not None
        seed(m)
        assert emb.calls > 0
        result = m.search("docker socket", k=2)
        assert result.route_used == "hybrid" and result.fallback_reason is None
        for i in range(24):
            m.add_message(message_id=f"s{i}", chat_id="long", user_id="u1", content=f"message {i} about the trip")
        summary = m.refresh_summary("u1", "long", force=True)
        assert summary == "text text text text text text"  # written by the LlamaIndex LLM, not extracted
        assert m.get_summary_quality("u1", "long")["quality"]["overall_score"] < 0.25  # and scored as poor
