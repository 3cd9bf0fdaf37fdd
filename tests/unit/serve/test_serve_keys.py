"""Bearer keys of ``serve`` / ``mcp --transport http``: the keys file's rules, lookups by SHA-256, and
``keys add`` (only the digest is stored, the file is private)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from layered_memory.errors import ConfigurationError
from layered_memory.serve.keys import Key, KeyRing, add_key, digest


def test_a_key_resolves_to_its_tenant_and_user_and_nothing_else_does() -> None:
    ring = KeyRing.parse({"keys": [
        {"name": "anna", "key": "k-anna-0123456789abc", "tenant": "acme", "user": "anna"},
        {"name": "ops", "sha256": digest("k-ops-0123456789abcd"), "tenant": "acme"},
        {"key": "k-default-0123456789"},
    ]}, default_tenant="home")
    assert ring.resolve("k-anna-0123456789abc") == Key("anna", "acme", "anna")
    assert ring.resolve("k-ops-0123456789abcd") == Key("ops", "acme", None)
    assert ring.resolve("k-default-0123456789") == Key("keys[2]", "home", None)
    for wrong in (None, "", "k-anna-0123456789ab", "K-ANNA-0123456789ABC", digest("k-anna-0123456789abc")):
        assert ring.resolve(wrong) is None
    assert ring.tenants == ["acme", "home"]


@pytest.mark.parametrize("doc, message", [
    ([], 'must be a JSON object {"keys": [...]}'),
    ({"keys": [{"tenant": "acme"}]}, "exactly one of key"),
    ({"keys": [{"key": "k-0123456789abcdef", "sha256": "0" * 64}]}, "exactly one of key"),
    ({"keys": [{"key": "short"}]}, "at least 16 characters"),
    ({"keys": [{"sha256": "xyz"}]}, "64 hex digits"),
    ({"keys": [{"key": "k-0123456789abcdef", "tenant": "a b"}]}, "tenant="),
    ({"keys": [{"key": "k-0123456789abcdef", "user": ""}]}, "an empty user id names no user"),
    ({"keys": [{"key": "k-0123456789abcdef", "role": "admin"}]}, "unknown field 'role'"),
    ({"keys": [{"key": "k-0123456789abcdef"}, {"sha256": digest("k-0123456789abcdef"), "tenant": "other"}]}, "appears twice"),
])
def test_a_broken_keys_file_is_refused_with_the_reason(doc: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message.replace("[", r"\[").replace("{", r"\{")):
        KeyRing.parse(doc)


def test_keys_add_stores_only_the_digest_in_a_private_file(tmp_path) -> None:
    path = tmp_path / "keys.json"
    first = add_key(path, tenant="acme", user="anna")
    second = add_key(path, tenant="acme", name="ops")
    text = path.read_text()
    assert first not in text and second not in text and digest(first) in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    ring = KeyRing.load(path)
    assert ring.resolve(first) == Key("acme/anna", "acme", "anna") and ring.resolve(second) == Key("ops", "acme", None)
    assert [e["name"] for e in json.loads(text)["keys"]] == ["acme/anna", "ops"]
    with pytest.raises(ConfigurationError, match="does not exist"):
        KeyRing.load(tmp_path / "missing.json")
