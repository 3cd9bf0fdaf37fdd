"""Two codes timed in lockstep: each runs in its own process, and the parent asks them the same request in
turn (which one goes first alternates), so a change in the machine's speed while the benchmark runs falls
on both alike. On the shared 2-core machines a code measured alone moved by 4 to 8 ms at P95 between
runs a few minutes apart, more than the differences a latency bar asks about.

The child side is ``serve(call)``: it prints ``ready``, then for every JSON request line on stdin runs
``call(request)`` and prints the wall and calling-thread CPU milliseconds as one JSON line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def serve(call: Callable[[Any], object]) -> None:
    print("ready", flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        t0, c0 = time.perf_counter(), time.thread_time()
        call(request)
        print(json.dumps({"ms": (time.perf_counter() - t0) * 1000, "cpu": (time.thread_time() - c0) * 1000}), flush=True)


class Peer:
    """A ``serve`` child: started by ``cmd`` with ``env``, ready when it says so."""

    def __init__(self, cmd: list[str], env: Mapping[str, str]) -> None:
        self.proc = subprocess.Popen(cmd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for line in self.proc.stdout:  # type: ignore[union-attr]
            if line.strip() == "ready":
                return
        raise RuntimeError(f"{cmd[:4]}... exited with {self.proc.wait()} before it was ready")

    def ask(self, request: Any) -> dict[str, float]:
        self.proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait()


def lockstep(peers: Mapping[str, Peer], requests: Iterable[Any]) -> dict[str, dict[str, list[float]]]:
    """Every request to every peer, the order rotating from one request to the next; per peer the lists of
    wall ("ms") and CPU ("cpu") milliseconds."""
    names = list(peers)
    out = {n: {"ms": [], "cpu": []} for n in names}
    for i, request in enumerate(requests):
        for name in names[i % len(names):] + names[: i % len(names)]:
            got = peers[name].ask(request)
            out[name]["ms"].append(got["ms"])
            out[name]["cpu"].append(got["cpu"])
    return out


__all__ = ["Peer", "lockstep", "serve"]
