"""What the distribution declares matches what the engine imports."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "shared" / "layered_memory"


def _project() -> dict:
    if sys.version_info < (3, 11):  # pragma: no cover
        pytest.skip("tomllib needs Python 3.11")
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _imported_top_levels(package: Path) -> set[str]:
    names: set[str] = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_rank_bm25_is_a_dev_dependency_only() -> None:
    """rank-bm25 is the reference scorer of tests and benchmarks: the engine never imports it."""
    project = _project()
    runtime = {re.split(r"[<>=!~\[ ;]", d)[0].lower() for d in project["dependencies"]}
    assert "rank-bm25" not in runtime
    assert any(d.startswith("rank-bm25") for d in project["optional-dependencies"]["dev"])
    assert "rank_bm25" not in _imported_top_levels(ENGINE)


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ;]", requirement.strip())[0]).lower()


def test_the_lock_pins_every_declared_dependency_of_dev() -> None:
    """constraints.txt (the lock `.ci/run` and the README install with) pins each package the `dev`
    extra asks for, directly or through the project's own extras, to one exact version that the
    declared range admits; a dependency added without re-locking fails here, not on a clean clone."""
    from packaging.requirements import Requirement

    project = _project()
    extras = project["optional-dependencies"]
    wanted: list[str] = list(project["dependencies"])
    todo, seen = ["dev"], set()
    while todo:
        extra = todo.pop()
        seen.add(extra)
        for req in extras[extra]:
            if _name(req) == "layered-memory":
                todo += [e.strip() for e in req.split("[", 1)[1].split("]", 1)[0].split(",") if e.strip() not in seen]
            else:
                wanted.append(req)
    lock = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not an exact pin (name==version)"
            lock[_name(name)] = version.strip()
    for req in map(Requirement, wanted):
        name = _name(req.name)
        assert name in lock, f"{req} is declared but not locked: re-lock (constraints.txt's header says how)"
        assert req.specifier.contains(lock[name], prereleases=True), f"the lock's {name}=={lock[name]} is outside {req}"


def test_install_advice_in_the_code_works_from_a_clone() -> None:
    """The package is not on a registry: an error or a docstring that says ``pip install
    "layered-memory[x]"`` sends the reader to "No matching distribution found". Every extra it names exists."""
    from layered_memory.errors import install_hint

    wrong = re.compile(r"""pip install ['"]?layered-memory\[""")
    extras = set(_project()["optional-dependencies"])
    for package in (ENGINE, ROOT / "langchain_layered_memory", ROOT / "llamaindex_layered_memory"):
        for path in package.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            assert not wrong.search(text), path
            named = set(re.findall(r"""install_hint\(["']([\w-]+)["']\)|pip install -e "\.\[([\w,-]+)\]\"""", text))
            assert {e for pair in named for part in pair if part for e in part.split(",")} <= extras, path
    assert install_hint("postgres").startswith('pip install -e ".[postgres]" in a clone')
