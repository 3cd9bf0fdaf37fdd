"""Native async for the server stores: the engine's own code on the event loop, its I/O awaited there.

``aget_context_for_user`` and friends used to run the sync code in a worker thread: one thread per
concurrent call. On the server backends they now run that same code on a greenlet in the event-loop
thread (the SQLAlchemy asyncio technique): each store call it makes awaits the store's async client
(``redis.asyncio``, psycopg's ``AsyncConnectionPool``, ``AsyncQdrantClient``) on the loop, so one loop
serves hundreds of concurrent requests, and the validation, scope filters, fusion, rerank and context
assembly are the very code the sync path runs (same results by construction, one place to fix).

    result = await run_native(mem.search, "docker")     # the sync method, its store I/O awaited natively

Pieces:

- :func:`run_native` runs a sync callable on a bridge greenlet and awaits whatever it hands over.
- :func:`await_only` (inside that greenlet) hands an awaitable to the loop and returns its result.
- :class:`Dispatch` wraps a store's client: outside the greenlet it *is* the sync client (every
  attribute forwarded); inside, a call goes to the same method of the loop's async client, awaited.
- :func:`offloaded`: a method that must block (a sync-only client call) runs in a worker thread
  when called inside the greenlet; :class:`OffloadedEmbedder` does that for the embedder (CPU).
- :class:`PerLoop`: async clients are bound to the loop that made them: one per running loop.

A store opts in with ``native_async() -> bool`` (:class:`stores.base.NativeAsync`); the facade takes
the native path only when every store it uses says True, else the worker thread as before.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import sys
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from greenlet import getcurrent, greenlet

logger = logging.getLogger(__name__)

T = TypeVar("T")


class _Bridge(greenlet):  # type: ignore[misc]
    """The greenlet a sync call runs on; its parent (the driver) awaits what it is handed."""

    __slots__ = ("driver",)

    def __init__(self, fn: Callable[..., Any], driver: greenlet) -> None:
        super().__init__(fn, driver)
        self.driver = driver


def in_native() -> bool:
    """True inside :func:`run_native` (a store call here may await its async client)."""
    return isinstance(getcurrent(), _Bridge)


def await_only(awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` on the loop from sync code running under :func:`run_native`."""
    current = getcurrent()
    if not isinstance(current, _Bridge):
        raise RuntimeError("await_only() outside run_native(): a native store call escaped its event loop")
    return current.driver.switch(awaitable)  # type: ignore[no-any-return]


async def run_native(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """Run sync ``fn(*args, **kwargs)`` on a greenlet in this thread, awaiting each awaitable it hands
    over (:func:`await_only`). Exceptions travel both ways; context variables are the caller's."""
    bridge = _Bridge(fn, getcurrent())
    bridge.gr_context = contextvars.copy_context()
    result = bridge.switch(*args, **kwargs)
    while not bridge.dead:
        try:
            value = await result
        except BaseException:  # noqa: BLE001  (thrown into the sync code: it sees its own error)
            result = bridge.throw(*sys.exc_info())
        else:
            result = bridge.switch(value)
    return result  # type: ignore[no-any-return]


def offloaded(method: Callable[..., T]) -> Callable[..., T]:
    """Decorator: inside :func:`run_native` the method runs in a worker thread (it blocks: a sync-only
    client call, CPU work); elsewhere it runs as is."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> T:
        if isinstance(getcurrent(), _Bridge):
            return await_only(asyncio.to_thread(method, *args, **kwargs))
        return method(*args, **kwargs)

    return wrapper


class PerLoop(Generic[T]):
    """One async client per running event loop (they cannot cross loops), built by ``factory`` on first
    use in that loop (it may await: it runs under :func:`run_native`) and closed by ``close`` when that
    loop shuts down (``asyncio.run`` cancels a guard task, which closes it) or by :meth:`close`."""

    def __init__(self, factory: Callable[[], T], close: Callable[[T], Awaitable[Any]] | None = None) -> None:
        self._factory = factory
        self._close = close
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()
        self._guards: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is not None:
            return client
        client = self._factory()  # may switch (await_only): no lock held across it
        with self._lock:
            kept = self._clients.setdefault(loop, client)
            if kept is client and self._close is not None:
                guard = self._guards[loop] = loop.create_task(self._guard(loop, client))
                # a loop closed without cancelling its tasks destroys the guard unfinished, as designed
                # (``_guard``): asyncio would log "Task was destroyed but it is pending!" for it
                guard._log_destroy_pending = False  # type: ignore[attr-defined]
        if kept is not client and self._close is not None:  # another call of this loop won the race
            await_only(self._close(client))
        return kept

    async def _guard(self, loop: asyncio.AbstractEventLoop, client: T) -> None:
        """Wait until the loop shuts down (cancelled), then close the loop's client. A loop closed without
        cancelling its tasks (``loop.close()`` rather than ``asyncio.run``) destroys this task unfinished:
        there is no loop left to close the client on, so it is only forgotten (its sockets go with it)."""
        try:
            await loop.create_future()
        except GeneratorExit:
            self._forget(loop, client)
            raise
        except BaseException:
            self._forget(loop, client)
            await self._close(client)  # type: ignore[misc]
            raise

    def _forget(self, loop: asyncio.AbstractEventLoop, client: T) -> None:
        with self._lock:
            if self._clients.get(loop) is client:
                del self._clients[loop]

    def close(self) -> None:
        """Close every loop's client: awaited on its loop when that loop still runs or can run, else dropped."""
        with self._lock:
            items = list(self._clients.items())
            self._clients.clear()
        if self._close is None:
            return
        for loop, client in items:
            try:
                if loop.is_closed():
                    continue
                coro = self._close(client)
                if not loop.is_running():
                    loop.run_until_complete(coro)
                    continue
                try:
                    running = asyncio.get_running_loop()
                except RuntimeError:
                    running = None
                if running is loop:  # close() called on the loop itself: finish in the background
                    loop.create_task(coro)  # type: ignore[arg-type]
                else:
                    asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=5)  # type: ignore[arg-type]
            except Exception as exc:  # closing is best effort: the sockets go with the loop anyway
                logger.debug("closing an async client failed (%s: %s)", type(exc).__name__, exc)


class _AsyncPipeline:
    """A redis.asyncio pipeline seen from sync code: commands queue as they do, ``execute`` awaits."""

    def __init__(self, pipe: Any) -> None:
        self._pipe = pipe

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._pipe, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            out = attr(*args, **kwargs)
            if out is self._pipe:  # a queued command (the pipeline is awaitable itself)
                return self
            if inspect.isawaitable(out):
                return await_only(out)
            return out

        return call

    def __enter__(self) -> _AsyncPipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        await_only(self._pipe.reset())


class Dispatch:
    """A store's client that is the sync client outside :func:`run_native` and, inside, calls the same
    method of the loop's async client (``clients.get()``) and awaits it. Attributes that are no method,
    and methods whose async twin is no coroutine (an async iterator), stay on the sync client."""

    __slots__ = ("_sync", "_clients")

    def __init__(self, sync: Any, clients: PerLoop[Any]) -> None:
        object.__setattr__(self, "_sync", sync)
        object.__setattr__(self, "_clients", clients)

    @property
    def sync_client(self) -> Any:
        return self._sync

    def close_native(self) -> None:
        """Close the async clients made for each loop (the sync client stays its owner's)."""
        self._clients.close()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._sync, name)
        if not callable(attr) or not isinstance(getcurrent(), _Bridge):
            return attr
        clients = self._clients

        def call(*args: Any, **kwargs: Any) -> Any:
            target = getattr(clients.get(), name, None)
            if target is None or inspect.isasyncgenfunction(target):
                return attr(*args, **kwargs)
            out = target(*args, **kwargs)
            if name == "pipeline":  # checked first: a redis.asyncio pipeline is awaitable itself
                return _AsyncPipeline(out)
            if inspect.isawaitable(out):
                return await_only(out)
            return out

        return call

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._sync, name, value)

    def __repr__(self) -> str:
        return repr(self._sync)


@contextmanager
def entered(manager: Any) -> Iterator[Any]:
    """Enter an async context manager from sync code under :func:`run_native`."""
    value = await_only(manager.__aenter__())
    try:
        yield value
    except BaseException:
        if not await_only(manager.__aexit__(*sys.exc_info())):
            raise
    else:
        await_only(manager.__aexit__(None, None, None))


class SyncCursor:
    """A psycopg ``AsyncCursor`` seen from sync code: ``execute`` / ``fetch*`` await, the rest is forwarded."""

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def execute(self, *args: Any, **kwargs: Any) -> SyncCursor:
        await_only(self._cursor.execute(*args, **kwargs))
        return self

    def executemany(self, *args: Any, **kwargs: Any) -> None:
        await_only(self._cursor.executemany(*args, **kwargs))

    def fetchone(self) -> Any:
        return await_only(self._cursor.fetchone())

    def fetchall(self) -> list[Any]:
        return await_only(self._cursor.fetchall())

    def fetchmany(self, size: int = 0) -> list[Any]:
        return await_only(self._cursor.fetchmany(size))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


class Offloaded:
    """A provider seen by an engine whose stores run natively: inside :func:`run_native` each of its calls (model
    work, CPU or a blocking HTTP request, that would stall the loop) runs in a worker thread; every other
    attribute is the wrapped object's (``inner`` too: an adapter's wrapper keeps showing its framework object)."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped: Any) -> None:
        object.__setattr__(self, "_wrapped", wrapped)

    def _call(self, method: str, *args: Any) -> Any:
        fn = getattr(self._wrapped, method)
        if isinstance(getcurrent(), _Bridge):
            return await_only(asyncio.to_thread(fn, *args))
        return fn(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._wrapped, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._wrapped, name, value)

    def __repr__(self) -> str:
        return repr(self._wrapped)


class OffloadedEmbedder(Offloaded):
    """The embedder of a native engine: each embedding call in a worker thread (``Offloaded``)."""

    __slots__ = ()

    def embed_query(self, text: str) -> list[float]:
        return self._call("embed_query", text)  # type: ignore[no-any-return]

    def embed_documents(self, texts: Any) -> list[list[float]]:
        return self._call("embed_documents", texts)  # type: ignore[no-any-return]


class OffloadedReranker(Offloaded):
    """The rerank model of a native engine: each call in a worker thread (``Offloaded``), so a cross-encoder or a
    rerank API answering in seconds never stalls the loop's other tasks."""

    __slots__ = ()

    def rerank(self, query: str, documents: Any) -> list[float]:
        return self._call("rerank", query, documents)  # type: ignore[no-any-return]


__all__ = [
    "Dispatch",
    "Offloaded",
    "OffloadedEmbedder",
    "OffloadedReranker",
    "PerLoop",
    "SyncCursor",
    "await_only",
    "entered",
    "in_native",
    "offloaded",
    "run_native",
]
