"""Issue 10, bug 10: every public input is checked at the edge; a bad one raises an
``InvalidInputError`` naming the field, the rule and the fix, before anything is written."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from layered_memory import LayeredMemory
from layered_memory.cli import main as cli_main
from layered_memory.config import LayeredMemorySettings
from layered_memory.errors import InvalidInputError


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LayeredMemory]:
    """One store for the module: the tests below write only under ids no other test reads."""
    path = tmp_path_factory.mktemp("inputs")
    m = LayeredMemory.embedded(path, embedder="none", settings=LayeredMemorySettings(embedder="none"))
    m.add_message(message_id="m1", chat_id="c1", user_id="u1", content="the payments pod crashed")
    yield m
    m.close()


def _input_error(exc: pytest.ExceptionInfo[Any], field: str) -> InvalidInputError:
    err = exc.value
    assert isinstance(err, InvalidInputError) and err.field == field, err
    assert err.rule and err.fix, err
    return err


# -- bug 10 --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("filters", [["role"], "role=user", 5])
def test_non_dict_filters_are_input_errors(mem: LayeredMemory, filters: Any) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.search("payments", filters=filters)
    _input_error(exc, "filters")


@pytest.mark.parametrize("queries", [5, object(), {"q": "payments"}, b"payments"])
def test_non_iterable_queries_are_input_errors(mem: LayeredMemory, queries: Any) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.search(queries)
    _input_error(exc, "queries")
    with pytest.raises(InvalidInputError):
        mem.search(queries, query="payments")


@pytest.mark.parametrize("when", [10**20, 1e300, math.nan, math.inf, -(10**15), "9999-12-31T23:59:59-01:00"])
def test_out_of_range_create_time_is_an_input_error(mem: LayeredMemory, when: Any) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.add_message(message_id="m2", chat_id="c1", user_id="u1", content="x", create_time=when)
    _input_error(exc, "create_time")
    with pytest.raises(InvalidInputError):
        mem.create_task("u1", "renew the certificate", due=when)


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"query": 5}, "query"), ({"query": ["a"]}, "query"), ({"max_tokens": {}}, "max_tokens"), ({"max_tokens": 0}, "max_tokens"),
    ({"max_tokens": True}, "max_tokens"), ({"include_vector": "no"}, "include_vector"), ({"task_id": "t 1"}, "task_id"),
])
def test_context_arguments_are_checked(mem: LayeredMemory, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.get_context_for_user("u1", "c1", **kwargs)
    _input_error(exc, field)


@pytest.mark.parametrize("session", [None, 1.5, ["c1"], "c1\n", b"c1"])
def test_non_string_session_ids_are_input_errors(mem: LayeredMemory, session: Any) -> None:
    for call in (mem.get_context_for_user, mem.get_session_messages, mem.get_summary):
        with pytest.raises(InvalidInputError) as exc:
            call("u1", session)
        _input_error(exc, "session_id")


def test_huge_int_user_id_is_an_input_error(mem: LayeredMemory) -> None:
    huge = 10**5000  # str() refuses it: the old check raised ValueError
    with pytest.raises(InvalidInputError) as exc:
        mem.add_message(message_id="m2", chat_id="c1", user_id=huge, content="x")
    assert "<int>" in str(_input_error(exc, "user_id"))
    with pytest.raises(InvalidInputError):
        mem.get_context_for_user(huge, "c1")
    with pytest.raises(InvalidInputError):
        mem.agents.create(huge, "coder")
    assert mem.add_message(message_id="m42", chat_id="c42", user_id=42, content="x").user_id == "42"  # small ints stay ids


@pytest.mark.parametrize("field", ["message_id", "chat_id", "user_id", "session_key", "reply_message_id"])
@pytest.mark.parametrize("suffix", ["\n", "\r\n", " "])
def test_ids_reject_a_trailing_newline(mem: LayeredMemory, field: str, suffix: str) -> None:
    fields = {"message_id": "m2", "chat_id": "c1", "user_id": "u1", "content": "x", field: "m1" + suffix}
    with pytest.raises(InvalidInputError) as exc:
        mem.add_message(fields)
    _input_error(exc, field)
    assert mem.get_messages(["m2"], chat_id="c1") == [None]


def test_agent_names_reject_a_trailing_newline(mem: LayeredMemory) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.agents.create("u1", "coder\n")
    _input_error(exc, "agent_name")


@pytest.mark.parametrize("metadata", [[1, 2], 5, "tool=pytest"])
def test_agent_metadata_must_be_a_dict(mem: LayeredMemory, metadata: Any) -> None:
    agent = mem.agents.create("u1", "meta-" + type(metadata).__name__)
    with pytest.raises(InvalidInputError) as exc:
        agent.add_interaction("ran pytest", metadata=metadata)
    _input_error(exc, "metadata")
    assert agent.list_interactions() == []


@pytest.mark.parametrize("days", [math.nan, math.inf, -1, "30"])
def test_prune_days_must_be_a_finite_number(mem: LayeredMemory, days: Any) -> None:
    agent = mem.agents.create("u1", "pruner")
    agent.clear()
    agent.add_interaction("ran pytest")
    with pytest.raises(InvalidInputError) as exc:
        agent.prune(days=days)
    _input_error(exc, "days")
    assert agent.prune(days=1e300) == 0  # a cutoff before year 1: nothing is that old
    assert len(agent.list_interactions()) == 1


def test_rejected_add_message_writes_no_session_registration(mem: LayeredMemory) -> None:
    """The store refused the metadata after the session registration was written; now the engine
    checks everything first."""
    for metadata in ({"obj": object()}, {"x": math.nan}, {1: "int key"}):
        with pytest.raises(InvalidInputError, match="metadata"):
            mem.add_message(message_id="m9", chat_id="c9", user_id="u9", content="x", metadata=metadata)
    with pytest.raises(InvalidInputError):
        mem.add_messages([{"message_id": "m8", "chat_id": "c8", "user_id": "u8", "content": "ok"},
                          {"message_id": "m9", "chat_id": "c9", "user_id": "u9", "content": "x", "metadata": {"o": object()}}])
    assert mem.list_sessions("u9") == [] and mem.list_sessions("u8") == []
    assert mem.get_messages([("c8", "m8"), ("c9", "m9")]) == [None, None]


def test_deeply_nested_values_are_refused_before_they_become_unreadable(mem: LayeredMemory) -> None:
    """Metadata 200-255 levels deep used to be stored and then fail to load (pydantic's JSON parser
    stops at ~200 levels); deeper raised a serialization error from the store, 10,000 levels a
    RecursionError from json.dumps in user data and items."""
    def nested(depth: int) -> dict[str, Any]:
        root: dict[str, Any] = {}
        node = root
        for _ in range(depth):
            node["a"] = {}
            node = node["a"]
        return root

    for depth in (40, 250, 10_000):
        with pytest.raises(InvalidInputError, match="nests deeper than"):
            mem.add_message(message_id="m2", chat_id="c1", user_id="u1", content="x", metadata=nested(depth))
        with pytest.raises(InvalidInputError, match="nests deeper than"):
            mem.set_user_data("u7", {"deep": nested(depth)})
        with pytest.raises(InvalidInputError, match="nests deeper than"):
            mem.items.put(("memories", "u7"), "k1", nested(depth))
    stored = mem.add_message(message_id="deep-ok", chat_id="c7", user_id="u7", content="x", metadata=nested(20))
    assert mem.get_messages([("c7", "deep-ok")]) == [stored]


@pytest.mark.parametrize(("call", "field"), [
    (lambda m: m.add_messages(5), "messages"), (lambda m: m.add_messages({"message_id": "m1"}), "messages"),
    (lambda m: m.get_messages("m1", chat_id="c1"), "message_ids"), (lambda m: m.create_task("u1", "t", metadata=5), "metadata"),
    (lambda m: m.create_task("u1", "t", description=5), "description"),
    (lambda m: m.update_task("u5", m.create_task("u5", "t", task_id="t5").task_id, title=""), "title"),
    (lambda m: m.items.list_namespaces(limit=None), "limit"), (lambda m: m.items.list_namespaces(prefix=[1]), "namespace"),
])
def test_other_public_inputs_are_input_errors(mem: LayeredMemory, call: Any, field: str) -> None:
    with pytest.raises(InvalidInputError) as exc:
        call(mem)
    _input_error(exc, field)


def test_tools_answer_bad_arguments_with_their_error_strings(mem: LayeredMemory) -> None:
    from layered_memory import tools

    bound = mem.for_user("u1")
    out = tools.search_tool(bound, 5, query="payments")
    assert out["error"].startswith("Error searching memory: queries=5")
    text = tools.topic_search_tool(bound, "payments", chat_id=["c1"])
    assert text.startswith("Error searching topics: chat_id=['c1']")


def test_ingest_reports_a_deeply_nested_line(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    good = json.dumps({"message_id": "m1", "chat_id": "c1", "user_id": "u1", "content": "hello"})
    src.write_text(good + "\n" + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli_main, ["--path", str(tmp_path / "s"), "--embedder", "none", "ingest", str(src)])
    assert result.exit_code == 2, result.output
    assert "line 2: JSON nested too deeply" in result.output and "Traceback" not in result.output
    assert not isinstance(result.exception, RecursionError)


@pytest.mark.parametrize(("content", "expected"), [(b"\xff\xfe{}\n", "not UTF-8"), (None, "--batch")])
def test_ingest_reports_bad_files_and_options(tmp_path: Path, content: bytes | None, expected: str) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes(content or b'{"message_id": "m1", "chat_id": "c1", "user_id": "u1", "content": "x"}\n')
    args = ["ingest", str(src)] + (["--batch", "0"] if content is None else [])
    result = CliRunner().invoke(cli_main, ["--path", str(tmp_path / "s"), "--embedder", "none", *args])
    assert result.exit_code == 2 and expected in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("content", ["[" * 100_000 + "]" * 100_000, '{"user_id": ' + "9" * 5000 + "}", b"\xff\xfe{}"])
def test_agent_import_reports_unreadable_files(tmp_path: Path, content: str | bytes) -> None:
    src = tmp_path / "agent.json"
    src.write_bytes(content if isinstance(content, bytes) else content.encode())
    result = CliRunner().invoke(cli_main, ["--path", str(tmp_path / "s"), "--embedder", "none", "agent", "import", str(src)])
    assert result.exit_code == 2 and result.output.startswith("error: "), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


def test_agent_stats_period_before_year_1_is_an_input_error(mem: LayeredMemory) -> None:
    agent = mem.agents.create("u1", "statistician")
    with pytest.raises(InvalidInputError) as exc:
        agent.stats(period_days=10**11)
    _input_error(exc, "period_days")


def test_langchain_retriever_refuses_non_dict_filters(mem: LayeredMemory) -> None:
    pytest.importorskip("langchain_core")
    from langchain_layered_memory import LayeredMemoryRetriever

    with pytest.raises(InvalidInputError) as exc:
        LayeredMemoryRetriever(memory=mem, user_id="u1").invoke("payments", filters=["role"])
    _input_error(exc, "filters")


@pytest.mark.parametrize("field", ["", " ", "a b", '"', "a..b", ".a", "a.", ":", "a,b", "a[b"])
def test_item_filter_fields_must_be_valid_paths(mem: LayeredMemory, field: str) -> None:
    """Found by the slow fuzz run: the field became an invalid Qdrant JSON path (ValueError)."""
    with pytest.raises(InvalidInputError) as exc:
        mem.items.search(("memories",), query="tea", filter={field: 1})
    _input_error(exc, "filter")


def test_limits_beyond_sqlite_integers_are_input_errors(mem: LayeredMemory) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.get_session_messages("u1", "c1", limit=2**64)
    _input_error(exc, "limit")
    with pytest.raises(InvalidInputError):
        mem.list_sessions("u1", limit=10**30)


def test_topic_search_tool_bounds_k(mem: LayeredMemory) -> None:
    from layered_memory import tools

    assert tools.topic_search_tool(mem.for_user("u1"), "payments", k=10**5000).startswith("Error searching topics: k=<int>: must be from 1 to 100")


@pytest.mark.parametrize("bound", [10**400, math.nan, math.inf])
def test_item_filter_numbers_must_fit_a_float(mem: LayeredMemory, bound: Any) -> None:
    with pytest.raises(InvalidInputError) as exc:
        mem.items.search(("memories",), query="tea", filter={"n": {"$gt": bound}})
    _input_error(exc, "filter")


def test_tool_limits_that_only_look_like_digits_are_refused(mem: LayeredMemory) -> None:
    from layered_memory import tools

    assert tools.qdrant_search_memory(mem.for_user("u1"), "payments", limit="²").startswith("Error searching memory: limit='²'")


def test_huge_int_filter_values_are_input_errors(mem: LayeredMemory) -> None:
    """Found by the fuzz suite: str() of a 5000-digit filter value raised ValueError."""
    with pytest.raises(InvalidInputError) as exc:
        mem.search("payments", filters={"session_key": [10**5000]})
    _input_error(exc, "filters.session_key")


def test_item_value_with_a_huge_int_is_refused_before_any_write(tmp_path):
    from layered_memory import InvalidInputError, LayeredMemory

    mem = LayeredMemory.embedded(tmp_path, embedder="none")
    try:
        with pytest.raises(InvalidInputError, match="limited to 4096 bits"):
            mem.items.put(("ns",), "k", {"n": 10 ** 5000})
        assert mem.records.count_docs(mem.tenant_id, "index_outbox") == 0 and mem.items.get(("ns",), "k") is None
        with pytest.raises(InvalidInputError, match="limited to 4096 bits"):
            mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content="x", metadata={"n": -(10 ** 5000)})
    finally:
        mem.close()
