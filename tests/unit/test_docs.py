"""Every Python and bash block of the pages in ``docs/`` runs as written, as the README's do (``test_readme.py``):
each Python block is a script run in an empty directory (one that starts with ``# test_`` is a pytest module
and runs under pytest); a block right after ``<!-- readme-test: needs servers -->`` is compiled and its
imports run. A page whose blocks cannot run here says so with that marker, never by being left out of this
test. Bash blocks run with ``layered-memory`` pointing at this checkout; install lines (``pip install``)
and ``console`` blocks (commands with paths of the reader's own, or servers) are not run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
SERVERS = "<!-- readme-test: needs servers -->\n"


def blocks(lang: str) -> list[tuple[str, str, int, bool]]:
    out = []
    for page in sorted(DOCS.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for m in re.finditer(rf"```{lang}\n(.*?)```", text, re.S):
            out.append((page.name, m.group(1), text[: m.start()].count("\n") + 1, text[: m.start()].endswith(SERVERS)))
    return out


BLOCKS = blocks("python")
SHELL = [(page, code, line) for page, code, line, _ in blocks("bash") if "pip install" not in code]
RUN = [(page, code, line) for page, code, line, servers in BLOCKS if not servers]
COMPILE = [(page, code, line) for page, code, line, servers in BLOCKS if servers]


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def test_every_page_is_linked_from_the_readme():
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if f"docs/{p.name}" not in readme]
    assert not missing, f"docs pages the README does not link: {missing}"


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_links_between_pages_resolve():
    """A page moved out of the README keeps its readers: every relative link of README.md and docs/*.md names a
    file that exists and, with ``#anchor``, a heading of that file."""
    pages = [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md"))]
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and dest.suffix == ".md":
                heads = re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", dest.read_text(encoding="utf-8"), flags=re.S), re.M)
                if anchor not in {_slug(h) for h in heads}:
                    broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


@pytest.mark.parametrize("page, code, line", RUN, ids=[f"{p}:{line}" for p, _, line in RUN])
def test_python_block_runs_as_written(page, code, line, tmp_path):
    if code.startswith("# test_"):  # a pytest module, run as the README's are (test_readme.py says why these flags)
        (tmp_path / "test_block.py").write_text(code, encoding="utf-8")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio",
               "-W", "error::pytest.PytestDeprecationWarning", "test_block.py"]
    else:
        (tmp_path / "block.py").write_text(code, encoding="utf-8")
        cmd = [sys.executable, "block.py"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"docs/{page} line {line}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("page, code, line", SHELL, ids=[f"{p}:{line}" for p, _, line in SHELL])
def test_shell_block_runs_as_written(page, code, line, tmp_path):
    script = f'set -e\nlayered-memory() {{ "{sys.executable}" -m layered_memory.cli "$@"; }}\n{code}'
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"docs/{page} line {line}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("page, code, line", COMPILE, ids=[f"{p}:{line}" for p, _, line in COMPILE])
def test_block_that_needs_servers_compiles_and_imports(page, code, line):
    compile(code, f"docs/{page}:{line}", "exec")
    imports = "\n".join(x for x in code.splitlines() if x.startswith(("import ", "from ")))
    exec(compile(imports, f"docs/{page}:{line}", "exec"), {})
