"""Issue 18.9: the embedded store is one process at a time; the second opener (here the CLI, while a "bot"
process holds the store) gets one error line that names the fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from click.testing import CliRunner

from layered_memory import LayeredMemory
from layered_memory.cli import main

HOLDER = """
import sys
from layered_memory import LayeredMemory
mem = LayeredMemory.embedded(sys.argv[1], embedder="none")
print("ready", flush=True)
sys.stdin.readline()
mem.close()
"""


def test_a_second_process_gets_the_fix_in_one_line(tmp_path):
    store = tmp_path / "store"
    with LayeredMemory.embedded(store, embedder="none") as mem:
        mem.add_message(message_id="m1", chat_id="c1", user_id="u1", content="hello")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    bot = subprocess.Popen([sys.executable, "-c", HOLDER, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, env=env)
    try:
        assert bot.stdout.readline().strip() == "ready"
        result = CliRunner().invoke(main, ["--path", str(store), "--embedder", "none", "search", "hello"])
        assert result.exit_code == 2
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: ")
        assert "one process at a time" in lines[0] and "stop the other process" in lines[0] and "--redis-url" in lines[0]
    finally:
        bot.stdin.write("\n")
        bot.stdin.flush()
        bot.wait(60)
    found = CliRunner().invoke(main, ["--path", str(store), "--embedder", "none", "search", "hello", "--json"])
    assert json.loads(found.output)["hits"][0]["id"] == "m1"  # free again once the other process stopped
