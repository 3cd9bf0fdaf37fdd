"""What the conformance suites share: the no-silent-override rule."""

from __future__ import annotations

from typing import Any


def _is_xfail(fn: Any) -> bool:
    return any(getattr(mark, "name", None) == "xfail" for mark in getattr(fn, "pytestmark", []))


def forbid_silent_overrides(cls: type, suite: type) -> None:
    """A subclass may override a suite test only to mark it ``@pytest.mark.xfail(reason=...)``: a backend
    that cannot pass a test says so in the open (langchain-tests' rule)."""
    for name, fn in vars(cls).items():
        if name.startswith("test_") and hasattr(suite, name) and not _is_xfail(fn):
            raise TypeError(
                f"{cls.__name__}.{name} overrides a {suite.__name__} test; a backend may not silently replace "
                f"it: decorate the override with @pytest.mark.xfail(reason='why this backend cannot pass')"
            )
