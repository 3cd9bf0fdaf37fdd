"""Issue 18.10: ``import layered_memory`` does not import qdrant-client (about a second on its own); the
package loads when the first Qdrant request is built."""

from __future__ import annotations

import os
import subprocess
import sys


def test_importing_the_package_leaves_qdrant_client_unloaded():
    code = ("import sys, layered_memory, langchain_layered_memory, llamaindex_layered_memory; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('qdrant_client', 'qdrant_edge')))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_the_lazy_module_is_the_real_one_once_used():
    from qdrant_client import models

    from layered_memory._lazy import qdrant_models

    assert qdrant_models.Filter is models.Filter and "qdrant_client.models" in repr(qdrant_models)


def test_the_server_parts_load_only_when_used():
    """The serve extra (the MCP SDK, uvicorn, starlette) and the browser driver stay out of ``import layered_memory``
    and of the command line's start-up; ``layered_memory.serve`` brings them in."""
    heavy = ("mcp", "mcp_types", "uvicorn", "starlette", "playwright")
    code = ("import sys, layered_memory, layered_memory.cli, langchain_layered_memory, llamaindex_layered_memory; "
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", out.stdout
