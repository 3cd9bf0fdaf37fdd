"""Issue 10's isolation suite: every probe of ``isolation_probes`` on every backend.

A probe fails when the victim's token comes back to the attacker, when a write or delete changed
the victim's data (read back through an unbound handle), or when an empty user id was accepted.
Known bugs of issue 10 are ``xfail(strict=True)``: the marker must go when the fix lands (the test
then XPASSes, which fails under strict). The run ends with the probe count by path and backend.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from isolation_known import known_failure
from isolation_probes import Probe, controls, expand
from isolation_world import BACKENDS, CORE, World, backend_marks, diff, seed, snapshot, text_of
from layered_memory import LayeredMemoryError

PROBES = expand()
CONTROLS = controls()


def params(probes: list[Probe]) -> list[Any]:
    out = []
    for backend in BACKENDS:
        for p in probes:
            if p.index_only and backend in CORE:
                continue
            marks: list[Any] = backend_marks(backend)
            reason = known_failure(p.name, backend)
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            out.append(pytest.param(backend, p, marks=marks, id=f"{backend}:{p.name}"))
    return out


def excerpt(w: World, value: Any) -> str:
    text = text_of(value)
    at = text.casefold().find(w.token.casefold())
    return text[max(0, at - 160): at + 80].replace("\n", " | ") if at >= 0 else text[:240]


@pytest.mark.parametrize("world, probe", params(PROBES), indirect=["world"])
def test_probe(world: World, probe: Probe) -> None:
    damage: list[str] = []
    world.reranker.seen.clear()
    try:
        try:
            result = probe.run(world)
        except LayeredMemoryError:
            return  # refused (an error may quote the ids the attacker passed: not a leak)
        except ValueError:
            if probe.kind == "reject":
                return
            raise
        if probe.kind == "reject":
            pytest.fail(f"{probe.name}: accepted an empty user id and returned {text_of(result)[:300]!r}")
        assert not world.leaked(result), f"{probe.name} returned the victim's canary: ...{excerpt(world, result)}..."
        assert not world.leaked(world.reranker.shown("attacker")), f"{probe.name} showed the rerank model the victim's canary"
    finally:
        if probe.kind == "write":
            damage = diff(world.baseline, snapshot(world))
            if damage:  # put the victim's data back for the next probes, then fail
                seed(world)
                world.baseline = snapshot(world)
    assert not damage, f"{probe.name} changed the victim's data:\n" + "\n".join(damage)


@pytest.mark.parametrize("world, probe", params(CONTROLS), indirect=["world"])
def test_control(world: World, probe: Probe) -> None:
    """The victim's own handle finds the canary on the same path: the attacker probe is not vacuous."""
    world.reranker.seen.clear()
    result = probe.run(world)
    assert world.leaked(result), f"{probe.name}: the victim does not see her own canary here: {text_of(result)[:300]!r}"
    CONTROL_RERANKED.append(world.leaked(world.reranker.shown("attacker")))  # the victim's handle, no victim task


CONTROL_RERANKED: list[bool] = []  # per control run: whether the rerank model saw the victim's canary


def test_the_rerank_check_is_not_vacuous() -> None:
    """Run after the controls (file order): the victim's own searches do show the rerank model her canary, so an
    attacker's search that showed it too would be caught by ``test_probe``."""
    if not CONTROL_RERANKED:
        pytest.skip("no control ran in this session (a selection of tests)")
    assert any(CONTROL_RERANKED)


def test_probe_table_covers_every_path() -> None:
    paths = {p.path for p in PROBES}
    remote = {"mcp", "http"} if importlib.util.find_spec("mcp") is not None else set()
    assert paths == {"engine", "tools", "langchain", "llamaindex"} | remote
    kinds = {p.kind for p in PROBES}
    assert kinds == {"read", "write", "reject"}
    names = [p.name for p in PROBES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("world", [pytest.param(b, marks=backend_marks(b), id=b) for b in BACKENDS], indirect=True)
def test_edit_and_delete_probes_are_not_vacuous(world: World) -> None:
    """The victim's own edit and delete change what the write probes compare (the text, and the stale marks on
    her summaries and facts), so an attacker's edit or delete that got through would be caught. The world is
    put back afterwards (the text edited back, message 42 stored again, a new baseline)."""
    from isolation_world import MSG42, SESSIONS

    session = SESSIONS[1]
    mid = world.message_ids[session][0]
    original = world.mem.get_messages([(session, mid)])[0]
    assert original is not None
    try:
        world.victim.edit_message(session, mid, content=f"changed by the victim {world.canary('edited')}")
        world.victim.delete_message(SESSIONS[0], MSG42)
        changed = diff(world.baseline, snapshot(world))
        assert any(d.startswith(f"messages {session}:") for d in changed), changed
        assert any(d.startswith("message 42:") for d in changed), changed
        assert any(d.startswith("stale marks:") for d in changed), changed
    finally:
        world.victim.edit_message(session, mid, content=original.content)
        seed(world)
        world.baseline = snapshot(world)
