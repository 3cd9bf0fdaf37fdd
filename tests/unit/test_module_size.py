"""Every module of the engine package stays under the house limit of about 600 lines (STYLE.md): a module
that grows past it is split along a concept (as ``stores/postgres_connect.py`` and ``stores/redis_connect.py``
were split off their record stores), not left to grow."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "shared" / "layered_memory"
LIMIT = 600


def test_no_module_of_the_package_is_over_600_lines() -> None:
    sizes = {path.relative_to(PACKAGE).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
             for path in PACKAGE.rglob("*.py")}
    assert len(sizes) > 100  # the walk sees the package
    assert {name: n for name, n in sizes.items() if n > LIMIT} == {}
