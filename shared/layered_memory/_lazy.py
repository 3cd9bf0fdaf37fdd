"""``qdrant_models``: ``qdrant_client.models``, imported at first use.

Importing ``qdrant_client`` costs about a second (its HTTP API and both clients load with the package), so
``import layered_memory`` must not pay it: modules that build filters and requests write
``from ._lazy import qdrant_models as models`` and the package loads when a request is first built.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule:
    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


qdrant_models: Any = _LazyModule("qdrant_client.models")

__all__ = ["qdrant_models"]
