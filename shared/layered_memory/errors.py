"""Exceptions raised by layered-memory.

The tree::

    LayeredMemoryError
    ├── ConfigurationError (ValueError)   bad settings, missing optional dependency
    ├── InvalidInputError (ValueError)    a value breaks a rule; names the field, the rule and the fix
    ├── NotFoundError (KeyError)          a record, topic, task or agent does not exist
    ├── CapabilityError                   the backend cannot do this (e.g. dense search without an embedder)
    └── BackendError(.backend, .op)       a storage or model backend failed
        ├── BackendUnavailable            cannot connect / refused
        ├── BackendTimeout                timed out
        └── SchemaMismatch                an existing collection or table does not match the configuration

Foreign exceptions are translated at the seam only (``raise BackendUnavailable(...) from exc``).
"""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """How to install an optional extra. The package is not on a registry (``pip install
    "layered-memory[x]"`` finds nothing): from a clone, or a wheel built from one (docs/install.md)."""
    return f'pip install -e ".[{extra}]" in a clone of layered-memory (or install a wheel built from it: docs/install.md)'


class LayeredMemoryError(Exception):
    """Root of every error raised by layered-memory."""


class ConfigurationError(LayeredMemoryError, ValueError):
    """Settings are inconsistent, or an optional dependency is missing."""


class InvalidInputError(LayeredMemoryError, ValueError):
    """A value breaks a rule. The message names the field, the rule and the fix."""

    def __init__(self, field: str, value: object, rule: str, fix: str) -> None:
        try:
            shown = repr(value)
        except (ValueError, RecursionError):  # an int over 4300 digits, a deeply nested value
            shown = f"<{type(value).__name__}>"
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"{field}={shown}: {rule}; {fix}")
        self.field = field
        self.value = value
        self.rule = rule
        self.fix = fix


class NotFoundError(LayeredMemoryError, KeyError):
    """A record, topic, task or agent does not exist."""

    def __str__(self) -> str:  # KeyError quotes its message; we want plain text
        return str(self.args[0]) if self.args else ""


class CapabilityError(LayeredMemoryError):
    """The configured backend cannot do what was asked."""


class BackendError(LayeredMemoryError):
    """A storage or model backend failed."""

    def __init__(self, message: str, *, backend: str, op: str) -> None:
        super().__init__(message)
        self.backend = backend
        self.op = op


class BackendUnavailable(BackendError):
    """The backend refused the connection or is not reachable."""


class BackendTimeout(BackendError):
    """The backend did not answer in time."""


class SchemaMismatch(BackendError):
    """An existing collection or table does not match the configuration."""
