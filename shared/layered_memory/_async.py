"""Async twins: ``aop`` runs ``op`` in a worker thread, so the event loop never blocks.

The embedded stores' I/O is synchronous (stdlib sqlite3, Qdrant Edge); one ``asyncio.to_thread`` hop
per call is the cheapest honest async for them (langgraph's ``PostgresStore.abatch`` does the same).
The hot paths a class lists in ``_NATIVE`` run on the loop itself when its stores can (Redis,
PostgreSQL, a Qdrant server: see ``_native.py`` and ``stores/native.py``).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


def async_twins(cls: T) -> T:
    """Class decorator: add ``a<name>`` for every name in ``cls._ASYNC``. The names also in ``cls._NATIVE``
    go through ``self._run_async(call, write)``, which may run them natively on the loop (``_native.py``)."""
    native = set(vars(cls).get("_NATIVE", ()))
    for name in cls._ASYNC:  # type: ignore[attr-defined]
        sync = getattr(cls, name)

        def make(sync: Any = sync, native: bool = name in native) -> Any:
            @functools.wraps(sync)
            async def twin(self: Any, *args: Any, **kwargs: Any) -> Any:
                if native:
                    return await self._run_async(functools.partial(sync, self, *args, **kwargs), sync.__name__.startswith("add_"))
                return await asyncio.to_thread(sync, self, *args, **kwargs)

            twin.__name__ = twin.__qualname__ = "a" + sync.__name__
            how = "natively on the event loop on the server backends, else in a worker thread" if native else "runs it in a worker thread"
            twin.__doc__ = f"Async twin of :meth:`{sync.__name__}` ({how})."
            return twin

        setattr(cls, "a" + name, make())
    return cls
