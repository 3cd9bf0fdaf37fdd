"""Async twins: ``aop`` runs ``op`` in a worker thread, so the event loop never blocks.

The stores' I/O is synchronous (stdlib sqlite3, Qdrant Edge, redis-py's sync client); one
``asyncio.to_thread`` hop per call is the cheapest honest async for them (langgraph's
``PostgresStore.abatch`` does the same).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, TypeVar

T = TypeVar("T", bound=type)


def async_twins(cls: T) -> T:
    """Class decorator: add ``a<name>`` for every name in ``cls._ASYNC``."""
    for name in cls._ASYNC:  # type: ignore[attr-defined]
        sync = getattr(cls, name)

        def make(sync: Any = sync) -> Any:
            @functools.wraps(sync)
            async def twin(self: Any, *args: Any, **kwargs: Any) -> Any:
                return await asyncio.to_thread(sync, self, *args, **kwargs)

            twin.__name__ = twin.__qualname__ = "a" + sync.__name__
            twin.__doc__ = f"Async twin of :meth:`{sync.__name__}` (runs it in a worker thread)."
            return twin

        setattr(cls, "a" + name, make())
    return cls
