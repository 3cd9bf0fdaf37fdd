"""How a serialized ``LayeredChatMemory`` / ``LayeredMemoryBlock`` finds its engine again.

LlamaIndex persists an agent's memory with the agent's ``Context`` (``ctx.to_dict()`` calls the
memory's ``to_dict``; ``Context.from_dict`` calls ``from_dict`` with that dict alone), and pickles it
with the objects that hold it. An engine handle is an open store (files, connections, an embedder),
so the dict holds a *reference* instead: ``store`` (where the records live, without secrets: an
absolute SQLite path, or a Redis host:port/db and key prefix), ``tenant``, ``user_id`` and
``session_id``. Restoring never opens a store by itself: it looks the reference up among the engines
open in this process.

- Every engine handed to a ``LayeredChatMemory`` or ``LayeredMemoryBlock`` is registered while that
  object lives, so a context saved and restored in one process needs nothing more.
- A new process (a resumed workflow, a worker) opens its memory as usual and calls
  ``register_memory(mem)`` before ``Context.from_dict`` / ``from_string`` / ``pickle.loads``.
- When the same store is reached under another reference here (another path or host name), say so
  explicitly: ``register_memory(mem, store="<the saved reference>")``.

A reference with no registered engine raises ``ConfigurationError`` naming it and the fix; a restore
never falls back to a default store.
"""

from __future__ import annotations

import json
import os
import pickle
import threading
import weakref
from typing import Any

from layered_memory import LayeredMemory
from layered_memory.errors import ConfigurationError

_lock = threading.Lock()
# store reference -> handles, newest last; explicit registrations are strong, automatic ones weak
_handles: dict[str, list[Any]] = {}


def store_ref(mem: LayeredMemory) -> str:
    """The secret-free reference of ``mem``'s record store (the store that holds the messages)."""
    records = mem.records
    path = getattr(records, "path", None)
    if isinstance(path, (str, os.PathLike)) and os.fspath(path) != ":memory:":
        return f"sqlite:{os.path.abspath(os.fspath(path))}"
    address, prefix = getattr(records, "address", None), getattr(records, "prefix", None)
    if address and prefix:
        kwargs = getattr(getattr(getattr(records, "client", None), "connection_pool", None), "connection_kwargs", {})
        return f"redis:{address}/{kwargs.get('db', 0)}#{prefix}"
    # a store that cannot be reopened by location (SQLite :memory:, a custom backend): this process only
    return f"{type(records).__name__}@{id(records):x}"


def register_memory(mem: LayeredMemory, *, store: str | None = None) -> str:
    """Make ``mem`` the engine that restored memories with its reference (or ``store``) use.

    Returns the reference. Later registrations win; ``unregister_memory`` removes one.
    """
    if not isinstance(mem, LayeredMemory):
        raise TypeError(f"register_memory needs a layered_memory.LayeredMemory, got {type(mem).__name__}")
    ref = store or store_ref(mem)
    with _lock:
        entries = _handles.setdefault(ref, [])
        entries[:] = [e for e in entries if _alive(e) is not None and _alive(e) is not mem]
        entries.append(mem)
    return ref


def unregister_memory(mem: LayeredMemory) -> None:
    """Forget every registration of ``mem`` (e.g. before closing it)."""
    with _lock:
        for ref in list(_handles):
            _handles[ref] = [e for e in _handles[ref] if _alive(e) not in (None, mem)]
            if not _handles[ref]:
                del _handles[ref]


def remember(mem: LayeredMemory) -> str:
    """Register ``mem`` weakly (it stays registered while its adapter object holds it)."""
    ref = store_ref(mem)
    with _lock:
        for key in list(_handles):  # drop the references whose adapters are all gone
            _handles[key] = [e for e in _handles[key] if _alive(e) is not None]
            if not _handles[key] and key != ref:
                del _handles[key]
        entries = _handles.setdefault(ref, [])
        if not any(_alive(e) is mem for e in entries):
            # newest automatic entry last among the automatic ones; explicit registrations stay preferred
            first_strong = next((i for i, e in enumerate(entries) if not isinstance(e, weakref.ref)), len(entries))
            entries.insert(first_strong, weakref.ref(mem))
    return ref


def _alive(entry: Any) -> LayeredMemory | None:
    return entry() if isinstance(entry, weakref.ref) else entry


def resolve(store: str, tenant: str, user_id: str, *, who: str) -> LayeredMemory:
    """The registered engine for ``store``, as a handle of ``tenant`` bound to ``user_id``."""
    with _lock:
        candidates = [m for m in map(_alive, reversed(_handles.get(store, []))) if m is not None]
        known = sorted(r for r, entries in _handles.items() if any(_alive(e) is not None for e in entries))
    for mem in candidates:
        if mem.bound_user in (None, user_id):
            return mem.tenant(tenant).for_user(user_id) if mem.tenant_id != tenant else mem.for_user(user_id)
    if candidates:
        raise ConfigurationError(
            f"{who}: the engines registered for store {store!r} are bound to other users than {user_id!r}; "
            "register an unbound handle: register_memory(mem)"
        )
    raise ConfigurationError(
        f"{who}: no open LayeredMemory is registered for store {store!r} (registered: {', '.join(known) or 'none'}); "
        "open that store and call llamaindex_layered_memory.register_memory(mem) before restoring "
        "(Context.from_dict, from_string, pickle.loads), or pass the engine: from_dict(data, mem=mem)"
    )


def check_same_store(mem: LayeredMemory, store: str | None, *, who: str) -> None:
    """Raise when a restore is handed an engine over another store than the one saved."""
    if store is None:
        return
    here = store_ref(mem)
    if store == here:
        return
    with _lock:  # register_memory(m, store=saved) declared this store to be the saved one
        entries = [_alive(e) for e in _handles.get(store, [])]
        declared = any(m is not None and store_ref(m) == here for m in entries)
    if not declared:
        raise ConfigurationError(
            f"{who}: the saved memory lives in store {store!r}, the engine passed opens {here!r}; "
            f"pass the engine of that store, or declare them the same: register_memory(mem, store={store!r})"
        )


def bind_user(mem: Any, user_id: str | None, *, who: str) -> LayeredMemory:
    """``mem.for_user(user_id)``, or ``mem`` when it is already bound; checks the argument."""
    if not isinstance(mem, LayeredMemory):
        raise TypeError(
            f"{who} needs a layered_memory.LayeredMemory as mem, got {type(mem).__name__}; "
            "build one with LayeredMemory.embedded(path) or LayeredMemory.from_settings()"
        )
    if user_id is None:
        if mem.bound_user is None:
            raise ValueError(
                f"{who}: user_id=None and mem is not bound to a user; pass user_id=... or mem.for_user(user_id)"
            )
        return mem
    return mem if mem.bound_user == user_id else mem.for_user(user_id)


def attach(mem: LayeredMemory | None, data: dict[str, Any], *, who: str) -> LayeredMemory:
    """The engine handle for an adapter built from ``mem`` or restored from ``data`` (a saved
    ``store`` / ``tenant`` / ``user_id``); fills those three keys of ``data`` in."""
    store, tenant = data.get("store"), data.get("tenant")
    if mem is None and store is not None:
        if not data.get("user_id"):
            raise ConfigurationError(f"{who}: the saved data has store={store!r} but no user_id; it cannot be restored")
        handle = resolve(store, tenant or "default", data["user_id"], who=who)
    else:
        if isinstance(mem, LayeredMemory) and tenant is not None and tenant != mem.tenant_id:
            mem = mem.tenant(tenant)  # before binding the user: a handle only narrows (a bound one refuses another tenant)
        handle = bind_user(mem, data.get("user_id"), who=who)
        check_same_store(handle, store, who=who)
    ref = remember(handle)
    data.update(store=store or ref, tenant=handle.tenant_id, user_id=handle.bound_user)
    return handle


class Restorable:
    """Serialization of an adapter that holds an engine handle as ``_mem`` (see the module doc).

    ``to_dict`` / ``to_json`` (from ``BaseComponent``) write the fields, including the reference;
    ``from_dict`` / ``from_string`` / unpickling re-attach the registered engine."""

    @classmethod
    def from_dict(cls, data: dict[str, Any], mem: LayeredMemory | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Rebuild from ``to_dict()``'s output; the engine is ``mem`` or the one registered for the
        saved store (``register_memory``)."""
        data = {**data, **kwargs}
        data.pop("class_name", None)
        return cls(mem, **data)  # type: ignore[call-arg]

    @classmethod
    def from_json(cls, data_str: str, mem: LayeredMemory | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        return cls.from_dict(json.loads(data_str), mem, **kwargs)

    def to_dict(self, **kwargs: Any) -> dict[str, Any]:
        """The fields: options plus the reference (``store``, ``tenant``, ``user_id``)."""
        return self.model_dump(**kwargs)  # type: ignore[attr-defined]

    def to_string(self) -> str:
        """The JSON of ``to_dict()`` (a reference to the store, never its messages or secrets)."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_string(cls, json_str: str, mem: LayeredMemory | None = None) -> Any:
        return cls.from_dict(json.loads(json_str), mem)

    def __getstate__(self) -> dict[str, Any]:
        fields = {}
        for key, value in self.__dict__.items():
            try:
                pickle.dumps(value)
            except Exception:  # e.g. a custom tokenizer_fn: restored with its default, as from_dict does
                continue
            fields[key] = value
        return {"fields": fields}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(None, **state["fields"])  # type: ignore[misc]


__all__ = ["register_memory", "unregister_memory", "store_ref"]
