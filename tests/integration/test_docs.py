"""Every Python block of the pages in ``docs/`` runs as written, as the README's do (``test_readme.py``):
each block is a script run in an empty directory; a block right after ``<!-- readme-test: needs servers -->``
is compiled and its imports run. A page whose blocks cannot run here says so with that marker, never by
being left out of this test."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
SERVERS = "<!-- readme-test: needs servers -->\n"


def blocks() -> list[tuple[str, str, int, bool]]:
    out = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(r"```python\n(.*?)```", text, re.S):
            out.append((page.name, m.group(1), text[: m.start()].count("\n") + 1, text[: m.start()].endswith(SERVERS)))
    return out


BLOCKS = blocks()
RUN = [(page, code, line) for page, code, line, servers in BLOCKS if not servers]
COMPILE = [(page, code, line) for page, code, line, servers in BLOCKS if servers]


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def test_every_page_is_linked_from_the_readme():
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if f"docs/{p.name}" not in readme]
    assert not missing, f"docs pages the README does not link: {missing}"


@pytest.mark.parametrize("page, code, line", RUN, ids=[f"{p}:{line}" for p, _, line in RUN])
def test_python_block_runs_as_written(page, code, line, tmp_path):
    (tmp_path / "block.py").write_text(code, encoding="utf-8")
    proc = subprocess.run([sys.executable, "block.py"], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"docs/{page} line {line}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("page, code, line", COMPILE, ids=[f"{p}:{line}" for p, _, line in COMPILE])
def test_block_that_needs_servers_compiles_and_imports(page, code, line):
    compile(code, f"docs/{page}:{line}", "exec")
    imports = "\n".join(x for x in code.splitlines() if x.startswith(("import ", "from ")))
    exec(compile(imports, f"docs/{page}:{line}", "exec"), {})
