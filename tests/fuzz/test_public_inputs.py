"""Hypothesis over every public input: only library errors, and a rejected call writes nothing.

Each test feeds valid-looking and hostile values (None, bools, huge ints, NaN, naive datetimes,
newlines in ids, bytes, sets, objects, nested and 10,000-deep structures) to one group of public
entry points of the engine, the agent tools and the CLI. It asserts that:

- the engine raises nothing but ``LayeredMemoryError`` (``InvalidInputError`` with a field, a rule
  and a fix); the tools return their error strings and log no failure other than a library error;
  the CLI exits 0 or 2 without a traceback;
- a rejected call changes nothing: no SQLite commit (``PRAGMA data_version`` from a second
  connection) and no vector point (counted in every collection).

One embedded store per module, no embedder (BM25 only) for speed. The default run draws about
6,000 examples; ``-m slow`` runs every test again with ten times as many.
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
from collections.abc import Callable, Iterator
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layered_memory import LayeredMemory, tools
from layered_memory.cli import main as cli_main
from layered_memory.config import LayeredMemorySettings
from layered_memory.errors import InvalidInputError, LayeredMemoryError

DEFAULT, SLOW = 1, 10  # multipliers of each test's example count
EXPLORE = [False]  # set by the `scale` fixture: the slow tier draws new random examples
TOTAL: dict[str, int] = {}  # examples run per test (printed at the end of the module with -s)


def _deep(n: int) -> list[Any]:
    root: list[Any] = []
    node = root
    for _ in range(n):
        child: list[Any] = []
        node.append(child)
        node = child
    return root


def _huge(digits: int) -> int:
    return 10**digits  # str() refuses ints over 4300 digits


HUGE_INT = st.builds(_huge, st.just(5000))  # built, not sampled: hypothesis reprs its strategies
DEEP = st.builds(_deep, st.just(10_000))
ID_TEXT = st.from_regex(r"[A-Za-z0-9_.:@/+=\-]{1,12}", fullmatch=True)
ATOMS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(), st.sampled_from([math.nan, math.inf, -math.inf, 1e308, -0.0, 10**20]), HUGE_INT,
    st.text(max_size=30), st.sampled_from(["", " ", "\n", "u1\n", "a b", "x|y", "é", "用户", "\x00", "a" * 201]),
    st.binary(max_size=8), st.datetimes(), st.datetimes(timezones=st.just(timezone.utc)),
    st.builds(object), DEEP,
)
JUNK = st.recursive(
    ATOMS, lambda kids: st.one_of(st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=5), kids, max_size=3),
                                  st.tuples(kids), st.frozensets(st.integers(), max_size=2)),
    max_leaves=6,
)


def ids() -> st.SearchStrategy[Any]:
    return st.one_of(ID_TEXT, ID_TEXT, JUNK)


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A valid value most of the time, junk otherwise."""
    return st.one_of(strategy, strategy, JUNK)


TIMES = st.one_of(st.just("2024-01-15T10:30:00Z"), st.integers(min_value=0, max_value=2_000_000_000))
TEXTS = st.text(min_size=1, max_size=40)


def run(label: str, n: int, body: Callable[..., None], /, **strategies: st.SearchStrategy[Any]) -> None:
    """Run ``body`` for ``n`` examples drawn from ``strategies`` (a hypothesis test inside the test)."""

    def counted(**kwargs: Any) -> None:
        TOTAL[label] = TOTAL.get(label, 0) + 1
        body(**kwargs)

    # The default run (the test command, CI) draws the same examples every time, so a red run is
    # reproducible and a green main stays green; `-m slow` explores new random examples.
    settings(
        max_examples=n, deadline=None, database=None, derandomize=not EXPLORE[0],
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )(given(**strategies)(counted))()


@pytest.fixture(params=[pytest.param(DEFAULT, id="default"), pytest.param(SLOW, id="slow", marks=pytest.mark.slow)])
def scale(request: pytest.FixtureRequest) -> int:
    EXPLORE[0] = request.param == SLOW
    return request.param


# -- the store and its fingerprint ------------------------------------------------------------------
@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def mem(store_dir: Path) -> Iterator[LayeredMemory]:
    m = LayeredMemory.embedded(store_dir, embedder="none", settings=LayeredMemorySettings(embedder="none"))
    m.add_message(message_id="m1", chat_id="c1", user_id="u1", content="the payments pod crashed again")
    m.create_task("u1", "fix the payments pod", task_id="t1")
    m.add_tool_result("t1", "kubectl logs: OOMKilled")
    m.set_user_data("u1", {"name": "Anna"})
    m.items.put(("memories", "u1"), "k1", {"text": "likes green tea"})
    m.agents.create("u1", "coder").add_interaction("ran pytest: 3 failures", task_id="t1")
    yield m
    m.close()
    print(f"\nfuzz examples run: {sum(TOTAL.values())} ({', '.join(f'{k} {v}' for k, v in sorted(TOTAL.items()))})")


COLLECTIONS = ("lm_messages", "lm_items", "useru1_coder_context")  # messages and topic summaries, items, the agent


class Fingerprint:
    """What a rejected call must not change: SQLite commits and the points of every vector collection."""

    def __init__(self, mem: LayeredMemory, store_dir: Path) -> None:
        self.mem = mem
        self.conn = sqlite3.connect(store_dir / "records.sqlite3")

    def __call__(self) -> tuple[Any, ...]:
        index = self.mem.index
        assert index is not None
        points = tuple(index.count(n) if index.has_collection(n) else -1 for n in COLLECTIONS)
        return self.conn.execute("PRAGMA data_version").fetchone()[0], points

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(scope="module")
def fingerprint(mem: LayeredMemory, store_dir: Path) -> Iterator[Fingerprint]:
    fp = Fingerprint(mem, store_dir)
    yield fp
    fp.close()


def check_error(exc: BaseException) -> None:
    if not isinstance(exc, LayeredMemoryError):
        raise AssertionError(f"{type(exc).__name__} escaped the error tree: {exc!r}"[:500]) from exc
    if isinstance(exc, InvalidInputError):
        assert exc.field and exc.rule and exc.fix, exc


def attempt(fp: Fingerprint | None, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``; a raised error must be a library error, and (with ``fp``) must leave no write behind."""
    before = fp() if fp is not None else None
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - the point of the test
        check_error(exc)
        if fp is not None:
            assert fp() == before, f"{getattr(fn, '__name__', fn)} raised {type(exc).__name__} after writing: {exc}"
        return exc


# -- engine -------------------------------------------------------------------------------------------
MESSAGE_FIELDS = {
    "message_id": ids(), "chat_id": ids(), "user_id": ids(), "user_name": maybe(st.text(max_size=10)),
    "content": maybe(TEXTS), "role": maybe(st.sampled_from(["user", "assistant", "system", "tool"])),
    "is_mention_bot": maybe(st.booleans()), "root_message_id": maybe(st.none() | ID_TEXT),
    "reply_message_id": maybe(st.none() | ID_TEXT), "topic_id": maybe(st.none() | ID_TEXT),
    "create_time": maybe(TIMES), "session_key": maybe(ID_TEXT), "tenant": maybe(st.just("default")),
    "metadata": maybe(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3)),
}


def test_fuzz_add_message(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    def body(fields: dict[str, Any], extra: dict[str, Any]) -> None:
        attempt(fingerprint, mem.add_message, {**fields, **extra})

    run("add_message", 700 * scale, body, fields=st.fixed_dictionaries({}, optional=MESSAGE_FIELDS),
        extra=st.dictionaries(st.text(max_size=8), JUNK, max_size=1))


def test_fuzz_add_messages(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    valid = st.fixed_dictionaries({"message_id": ID_TEXT, "chat_id": ID_TEXT, "user_id": ID_TEXT, "content": TEXTS})
    bad = st.fixed_dictionaries({}, optional=MESSAGE_FIELDS)

    def body(batch: Any) -> None:
        attempt(fingerprint, mem.add_messages, batch)

    run("add_messages", 300 * scale, body, batch=st.one_of(JUNK, st.lists(st.one_of(valid, bad, JUNK), max_size=4)))


def test_fuzz_search(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    filters = st.dictionaries(
        st.sampled_from(["role", "session_key", "user_id", "chat_id", "timestamp_from", "timestamp_to", "success", "kind", "bogus"]),
        st.one_of(ID_TEXT, TIMES, JUNK), max_size=3,
    )

    def body(queries: Any, flt: Any, k: Any, route: Any, query: Any, user: Any) -> None:
        handle = attempt(None, mem.for_user, user) if user is not None else mem
        if isinstance(handle, LayeredMemory):
            attempt(fingerprint, handle.search, queries, flt, k, route, query=query)
            attempt(fingerprint, handle.plan_search, queries, filters=flt, k=k, route=route)

    run("search", 700 * scale, body, queries=st.one_of(TEXTS, st.lists(TEXTS, max_size=3), JUNK), flt=st.one_of(st.none(), filters, JUNK),
        k=maybe(st.integers(min_value=1, max_value=100)), route=maybe(st.sampled_from(["hybrid", "bm25", "dense"])),
        query=st.one_of(st.none(), TEXTS, JUNK), user=st.one_of(st.none(), st.just("u1"), ids()))


def test_fuzz_context(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    def body(user: Any, session: Any, query: Any, include_vector: Any, max_tokens: Any, task_id: Any) -> None:
        attempt(fingerprint, mem.get_context_for_user, user, session, query, include_vector, max_tokens, task_id=task_id)

    run("get_context_for_user", 500 * scale, body, user=st.one_of(st.just("u1"), ids()), session=st.one_of(st.just("c1"), ids()),
        query=st.one_of(st.none(), TEXTS, JUNK), include_vector=maybe(st.booleans()),
        max_tokens=st.one_of(st.none(), st.integers(min_value=1, max_value=5000), JUNK), task_id=st.one_of(st.none(), st.just("t1"), ids()))


def test_fuzz_sessions_and_messages(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    def body(user: Any, session: Any, message_ids: Any, limit: Any) -> None:
        attempt(fingerprint, mem.list_sessions, user, limit=limit)
        attempt(fingerprint, mem.get_messages, message_ids)
        attempt(fingerprint, mem.get_session_messages, user, session, limit=limit)
        attempt(fingerprint, mem.get_summary, user, session)
        if user != "u1":  # clearing the seeded user would starve the other tests
            attempt(fingerprint, mem.clear_session, user, session)

    run("sessions", 400 * scale, body, user=st.one_of(st.just("u1"), ids()), session=st.one_of(st.none(), st.just("c1"), ids()),
        message_ids=st.one_of(st.lists(ids(), max_size=3), JUNK), limit=st.one_of(st.none(), st.integers(min_value=0, max_value=50), JUNK))


def test_fuzz_user_data(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    def body(user: Any, data: Any, merge: Any) -> None:
        attempt(fingerprint, mem.set_user_data, user, data, merge=merge)
        attempt(fingerprint, mem.get_user_data, user)
        if user != "u1":
            attempt(fingerprint, mem.delete_user_data, user)

    run("user_data", 400 * scale, body, user=st.one_of(st.just("u1"), ids()),
        data=st.one_of(st.dictionaries(st.text(max_size=6), st.text(max_size=6) | st.integers(), max_size=3), JUNK),
        merge=maybe(st.booleans()))


def test_fuzz_tasks(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    statuses = st.sampled_from(["open", "in_progress", "done", "cancelled"])

    def body(user: Any, title: Any, description: Any, due: Any, task_id: Any, metadata: Any, changes: dict[str, Any], status: Any) -> None:
        attempt(fingerprint, mem.create_task, user, title, description, due=due, task_id=task_id, metadata=metadata)
        attempt(fingerprint, mem.get_task, user, task_id)
        attempt(fingerprint, mem.update_task, user, task_id, **changes)
        attempt(fingerprint, mem.list_tasks, user, status)

    run("tasks", 500 * scale, body, user=st.one_of(st.just("u1"), ids()), title=maybe(TEXTS), description=maybe(st.text(max_size=10)),
        due=st.one_of(st.none(), TIMES, JUNK), task_id=st.one_of(st.none(), st.just("t1"), ids()),
        metadata=st.one_of(st.none(), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2), JUNK),
        changes=st.fixed_dictionaries({}, optional={"title": maybe(TEXTS), "description": maybe(st.text(max_size=5)), "status": maybe(statuses),
                                                   "due": maybe(TIMES), "metadata": maybe(st.dictionaries(st.text(max_size=3), st.integers())),
                                                   "owner": JUNK}),
        status=st.one_of(st.none(), statuses, JUNK))


def test_fuzz_task_memory(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    def body(task_id: Any, content: Any, user: Any, tool_name: Any) -> None:
        attempt(fingerprint, mem.add_tool_result, task_id, content, user_id=user, tool_name=tool_name)
        attempt(fingerprint, mem.get_task_memory, task_id)
        if task_id != "t1":
            attempt(fingerprint, mem.clear_task_memory, task_id)

    run("task_memory", 400 * scale, body, task_id=st.one_of(st.just("t1"), ids()), content=maybe(TEXTS),
        user=st.one_of(st.none(), st.just("u1"), ids()), tool_name=st.one_of(st.none(), st.text(max_size=8), JUNK))


def test_fuzz_agents(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    agent = mem.agents.get("u1", "coder")
    names = st.from_regex(r"[A-Za-z0-9-]{1,8}", fullmatch=True)
    agent_filters = st.dictionaries(
        st.sampled_from(["interaction_type", "task_id", "success", "timestamp_from", "timestamp_to", "user_id", "bogus"]),
        st.one_of(st.just("tool_call"), st.booleans(), TIMES, JUNK), max_size=2,
    )

    def body(user: Any, name: Any, max_vectors: Any, text: Any, itype: Any, task_id: Any, ts: Any, success: Any,
             error_details: Any, metadata: Any, query: Any, k: Any, flt: Any, days: Any, limit: Any) -> None:
        attempt(fingerprint, mem.agents.get, user, name)
        if name != "coder":
            attempt(fingerprint, mem.agents.create, user, name, max_vectors=max_vectors)
        attempt(fingerprint, agent.add_interaction, text, interaction_type=itype, task_id=task_id, timestamp=ts, success=success,
                error_details=error_details, metadata=metadata)
        attempt(fingerprint, agent.search, query, k=k, filters=flt)
        attempt(fingerprint, agent.list_interactions, filters=flt, limit=limit)
        attempt(fingerprint, agent.count, flt)
        if days is not None:  # keep the seeded interaction: only the far past is pruned
            attempt(fingerprint, agent.prune, days, filter={"timestamp_to": "2000-01-01T00:00:00Z"})

    run("agents", 300 * scale, body, user=st.one_of(st.just("u1"), ids()), name=st.one_of(st.just("coder"), names, JUNK),
        max_vectors=st.one_of(st.none(), st.integers(min_value=1, max_value=10**6), JUNK), text=maybe(TEXTS),
        itype=maybe(st.sampled_from(["task_execution", "tool_call", "user_message", "agent_response"])),
        task_id=st.one_of(st.none(), ID_TEXT, JUNK), ts=st.one_of(st.none(), TIMES, JUNK), success=maybe(st.booleans()),
        error_details=st.one_of(st.none(), st.text(max_size=8), JUNK),
        metadata=st.one_of(st.none(), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2), JUNK),
        query=maybe(TEXTS), k=maybe(st.integers(min_value=1, max_value=100)), flt=st.one_of(st.none(), agent_filters, JUNK),
        days=st.one_of(st.none(), st.floats(), st.integers(), JUNK), limit=maybe(st.integers(min_value=1, max_value=50)))


def test_fuzz_items(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    items = mem.items
    namespaces = st.one_of(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=3).map(tuple), JUNK)

    def body(ns: Any, key: Any, value: Any, index: Any, query: Any, flt: Any, limit: Any, offset: Any, max_depth: Any) -> None:
        attempt(fingerprint, items.put, ns, key, value, index=index)
        attempt(fingerprint, items.get, ns, key)
        attempt(fingerprint, items.search, ns, query=query, filter=flt, limit=limit, offset=offset)
        attempt(fingerprint, items.list_namespaces, prefix=ns, max_depth=max_depth, limit=limit, offset=offset)
        if ns != ("memories", "u1"):
            attempt(fingerprint, items.delete, ns, key)

    run("items", 400 * scale, body, ns=namespaces, key=maybe(st.text(min_size=1, max_size=6)),
        value=st.one_of(st.dictionaries(st.text(max_size=5), st.text(max_size=8) | st.integers(), max_size=3), JUNK),
        index=st.one_of(st.none(), st.booleans(), st.lists(st.text(min_size=1, max_size=5), max_size=2), JUNK),
        query=st.one_of(st.none(), TEXTS, JUNK), flt=st.one_of(st.none(), st.dictionaries(st.text(max_size=4), JUNK, max_size=2), JUNK),
        limit=maybe(st.integers(min_value=1, max_value=50)), offset=maybe(st.integers(min_value=0, max_value=10)),
        max_depth=st.one_of(st.none(), st.integers(min_value=1, max_value=3), JUNK))


def test_fuzz_handles(mem: LayeredMemory, fingerprint: Fingerprint, scale: int) -> None:
    def body(tenant: Any, user: Any) -> None:
        handle = attempt(fingerprint, mem.tenant, tenant)
        attempt(fingerprint, mem.for_user, user)
        if isinstance(handle, LayeredMemory):
            attempt(fingerprint, handle.search, "payments")

    run("handles", 200 * scale, body, tenant=ids(), user=ids())


# -- tools ----------------------------------------------------------------------------------------------
class _Failures(logging.Handler):
    """Collects the exception type names the tools log when they turn an exception into text."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.names: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().split(" failed: ")[:1] != [record.getMessage()] and "detail" not in record.msg:
            self.names.append(str(record.args[1]) if isinstance(record.args, tuple) and len(record.args) > 1 else "?")


LIBRARY_ERRORS = {c.__name__ for c in (LayeredMemoryError, *LayeredMemoryError.__subclasses__())} | {
    c.__name__ for base in LayeredMemoryError.__subclasses__() for c in base.__subclasses__()
}


@pytest.fixture
def tool_failures() -> Iterator[_Failures]:
    handler = _Failures()
    log = logging.getLogger("layered_memory.tools")
    old = log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    yield handler
    log.removeHandler(handler)
    log.setLevel(old)
    assert set(handler.names) <= LIBRARY_ERRORS, f"tools turned foreign exceptions into text: {sorted(set(handler.names) - LIBRARY_ERRORS)}"


def test_fuzz_tools(mem: LayeredMemory, fingerprint: Fingerprint, scale: int, tool_failures: _Failures) -> None:
    bound = mem.for_user("u1")
    qdrant_texts = (tools.QDRANT_NOT_CONFIGURED, tools.QUERY_TEXT_REQUIRED, tools.NO_RELEVANT_MESSAGES)

    def body(query: Any, limit: Any, flt: Any, queries: Any, k: Any, route: Any, status: Any, chat_id: Any, user: Any, tenant: Any) -> None:
        before = fingerprint()
        text = tools.qdrant_search_memory(bound, query, limit, flt)
        assert text in qdrant_texts or text.startswith((tools.SEARCH_ERROR_PREFIX, "Found ")), text
        out = tools.search_tool(bound, queries, flt, k, route, query=query)
        assert set(out) >= {"hits", "total_found", "route_used"}
        assert "error" not in out or out["error"].startswith(tools.SEARCH_ERROR_PREFIX), out
        tools.search_json(out)
        assert tools.list_tasks_tool(bound, status=status).startswith(("Found ", "No tasks", tools.LIST_TASKS_ERROR_PREFIX))
        topics = tools.topic_search_tool(bound, query, chat_id, k)
        assert isinstance(topics, str) and topics
        for schema, args in ((tools.QdrantSearchMemoryArgs, {"query_text": query, "limit": limit, "filters": flt}),
                             (tools.SearchArgs, {"queries": queries, "filters": flt, "k": k, "route": route, "query": query}),
                             (tools.TopicSearchArgs, {"query": query, "chat_id": chat_id, "k": k}), (tools.ListTasksArgs, {"status": status})):
            schema.model_validate(args)  # the schemas accept anything: the functions answer bad values
        assert fingerprint() == before, "a read-only tool wrote"
        attempt(None, tools.bind, mem, user, tenant)

    run("tools", 500 * scale, body, query=st.one_of(TEXTS, JUNK), limit=st.one_of(st.integers(-5, 50), st.text(max_size=3), JUNK),
        flt=st.one_of(st.none(), st.dictionaries(st.sampled_from(["role", "session_key", "timestamp_from", "bogus"]), st.one_of(ID_TEXT, JUNK), max_size=2),
                      st.text(max_size=10), JUNK),
        queries=st.one_of(st.none(), TEXTS, st.lists(TEXTS, max_size=2), JUNK), k=st.one_of(st.integers(-2, 120), JUNK),
        route=maybe(st.sampled_from(["hybrid", "bm25", "dense"])), status=st.one_of(st.none(), st.sampled_from(["open", "done", "all"]), JUNK),
        chat_id=st.one_of(st.none(), ID_TEXT, JUNK), user=st.one_of(st.none(), st.just("u1"), ids()), tenant=st.one_of(st.none(), ids()))


# -- CLI ------------------------------------------------------------------------------------------------
def _cli_messages(path: Path) -> int:
    db = path / "records.sqlite3"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM messages").fetchone()[0]


def _line(value: Any) -> str:
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError, RecursionError):
        return f"<{type(value).__name__}>"


def _nested_line(depth: int) -> str:
    return "[" * depth + "]" * depth  # json.loads raises RecursionError on it


def test_fuzz_cli(tmp_path_factory: pytest.TempPathFactory, scale: int) -> None:
    path = tmp_path_factory.mktemp("cli")
    runner = CliRunner()
    base = ["--path", str(path), "--embedder", "none"]
    message = st.fixed_dictionaries({}, optional=MESSAGE_FIELDS)
    lines = st.lists(st.one_of(message.map(_line), JUNK.map(_line), st.text(max_size=20), st.builds(_nested_line, st.just(5000))), min_size=1, max_size=3)

    def body(rows: list[str], raw: bytes | None, args: list[str]) -> None:
        src = path / "in.jsonl"
        if raw is not None:
            src.write_bytes(raw)
        else:
            src.write_text("\n".join(rows) + "\n", encoding="utf-8")
        before = _cli_messages(path)
        result = runner.invoke(cli_main, [*base, "ingest", str(src)])
        assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        if result.exit_code == 2:
            assert _cli_messages(path) == before, "a rejected ingest (one batch) wrote messages"
        result = runner.invoke(cli_main, [*base, *args])
        assert result.exit_code in (0, 2), (args, result.exit_code, result.output, result.exception)
        assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))

    safe_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
    commands = st.one_of(
        st.tuples(st.just("search"), safe_text.filter(bool), st.sampled_from(["--k", "--route", "--filter"]), safe_text).map(list),
        st.tuples(st.just("context"), safe_text, safe_text, st.sampled_from(["--query", "--max-tokens"]), safe_text).map(list),
        st.tuples(st.just("ingest"), st.just("--batch"), st.sampled_from(["0", "-1", "x", "2"]), st.just(str(path / "in.jsonl"))).map(list),
        st.tuples(st.just("agent"), st.just("import"), st.just(str(path / "in.jsonl"))).map(list),
        st.tuples(st.just("agent"), st.sampled_from(["create", "stats", "export", "search"]), safe_text, safe_text).map(list),
        st.tuples(st.just("agent"), st.just("stats"), st.just("u1"), st.just("coder"), st.just("--period-days"), safe_text).map(list),
        st.tuples(st.just("agent"), st.just("search"), st.just("u1"), st.just("coder"), safe_text.filter(bool),
                  st.sampled_from(["--k", "--filter"]), safe_text).map(list),
    )
    runner.invoke(cli_main, [*base, "agent", "create", "u1", "coder"])
    run("cli", 80 * scale, body, rows=lines, raw=st.one_of(st.none(), st.none(), st.binary(max_size=30)), args=commands)
