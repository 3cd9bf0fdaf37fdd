"""``PerLoop``: one async client per event loop, closed on that loop when it shuts down. A loop closed
without cancelling its tasks (``loop.close()`` instead of ``asyncio.run``) leaves nothing to close on: the
client is dropped quietly, never an error from a coroutine closed with no loop."""

from __future__ import annotations

import asyncio
import gc
import sys

from layered_memory.stores.native import PerLoop


class Client:
    closed = 0


async def close(client: Client) -> None:
    asyncio.get_running_loop()  # what a real client's close needs (redis: asyncio.gather over its connections)
    await asyncio.sleep(0)
    client.closed += 1


def test_asyncio_run_closes_the_loops_client_on_that_loop():
    per = PerLoop(Client, close)

    async def use() -> Client:
        return per.get()

    client = asyncio.run(use())
    assert client.closed == 1


def test_a_loop_closed_without_its_tasks_drops_its_client_quietly(monkeypatch, caplog):
    per = PerLoop(Client, close)
    caught: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", caught.append)

    async def use(clients: PerLoop) -> Client:
        return clients.get()

    loop = asyncio.new_event_loop()
    client = loop.run_until_complete(use(per))
    loop.close()  # the guard task is still pending: never cancelled, never run again
    del loop, per  # the guard task goes with them, unfinished
    gc.collect()
    assert client.closed == 0
    assert [getattr(u, "exc_value", u) for u in caught] == []
    assert [r.getMessage() for r in caplog.records if r.name == "asyncio"] == []  # no "Task was destroyed but it is pending!"
