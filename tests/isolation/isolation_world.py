"""The isolation suite's world: five backends (the fifth a Redis Cluster), a deterministic embedder and chat model, the victim's
canary data in every feature, and a snapshot of it taken through an unbound handle.

Imported by ``conftest.py`` and the tests (a module, not a conftest, so the probes can import it).

Every canary string contains ``world.token`` (``CANARY-<uuid4 hex>``) and appears only in content,
never in an id: an attacker passes the victim's ids freely, and an error or result that echoes an
id must not count as a leak. A probe leaks when ``world.token`` appears anywhere in the text of
what it returned.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import math
import os
import re
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from layered_memory import LayeredMemory, LayeredMemorySettings
from layered_memory.config import TopicSettings
from layered_memory.runtime import Runtime

BACKENDS = ("embedded", "redis-qdrant", "sqlite-core", "redis-core", "cluster-qdrant", "postgres-qdrant")
CORE = ("sqlite-core", "redis-core")  # records only: no vector index
REDIS = ("redis-qdrant", "redis-core", "cluster-qdrant", "postgres-qdrant")  # postgres-qdrant: Redis beside it is the recent cache
POSTGRES = ("postgres-qdrant",)


def redis_fixture(backend: str) -> str:
    """The fixture that gives a Redis backend its URL (the cluster one is a three-master Redis Cluster)."""
    return "redis_cluster_url" if backend == "cluster-qdrant" else "redis_url"


def backend_marks(backend: str) -> list[Any]:
    import pytest

    return ([pytest.mark.redis] if backend in REDIS else []) + ([pytest.mark.postgres] if backend in POSTGRES else [])


VICTIM, MALLORY, EVIL = "victim", "mallory", "evil"
SESSIONS = ("telegram:1", "telegram:10", "web:7")  # telegram:1 is a key prefix of telegram:10 (bug 6); declared private
GROUP, FRIEND = "team:1", "friend"  # a group chat of the victim and a friend (declared members): mallory is no member
TASK_IDS = ("vtask-1", "vtask-2")  # task memory (tool results)
TASK = "vt-1"  # a task of the tasks skill
NS = ("memories", VICTIM)
NS_DEEP = ("memories", VICTIM, "prefs")
AGENTS = {"coder": "per_agent", "helper": "shared"}
MSG42 = "42"  # the victim's message 42 in telegram:1 (bug 5: mallory's chat has a 42 too)
#: what the attacker asks for: the words of the victim's secrets, never the token itself
QUERY = "card PIN vault code bank password"
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
CANARY_RE = re.compile(r"CANARY-[0-9a-f]{32}(?:-[A-Za-z0-9.:]+)?")
SECRETS = (
    "my card PIN is 4821, keep it secret",
    "the vault code for the bank is 7719",
    "bank password reset: the answer is Zurich",
    "card PIN again, and the vault code changed",
    "write down the bank password somewhere safe",
    "the vault in Zurich opens with the code",
)


class HashEmbedder:
    """Deterministic bag-of-words embedder (feature hashing, 64 dims): fast, no model files, and
    texts sharing words are close, so a dense search that ignores the scope finds the victim."""

    name = "isolation-hash-64"
    dim = 64

    def _vector(self, text: str) -> list[float]:
        v = [0.0] * self.dim
        v[-1] = 0.1  # never the zero vector
        for word in re.findall(r"\w+", text.casefold()):
            h = hashlib.blake2b(word.encode(), digest_size=4).digest()
            v[int.from_bytes(h[:2], "big") % (self.dim - 1)] += 1.0 if h[2] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in v))
        return [x / norm for x in v]

    def embed_documents(self, texts: Any) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("isolation_caller", default="attacker")


class RecordingReranker:
    """A rerank model that keeps the engine's order and records every text it is shown, with who asked
    (``CALLER``: the victim's own calls beside an attack set it): an attacker's search must never show it the
    victim's canary (a hosted rerank API is outside the process, so what it sees has left)."""

    name = "isolation-recorder"

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def rerank(self, query: str, documents: Any) -> list[float]:
        caller = CALLER.get()  # a context variable: it follows the call into the worker thread that runs the model
        self.seen.extend((caller, d) for d in documents)
        return [float(len(documents) - i) for i in range(len(documents))]

    def shown(self, caller: str) -> list[str]:
        return [d for who, d in self.seen if who == caller]


class ScriptedModel:  # handed to the engine as its bound ``complete`` (a str -> str callable)
    """A chat model that answers each tier's prompt deterministically and repeats the canaries it
    was shown, so topic titles, summaries, entities and profiles carry the victim's token."""

    name = "isolation-scripted"

    def complete(self, prompt: str, *, system: str | None = None, operation: str | None = None) -> str:
        found = " ".join(sorted(set(CANARY_RE.findall(prompt))))
        head = prompt.lstrip()
        if head.startswith("Write a short title"):
            return f"Vault notes {found}"[:110] if found else "Small talk"
        if head.startswith("Extract the important entities"):
            if not found:
                return json.dumps({"entities": []})
            return json.dumps({"entities": [
                {"entity_name": "Vault Zurich", "entity_type": "LOCATION", "description": f"vault card PIN bank {found}"},
                {"entity_name": "Victoria Bank", "entity_type": "ORGANIZATION", "description": f"bank password {found}"},
            ]})
        if head.startswith("Extract the relations"):
            return json.dumps({"relations": [{
                "source_entity": "Vault Zurich", "target_entity": "Victoria Bank", "relation_type": "owned_by",
                "description": f"vault of the bank {found}",
            }]})
        if head.startswith("Build a profile"):
            return json.dumps({
                "profile_text": f"Keeps a vault and a card PIN {found}",
                "preferences": [{"key": "vault", "value": f"code {found}"}], "traits": [],
            })
        if head.startswith(("Summarize", "Merge", "You maintain")):
            return f"Summary of card PIN and vault talk {found}".strip()
        return "1"  # a topic decision: join the best candidate


def settings() -> LayeredMemorySettings:
    s = LayeredMemorySettings(topics=TopicSettings(summary_every_messages=4))
    s.memory.short_term_window = 2
    s.memory.summary_threshold_messages = 4
    s.topics.idle_timeout_seconds = 10 * 365 * 86400.0  # the probes' close_idle must not depend on the clock
    return s


@dataclass
class World:
    """One backend with the victim's canary data; ``mem`` is the unbound default-tenant handle."""

    backend: str
    mem: LayeredMemory
    token: str
    message_ids: dict[str, list[str]] = field(default_factory=dict)  # session -> victim message ids
    topic_ids: list[str] = field(default_factory=list)
    baseline: dict[str, Any] = field(default_factory=dict)
    closers: list[Callable[[], None]] = field(default_factory=list)
    reranker: RecordingReranker = field(default_factory=RecordingReranker)

    @property
    def core(self) -> bool:
        return self.backend in CORE

    @property
    def victim(self) -> LayeredMemory:
        return self.mem.for_user(VICTIM)

    def canary(self, where: str) -> str:
        return f"{self.token}-{where}"

    def leaked(self, value: Any) -> bool:
        return self.token.casefold() in text_of(value).casefold()

    def close(self) -> None:
        self.mem.close()
        for closer in self.closers:
            try:
                closer()
            except Exception as exc:  # session teardown may stop the throwaway server first: nothing to drop
                if not _server_gone(exc):
                    raise


def _server_gone(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}".lower()
    return "connection refused" in text or "error 111" in text or "cannot be connected" in text


def text_of(value: Any) -> str:
    """Everything a caller could read from a result, as one string."""
    parts: list[str] = []
    _collect(value, parts, 0)
    return "\n".join(parts)


def _collect(value: Any, out: list[str], depth: int) -> None:
    if depth > 12:
        out.append(repr(value))
        return
    if value is None or isinstance(value, (str, int, float, bool, bytes)):
        out.append(str(value))
    elif isinstance(value, Runtime):
        out.append("<runtime>")  # the engine's shared state every handle holds (caches included): not a result
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(str(k))
            _collect(v, out, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            _collect(v, out, depth + 1)
    elif hasattr(value, "model_dump"):
        try:
            _collect(value.model_dump(), out, depth + 1)
        except Exception:
            out.append(repr(value))
        out.append(repr(value))
    elif hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        out.append(repr(value))
        try:
            _collect(dict(vars(value)), out, depth + 1)
        except TypeError:
            pass
    else:
        out.append(repr(value))


# -- building -----------------------------------------------------------------------------------------
def build(
    backend: str, path: str, redis_url: str | None, prefix: str, postgres_url: str | None = None, reranker: Any = None,
) -> tuple[LayeredMemory, list[Callable[[], None]]]:
    """An engine on ``backend``; returns it and the cleanups to run after ``close()``.
    ``postgres-qdrant`` is seed 001's layout: records in PostgreSQL (schema ``prefix``), Redis beside it
    as the shared recent-message cache, vectors in Qdrant."""
    from layered_memory.stores.qdrant_server import QdrantVectorIndex
    from layered_memory.stores.redis import RedisRecordStore
    from layered_memory.stores.sqlite import SQLiteRecordStore

    kwargs: dict[str, Any] = {"embedder": HashEmbedder(), "chat_model": ScriptedModel().complete, "settings": settings(),
                              "rerank_model": reranker}
    closers: list[Callable[[], None]] = []
    if backend == "embedded":
        return LayeredMemory.embedded(path, **kwargs), closers
    records: Any
    if backend in POSTGRES:
        from layered_memory.stores.postgres import PostgresRecordStore

        assert redis_url is not None and postgres_url is not None
        records = PostgresRecordStore(postgres_url, schema=prefix, cache_url=redis_url, cache_prefix=prefix)
        closers += [lambda: drop_redis_prefix(redis_url, prefix), lambda: drop_postgres_schema(postgres_url, prefix)]
    elif backend in REDIS:
        assert redis_url is not None
        records = RedisRecordStore.from_url(redis_url, prefix=prefix)
        closers.append(lambda: drop_redis_prefix(redis_url, prefix))
    else:
        records = SQLiteRecordStore(f"{path}/records.sqlite3")
    index = QdrantVectorIndex.in_memory() if backend in ("redis-qdrant", "cluster-qdrant", "postgres-qdrant") else None
    return LayeredMemory.from_stores(records, index, **kwargs), closers


def drop_redis_prefix(redis_url: str, prefix: str) -> None:
    import redis

    cluster = redis_url.startswith("redis+cluster://")
    client = redis.RedisCluster.from_url(redis_url.replace("+cluster", "")) if cluster else redis.Redis.from_url(redis_url)
    try:
        for pattern in (f"{{{prefix}:*", f"{prefix}:*"):
            keys = list(client.scan_iter(match=pattern, count=1000))
            for start in range(0, len(keys), 500):
                if cluster:  # keys of several slots: one DEL each
                    for key in keys[start: start + 500]:
                        client.delete(key)
                else:
                    client.delete(*keys[start: start + 500])
    finally:
        client.close()


def drop_postgres_schema(postgres_url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def new_world(backend: str, path: str, redis_url: str | None, postgres_url: str | None = None) -> World:
    prefix = f"iso{uuid.uuid4().hex[:10]}"
    reranker = RecordingReranker()
    mem, closers = build(backend, path, redis_url, prefix, postgres_url, reranker=reranker)
    world = World(backend, mem, f"CANARY-{uuid.uuid4().hex}", closers=closers, reranker=reranker)
    closers.append(lambda: __import__("shutil").rmtree(repo_dir(world), ignore_errors=True))
    seed(world)
    world.baseline = snapshot(world)
    return world


# -- the victim's data ----------------------------------------------------------------------------------
def message_rows(world: World, session: str, n: int = 6) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        rows.append({
            "message_id": f"v.{session}.{i}", "chat_id": session, "user_id": VICTIM, "user_name": "Victoria",
            "role": "user" if i % 2 == 0 else "assistant", "create_time": T0 + timedelta(minutes=10 * SESSIONS.index(session) + i),
            "content": f"{SECRETS[i % len(SECRETS)]} {world.canary(f'msg.{session}.{i}')}",
        })
    return rows


def seed(world: World) -> None:
    """Write the victim's canaries into every feature (idempotent: run again after a damaging probe)."""
    mem, v = world.mem, world.victim
    for s in SESSIONS:  # a private assistant's chats: another human's message into them is refused
        mem.chats.declare(s, "private")
        rows = message_rows(world, s)
        v.add_messages(rows)
        world.message_ids[s] = [r["message_id"] for r in rows]
    seed_group(world)
    v.add_message(message_id=MSG42, chat_id="telegram:1", user_id=VICTIM, content=f"message 42: card PIN {world.canary('msg42')}",
                  create_time=T0 + timedelta(minutes=7))
    v.set_user_data(VICTIM, {"name": "Victoria", "vault": f"vault code {world.canary('userdata')}"})
    if not v.get_task_memory(TASK_IDS[0]):
        for t in TASK_IDS:
            v.add_tool_result(t, f"bank API returned the card PIN {world.canary('toolresult.' + t)}", user_id=VICTIM, tool_name="bank")
    v.create_task(VICTIM, f"Change the vault code {world.canary('task')}", f"bank password {world.canary('taskdesc')}", task_id=TASK)
    v.items.put(NS, "pin", {"text": f"card PIN 4821 {world.canary('item.pin')}", "kind": "secret"})
    v.items.put(NS_DEEP, "vault", {"text": f"vault code 7719 {world.canary('item.vault')}", "kind": "secret"})
    # attackers' own data (harmless words, no token): their searches then have something to return
    mallory = mem.for_user(MALLORY)
    mallory.add_messages([{"message_id": f"m.{i}", "chat_id": "telegram:2", "user_id": MALLORY, "content": text,
                           "create_time": T0 + timedelta(hours=1, minutes=i)}
                          for i, text in enumerate(["what is a card PIN anyway", "my bank password is hunter2", "vault code?"])])
    mem.tenant(EVIL).for_user(VICTIM).add_messages([{"message_id": "e.1", "chat_id": "telegram:1", "user_id": VICTIM,
                                                     "content": "evil tenant: card PIN vault code bank password", "create_time": T0}])
    mallory.items.put(("memories", MALLORY), "note", {"text": "card PIN of my own", "kind": "secret"})
    mem.process()
    for s in SESSIONS:
        v.refresh_summary(VICTIM, s, force=True)
    world.topic_ids = sorted({t.topic_id for s in SESSIONS for t in mem.topics.list(s) if VICTIM in _topic_users(mem, t.topic_id)})
    for tid in world.topic_ids:
        mem.topics.summarize(tid)
    mem.process()  # knowledge jobs queued by the summaries
    seed_documents(world)
    if not world.core:
        for name, mode in AGENTS.items():
            agent = mem.agents.create(VICTIM, name, collection_mode=mode)
            agent.add_interaction(f"deployed with the bank password {world.canary('agent.' + name)}", task_id=TASK_IDS[0],
                                  interaction_id=f"vi-{name}", timestamp=T0)  # fixed: a re-seed is idempotent
            mem.agents.create(MALLORY, name, collection_mode=mode)  # the attacker's own agents (empty)


DOC_NAME = "vault.md"
REPO_NAME = "vault-repo"


def repo_dir(world: World) -> str:
    """The victim's git tree (outside the stores; the same directory on every re-seed)."""
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"iso-repo-{hashlib.sha1(world.token.encode()).hexdigest()[:16]}")  # no token in the path


def seed_group(world: World) -> None:
    """The group chat: the victim's and the friend's canaries, both members declared by the platform."""
    mem = world.mem
    mem.chats.declare(GROUP, "group", members=[VICTIM, FRIEND])
    rows = [{"message_id": f"g.{i}", "chat_id": GROUP, "user_id": VICTIM if i % 2 == 0 else FRIEND,
             "user_name": "Victoria" if i % 2 == 0 else "Fred", "role": "user",
             "create_time": T0 + timedelta(hours=2, minutes=i),
             "content": f"{SECRETS[(i + 2) % len(SECRETS)]} {world.canary(f'group.{i}')}"} for i in range(4)]
    mem.add_messages(rows)
    world.message_ids[GROUP] = [r["message_id"] for r in rows]


def seed_documents(world: World) -> None:
    """The victim's private upload and private repository, plus a tenant-wide document (no token)."""
    v = world.victim
    v.documents.index_document(f"# Vault\n\nThe card PIN and bank password: {world.canary('doc')}\n", name=DOC_NAME)
    world.mem.documents.index_document("# Office\n\nThe vault code of the office safe is with facilities.\n", name="office.md")
    seed_vector_stores(world)
    root = repo_dir(world)
    if not os.path.isdir(os.path.join(root, ".git")):
        os.makedirs(root, exist_ok=True)
        with open(os.path.join(root, "vault.py"), "w", encoding="utf-8") as f:
            f.write(f'def open_vault():\n    """card PIN vault code bank password"""\n    return "{world.canary("repo")}"\n')
        for args in (["init", "-q"], ["add", "-A"]):
            subprocess.run(["git", "-C", root, *args], check=True, capture_output=True)
    v.documents.index_repo(root, name=REPO_NAME)


def seed_vector_stores(world: World) -> None:
    """The victim's private texts in both framework vector stores (their default collections)."""
    from langchain_layered_memory import LayeredMemoryVectorStore as LangChainStore
    from llama_index.core.schema import TextNode
    from llamaindex_layered_memory import LayeredMemoryVectorStore as LlamaIndexStore

    LangChainStore(world.victim).add_texts([f"card PIN vault code bank password {world.canary('lc-store')}"], ids=["v-lc-1"])
    LlamaIndexStore(world.victim).add([TextNode(id_="v-li-1", text=f"card PIN vault code bank password {world.canary('li-store')}")])


def _topic_users(mem: LayeredMemory, topic_id: str) -> list[str]:
    return list(mem.topics.store.get([topic_id])[0].get("user_ids") or [])


def snapshot(world: World) -> dict[str, Any]:
    """The victim's data as the owner (an unbound handle) sees it; compared after every write probe."""
    mem = world.mem
    snap: dict[str, Any] = {}
    for s in (*SESSIONS, GROUP):
        snap[f"messages {s}"] = [(m.message_id, m.content) for m in mem.get_session_messages(VICTIM, s)]
        snap[f"summary {s}"] = mem.get_summary(VICTIM, s)
    snap["chats"] = [mem.chats.get(c) for c in (*SESSIONS, GROUP)]
    snap["message 42"] = [(m.chat_id, m.user_id, m.content) if m else None for m in mem.get_messages([MSG42], chat_id="telegram:1")]
    snap["sessions"] = mem.list_sessions(VICTIM)
    snap["user data"] = mem.get_user_data(VICTIM)
    for t in TASK_IDS:
        snap[f"task memory {t}"] = [(r["content"], r.get("user_id")) for r in mem.get_task_memory(t)]
    snap["tasks"] = [(t.task_id, t.title, t.description, t.status) for t in mem.list_tasks(VICTIM)]
    snap["items"] = sorted((i.namespace, i.key, json.dumps(i.value, sort_keys=True)) for i in mem.items.search(NS, limit=1000))
    kept = [tid for tid, d in zip(world.topic_ids, mem.topics.store.get(world.topic_ids)) if d is not None]  # a delete may remove one
    snap["topics"] = [(t.topic_id, t.title) for t in (mem.topics.get(tid) for tid in kept)] + [(t, None) for t in world.topic_ids if t not in kept]
    snap["topic summaries"] = [(s.content if (s := mem.topics.summary(tid)) else None) for tid in kept]
    prof = mem.knowledge.store.profile(VICTIM)
    snap["profile"] = prof.get("profile_text") if prof else None
    entities = [e for e in mem.knowledge.store.all_entities() if VICTIM in (e.get("user_ids") or [])]
    snap["entities"] = sorted(e["entity_name"] for e in entities)
    # what an edit or a delete marks: nothing of the victim's may go stale through another handle
    snap["stale marks"] = (
        [(q or {}).get("stale") for q in (mem.get_summary_quality(VICTIM, s) for s in SESSIONS)],
        [(d or {}).get("summary_stale") for d in mem.topics.store.get(world.topic_ids)],
        sorted(json.dumps(e.get("stale"), sort_keys=True) for e in entities), (prof or {}).get("stale"),
    )
    docs = world.victim.documents
    snap["documents"] = sorted((d["source"], d["version"], d["chunks"]) for d in docs.list_documents())
    snap["repos"] = sorted((r["repo"], r["files"]) for r in docs.list_repos())
    snap["repo chunks"] = sorted(h.text for h in docs.search_repos("open vault", repo=REPO_NAME, k=50).hits)
    if not world.core:
        for name in AGENTS:
            agent = mem.agents.get(VICTIM, name)
            snap[f"agent {name}"] = [(i.interaction_id, i.text) for i in agent.list_interactions()]
            snap[f"agent {name} count"] = agent.count()
    return snap


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return [f"{k}: {before.get(k)!r} -> {after.get(k)!r}" for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)]
