"""Fixtures of the isolation suite: ``world`` (one backend with the victim's canary data, built once
per backend and session) and a summary of the probes by path and backend at the end of the run.

The backends: ``embedded`` (SQLite + Qdrant Edge in a tmp dir), ``redis-qdrant`` (a real
redis-server + qdrant-client's local mode), and core mode without a vector index on SQLite
(``sqlite-core``) and on Redis (``redis-core``); ``postgres-qdrant`` is seed 001's layout (PostgreSQL
records, Redis recent cache, qdrant-client's local mode)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from isolation_world import POSTGRES, REDIS, World, new_world, redis_fixture

_OUTCOMES: Counter[tuple[str, str, str, str]] = Counter()  # (test, backend, path, outcome)


class Worlds:
    """Builds each backend's world once, on first use, whatever order the tests run in."""

    def __init__(self, request: pytest.FixtureRequest, tmp: pytest.TempPathFactory) -> None:
        self.request, self.tmp, self.built = request, tmp, {}

    def get(self, backend: str) -> World:
        if backend not in self.built:
            redis_url = self.request.getfixturevalue(redis_fixture(backend)) if backend in REDIS else None
            postgres_url = self.request.getfixturevalue("postgres_url") if backend in POSTGRES else None
            self.built[backend] = new_world(backend, str(self.tmp.mktemp(backend.replace("-", "_"))), redis_url, postgres_url)
        return self.built[backend]


@pytest.fixture(scope="session")
def worlds(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worlds]:
    cache = Worlds(request, tmp_path_factory)
    yield cache
    for w in cache.built.values():
        w.close()


@pytest.fixture
def world(request: pytest.FixtureRequest, worlds: Worlds) -> World:
    """The backend's world (``request.param`` = the backend, set by indirect parametrization)."""
    return worlds.get(request.param)


def _split(nodeid: str) -> tuple[str, str, str] | None:
    """(test, backend, path) of a parametrized probe or control test."""
    for test in ("test_probe", "test_control"):
        marker = f"::{test}["
        if marker in nodeid:
            ident = nodeid.split(marker, 1)[1][:-1]
            backend, _, rest = ident.partition(":")
            return test, backend, rest.split("/", 1)[0]
    return None


def pytest_runtest_logreport(report: Any) -> None:
    where = _split(report.nodeid)
    if where is None:
        return
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        else:
            outcome = report.outcome
        _OUTCOMES[(*where, outcome)] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _OUTCOMES:
        return
    write = terminalreporter.write_line
    for test in ("test_probe", "test_control"):
        rows = {(b, p) for (t, b, p, _) in _OUTCOMES if t == test}
        if not rows:
            continue
        backends = sorted({b for b, _ in rows})
        paths = sorted({p for _, p in rows})
        title = "isolation probes (attacker)" if test == "test_probe" else "isolation controls (victim sees own canary)"
        total = sum(n for (t, *_), n in _OUTCOMES.items() if t == test)
        write(f"{title}: {total} run; per path x backend: total/passed/xfailed/failed")
        write("  " + "path".ljust(12) + "".join(b.rjust(20) for b in backends))
        for p in paths:
            cells = []
            for b in backends:
                c = {o: _OUTCOMES[(test, b, p, o)] for o in ("passed", "xfailed", "failed", "xpassed", "skipped")}
                n = sum(c.values())
                cells.append(f"{n}/{c['passed']}/{c['xfailed']}/{c['failed'] + c['xpassed']}".rjust(20))
            write("  " + p.ljust(12) + "".join(cells))
