"""Issue 18.9: the supported way for several worker processes on one machine is the server backends. Three
processes write and read one Redis store at once; every message lands once and each sees the others'."""

from __future__ import annotations

import os
import subprocess
import sys

from layered_memory import LayeredMemory, LayeredMemorySettings

WORKER = r"""
import sys
from layered_memory import LayeredMemory, LayeredMemorySettings
url, prefix, wid = sys.argv[1], sys.argv[2], sys.argv[3]
settings = LayeredMemorySettings()
settings.redis.prefix = prefix
with LayeredMemory.from_urls(redis_url=url, embedder="none", settings=settings) as mem:
    for t in range(40):
        mem.add_message(message_id=f"{wid}.{t}", chat_id="shared", user_id=f"u{t % 3}", content=f"worker {wid} turn {t} payments")
        mem.get_context_for_user(f"u{t % 3}", "shared")
        if t % 10 == 0:
            mem.search("payments", k=5)
print("done")
"""


def test_three_processes_share_one_redis_store(redis_url, redis_prefix):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, redis_url, redis_prefix, f"w{i}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for i in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0 and out.strip() == "done", err[-2000:]
    settings = LayeredMemorySettings()
    settings.redis.prefix = redis_prefix
    with LayeredMemory.from_urls(redis_url=redis_url, embedder="none", settings=settings) as mem:
        stored = mem.get_session_messages("u0", "shared")  # one group chat: each member sees every worker's turns
        assert len(stored) == 120 and len({m.message_id for m in stored}) == 120
        assert mem.chats.get("shared")["members"] == ["u0", "u1", "u2"]
        assert mem.search("worker w2 turn 7", k=3).hits[0].id == "w2.7"
