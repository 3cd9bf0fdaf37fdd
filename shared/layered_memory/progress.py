"""Progress of long maintenance work (``process``, ``reindex``), reported to whoever listens.

The work reports ``report(stage, done, total)`` as it goes (``total`` None when unknown); nothing is reported
unless a caller listens with ``progress_to(callback)`` (a context variable: per thread and task, no global
state). The CLI draws one progress bar per stage.

    with progress_to(lambda stage, done, total: print(stage, done, total)):
        mem.process()
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Callback = Callable[[str, int, "int | None"], None]

_listener: ContextVar[Callback | None] = ContextVar("layered_memory_progress", default=None)


def report(stage: str, done: int, total: int | None = None) -> None:
    """``done`` units of ``stage`` finished so far (cumulative), of ``total`` when known."""
    listener = _listener.get()
    if listener is not None:
        listener(stage, done, total)


@contextmanager
def progress_to(callback: Callback) -> Iterator[None]:
    """Send the progress of the work run inside the block to ``callback(stage, done, total)``."""
    token = _listener.set(callback)
    try:
        yield
    finally:
        _listener.reset(token)


__all__ = ["progress_to", "report"]
