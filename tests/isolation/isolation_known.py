"""The probes that fail on the current code, by issue 10 bug: each is ``xfail(strict=True)``.

Remove an entry when its fix lands (the probe then XPASSes, a failure under strict)."""

from __future__ import annotations

import fnmatch

#: (probe name pattern, backends or None for all, reason)
CORE = ("sqlite-core", "redis-core")
# reasons kept for the probes that regress
B1 = "bug 1: core mode (no vector index) ignores the bound user in search"
B2 = "bug 2: an empty user id fails open and searches the whole tenant"
B3 = "bug 3: items and the LangGraph store ignore for_user"
B4 = "bug 4: task memory is keyed by task_id alone"
B5 = "bug 5: message_id is unique per tenant, not per chat; add_message returns the other chat's message"
# Bugs 1-6 are fixed: no probe is known to fail. A probe that regresses goes here with its reason.
KNOWN: list[tuple[str, tuple[str, ...] | None, str]] = []


def known_failure(name: str, backend: str) -> str | None:
    for pattern, backends, reason in KNOWN:
        if fnmatch.fnmatchcase(name, pattern.replace("[", "[[]")) and (backends is None or backend in backends):
            return reason
    return None
