"""The facade's native async path (see ``stores.native``): which engines can take it, and how a call runs.

``aadd_message(s)``, ``asearch`` and ``aget_context_for_user`` run the sync method on the event loop
(``run_native``) when the record store and the vector index both run natively (Redis, PostgreSQL, a
Qdrant server), else in a worker thread as every other async twin does. Writes keep the sync path's
rule, one writer at a time per engine: a per-loop ``asyncio.Lock`` lines up this loop's writers (the
engine's ``write_lock`` is re-entrant per thread, and every native call shares the loop's thread) and
the ``write_lock`` itself, taken without blocking the loop, keeps out the other threads (the index
writer, sync callers).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .stores.base import NativeAsync
from .stores.native import run_native

if TYPE_CHECKING:
    from .kernel import Kernel

T = TypeVar("T")

_WRITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, asyncio.Lock]] = weakref.WeakKeyDictionary()


def native_ready(records: Any, index: Any) -> bool:
    """True when both stores run natively (``index`` None: no vector index, BM25 over the records)."""
    stores = [records] if index is None else [records, index]
    return all(isinstance(s, NativeAsync) and s.native_async() for s in stores)


def _writer_lock(core: Kernel) -> asyncio.Lock:
    per_loop = _WRITERS.setdefault(asyncio.get_running_loop(), {})
    return per_loop.setdefault(id(core.write_lock), asyncio.Lock())


async def run_engine(core: Kernel, call: Callable[[], T], *, write: bool = False) -> T:
    """``call()`` natively on this loop when the engine's stores allow it, else in a worker thread."""
    if not native_ready(core.records, core.index):
        return await asyncio.to_thread(call)
    if not write:
        return await run_native(call)
    async with _writer_lock(core):
        while not core.write_lock.acquire(blocking=False):  # held by another thread: yield, never block the loop
            await asyncio.sleep(0.001)
        try:
            return await run_native(call)
        finally:
            core.write_lock.release()


__all__ = ["native_ready", "run_engine"]
