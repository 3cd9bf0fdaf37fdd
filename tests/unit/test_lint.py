"""The tree passes its own lint configuration (``[tool.ruff]`` in pyproject.toml): pyflakes and pycodestyle
errors, lines up to 160 characters. Run it yourself with ``ruff check .`` from the repository root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_tree_passes_ruff() -> None:
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr


def test_ruff_finds_what_it_is_configured_to(tmp_path: Path) -> None:
    """The configuration is read and catches an unused import and an overlong line (a lint run that checks
    nothing passes too)."""
    bad = tmp_path / "probe.py"
    bad.write_text("import os\n" + "x = " + "1 + " * 45 + "1\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config", str(ROOT / "pyproject.toml"),
                          "--output-format", "concise", str(bad)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1 and "F401" in out.stdout and "E501" in out.stdout, out.stdout
