"""The one usage meter: calls, failures, prompt / completion tokens and seconds per operation.

Every chat model the engine uses is wrapped by :func:`~layered_memory.providers.as_chat_model`,
whose ``usage`` is a :class:`UsageMeter`; each ``complete(..., operation=...)`` records there. The
tiers report their share with ``snapshot(prefixes)`` (``mem.topics.usage``, ``mem.knowledge.usage``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["DEFAULT_OPERATION", "OperationUsage", "UsageMeter"]

DEFAULT_OPERATION = "default"  # the label of calls made without ``operation=``


@dataclass
class OperationUsage:
    """Usage of one operation, or of several summed (``UsageMeter.total``).

    ``calls`` counts answered calls and ``failures`` the calls that raised; tokens are those of
    answered calls; ``estimated_calls`` of them had their tokens counted locally, not reported.
    """

    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    estimated_calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def estimated(self) -> bool:
        """True when any token count came from our tokenizer instead of the provider."""
        return self.estimated_calls > 0

    def add(self, other: OperationUsage) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls, "failures": self.failures, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens,
            "seconds": round(self.seconds, 4), "estimated": self.estimated,
        }


@dataclass
class UsageMeter:
    """Thread-safe usage per operation. Reads return copies.

    Example::

        meter = UsageMeter()
        meter.record("topic_title", prompt=120, completion=6, seconds=0.4)
        meter.snapshot(("topic_",))  # {"topic_title": {...}, "total": {...}}
    """

    _ops: dict[str, OperationUsage] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, operation: str | None, *, prompt: int = 0, completion: int = 0, seconds: float = 0.0,
               failed: bool = False, estimated: bool = False) -> None:
        """Add one call (``failed``: it raised; its tokens are usually 0)."""
        with self._lock:
            u = self._ops.setdefault(operation or DEFAULT_OPERATION, OperationUsage())
            u.calls += int(not failed)
            u.failures += int(failed)
            u.prompt_tokens += int(prompt)
            u.completion_tokens += int(completion)
            u.seconds += float(seconds)
            u.estimated_calls += int(estimated)

    @property
    def by_operation(self) -> dict[str, OperationUsage]:
        """A copy of the usage per operation."""
        with self._lock:
            return {k: OperationUsage(**vars(v)) for k, v in self._ops.items()}

    def total(self, prefixes: tuple[str, ...] | None = None) -> OperationUsage:
        """The sum over every operation (or those starting with one of ``prefixes``)."""
        out = OperationUsage()
        for name, u in self.by_operation.items():
            if prefixes is None or name.startswith(prefixes):
                out.add(u)
        return out

    def snapshot(self, prefixes: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
        """Plain dicts per operation (those starting with one of ``prefixes``), sorted, plus ``"total"``."""
        ops = {k: v for k, v in self.by_operation.items() if prefixes is None or k.startswith(prefixes)}
        out = {k: v.to_dict() for k, v in sorted(ops.items())}
        total = OperationUsage()
        for u in ops.values():
            total.add(u)
        out["total"] = total.to_dict()
        return out

    def reset(self) -> None:
        with self._lock:
            self._ops.clear()

    # the totals as attributes: ``chat.usage.calls``, ``chat.usage.prompt_tokens``, ...
    @property
    def calls(self) -> int:
        return self.total().calls

    @property
    def failures(self) -> int:
        return self.total().failures

    @property
    def prompt_tokens(self) -> int:
        return self.total().prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.total().completion_tokens

    @property
    def total_tokens(self) -> int:
        return self.total().total_tokens

    @property
    def estimated_calls(self) -> int:
        return self.total().estimated_calls

    @property
    def seconds(self) -> float:
        return self.total().seconds
