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
