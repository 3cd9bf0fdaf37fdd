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
# Bugs 1-6 are fixed on main except this part of bug 5: the idempotent path of add_message hands a
# user-bound handle the *other user's* stored message (same chat, same id), content included.
KNOWN: list[tuple[str, tuple[str, ...] | None, str]] = [
    ("engine/add_message_victims_id[mallory]", None, B5 + " (same chat and id from another user: still returned)"),
]


def known_failure(name: str, backend: str) -> str | None:
    for pattern, backends, reason in KNOWN:
        if fnmatch.fnmatchcase(name, pattern.replace("[", "[[]")) and (backends is None or backend in backends):
            return reason
    return None
