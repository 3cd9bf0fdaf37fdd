"""Test doubles and conformance suites for users' own tests and third-party backends.

* :class:`HashEmbedder`: a deterministic fake embedder (hashed character n-grams, fixed ``dim``,
  the same vectors in every process; similar texts get similar vectors). No pytest needed.
* :class:`RecordStoreConformance`, :class:`VectorIndexConformance`: the store protocols' pytest
  suites. Subclass one in a ``test_*.py`` file and override its fixture; each test then runs
  against your backend::

      import pytest
      from layered_memory.testing import RecordStoreConformance

      class TestMyStore(RecordStoreConformance):
          @pytest.fixture
          def opener(self, tmp_path):
              return lambda: MyRecordStore(tmp_path / "db")   # a new handle on the same storage

Importing the suites imports pytest (``pip install -e ".[testing]"`` in a clone); importing
``layered_memory`` never does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .embedder import HashEmbedder

if TYPE_CHECKING:
    from .record_store import RecordStoreConformance
    from .vector_index import VectorIndexConformance

__all__ = ["HashEmbedder", "RecordStoreConformance", "VectorIndexConformance"]

_SUITES = {"RecordStoreConformance": ".record_store", "VectorIndexConformance": ".vector_index"}


def __getattr__(name: str) -> Any:
    """The suites load on first use, so the fake embedder works without pytest installed."""
    if name in _SUITES:
        import importlib

        return getattr(importlib.import_module(_SUITES[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
