"""Issue 18.4: every code block of the README runs as written. Each Python block is a script run in an empty
directory (a block that starts with ``# test_`` is a pytest module and runs under pytest); the shell block of
commands runs with ``layered-memory`` pointing at this checkout. The install-and-test block is the one left
out of the shell test (it is the command that runs this test): it is compared with ``.ci/run`` and its demo runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
TEXT = README.read_text(encoding="utf-8")
SERVERS = "<!-- readme-test: needs servers -->\n"  # put right before a block that connects to named servers
BLOCKS = [(m.group(1), m.group(2), TEXT[: m.start()].count("\n") + 1, TEXT[: m.start()].endswith(SERVERS))
          for m in re.finditer(r"```(\w+)\n(.*?)```", TEXT, re.S)]
PYTHON = [(code, line) for lang, code, line, servers in BLOCKS if lang == "python" and not servers]
NEEDS_SERVERS = [(code, line) for lang, code, line, servers in BLOCKS if lang == "python" and servers]
SHELL = [(code, line) for lang, code, line, _ in BLOCKS if lang == "bash" and "pip install" not in code]


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def test_the_readme_has_its_blocks():
    assert len(PYTHON) == 4 and len(SHELL) == 1 and len(NEEDS_SERVERS) == 0  # a new block is run too: count it here


def test_the_two_commands_are_what_ci_runs_and_the_demo_runs(tmp_path):
    """The install-and-test block is left out of the shell test (it is the command that runs this test), so
    it is held to ``.ci/run`` here: the same install line with the lock and the same test command; and its
    main job, ``layered-memory demo`` on the embedded default, runs."""
    (block,) = [code for lang, code, _, _ in BLOCKS if lang == "bash" and "pip install" in code]
    first, second = [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]
    install, demo = [part.strip() for part in first.split("&&")]
    assert install == 'pip install -c constraints.txt -e ".[dev]"' and demo == "layered-memory demo"
    assert second == "python -m pytest -q"
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert 'python3 -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev]"' in ci
    assert ci.rstrip().splitlines()[-1] == "python3 -m pytest -q"
    script = f'set -e\nlayered-memory() {{ "{sys.executable}" -m layered_memory.cli "$@"; }}\n{demo}'
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "== get_context_for_user('u-anna', 'telegram:1001') ==" in proc.stdout and "embedder: none" not in proc.stdout


@pytest.mark.parametrize("code, line", NEEDS_SERVERS, ids=[f"python-line-{line}" for _, line in NEEDS_SERVERS])
def test_block_that_needs_servers_compiles_and_imports(code, line):
    compile(code, f"README.md:{line}", "exec")
    imports = "\n".join(x for x in code.splitlines() if x.startswith(("import ", "from ")))
    assert imports, f"README.md line {line}: the block imports nothing it uses"
    exec(compile(imports, f"README.md:{line}", "exec"), {})


@pytest.mark.parametrize("code, line", PYTHON, ids=[f"python-line-{line}" for _, line in PYTHON])
def test_python_block_runs_as_written(code, line, tmp_path):
    if code.startswith("# test_"):
        (tmp_path / "test_block.py").write_text(code, encoding="utf-8")
        # a deprecation pytest warns about is an error: the block is what users copy (issue 24); pytest-asyncio,
        # installed here for the suite, warns about its own unset option in a directory without a config
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:asyncio",
               "-W", "error::pytest.PytestDeprecationWarning", "test_block.py"]
    else:
        (tmp_path / "block.py").write_text(code, encoding="utf-8")
        cmd = [sys.executable, "block.py"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"README.md line {line}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("code, line", SHELL, ids=[f"bash-line-{line}" for _, line in SHELL])
def test_shell_block_runs_as_written(code, line, tmp_path):
    script = f'set -e\nlayered-memory() {{ "{sys.executable}" -m layered_memory.cli "$@"; }}\n{code}'
    proc = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"README.md line {line}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    assert "ingested 1 message:" in proc.stdout and "CrashLoopBackOff" in proc.stdout
