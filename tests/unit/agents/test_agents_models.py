"""Agent store pure logic: the naming rule and its collision guarantees, scopes, interactions, filters,
document keys and the export reader. No storage, no network."""

from __future__ import annotations

import io
import itertools
import json
from datetime import datetime, timedelta, timezone

import pytest

from layered_memory.agents.export import read_export
from layered_memory.agents.models import AgentEvent, AgentScope, Interaction, check_max_vectors, check_mode, check_name, ts_key
from layered_memory.agents.store import AGENT_FILTERS, check_filters, doc_matches, key_range, scope_filter
from layered_memory.errors import InvalidInputError
from layered_memory.stores.qdrant_common import check_collection_name


@pytest.mark.parametrize("bad", ["", "a_b", "a b", "a|b", "a.b", "ü", "x" * 41, None, True, "../x", "a/b"])
def test_agent_name_rule_rejects(bad):
    with pytest.raises(InvalidInputError) as err:
        check_name("agent_name", bad)
    assert "agent_name=" in str(err.value) and "use e.g." in str(err.value)


def test_name_rule_accepts_and_fix_suggestion():
    assert check_name("user_id", 123) == "123"
    assert check_name("agent_name", "Coder-2") == "Coder-2"
    with pytest.raises(InvalidInputError, match="use e.g. 'my-agent'"):
        check_name("agent_name", "my_agent")


def test_collection_names_never_collide():
    """Every (user, agent) pair over an alphabet rich in separators maps to a distinct, valid collection name."""
    parts = ["1", "a", "1-a", "a-1", "-", "--", "A", "b"]
    seen: dict[str, tuple[str, str]] = {}
    for user, agent in itertools.product(parts, repeat=2):
        scope = AgentScope.of("default", user, agent)
        name = scope.collection("per_agent", "lm_")
        check_collection_name(name)
        assert seen.setdefault(name, (user, agent)) == (user, agent), name
        assert name == f"user{user}_{agent}_context"
    longest = AgentScope.of("some:tenant", "u" * 60, "a" * 40).collection("per_agent", "lm_")
    assert check_collection_name(longest) == longest


def test_seed_collection_name_and_tenants():
    s = AgentScope.of("default", "123", "coder")
    assert s.collection("per_agent", "lm_") == "user123_coder_context"
    assert s.collection("shared", "lm_") == "lm_agent_context"
    acme = AgentScope.of("acme", "123", "coder")
    assert acme.collection("per_agent", "lm_") != s.collection("per_agent", "lm_")
    assert acme.key == "acme|123|coder" and s.docs == "agent:123:coder"
    assert AgentScope.of("default", "123", "Coder").registry_key == s.registry_key  # case collision detectable


def test_interaction_validation():
    it = Interaction.build({"text": "ok", "timestamp": "2024-06-01T10:00:00Z", "task_id": "t-1"})
    assert it.success is True and it.interaction_type == "task_execution" and it.key.startswith("2024-06-01T10:00:00.000000Z|")
    for bad, field in (
        ({"text": " "}, "text"),
        ({"text": "x", "interaction_type": "other"}, "interaction_type"),
        ({"text": "x", "timestamp": "2024-06-01T10:00:00"}, "timestamp"),
        ({"text": "x", "success": "yes"}, "success"),
        ({"text": "x", "error_details": "boom"}, "error_details"),
        ({"text": "x", "task_id": "a b"}, "task_id"),
        ({"text": "x", "extra": 1}, "extra"),
    ):
        with pytest.raises(InvalidInputError) as err:
            Interaction.build(bad)
        assert err.value.field == field, (bad, err.value)
    failed = Interaction.build({"text": "x", "success": False, "error_details": "boom"})
    assert Interaction.from_doc(failed.to_doc()) == failed


def test_ts_key_sorts_chronologically():
    base = datetime(2024, 1, 1, tzinfo=timezone.utc)
    times = [base + timedelta(microseconds=m) for m in (0, 1, 999_999, 1_000_000)] + [base.replace(year=2030)]
    keys = [ts_key(t) for t in times]
    assert keys == sorted(keys) and len({len(k) for k in keys}) == 1


def test_filters_refuse_scope_names_and_unknowns():
    assert set(AGENT_FILTERS) == {"interaction_type", "success", "task_id", "timestamp_from", "timestamp_to"}
    for name in ("user_id", "agent_name", "tenant", "session_key"):
        with pytest.raises(InvalidInputError, match="names another scope"):
            check_filters({name: "x"}, "search")
    with pytest.raises(InvalidInputError, match="is not an agent filter"):
        check_filters({"colour": "red"}, "search")


def test_scope_filter_always_starts_with_scope():
    s = AgentScope.of("default", "123", "coder")
    flt, normalized = scope_filter(s, {"success": "false", "interaction_type": ["tool_call", "user_message"]})
    assert flt.must[0].key == "tenant" and flt.must[0].match.value == "default|123|coder"
    assert flt.must[1].key == "kind"  # the scope comes first, then the user filters
    success = [c for c in flt.must if c.key == "success"][0]
    assert success.match.value == 0 and not isinstance(success.match.value, bool)  # Edge cannot match bools
    assert normalized == {"success": False, "interaction_type": ["tool_call", "user_message"]}


def test_doc_matches_and_key_range_agree():
    docs = [Interaction.build({"text": f"n{i}", "timestamp": f"2024-06-0{i}T12:00:00Z", "success": i % 2 == 0,
                               "interaction_type": "tool_call" if i % 3 else "user_message"}) for i in range(1, 8)]
    _, norm = scope_filter(AgentScope.of("default", "1", "a"),
                           {"timestamp_from": "2024-06-02T12:00:00Z", "timestamp_to": "2024-06-05T12:00:00Z", "success": True})
    after, stop = key_range(norm)
    in_range = [d for d in docs if after < d.key < stop]
    assert [d.text for d in in_range] == ["n2", "n3", "n4", "n5"]  # inclusive bounds
    assert [d.text for d in in_range if doc_matches(d.to_doc(), norm)] == ["n2", "n4"]


def test_read_export_streams_and_checks_total():
    lines = ['{"agent_id": "user1_a", "export_date": "2024-01-01T00:00:00Z", "user_id": "1", "agent_name": "a", "interactions": [']
    lines += [("," if i else "") + json.dumps({"text": f"t{i}"}) for i in range(1200)]
    lines.append('], "total_interactions": 1200}')
    text = "\n".join(lines) + "\n"
    json.loads(text)  # valid JSON as a whole
    header, pages = read_export(io.StringIO(text))
    sizes = [len(p) for p in pages]
    assert header["agent_id"] == "user1_a" and sizes == [500, 500, 200]
    _, pages = read_export(io.StringIO(text.replace('"total_interactions": 1200', '"total_interactions": 1201')))
    with pytest.raises(InvalidInputError, match="holds 1200 interactions"):
        list(pages)
    compact = json.dumps({"agent_id": "x", "export_date": "d", "user_id": "1", "agent_name": "a", "interactions": [{"text": "t"}]})
    assert [len(p) for p in read_export(io.StringIO(compact))[1]] == [1]
    with pytest.raises(InvalidInputError, match="export agent_id"):
        read_export(io.StringIO('{"interactions": []}'))


def test_small_validators_and_event_rendering():
    assert check_mode("shared") == "shared"
    with pytest.raises(InvalidInputError, match="per_agent"):
        check_mode("per-user")
    with pytest.raises(InvalidInputError):
        check_max_vectors(True)
    ev = AgentEvent("size_warning", "default", "123", "coder", 800_000, 1_000_000)
    assert ev.usage == 0.8 and ev.to_sse().startswith("event: size_warning\ndata: {")


def test_agents_public_api_is_pinned():
    import layered_memory.agents as agents

    assert agents.__all__ == sorted(
        (n for n in vars(agents) if not n.startswith("_") and n not in {"api", "models", "monitor", "store", "export", "stats", "cli", "health"}),
        key=lambda n: (not n.isupper(), n),
    )
