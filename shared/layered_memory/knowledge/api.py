"""``mem.knowledge``: the long-term tier (seed 001, 4): entities, relations, user profiles, graph queries.

Extraction needs a chat model and runs off the write path: each topic summary (any trigger) queues
an extraction job for the topic's messages not yet extracted; ``mem.process()`` (or the topic
worker) runs the jobs, or call ``mem.knowledge.extract(topic_id)`` to run one now.

    mem.knowledge.search_entities("Alice")            # name / description / vector match
    mem.knowledge.get_profile("u1")                   # cached for profile_cache_ttl_seconds
    mem.knowledge.query_graph("Alice", max_depth=2, relation_types=["works_at"])
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from .._async import async_twins
from ..errors import InvalidInputError, NotFoundError
from ..models import Message, check_id, iso, utcnow
from ..index.collection import Entry, IndexedCollection
from ..filterspec import Eq, FilterSpec
from ..index.points import point_id
from ..topics.store import TopicStore
from .extract import ENTITY_TYPES, build_profile, extract_entities, extract_relations
from .graph import ENTITIES, RELATIONS, KnowledgeStore, entity_id
from .stale import KG_STATE, REEXTRACT, reextract_batch

if TYPE_CHECKING:
    from ..index import Scope
    from ..kernel import Kernel
    from ..topics.api import TopicRuntime

logger = logging.getLogger(__name__)

__all__ = ["Knowledge", "KnowledgeRuntime"]

KG_JOBS = "kg_jobs"
KNOWLEDGE_OPS = ("extract_entities", "extract_relations", "build_profile")
MAX_EXTRACT_MESSAGES = 100
ENTITY_KIND = "entity"


class KnowledgeRuntime:
    """Per-engine state of the long-term tier; fed by the topic tier's summaries (``on_summary``)."""

    def __init__(self, core: Kernel, topics: TopicRuntime) -> None:
        self.core = core
        self.topics = topics  # the TopicRuntime: shares its model caller
        self.lock = threading.RLock()
        self.profile_cache: dict[tuple[str, str], tuple[float, dict[str, Any] | None]] = {}
        self.entities_checked: set[str] = set()

    def forget_profile(self, tenant: str, user_id: str) -> None:
        """Drop the cached profile of a user (a fact it was built from changed)."""
        self.profile_cache.pop((tenant, user_id), None)

    def on_summary(self, tenant: str, doc: dict[str, Any]) -> None:
        """Queue an extraction job for the summarized topic (only with a chat model)."""
        if self.core.chat_model is not None:
            self.core.records.put_docs(tenant, KG_JOBS, {doc["topic_id"]: {"summary_id": doc["summary_id"]}})

    def process(self, tenant: str) -> dict[str, int]:
        """Run the tenant's queued extraction jobs."""
        done = {"knowledge_jobs": 0}
        if self.core.chat_model is None:
            return done
        with self.lock:
            self._reextract(tenant)
            while True:
                jobs = self.core.records.list_docs(tenant, KG_JOBS, limit=50)
                if not jobs:
                    return done
                for topic_id, _ in jobs:
                    try:
                        self.extract_topic(tenant, topic_id)
                    except Exception as exc:  # the model failed: the messages stay unextracted for the next run
                        logger.warning("knowledge extraction of topic %s failed (%s: %s)", topic_id, type(exc).__name__, exc)
                    self.core.records.delete_docs(tenant, KG_JOBS, [topic_id])
                    done["knowledge_jobs"] += 1

    def _reextract(self, tenant: str) -> None:
        """Extract edited messages again (``knowledge.stale``): their new text confirms or adds facts."""
        while True:
            keys, by_chat = reextract_batch(self.core.records, tenant)
            if not keys:
                return
            for msgs in by_chat.values():
                try:
                    self.extract_messages(tenant, msgs)
                except Exception as exc:  # the model failed: the facts stay marked stale
                    logger.warning("knowledge re-extraction failed (%s: %s)", type(exc).__name__, exc)
            self.core.records.delete_docs(tenant, REEXTRACT, keys)

    # -- the entity index: points of kind "entity" in the engine's collection -------------------------
    def collection(self) -> IndexedCollection:
        core = self.core
        return IndexedCollection(
            core.index, core.indexer.collection, core.embedder, core.analyzer, core.indexer.encoder, core.settings.retrieval,
            ensured=True,  # the indexer created the message collection
        )

    def index_entities(self, tenant: str, docs: Sequence[dict[str, Any]]) -> None:
        """One point per entity: BM25 over the name (twice) and description, the dense vector of
        "name: description" (the one stored with the entity when there is one)."""
        if self.core.index is None or not docs:
            return
        analyzer = self.core.analyzer
        entries = [
            Entry(
                point_id(tenant, ENTITY_KIND, d["entity_id"]),
                {"tenant": tenant, "kind": ENTITY_KIND, "entity_id": d["entity_id"], "entity_name": d["entity_name"],
                 "entity_type": d["entity_type"], "user_ids": list(d.get("user_ids") or []),
                 "chat_ids": list(d.get("chat_ids") or []), "text": d.get("description", ""), "timestamp": d.get("update_time")},
                f"{d['entity_name']}: {d.get('description', '')}",
                terms=analyzer.terms(f"{d['entity_name']} {d['entity_name']} {d.get('description', '')}"),
                dense=d.get("vector"),
            )
            for d in docs
        ]
        self.collection().upsert(entries, on_embed_error="bm25")

    def reindex_entities(self, tenant: str) -> int:
        """Rebuild the entity points of a tenant from the RecordStore. Returns how many."""
        docs = KnowledgeStore(self.core.records, tenant).all_entities()
        for i in range(0, len(docs), 256):
            self.index_entities(tenant, docs[i: i + 256])
        return len(docs)

    def ensure_entities_indexed(self, tenant: str) -> None:
        """Once per process and tenant: index the entities a store holds but the index lacks (stores
        written before entities were points, or an index rebuilt without them)."""
        if self.core.index is None or tenant in self.entities_checked:
            return
        self.entities_checked.add(tenant)
        stored = self.core.records.count_docs(tenant, ENTITIES)
        if not stored:
            return
        spec = FilterSpec.of(Eq("tenant", tenant), Eq("kind", ENTITY_KIND))
        if self.core.index.count(self.core.indexer.collection, filter=spec.to_qdrant()) < stored:
            logger.info("indexing %d entities of tenant %s", self.reindex_entities(tenant), tenant)

    def extract_topic(self, tenant: str, topic_id: str) -> dict[str, int]:
        records = self.core.records
        state = records.get_docs(tenant, KG_STATE, [topic_id])[0] or {"extracted_seq": 0}
        topics = TopicStore(records, tenant)
        topic = topics.get([topic_id])[0]
        if topic is None:
            return {"entities": 0, "relations": 0, "superseded": 0, "profiles": 0}
        rows = topics.members(topic_id, after_seq=state["extracted_seq"])[-MAX_EXTRACT_MESSAGES:]
        msgs = [m for m in records.get_messages(tenant, topics.member_refs(topic, rows)) if m is not None]
        if not msgs:
            return {"entities": 0, "relations": 0, "superseded": 0, "profiles": 0}
        stats = self.extract_messages(tenant, msgs)
        records.put_docs(tenant, KG_STATE, {topic_id: {"extracted_seq": max(r["seq"] for r in rows)}})
        return stats

    def extract_messages(self, tenant: str, msgs: Sequence[Message]) -> dict[str, int]:
        """Entities, relations and the authors' profiles from one batch of messages (one chat)."""
        caller = self.topics.caller()
        store = KnowledgeStore(self.core.records, tenant)
        now = iso(utcnow())
        authors = {m.message_id: m.user_id for m in msgs}
        chat_id = msgs[0].chat_id
        entities = extract_entities(msgs, caller)
        vectors = None
        if entities and self.core.embedder is not None:
            try:
                vectors = self.core.embedder.embed_documents([f"{e['entity_name']}: {e['description']}" for e in entities])
            except Exception as exc:
                logger.warning("embedding entities failed (%s)", type(exc).__name__)
        stored = store.upsert_entities(entities, now=now, chat_id=chat_id, authors=authors, vectors=vectors)
        self.index_entities(tenant, stored)
        relations = extract_relations(msgs, entities, caller)
        written, superseded = store.upsert_relations(relations, now=now, chat_id=chat_id, authors=authors)
        profiles = 0
        by_user: dict[str, list[Message]] = {}
        for m in msgs:
            if m.role == "user":
                by_user.setdefault(m.user_id, []).append(m)
        for user_id, own in by_user.items():
            previous = store.profile(user_id)
            new = build_profile(own[-1].user_name or user_id, own, previous["profile_text"] if previous else "", caller)
            if new is not None:
                store.update_profile(user_id, own[-1].user_name, new, now=now, sources=[m.message_id for m in own], chat_id=chat_id)
                self.profile_cache.pop((tenant, user_id), None)
                profiles += 1
        logger.info("knowledge: %d entities, %d relations (%d superseded), %d profiles", len(entities), written, superseded, profiles)
        return {"entities": len(entities), "relations": written, "superseded": superseded, "profiles": profiles}


@async_twins
class Knowledge:
    """The long-term tier of one engine handle (tenant, optionally bound to a user)."""

    _ASYNC = ("process", "extract", "search_entities", "get_profile", "query_graph", "relations", "list_facts", "delete_fact")

    def __init__(self, core: Kernel, scope: Scope) -> None:
        self.core = core
        self.scope = scope
        self.tenant = scope.tenant
        self.rt = cast("KnowledgeRuntime", core.knowledge)  # the runtime builds this tier's own
        self.store = KnowledgeStore(core.records, scope.tenant)

    def _visible(self, doc: dict[str, Any] | None) -> bool:
        bound = self.scope.bound_user
        return doc is not None and (not bound or bound in (doc.get("user_ids") or []))

    @property
    def usage(self) -> dict[str, dict[str, Any]]:
        """Token usage of the extraction calls, per operation plus ``"total"``."""
        return self.rt.topics.caller().usage(KNOWLEDGE_OPS)

    def process(self) -> dict[str, int]:
        return self.rt.process(self.tenant)

    def extract(self, topic_id: str) -> dict[str, int]:
        """Extract entities, relations and profiles from the topic's messages not yet extracted, now."""
        check_id("topic_id", topic_id)
        if self.core.chat_model is None:
            raise InvalidInputError("chat_model", None, "knowledge extraction needs a chat model",
                                    "pass chat_model= to LayeredMemory.embedded(...) / from_stores(...)")
        if TopicStore(self.core.records, self.tenant).get([topic_id])[0] is None:
            raise NotFoundError(f"topic_id={topic_id!r} does not exist; list topics with mem.topics.list(chat_id)")
        with self.rt.lock:
            return self.rt.extract_topic(self.tenant, topic_id)

    def search_entities(self, query: str, *, entity_types: Sequence[str] | None = None, k: int = 10,
                        vector: Sequence[float] | None = None) -> list[dict[str, Any]]:
        """Entities by name / description (BM25) and by vector when an embedder is set, fused (RRF)."""
        if entity_types:
            bad = [t for t in entity_types if t not in ENTITY_TYPES]
            if bad:
                raise InvalidInputError("entity_types", bad[0], f"must be one of {', '.join(ENTITY_TYPES)}", "fix the type")
        if not isinstance(query, str) or not query.strip():
            return []
        spec = FilterSpec.of(Eq("tenant", self.tenant), Eq("kind", ENTITY_KIND))
        if self.scope.bound_user is not None:  # the scope rule: entities the bound user's messages mention
            spec = spec.and_(Eq("user_ids", self.scope.bound_user))
        if entity_types:
            spec = spec.and_(Eq("entity_type", list(entity_types)))
        coll = self.rt.collection()
        if self.core.index is not None:
            self.rt.ensure_entities_indexed(self.tenant)
            found = coll.query(query, spec, k=k, vector=vector)
        else:  # the core mode: BM25 in process over the stored entities, the same spec as a predicate
            records = [
                (d["entity_id"], {"tenant": self.tenant, "kind": ENTITY_KIND, **d},
                 f"{d['entity_name']} {d['entity_name']} {d.get('description', '')}")
                for d in self.store.all_entities()
            ]
            found = coll.query_records(query, spec, records, k=k)
        ids = [h.payload["entity_id"] for h in found.hits]
        by_id = {d["entity_id"]: d for d in self.store.entities(ids) if d is not None and self._visible(d)}
        fused = [(h.payload["entity_id"], h.score) for h in found.hits if h.payload["entity_id"] in by_id]
        return [{
            "entity_id": i, "entity_name": by_id[i]["entity_name"], "entity_type": by_id[i]["entity_type"],
            "description": by_id[i].get("description", ""), "sources": by_id[i].get("sources", []),
            **({"source_refs": by_id[i]["source_refs"]} if by_id[i].get("source_refs") else {}),
            "relevance": round(s, 6),
            "metadata": {"mentions": by_id[i].get("mentions"), "chat_ids": by_id[i].get("chat_ids"), "history": by_id[i].get("history", []),
                         "stale": by_id[i].get("stale", [])},
        } for i, s in fused]

    def get_profile(self, user_id: str | None = None) -> dict[str, Any] | None:
        """The user's profile (profile_text, current and superseded preferences, traits), cached."""
        uid = self.scope.user(user_id)
        key = (self.tenant, uid)
        hit = self.rt.profile_cache.get(key)
        if hit is not None and hit[0] > time.monotonic():
            return hit[1]
        doc = self.store.profile(uid)
        ttl = self.core.settings.topics.profile_cache_ttl_seconds
        if ttl > 0:
            self.rt.profile_cache[key] = (time.monotonic() + ttl, doc)
        return doc

    def query_graph(self, entity_name: str, *, max_depth: int = 2, relation_types: Sequence[str] | None = None,
                    direction: str = "out", include_superseded: bool = False) -> dict[str, list[dict[str, Any]]]:
        """Nodes and edges reachable from the entity within ``max_depth`` hops (seed 4.2.3).

        ``direction``: "out" (the seed's), "in" or "both". Superseded relations are left out unless asked for.
        """
        if direction not in ("out", "in", "both"):
            raise InvalidInputError("direction", direction, "must be out, in or both", 'use direction="out"')
        if not isinstance(max_depth, int) or not 0 <= max_depth <= 10:
            raise InvalidInputError("max_depth", max_depth, "must be an integer from 0 to 10", "pass e.g. max_depth=2")
        return self.store.walk(entity_id(entity_name), max_depth=max_depth, relation_types=relation_types, direction=direction,
                               include_superseded=include_superseded, visible=self._visible)

    def relations(self, entity_name: str, *, include_superseded: bool = True) -> list[dict[str, Any]]:
        """Every relation touching the entity, current and (by default) superseded, newest first."""
        eid = entity_id(entity_name)
        rels = [r for r in self.store.relations(self.store.edges(eid, "both")) if self._visible(r)]
        rels = [r for r in rels if include_superseded or r.get("status") != "superseded"]  # type: ignore[union-attr]
        return sorted(rels, key=lambda r: r["update_time"], reverse=True)  # type: ignore[index]

    # -- listing and deleting facts (the memory viewer's "what does the bot know") ------------------------
    def list_facts(self, *, limit: int = 1000) -> dict[str, list[dict[str, Any]]]:
        """The entities and relations this handle may see, newest first, each with its provenance
        (``sources``: message ids, ``chat_ids``, ``user_ids``): ``{"entities": [...], "relations": [...]}``.
        Vectors are left out."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100_000:
            raise InvalidInputError("limit", limit, "must be an integer from 1 to 100000", "pass e.g. limit=1000")
        entities = [{k: v for k, v in d.items() if k != "vector"} for d in self.store.all_entities() if self._visible(d)]
        entities.sort(key=lambda d: d.get("update_time") or "", reverse=True)
        entities = entities[:limit]
        rel_ids = list(dict.fromkeys(r for e in entities for r in self.store.edges(e["entity_id"], "out")))
        relations = [r for r in self.store.relations(rel_ids) if self._visible(r)]
        relations.sort(key=lambda r: r.get("update_time") or "", reverse=True)  # type: ignore[union-attr]
        return {"entities": entities, "relations": relations[:limit]}  # type: ignore[dict-item]

    def delete_fact(self, fact_id: str) -> dict[str, Any]:
        """Delete an entity (``e-...``: with every relation touching it) or a relation (``r-...``).

        A handle bound to a user forgets a fact shared with other users only for itself: the user leaves
        the fact's ``user_ids`` (the others keep it); a fact only that user's messages produced is deleted.
        The entity's search point goes with it, so ``search_entities`` and the context no longer find it.

        Returns:
            ``{"fact_id", "kind": "entity" | "relation", "deleted": bool, "relations_deleted": int}``
            (``deleted=False``: forgotten for the bound user only).

        Raises:
            InvalidInputError: ``fact_id`` is not an entity or relation id.
            NotFoundError: no such fact visible to this handle.
        """
        check_id("fact_id", fact_id)
        kind = "entity" if fact_id.startswith("e-") else "relation" if fact_id.startswith("r-") else None
        if kind is None:
            raise InvalidInputError("fact_id", fact_id, "is not a fact id (entities start with e-, relations with r-)",
                                    "take the id from mem.knowledge.list_facts()")
        with self.rt.lock:
            doc = (self.store.entities if kind == "entity" else self.store.relations)([fact_id])[0]
            if not self._visible(doc):
                raise NotFoundError(f"fact_id={fact_id!r} does not exist in tenant {self.tenant!r}; list facts with mem.knowledge.list_facts()")
            assert doc is not None
            bound = self.scope.bound_user
            out = {"fact_id": fact_id, "kind": kind, "deleted": True, "relations_deleted": 0}
            if bound is not None and set(doc.get("user_ids") or []) - {bound}:  # shared: forgotten for this user only
                doc["user_ids"] = [u for u in doc["user_ids"] if u != bound]
                coll = ENTITIES if kind == "entity" else RELATIONS
                self.core.records.put_docs(self.tenant, coll, {fact_id: doc})
                if kind == "entity":
                    self.rt.index_entities(self.tenant, [doc])
                out["deleted"] = False
            elif kind == "entity":
                out["relations_deleted"] = self.store.delete_entity(fact_id)
                self.rt.collection().delete(ids=[point_id(self.tenant, ENTITY_KIND, fact_id)])
            else:
                out["relations_deleted"] = self.store.delete_relations([doc])
        logger.info("knowledge: fact %s %s", fact_id, "deleted" if out["deleted"] else "forgotten for the bound user")
        return out
