"""Probes of the native async paths (issue 15): on the server backends (``redis-qdrant``, ``cluster-qdrant``,
``postgres-qdrant``, ``redis-core``) ``aadd_message(s)``, ``asearch`` and ``aget_context_for_user`` run the
engine's code on the event loop with the stores' async clients (``test_native_async.py`` checks they do);
on the embedded backends the same probes go through the worker thread. Each probe runs the attacker's
calls concurrently with the victim's own on one loop, so interleaved native calls are probed too.
Registered into ``isolation_probes.TEMPLATES``."""

from __future__ import annotations

import asyncio
from typing import Any

from isolation_probes import MSG42, S1, probe, uid
from isolation_world import CALLER, QUERY, TASK_IDS, VICTIM


def beside_victim(w: Any, attack: Any) -> Any:
    """Run ``attack()`` (a coroutine factory) on one loop with the victim's own native reads in flight;
    return what the attack returned (the victim's results are hers)."""

    async def as_victim(call: Any) -> Any:
        CALLER.set("victim")  # this task's context only: what the rerank model sees for her is hers
        return await call

    async def main() -> Any:
        victim = w.mem.for_user(VICTIM)
        own = [victim.aget_context_for_user(VICTIM, S1, query=QUERY), victim.asearch(QUERY, k=20)]
        out = await asyncio.gather(attack(), *(as_victim(c) for c in own))
        return out[0]

    return asyncio.run(main())


# == reads ===================================================================================================
@probe("engine", control=True)
def p_native_aget_context(h, w, a):
    return beside_victim(w, lambda: h.aget_context_for_user(uid(h), S1, query=QUERY))
@probe("engine", control=True)
def p_native_aget_context_other_session(h, w, a):
    return beside_victim(w, lambda: h.aget_context_for_user(uid(h), "telegram:2", query=QUERY))
@probe("engine", control=True)
def p_native_aget_context_victim_task(h, w, a):
    return beside_victim(w, lambda: h.aget_context_for_user(uid(h), "telegram:2", query="hello", task_id=TASK_IDS[0]))
@probe("engine", control=True)
def p_native_asearch_filter_user_victim(h, w, a):
    return beside_victim(w, lambda: h.asearch(QUERY, filters={"user_id": VICTIM}, k=20))
@probe("engine", control=True)
def p_native_asearch_queries_bm25(h, w, a):
    return beside_victim(w, lambda: h.asearch(["card PIN", "vault code", "bank password"], k=20, route="bm25"))
@probe("engine", control=True)
def p_native_many_concurrent(h, w, a):
    async def attack() -> list[Any]:
        calls = [h.aget_context_for_user(uid(h), S1, query=QUERY) for _ in range(8)]
        calls += [h.asearch(QUERY, k=20) for _ in range(8)]
        return list(await asyncio.gather(*calls))
    return beside_victim(w, attack)


# == writes ==================================================================================================
@probe("engine", "write")
def p_native_aadd_message_victims_id(h, w, a):
    return beside_victim(w, lambda: h.aadd_message(message_id=w.message_ids[S1][0], chat_id=S1, user_id=uid(h), content="overwritten"))
@probe("engine", "write")
def p_native_aadd_messages_42_other_chat(h, w, a):
    return beside_victim(w, lambda: h.aadd_messages([{"message_id": MSG42, "chat_id": "telegram:2", "user_id": uid(h), "content": "own 42"}]))
@probe("engine", "write")
def p_native_aadd_message_as_victim(h, w, a):
    return beside_victim(w, lambda: h.aadd_message(message_id="x.2", chat_id=S1, user_id=VICTIM, content="posing as the victim"))
