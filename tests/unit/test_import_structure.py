"""The engine's import graph points one way: no cycle, lazy imports inside functions and type-only imports
(``if TYPE_CHECKING:``) counted too; nothing below the facade imports the runtime (the composition root)
or the facade; and the tiers use the store protocols instead of probing the stores with getattr (issue 11)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "layered_memory"

# The facade and what stands on it (edges: the CLI, the servers, the adapters' shared tool code, the test
# kits): they may import the facade. Everything else is below it and never imports the runtime or these.
FACADE = "layered_memory.engine"
ABOVE_THE_FACADE = ("layered_memory.cli", "layered_memory.serve", "layered_memory.testing")
ABOVE_MODULES = {"layered_memory", FACADE, "layered_memory.tools", "layered_memory.documents.tools"}
RUNTIME = "layered_memory.runtime"


def _modules(package: Path = PACKAGE, name: str = "layered_memory") -> dict[str, Path]:
    out = {}
    for path in package.rglob("*.py"):
        parts = [name, *path.relative_to(package).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _edges(mods: dict[str, Path], *, types: bool = False) -> dict[str, set[str]]:
    """Every import of a module of the package, lazy ones in functions too. ``types=False``: ``if
    TYPE_CHECKING:`` imports left out, and package ``__init__`` re-exports left out as targets (they only
    gather names); ``types=True``: every import counts, as ``import_structure.py --all`` counts them."""
    edges: dict[str, set[str]] = {}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = set() if types else {
            id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for n in ast.walk(node)
        }
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
        edges[mod] = {t for t in out if t in mods and t != mod and (types or mods[t].name != "__init__.py")}
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


def test_no_import_cycles() -> None:
    edges = _edges(_modules())
    assert "layered_memory.knowledge.api" in edges["layered_memory.engine"]  # the graph sees lazy imports
    assert _cycles(edges) == []


def test_the_topic_tier_never_imports_the_tiers_above_it() -> None:
    edges = _edges(_modules())
    for mod, targets in edges.items():
        if mod.startswith("layered_memory.topics."):
            assert not {t for t in targets if t.startswith(("layered_memory.knowledge", "layered_memory.agents"))}, mod


def test_no_getattr_probes_on_the_stores() -> None:
    probe = re.compile(r"getattr\([^,]*(index|records)[^,]*,")
    hits = [f"{path.relative_to(PACKAGE)}:{i}" for path in PACKAGE.rglob("*.py")
            for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if probe.search(line)]
    assert hits == []


def test_the_retrieval_core_imports_no_store_and_no_tier() -> None:
    edges = _edges(_modules(), types=True)
    below = ("layered_memory.stores", "layered_memory.engine", "layered_memory.runtime", "layered_memory.topics",
             "layered_memory.knowledge", "layered_memory.agents", "layered_memory.items",
             "layered_memory.index")  # the index layer runs plans; the filter spec they carry is a foundation (filterspec)
    for mod, targets in edges.items():
        if mod.startswith("layered_memory.retrieval"):
            assert not {t for t in targets if t.startswith(below)}, mod


def test_tiers_never_reach_into_the_facade() -> None:
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


def _above(mod: str) -> bool:
    return mod in ABOVE_MODULES or mod in ABOVE_THE_FACADE or mod.startswith(tuple(p + "." for p in ABOVE_THE_FACADE))


def test_no_import_cycle_with_type_only_imports_counted() -> None:
    """A type in a signature is a dependency too: the graph with ``TYPE_CHECKING`` imports has no cycle."""
    edges = _edges(_modules(), types=True)
    assert "layered_memory.kernel" in edges["layered_memory.items.api"]  # the graph sees type-only imports
    assert _cycles(edges) == []


def test_nothing_below_the_facade_imports_the_runtime_or_the_facade() -> None:
    """Tiers take the kernel (``kernel.Kernel``); the runtime is the composition root only the facade sees."""
    edges = _edges(_modules(), types=True)
    below = {m: t for m, t in edges.items() if not _above(m) and m != RUNTIME}
    wrong = {m: sorted(t for t in targets if t == RUNTIME or _above(t)) for m, targets in below.items()}
    assert {m: t for m, t in wrong.items() if t} == {}
    assert sorted(m for m, targets in edges.items() if RUNTIME in targets) == [FACADE]


def test_the_doctor_and_the_writer_setup_import_no_kind() -> None:
    """The doctor loops over the registered kinds (``kernel.Kind``): it imports no tier that brings one."""
    edges = _edges(_modules(), types=True)
    tiers = ("layered_memory.topics", "layered_memory.items", "layered_memory.agents", "layered_memory.documents",
             "layered_memory.knowledge", "layered_memory.edits", "layered_memory.message_health")
    for mod in ("layered_memory.doctor", "layered_memory.kinds", "layered_memory.kernel"):
        assert sorted(t for t in edges[mod] if t.startswith(tiers)) == [], mod


def test_no_module_is_named_like_a_standard_module() -> None:
    """A module named ``threading`` or ``code`` shadows the standard one for a script run beside it and
    confuses the reader; none of the engine's modules or packages is."""
    import sys

    names = {path.stem for path in PACKAGE.rglob("*.py")} | {path.name for path in PACKAGE.rglob("*") if path.is_dir()}
    assert sorted(names & sys.stdlib_module_names) == []


def test_the_walker_counts_lazy_and_type_only_imports(tmp_path: Path) -> None:
    """The checks above can fail: a cycle closed only by a type-only import, or only by a lazy one, is found."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "low.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .high import High\n")
    (pkg / "high.py").write_text("from .low import x\ndef f():\n    from . import lazy\n")
    (pkg / "lazy.py").write_text("def g():\n    from .high import f\n")
    mods = _modules(pkg, "pkg")
    assert _cycles(_edges(mods, types=True)) == [["pkg.high", "pkg.lazy", "pkg.low"]]
    assert _cycles(_edges(mods)) == [["pkg.high", "pkg.lazy"]]  # without type-only imports: the lazy cycle only


def test_the_runtime_implements_the_kernel() -> None:
    """Every member of the ``Kernel`` protocol the tiers type against is on ``Runtime``."""
    from layered_memory.kernel import Kernel
    from layered_memory.runtime import Runtime

    members = set(Kernel.__annotations__) | {n for n in vars(Kernel) if not n.startswith("_")}
    runtime = set(Runtime.__annotations__) | {n for n in dir(Runtime) if not n.startswith("_")}
    assert members - runtime == set()


def test_the_architecture_page_names_every_module() -> None:
    """docs/architecture.md is the map drawn from the code, one line per module: a module added, moved or
    renamed is added there too (the edges above the facade, cli/, serve/, testing/, are named as packages)."""
    page = (PACKAGE.parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.split("/")[0] in ("cli", "serve", "testing") or path.name in ("__init__.py", "__main__.py"):
            continue
        if not re.search(rf"(^|[\s`(]){re.escape(rel)}\b", page, re.M):
            missing.append(rel)
    assert missing == []
