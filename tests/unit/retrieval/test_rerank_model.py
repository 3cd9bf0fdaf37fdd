"""A rerank model (``rerank_model=``, opt-in): it reorders the best ``retrieval.rerank_depth`` hits of a message
search and of the context's recall, a verbatim match stays first, and a model that fails or answers wrongly
leaves the engine's own order, said in ``rerank_error``. Every framework shape it accepts is adapted here:
a function, a cross-encoder (``predict`` / ``score``), LangChain's ``BaseDocumentCompressor`` and LlamaIndex's
``BaseNodePostprocessor`` (their real base classes). The HTTP API: tests/integration/providers/test_http_reranker.py."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone

import pytest

from layered_memory import LayeredMemory
from layered_memory.config import LayeredMemorySettings, RetrievalSettings
from layered_memory.errors import ConfigurationError
from layered_memory.providers import HTTPReranker, as_reranker
from layered_memory.testing import HashEmbedder

T0 = datetime(2024, 3, 1, 9, tzinfo=timezone.utc)
TURNS = [
    "my car needs new brakes before the trip",
    "the car repair quote was far too high",
    "I drive an old Golf, so I worry about repairs",
    "the car wash on our street is closed",
    "we sold the old car last spring",
    "the tram to work was late again",
]
GOLF = "m2"


def _messages(user: str = "u1", chat: str = "c1", prefix: str = "m") -> list[dict]:
    return [{"message_id": f"{prefix}{i}", "chat_id": chat, "user_id": user, "content": text, "create_time": T0 + timedelta(minutes=i)}
            for i, text in enumerate(TURNS)]


class Golf:
    """Prefers the turn that names a car model; records what it was asked."""

    name = "golf"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.calls.append((query, list(documents)))
        return [10.0 if "Golf" in d else float(len(set(query.lower().split()) & set(d.lower().split()))) for d in documents]


@pytest.fixture
def open_mem(tmp_path) -> Iterator:
    opened: list[LayeredMemory] = []

    def make(model, **retrieval):
        settings = LayeredMemorySettings(retrieval=RetrievalSettings(**retrieval)) if retrieval else None
        mem = LayeredMemory.embedded(tmp_path / f"m{len(opened)}", embedder="none", rerank_model=model, settings=settings)
        opened.append(mem)
        mem.add_messages(_messages())
        return mem

    yield make
    for mem in opened:
        mem.close()


def test_the_model_reorders_the_head_and_scores_still_fall(open_mem):
    plain = open_mem(None).search("what car do I have", k=3)
    model = Golf()
    got = open_mem(model).search("what car do I have", k=3)
    assert GOLF not in [h.id for h in plain.hits]  # the rules alone rank the repair talk above it
    assert got.hits[0].id == GOLF and got.hits[0].meta["rerank_score"] == 10.0
    scores = [h.score for h in got.hits]
    assert scores == sorted(scores, reverse=True)  # each hit keeps the score of the place it takes
    assert got.rerank_error is None and "rerank" in got.timings
    query, docs = model.calls[0]
    assert query == "what car do I have" and len(docs) == min(30, got.total_found)  # rerank_depth, whatever k


def test_only_the_depth_is_read_and_below_it_nothing_moves(open_mem):
    order = [h.id for h in open_mem(None).search("car", k=6).hits]
    model = Golf()
    got = [h.id for h in open_mem(model, rerank_depth=2).search("car", k=6).hits]
    assert len(model.calls[0][1]) == 2
    assert sorted(got[:2]) == sorted(order[:2]) and got[2:] == order[2:]


def test_a_verbatim_match_stays_first(open_mem):
    class Against:
        name = "against"

        def rerank(self, query, documents):
            return [-1.0 if d == query else 1.0 for d in documents]

    got = open_mem(Against()).search(TURNS[1], k=3)
    assert got.hits[0].id == "m1"


@pytest.mark.parametrize("answer", [
    pytest.param(lambda q, d: [1.0], id="too-few"),
    pytest.param(lambda q, d: [math.nan] * len(d), id="nan"),
    pytest.param(lambda q, d: ["high"] * len(d), id="words"),
    pytest.param(lambda q, d: None, id="none"),
    pytest.param(lambda q, d: 1 / 0, id="raises"),
])
def test_a_failing_model_leaves_the_engine_order_and_says_why(open_mem, answer, caplog):
    want = [h.id for h in open_mem(None).search("car repair", k=4).hits]
    got = open_mem(answer).search("car repair", k=4)
    assert [h.id for h in got.hits] == want
    assert got.rerank_error and got.to_dict()["rerank_error"] == got.rerank_error
    assert all("rerank_score" not in h.meta for h in got.hits)
    assert "search keeps its own order" in caplog.text


def test_the_context_reads_the_model_order_and_survives_its_failure(tmp_path):
    def context(model, where):
        with LayeredMemory.embedded(tmp_path / where, embedder=HashEmbedder(dim=64), rerank_model=model) as mem:
            mem.add_messages([{**m, "session_key": "s1"} for m in _messages()])
            mem.flush()
            return mem.get_context_for_user("u1", "s2", query="which car do I drive?", max_tokens=2000)

    model = Golf()
    assert "old Golf" in context(model, "a").text
    assert model.calls and model.calls[-1][0] == "which car do I drive?"

    def down(query, documents):
        raise ConnectionError("rerank service down")

    assert "old Golf" in context(down, "b").text


def test_a_handle_s_model_sees_only_what_the_handle_may_see(tmp_path):
    model = Golf()
    with LayeredMemory.embedded(tmp_path, embedder="none", rerank_model=model) as mem:
        mem.add_messages(_messages("u1", "c1") + [{**m, "content": m["content"].replace("car", "car secret")}
                                                    for m in _messages("u2", "c2", prefix="s")])
        mem.for_user("u1").search("car", k=10)
        asyncio.run(mem.for_user("u1").asearch("car repair", k=3))
    assert len(model.calls) == 2
    assert not any("secret" in d for _, docs in model.calls for d in docs)


def test_grouped_searches_are_not_reranked(open_mem):
    model = Golf()
    got = open_mem(model).search("car", k=2, group_by="session")
    assert got.groups and not model.calls


class Predicts:
    model_name = "cross-encoder/fake"

    def predict(self, pairs):
        return [float("Golf" in d) for _, d in pairs]


class Scores:
    def score(self, pairs):
        return [float("Golf" in d) for _, d in pairs]


def test_framework_shapes_are_adapted():
    docs = ["the car wash", "I drive an old Golf", "tram"]
    assert as_reranker(Predicts()).rerank("car?", docs) == [0.0, 1.0, 0.0]
    assert as_reranker(Predicts()).name == "cross-encoder/fake"
    assert as_reranker(Scores()).rerank("car?", docs) == [0.0, 1.0, 0.0]
    assert as_reranker(lambda q, d: [len(x) for x in d]).rerank("q", docs) == [12.0, 19.0, 4.0]
    model = Golf()
    assert as_reranker(model) is model
    assert as_reranker(None) is None and as_reranker("none") is None


def test_a_langchain_compressor_ranks_by_what_it_returns():
    from langchain_core.documents import Document
    from langchain_core.documents.compressor import BaseDocumentCompressor

    class TopTwo(BaseDocumentCompressor):  # like CrossEncoderReranker: the top_n, in order, no scores
        def compress_documents(self, documents: Sequence[Document], query: str, callbacks=None) -> Sequence[Document]:
            ranked = sorted(documents, key=lambda d: -len(set(query.split()) & set(d.page_content.split())))
            return ranked[:2]

    class WithItsOwnRerank(TopTwo):  # LangChain's CohereRerank has rerank(documents, query) too: it is a compressor
        name: str = "cohere-like"

        def rerank(self, documents, query):  # noqa: ANN001, ANN201
            raise AssertionError("the compressor's own rerank() is not the protocol's")

    assert as_reranker(WithItsOwnRerank()).rerank("Golf", ["tram", "old Golf"])[1] > 0
    scores = as_reranker(TopTwo()).rerank("old Golf car", ["tram late", "I drive an old Golf", "car wash", "car Golf old"])
    order = sorted(range(4), key=lambda i: -scores[i])
    assert order[:2] == [1, 3] or order[:2] == [3, 1]
    assert order[2:] == [0, 2]  # the rest: after, in the engine's order


def test_a_llamaindex_postprocessor_ranks_by_what_it_returns():
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle

    class Longest(BaseNodePostprocessor):
        def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
            assert query_bundle is not None and query_bundle.query_str == "which car?"
            kept = sorted(nodes, key=lambda n: -len(n.node.get_content()))[:2]
            return [NodeWithScore(node=n.node, score=float(len(n.node.get_content()))) for n in kept]

    scores = as_reranker(Longest()).rerank("which car?", ["a", "abcd", "ab", "abc"])
    assert sorted(range(4), key=lambda i: -scores[i]) == [1, 3, 0, 2]


def test_a_model_named_by_a_string_or_the_settings(tmp_path, monkeypatch):
    got = as_reranker("rerank-v3.5@https://api.cohere.com/v2/rerank", api_key="k")
    assert isinstance(got, HTTPReranker) and got.model == "rerank-v3.5" and got.url.endswith("/v2/rerank")
    assert isinstance(as_reranker("http://127.0.0.1:8080/rerank"), HTTPReranker)
    with pytest.raises(ConfigurationError, match="'cohere' is not known.*<model>@<url>"):
        as_reranker("cohere")
    with pytest.raises(ConfigurationError, match="object is not a reranker"):
        as_reranker(object())
    with pytest.raises(ConfigurationError, match="'ftp://x' must start with http:// or https://: pass the endpoint"):
        HTTPReranker("ftp://x")
    with pytest.raises(ConfigurationError, match="timeout 0 must be a number of seconds above 0"):
        HTTPReranker("http://127.0.0.1:8080/rerank", timeout=0)
    with pytest.raises(ConfigurationError, match="documents_field '' must be"):
        HTTPReranker("http://127.0.0.1:8080/rerank", documents_field="")
    monkeypatch.setenv("LAYERED_MEMORY_RERANK_MODEL", "bge@http://127.0.0.1:9/rerank")
    with LayeredMemory.from_settings(LayeredMemorySettings(data_dir=str(tmp_path)), embedder="none") as mem:
        assert isinstance(mem._core.searcher.rerank_model, HTTPReranker)
        mem.add_messages(_messages())
        got = mem.search("car", k=2)  # no network here (and port 9 refuses): the search answers in its own order
    assert got.hits and got.rerank_error


def test_each_framework_s_retriever_returns_the_model_s_order(tmp_path):
    """A LangChain compressor given to the engine reorders what the LangChain retriever returns, a LlamaIndex
    postprocessor what the LlamaIndex retriever returns (the same store, the same question)."""
    from langchain_core.documents import Document
    from langchain_core.documents.compressor import BaseDocumentCompressor
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle

    from langchain_layered_memory import LayeredMemoryRetriever as LangChainRetriever
    from llamaindex_layered_memory import LayeredMemoryRetriever as LlamaIndexRetriever

    class CarModelFirst(BaseDocumentCompressor):
        def compress_documents(self, documents: Sequence[Document], query: str, callbacks=None) -> Sequence[Document]:
            return sorted(documents, key=lambda d: "Golf" not in d.page_content)

    class CarModelFirstNodes(BaseNodePostprocessor):
        def _postprocess_nodes(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None) -> list[NodeWithScore]:
            return sorted(nodes, key=lambda n: "Golf" not in n.node.get_content())

    with LayeredMemory.embedded(tmp_path / "lc", embedder="none", rerank_model=CarModelFirst()) as mem:
        mem.add_messages(_messages())
        docs = LangChainRetriever(mem, user_id="u1", k=2).invoke("what car do I have")
    assert "Golf" in docs[0].page_content
    with LayeredMemory.embedded(tmp_path / "li", embedder="none", rerank_model=CarModelFirstNodes()) as mem:
        mem.add_messages(_messages())
        nodes = LlamaIndexRetriever(mem, user_id="u1", k=2).retrieve("what car do I have")
    assert "Golf" in nodes[0].node.get_content()
