"""The engine's import graph points one way (no cycles, lazy imports included) and the tiers use the
store protocols instead of probing the stores with getattr (issue 11)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "layered_memory"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["layered_memory", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _edges(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Every import of a module of the package, lazy ones in functions too, ``if TYPE_CHECKING:`` ones left out.
    Package ``__init__`` re-exports are left out as targets (they only gather names)."""
    edges: dict[str, set[str]] = {}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                for n in ast.walk(node)}
        is_pkg = path.name == "__init__.py"
        out: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    candidate = f"{target}.{alias.name}"
                    out.add(candidate if candidate in mods else target)
            elif isinstance(node, ast.Import):
                out.update(a.name for a in node.names)
        edges[mod] = {t for t in out if t in mods and t != mod and not mods[t].name == "__init__.py"}
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_issue11_no_import_cycles() -> None:
    edges = _edges(_modules())
    assert "layered_memory.knowledge.api" in edges["layered_memory.engine"]  # the graph sees lazy imports
    assert _cycles(edges) == []


def test_issue11_the_topic_tier_never_imports_the_tiers_above_it() -> None:
    edges = _edges(_modules())
    for mod, targets in edges.items():
        if mod.startswith("layered_memory.topics."):
            assert not {t for t in targets if t.startswith(("layered_memory.knowledge", "layered_memory.agents"))}, mod


def test_issue11_no_getattr_probes_on_the_stores() -> None:
    probe = re.compile(r"getattr\([^,]*(index|records)[^,]*,")
    hits = [f"{path.relative_to(PACKAGE)}:{i}" for path in PACKAGE.rglob("*.py")
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if probe.search(line)]
    assert hits == []


def test_issue11_the_retrieval_core_imports_no_store_and_no_tier() -> None:
    edges = _edges(_modules())
    below = ("layered_memory.stores", "layered_memory.engine", "layered_memory.runtime", "layered_memory.topics",
             "layered_memory.knowledge", "layered_memory.agents", "layered_memory.items")
    for mod, targets in edges.items():
        if mod.startswith("layered_memory.retrieval"):
            assert not {t for t in targets if t.startswith(below)}, mod


def test_issue11_tiers_never_reach_into_the_facade() -> None:
    """No tier holds the facade: only engine.py and runtime.py touch ``_core``; tiers import no engine."""
    reach = [f"{path.relative_to(PACKAGE)}:{i}" for path in PACKAGE.rglob("*.py") if path.name not in ("engine.py", "runtime.py")
             for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if "._core" in line and not line.lstrip().startswith("#")]
    assert reach == []
    edges = _edges(_modules())
    for mod, targets in edges.items():
        if mod.startswith(("layered_memory.topics", "layered_memory.knowledge", "layered_memory.items",
                           "layered_memory.doctor", "layered_memory.sessions", "layered_memory.summary")):
            assert "layered_memory.engine" not in targets, mod
