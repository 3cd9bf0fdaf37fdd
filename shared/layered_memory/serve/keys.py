"""Bearer keys: which tenant (and, optionally, which user) a caller of ``serve`` or ``mcp`` over HTTP reaches.

The keys file is JSON, one entry per key; an entry names its tenant (default: the server's tenant) and
optionally a user, and holds either the key itself or its SHA-256 (what ``layered-memory keys add``
writes, so the file never holds a usable secret)::

    {"keys": [
      {"name": "anna-viewer", "sha256": "9f86d08...", "tenant": "acme", "user": "anna"},
      {"name": "acme-admin", "key": "lm_4Yx...", "tenant": "acme"}
    ]}

A key bound to a user reaches only that user's memory (``mem.tenant(t).for_user(u)``); a key without a
user reaches the whole tenant. No key reaches two tenants.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError, InvalidInputError
from ..index.scope import check_user_id
from ..models import check_id

if TYPE_CHECKING:
    from ..engine import LayeredMemory

MIN_KEY_CHARS = 16
KEY_PREFIX = "lm_"


@dataclass(frozen=True)
class Key:
    """What one bearer key grants: a tenant, and a user when the key is bound to one."""

    name: str
    tenant: str
    user: str | None = None


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    """A fresh random key (32 bytes, URL-safe)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


class KeyRing:
    """The keys of one file, looked up by the SHA-256 of the presented token."""

    def __init__(self, keys: Mapping[str, Key]) -> None:
        self._by_digest = dict(keys)

    def __len__(self) -> int:
        return len(self._by_digest)

    def resolve(self, token: str | None) -> Key | None:
        """The key's grant, or None for a missing or unknown token."""
        if not token:
            return None
        return self._by_digest.get(digest(token))

    @property
    def tenants(self) -> list[str]:
        return sorted({k.tenant for k in self._by_digest.values()})

    @classmethod
    def single(cls, token: str, tenant: str, user: str | None = None, name: str = "key") -> KeyRing:
        """One key (tests, and ``--key`` on the command line)."""
        return cls({digest(_check_token(token, name)): Key(name, check_id("tenant", tenant), check_user_id(user))})  # type: ignore[arg-type]

    @classmethod
    def parse(cls, data: Any, *, default_tenant: str = "default", source: str = "keys file") -> KeyRing:
        """Validate a keys document (see the module docstring)."""
        entries = data.get("keys") if isinstance(data, Mapping) else None
        if not isinstance(entries, list):
            raise ConfigurationError(f'{source}: must be a JSON object {{"keys": [...]}}; see docs/serve.md')
        out: dict[str, Key] = {}
        for i, e in enumerate(entries):
            where = f"{source}: keys[{i}]"
            if not isinstance(e, Mapping):
                raise ConfigurationError(f"{where}: must be an object with key or sha256, tenant and optionally user")
            unknown = sorted(set(e) - {"name", "key", "sha256", "tenant", "user"})
            if unknown:
                raise ConfigurationError(f"{where}: unknown field {unknown[0]!r}; the fields are name, key, sha256, tenant, user")
            if ("key" in e) == ("sha256" in e):
                raise ConfigurationError(f"{where}: give exactly one of key (the token) or sha256 (its hex SHA-256)")
            name = str(e.get("name") or f"keys[{i}]")
            try:
                tenant = check_id("tenant", e.get("tenant", default_tenant))
                user = check_user_id(e.get("user"))
                if "key" in e:
                    hexdigest = digest(_check_token(e["key"], name))
                else:
                    hexdigest = str(e["sha256"]).lower()
                    if len(hexdigest) != 64 or any(c not in "0123456789abcdef" for c in hexdigest):
                        raise InvalidInputError("sha256", e["sha256"], "must be 64 hex digits", "write the hex SHA-256 of the key")
            except InvalidInputError as exc:
                raise ConfigurationError(f"{where}: {exc}") from None
            if hexdigest in out:
                raise ConfigurationError(f"{where}: the same key appears twice (also {out[hexdigest].name!r}); one key, one grant")
            out[hexdigest] = Key(name, tenant, user)  # type: ignore[arg-type]
        return cls(out)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, default_tenant: str = "default") -> KeyRing:
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            where = os.fspath(path)
            raise ConfigurationError(f"keys file {where!r} does not exist; create it with: layered-memory keys add {where} --tenant NAME") from None
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"keys file {os.fspath(path)!r}: {exc}") from None
        return cls.parse(data, default_tenant=default_tenant, source=f"keys file {os.fspath(path)!r}")


class HandleCache:
    """One engine handle per key: ``engine.tenant(key.tenant)``, narrowed to ``key.user`` (built once)."""

    def __init__(self, engine: LayeredMemory) -> None:
        self.engine = engine
        self._handles: dict[Key, LayeredMemory] = {}

    def get(self, key: Key) -> LayeredMemory:
        h = self._handles.get(key)
        if h is None:
            h = self.engine.tenant(key.tenant)
            if key.user is not None:
                h = h.for_user(key.user)
            self._handles[key] = h
        return h


def _check_token(token: Any, name: str) -> str:
    if not isinstance(token, str) or len(token) < MIN_KEY_CHARS or any(c.isspace() for c in token):
        raise InvalidInputError(
            f"key of {name}", "<hidden>", f"must be a string of at least {MIN_KEY_CHARS} characters without spaces",
            "generate one with: layered-memory keys add FILE --tenant NAME",
        )
    return token


def add_key(path: str | os.PathLike[str], *, tenant: str, user: str | None = None, name: str | None = None) -> str:
    """Append a new key (its SHA-256 only) to the keys file, creating it; returns the token (shown once)."""
    tenant = check_id("tenant", tenant)  # type: ignore[assignment]
    user = check_user_id(user)
    data: dict[str, Any] = {"keys": []}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        KeyRing.parse(data, source=f"keys file {os.fspath(path)!r}")  # refuse to extend a broken file
    token = new_token()
    entry: dict[str, Any] = {"name": name or f"{tenant}/{user or '*'}", "sha256": digest(token), "tenant": tenant}
    if user is not None:
        entry["user"] = user
    data["keys"].append(entry)
    tmp = f"{os.fspath(path)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return token


__all__ = ["HandleCache", "Key", "KeyRing", "add_key", "digest", "new_token"]
