"""tests/ mirrors the package (docs/install.md, "The tests"): tests/unit and tests/integration hold one folder
per package of the engine (``shared/layered_memory/<name>/``) or adapter (``<name>_layered_memory/``), and the
tests of top-level modules directly in them. Everything in tests/unit needs no server: every test there,
subfolders included, runs with network sockets disabled by the autouse fixture of tests/unit/conftest.py."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
UNIT = TESTS / "unit"
GUARD = "_no_network"  # the autouse fixture of tests/unit/conftest.py


def _package_dir(rel: Path) -> Path:
    """The package a test folder mirrors: ``langchain`` -> langchain_layered_memory/, ``topics`` -> the engine's topics/."""
    first, *rest = rel.parts
    adapter = ROOT / f"{first}_layered_memory"
    base = adapter if (adapter / "__init__.py").exists() else ROOT / "shared" / "layered_memory" / first
    return base.joinpath(*rest)


def _folders(suite: str) -> list[Path]:
    return sorted(p for p in (TESTS / suite).rglob("*") if p.is_dir() and "__pycache__" not in p.parts)


@pytest.mark.parametrize("suite", ["unit", "integration"])
def test_every_test_folder_names_a_package_of_the_project(suite):
    stray = [str(p.relative_to(TESTS)) for p in _folders(suite)
             if not (_package_dir(p.relative_to(TESTS / suite)) / "__init__.py").exists()]
    assert _folders(suite), f"tests/{suite} has no package folders: the layout rule has nothing to check"
    assert not stray, (f"{stray}: a folder under tests/{suite} names a package of shared/layered_memory/ or an adapter "
                       f"(langchain, llamaindex); put the files by the module they mainly test, top-level modules directly "
                       f"in tests/{suite}/")


def test_test_modules_have_unique_basenames():
    """pytest imports test and helper modules by basename (its default "prepend" import mode; tests/ has no
    __init__.py files), so two files of the same name in different folders would shadow one another."""
    assert not list(TESTS.rglob("__init__.py")), "tests/ uses no packages: rename a clashing file instead"
    by_name: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        if path.name != "conftest.py" and "__pycache__" not in path.parts:
            by_name.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"same basename in several folders: {clashes}; give one a more specific name"


def test_only_the_unit_conftest_defines_the_socket_guard():
    """A fixture of the same name in a subfolder's conftest or in a module would replace the guard there."""
    defining = [str(p.relative_to(TESTS)) for p in sorted(UNIT.rglob("*.py")) if f"def {GUARD}(" in p.read_text(encoding="utf-8")]
    assert defining == ["unit/conftest.py"]


def test_every_unit_test_of_this_run_has_sockets_disabled(request):
    """Every collected test under tests/unit, in every subfolder, uses the guard of tests/unit/conftest.py (a full
    run checks them all; run alone, this file checks itself)."""
    items = [i for i in request.session.items if UNIT in Path(str(i.path)).parents]
    assert request.node in items
    wrong = []
    for item in items:
        defs = getattr(item, "_fixtureinfo").name2fixturedefs.get(GUARD) if hasattr(item, "_fixtureinfo") else None
        if not defs or Path(inspect.getsourcefile(defs[-1].func)).resolve() != UNIT / "conftest.py":
            wrong.append(item.nodeid)
    assert not wrong, f"unit tests that would run with sockets enabled: {wrong[:10]} ({len(wrong)})"
