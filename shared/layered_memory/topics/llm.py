"""Calling the chat model for the topic and knowledge tiers.

Every call names an operation (``topic_decision``, ``topic_title``, ``segment_summary``,
``merge_summary``, ``extract_entities``, ``extract_relations``, ``build_profile``). The engine's chat
model is always the wrapper :func:`~layered_memory.providers.as_chat_model` returns, so the call goes through
the one ``ChatModel`` protocol and is counted in the model's one :class:`UsageMeter`; the tiers
report their operations with ``usage.snapshot(prefixes)``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..providers.usage import OperationUsage, UsageMeter
from ..providers.wrappers import UsageCountingChatModel

__all__ = ["ModelCaller", "OperationUsage", "UsageMeter", "parse_json"]


class ModelCaller:
    """The tiers' optional chat model: ``available`` says whether there is one, ``call`` returns text.

    Raises whatever the model raises (callers fall back); the wrapper has counted the failure.
    """

    def __init__(self, model: UsageCountingChatModel | None) -> None:
        self.model = model

    @property
    def available(self) -> bool:
        return self.model is not None

    def call(self, prompt: str, *, operation: str) -> str:
        if self.model is None:
            raise RuntimeError("no chat model configured")
        return self.model.complete(prompt, operation=operation).text

    def usage(self, prefixes: tuple[str, ...]) -> dict[str, dict[str, Any]]:
        """The model's usage of the operations starting with ``prefixes``, plus ``"total"`` (zeros without a model)."""
        return (self.model.usage if self.model is not None else UsageMeter()).snapshot(prefixes)


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
