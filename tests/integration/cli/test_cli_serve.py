"""``layered-memory serve``, ``mcp`` and ``keys`` from the shell: the defaults (loopback only, a key for
the run when there is no keys file), and the refusals (one line, exit code 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest
from click.testing import CliRunner

from layered_memory.cli import main

pytest.importorskip("mcp", reason='the serve extra is missing: pip install -e ".[serve]"')


@pytest.mark.parametrize("command", [["serve"], ["mcp"], ["keys"], ["keys", "add"], ["keys", "list"]])
def test_help(command):
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output
    assert "Example:" in result.output or command == ["keys"]  # every command shows one; the group lists them


def test_keys_add_prints_the_key_once_and_list_shows_no_secret(tmp_path):
    path = str(tmp_path / "keys.json")
    added = CliRunner().invoke(main, ["keys", "add", path, "--tenant", "acme", "--user", "anna"])
    assert added.exit_code == 0, added.output
    key = added.output.strip()
    assert key.startswith("lm_") and key not in open(path).read()
    listed = CliRunner().invoke(main, ["keys", "list", path])
    assert listed.output.strip() == "acme/anna\ttenant=acme\tuser=anna" and key not in listed.output
    bad = CliRunner().invoke(main, ["keys", "add", path, "--tenant", "a b"])
    assert bad.exit_code == 2 and "tenant='a b'" in bad.output


def test_refusals_are_one_line(tmp_path):
    store = str(tmp_path / "store")
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"keys": [{"key": "short"}]}))
    cases = [
        (["serve", "--workers", "2"], "needs the server backends"),
        (["mcp", "--transport", "http"], "needs --keys FILE"),
        (["serve", "--keys", str(broken)], "at least 16 characters"),
        (["serve", "--keys", str(tmp_path / "nope.json")], "does not exist"),
    ]
    for args, message in cases:
        result = CliRunner().invoke(main, ["--path", store, "--embedder", "none", *args])
        assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output, (args, result.output)


def test_serve_binds_loopback_and_prints_a_key_for_the_run(tmp_path):
    from serve_support import free_port

    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-m", "layered_memory.cli", "--path", str(tmp_path / "store"), "--embedder", "none",
                             "--tenant", "acme", "serve", "--port", str(port), "--no-monitor"],
                            env=env, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert f"open http://127.0.0.1:{port}/#key=" in line and "tenant 'acme'" in line, line
        key = line.rsplit("#key=", 1)[1].strip()
        deadline = time.monotonic() + 30
        while True:
            try:
                me = httpx.get(f"http://127.0.0.1:{port}/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=2)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.2)
        assert me.json() == {"tenant": "acme", "user": None, "key": "this run"}
        assert httpx.get(f"http://127.0.0.1:{port}/v1/me").status_code == 401
    finally:
        proc.terminate()
        proc.wait(20)
