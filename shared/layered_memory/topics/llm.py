"""Calling the chat model for the topic and knowledge tiers, and counting what it costs.

Every call names an operation (``topic_decision``, ``topic_title``, ``segment_summary``,
``merge_summary``, ``extract_entities``, ``extract_relations``, ``build_profile``) and is recorded in a
:class:`UsageMeter`: calls, failures, prompt / completion tokens and seconds, per operation and in
total. Tokens come from the model when it reports them (the engine's ChatModel wrapper exposes a
running ``usage``; LangChain messages carry ``usage_metadata``) and are otherwise counted with the
engine's tokenizer (tiktoken, ``providers/tokens.py``); ``estimated`` says which.

The model may be the engine's ``ChatModel`` (``complete(prompt, *, system=None)``), a LangChain chat
model (``invoke``) or a LlamaIndex LLM (``complete`` returning an object with ``.text``).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["UsageMeter", "ModelCaller", "parse_json", "OperationUsage"]


@dataclass
class OperationUsage:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    estimated: bool = False  # True when any count came from our tokenizer instead of the provider

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls, "failures": self.failures, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens,
            "seconds": round(self.seconds, 4), "estimated": self.estimated,
        }


@dataclass
class UsageMeter:
    """Token usage per operation (thread-safe). ``snapshot()`` returns plain dicts plus ``"total"``."""

    ops: dict[str, OperationUsage] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, op: str, *, prompt: int, completion: int, seconds: float, failed: bool, estimated: bool) -> None:
        with self.lock:
            u = self.ops.setdefault(op, OperationUsage())
            u.calls += 1
            u.failures += int(failed)
            u.prompt_tokens += prompt
            u.completion_tokens += completion
            u.seconds += seconds
            u.estimated = u.estimated or estimated

    def snapshot(self, prefixes: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
        with self.lock:
            items = {k: v for k, v in self.ops.items() if prefixes is None or k.startswith(prefixes)}
            total = OperationUsage()
            for u in items.values():
                total.calls += u.calls
                total.failures += u.failures
                total.prompt_tokens += u.prompt_tokens
                total.completion_tokens += u.completion_tokens
                total.seconds += u.seconds
                total.estimated = total.estimated or u.estimated
            out = {k: v.to_dict() for k, v in sorted(items.items())}
            out["total"] = total.to_dict()
            return out

    def reset(self) -> None:
        with self.lock:
            self.ops.clear()


def _wrapper_usage(model: Any) -> tuple[int, int, int] | None:
    """(prompt, completion, estimated calls) totals of a model that keeps a running ``usage``
    (the engine's ``UsageCountingChatModel``), if it does."""
    usage = getattr(model, "usage", None)
    p, c = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    if isinstance(p, int) and isinstance(c, int):
        return p, c, int(getattr(usage, "estimated_calls", 0) or 0)
    return None


def _text_of(result: Any) -> tuple[str, tuple[int, int] | None]:
    """Text and provider-reported (prompt, completion) tokens of a model answer."""
    if isinstance(result, str):
        return result, None
    meta = getattr(result, "usage_metadata", None)  # LangChain AIMessage
    if meta is not None and hasattr(result, "content"):
        content = result.content
        if isinstance(content, list):
            content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
        return str(content), (int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0)))
    if hasattr(result, "content"):
        content = result.content
        if isinstance(content, list):
            content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
        return str(content), None
    if hasattr(result, "text"):  # LlamaIndex CompletionResponse
        return str(result.text), None
    return str(result), None


class ModelCaller:
    """One entry point for every model call of the tiers: ``call(prompt, operation=...) -> str``.

    Raises whatever the model raises (callers fall back); the failure is still counted.
    """

    def __init__(self, model: Any, meter: UsageMeter, count_tokens: Callable[[str], int]) -> None:
        self.model = model
        self.meter = meter
        self.count = count_tokens

    @property
    def available(self) -> bool:
        return self.model is not None

    def _invoke(self, prompt: str, operation: str) -> Any:
        m = self.model
        if hasattr(m, "invoke") and not hasattr(m, "complete"):  # LangChain chat model / runnable
            return m.invoke(prompt)
        try:
            return m.complete(prompt, operation=operation)
        except TypeError:
            return m.complete(prompt)

    def call(self, prompt: str, *, operation: str) -> str:
        if self.model is None:
            raise RuntimeError("no chat model configured")
        before = _wrapper_usage(self.model)
        t0 = time.perf_counter()
        try:
            result = self._invoke(prompt, operation)
        except Exception:
            self.meter.record(operation, prompt=self.count(prompt), completion=0, seconds=time.perf_counter() - t0,
                              failed=True, estimated=True)
            raise
        seconds = time.perf_counter() - t0
        text, reported = _text_of(result)
        after = _wrapper_usage(self.model)
        estimated = False
        if reported is None and before is not None and after is not None and after != before:
            reported = (after[0] - before[0], after[1] - before[1])
            estimated = after[2] > before[2]
        if reported is not None and sum(reported) > 0:
            self.meter.record(operation, prompt=reported[0], completion=reported[1], seconds=seconds, failed=False, estimated=estimated)
        else:
            self.meter.record(operation, prompt=self.count(prompt), completion=self.count(text), seconds=seconds,
                              failed=False, estimated=True)
        logger.debug("model call %s: %d prompt chars -> %d chars in %.3f s", operation, len(prompt), len(text), seconds)
        return text


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json(text: str) -> Any:
    """Parse the JSON in a model answer: bare, fenced (```json ... ```), or the first balanced
    object / array inside prose. Returns None when there is none."""
    text = (text or "").strip()
    candidates = [text, *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for c in candidates:
        try:
            return json.loads(c)
        except (json.JSONDecodeError, ValueError):
            pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                value, _ = decoder.raw_decode(text[i:])
                return value
            except json.JSONDecodeError:
                continue
    return None
