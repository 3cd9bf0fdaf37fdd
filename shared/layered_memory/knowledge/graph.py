"""The knowledge graph and user profiles in the RecordStore, with provenance and superseded facts.

Collections (per tenant): ``kg_entities`` (``<entity_id>``), ``kg_relations`` (``<relation_id>``),
``kg_out`` / ``kg_in`` (``<entity_id>|<relation_id>``: adjacency for graph walks), ``kg_profiles``
(``<user_id>``). An entity is identified by its casefolded name; a relation by (source, type, target).

Updates are incremental (seed 4.3.1) and keep history instead of deleting:

* every fact carries ``sources`` (message ids), ``chat_ids`` and ``user_ids`` (authors of those
  messages; a handle bound to a user sees only facts with that user among them), and ``source_refs``:
  the same messages as ``[chat_id, message_id]`` pairs, since ids repeat across chats (Telegram numbers
  each chat's messages from 1), so a fact read in two chats names each of its messages exactly. A fact
  written before ``source_refs`` has only ``sources``, which the staleness rules then read as before;
* a changed entity description moves the old one to ``history``;
* an ``exclusive`` relation (lives_in, works_at) marks the source's older relations of the same type
  to other targets ``status="superseded"`` with ``superseded_by`` and ``valid_until``;
* a preference with a new value for the same key supersedes the old value the same way.
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Sequence
from typing import Any

from ..stores.base import RecordStore

ENTITIES = "kg_entities"
RELATIONS = "kg_relations"
OUT = "kg_out"
IN = "kg_in"
PROFILES = "kg_profiles"
MAX_SOURCES = 50
_ALL = 10**9


def entity_id(name: str) -> str:
    return "e-" + hashlib.sha1(" ".join(name.casefold().split()).encode()).hexdigest()[:16]


def relation_id(source_id: str, rtype: str, target_id: str) -> str:
    return "r-" + hashlib.sha1(f"{source_id}|{rtype}|{target_id}".encode()).hexdigest()[:16]


def _merge_list(old: Sequence[str], new: Sequence[str], cap: int = MAX_SOURCES) -> list[str]:
    return list(dict.fromkeys([*old, *new]))[-cap:]


def merge_refs(old: Sequence[Sequence[str]], chat_id: str, message_ids: Sequence[str], cap: int = MAX_SOURCES) -> list[list[str]]:
    """``source_refs`` with the messages ``message_ids`` of ``chat_id`` added (newest last, at most ``cap``)."""
    pairs = dict.fromkeys([*(tuple(r) for r in old), *((chat_id, m) for m in message_ids)])
    return [list(p) for p in pairs][-cap:]


def add_refs(doc: dict[str, Any], chat_id: str | None, message_ids: Sequence[str], cap: int = MAX_SOURCES) -> None:
    """Name ``message_ids`` of ``chat_id`` in the fact's ``source_refs`` (call before merging them into
    ``sources``). A fact written before ``source_refs`` keeps none: pairs for its newest sources only
    would read its older ones as gone."""
    if chat_id is None or (doc.get("sources") and "source_refs" not in doc):
        return
    doc["source_refs"] = merge_refs(doc.get("source_refs") or [], chat_id, message_ids, cap)


def unsupported(doc: dict[str, Any]) -> bool:
    """Whether only stale messages support the fact: every source was edited or deleted since (``stale.py``).
    Read by ``source_refs`` (chat and id) when the fact has them, else by message id alone."""
    stale = doc.get("stale") or []
    if not stale:
        return False
    refs = doc.get("source_refs")
    if refs:
        return {tuple(r) for r in refs} <= {(w.get("chat_id"), w.get("message_id")) for w in stale}
    return set(doc.get("sources") or []) <= {w.get("message_id") for w in stale}


def confirm(doc: dict[str, Any], message_ids: Sequence[str], chat_id: str | None = None) -> None:
    """A new extraction read these messages (of ``chat_id``; None: of any chat) and found the fact again:
    their stale entries go."""
    if doc.get("stale"):
        ids = set(message_ids)
        doc["stale"] = [w for w in doc["stale"] if w.get("message_id") not in ids or (chat_id is not None and w.get("chat_id") != chat_id)]


class KnowledgeStore:
    def __init__(self, records: RecordStore, tenant: str) -> None:
        self.records = records
        self.tenant = tenant

    # -- reads ------------------------------------------------------------------------------------
    def entities(self, ids: Sequence[str]) -> list[dict[str, Any] | None]:
        return self.records.get_docs(self.tenant, ENTITIES, list(ids)) if ids else []

    def relations(self, ids: Sequence[str]) -> list[dict[str, Any] | None]:
        return self.records.get_docs(self.tenant, RELATIONS, list(ids)) if ids else []

    def all_entities(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        after = ""
        while True:
            rows = self.records.list_docs(self.tenant, ENTITIES, after=after, limit=1000)
            out.extend(d for _, d in rows)
            if len(rows) < 1000:
                return out
            after = rows[-1][0]

    def edges(self, entity: str, direction: str = "out") -> list[str]:
        ids: list[str] = []
        for coll in ((OUT,) if direction == "out" else (IN,) if direction == "in" else (OUT, IN)):
            ids += [k.split("|", 1)[1] for k, _ in self.records.list_docs(self.tenant, coll, prefix=f"{entity}|", limit=_ALL)]
        return list(dict.fromkeys(ids))

    def profile(self, user_id: str) -> dict[str, Any] | None:
        return self.records.get_docs(self.tenant, PROFILES, [user_id])[0]

    # -- deletes (``Knowledge.delete_fact``) ----------------------------------------------------------
    def delete_relations(self, rels: Sequence[dict[str, Any]]) -> int:
        """Remove relations and their adjacency rows (both directions)."""
        if not rels:
            return 0
        self.records.delete_docs(self.tenant, OUT, [f"{r['source_id']}|{r['relation_id']}" for r in rels])
        self.records.delete_docs(self.tenant, IN, [f"{r['target_id']}|{r['relation_id']}" for r in rels])
        return self.records.delete_docs(self.tenant, RELATIONS, [r["relation_id"] for r in rels])

    def delete_entity(self, eid: str) -> int:
        """Remove an entity and every relation touching it (they would point at nothing). Returns the
        number of relations removed."""
        rels = [r for r in self.relations(self.edges(eid, "both")) if r is not None]
        removed = self.delete_relations(rels)
        self.records.delete_docs(self.tenant, ENTITIES, [eid])
        return removed

    # -- incremental writes -------------------------------------------------------------------------
    def upsert_entities(self, items: Sequence[dict[str, Any]], *, now: str, chat_id: str, authors: dict[str, str],
                        vectors: Sequence[Sequence[float]] | None = None) -> list[dict[str, Any]]:
        """Merge extracted entities (``authors``: message_id -> user_id). Returns the stored docs."""
        ids = [entity_id(e["entity_name"]) for e in items]
        current = {i: d for i, d in zip(ids, self.entities(ids)) if d}
        out: dict[str, dict[str, Any]] = {}
        for n, (eid, e) in enumerate(zip(ids, items)):
            users = sorted({authors[m] for m in e["message_ids"] if m in authors})
            doc = out.get(eid) or current.get(eid)
            if doc is None:
                doc = {
                    "entity_id": eid, "entity_name": e["entity_name"], "entity_type": e["entity_type"],
                    "description": e["description"], "confidence": e["confidence"], "mentions": 0, "history": [],
                    "sources": [], "chat_ids": [], "user_ids": [], "create_time": now, "update_time": now,
                }
            elif e["description"] and e["description"] != doc.get("description"):
                if doc.get("description"):
                    doc["history"] = [*doc.get("history", []), {"description": doc["description"], "until": now, "sources": doc["sources"][-5:]}][-20:]
                doc["description"] = e["description"]
            if doc.get("entity_type") == "OTHER" and e["entity_type"] != "OTHER":
                doc["entity_type"] = e["entity_type"]
            confirm(doc, e["message_ids"], chat_id)  # read again and found again: no longer stale for those messages
            doc["mentions"] = int(doc.get("mentions", 0)) + e["mentions"]
            doc["confidence"] = max(float(doc.get("confidence", 0)), e["confidence"])
            add_refs(doc, chat_id, e["message_ids"])
            doc["sources"] = _merge_list(doc["sources"], e["message_ids"])
            doc["chat_ids"] = _merge_list(doc["chat_ids"], [chat_id], 100)
            doc["user_ids"] = _merge_list(doc["user_ids"], users, 1000)
            doc["update_time"] = now
            if vectors is not None:
                doc["vector"] = [round(float(x), 6) for x in vectors[n]]
            out[eid] = doc
        if out:
            self.records.put_docs(self.tenant, ENTITIES, out)
        return list(out.values())

    def upsert_relations(self, items: Sequence[dict[str, Any]], *, now: str, chat_id: str, authors: dict[str, str]) -> tuple[int, int]:
        """Merge extracted relations; exclusive ones supersede older targets. Returns (written, superseded)."""
        writes: dict[str, dict[str, Any]] = {}
        superseded = 0
        for r in items:
            sid, tid = entity_id(r["source_entity"]), entity_id(r["target_entity"])
            rid = relation_id(sid, r["relation_type"], tid)
            users = sorted({authors[m] for m in r["message_ids"] if m in authors})
            doc = writes.get(rid) or self.relations([rid])[0] or {
                "relation_id": rid, "source_id": sid, "target_id": tid, "source": r["source_entity"],
                "target": r["target_entity"], "relation_type": r["relation_type"], "sources": [], "chat_ids": [],
                "user_ids": [], "create_time": now,
            }
            confirm(doc, r["message_ids"], chat_id)
            add_refs(doc, chat_id, r["message_ids"])
            doc.update({
                "description": r["description"] or doc.get("description", ""), "confidence": r["confidence"],
                "exclusive": r["exclusive"], "status": "current", "superseded_by": None, "valid_until": None,
                "update_time": now, "sources": _merge_list(doc["sources"], r["message_ids"]),
                "chat_ids": _merge_list(doc["chat_ids"], [chat_id], 100), "user_ids": _merge_list(doc["user_ids"], users, 1000),
            })
            writes[rid] = doc
            if r["exclusive"]:
                for old in self.relations(self.edges(sid, "out")):
                    if (old and old["relation_id"] != rid and old["relation_type"] == r["relation_type"]
                            and old.get("status") == "current" and old["relation_id"] not in writes):
                        old.update({"status": "superseded", "superseded_by": rid, "valid_until": now})
                        writes[old["relation_id"]] = old
                        superseded += 1
        if writes:
            self.records.put_docs(self.tenant, RELATIONS, writes)
            self.records.put_docs(self.tenant, OUT, {f"{d['source_id']}|{rid}": {} for rid, d in writes.items()})
            self.records.put_docs(self.tenant, IN, {f"{d['target_id']}|{rid}": {} for rid, d in writes.items()})
        return len(writes), superseded

    def update_profile(self, user_id: str, user_name: str, new: dict[str, Any], *, now: str, sources: Sequence[str],
                       chat_id: str | None = None) -> dict[str, Any]:
        """Merge a new profile extraction from the messages ``sources`` (of ``chat_id``, which names them in
        ``source_refs``)."""
        doc = self.profile(user_id) or {
            "user_id": user_id, "user_name": user_name, "profile_text": "", "preferences": [], "traits": [],
            "history": [], "sources": [], "version": 0, "create_time": now,
        }
        if new["profile_text"] and new["profile_text"] != doc["profile_text"]:
            if doc["profile_text"]:
                doc["history"] = [*doc["history"], {"profile_text": doc["profile_text"], "until": now}][-20:]
            doc["profile_text"] = new["profile_text"]
        prefs = doc["preferences"]
        for p in new["preferences"]:
            same = [q for q in prefs if q["key"].casefold() == p["key"].casefold() and q.get("status", "current") == "current"]
            if any(q["value"] == p["value"] for q in same):
                for q in same:
                    if q["value"] == p["value"]:
                        add_refs(q, chat_id, sources, 20)
                        q["sources"] = _merge_list(q.get("sources", []), sources, 20)
                        q["confidence"] = max(q["confidence"], p["confidence"])
                continue
            for q in same:
                q.update({"status": "superseded", "superseded_by": p["value"], "valid_until": now})
            refs = {"source_refs": merge_refs([], chat_id, sources, 20)} if chat_id is not None else {}
            prefs.append({**p, "status": "current", "since": now, "sources": list(sources)[-20:], **refs})
        traits = {t["trait_name"].casefold(): t for t in doc["traits"]}
        for t in new["traits"]:
            traits[t["trait_name"].casefold()] = t
        add_refs(doc, chat_id, sources, 100)
        doc.update({
            "user_name": user_name or doc.get("user_name", ""), "preferences": prefs, "traits": list(traits.values()),
            "sources": _merge_list(doc["sources"], sources, 100), "version": int(doc.get("version", 0)) + 1, "update_time": now,
        })
        self.records.put_docs(self.tenant, PROFILES, {user_id: doc})
        return doc

    # -- graph walk (seed 4.2.3) --------------------------------------------------------------------
    def walk(self, start: str, *, max_depth: int = 2, relation_types: Sequence[str] | None = None, direction: str = "out",
             include_superseded: bool = False, visible: Any = None) -> dict[str, list[dict[str, Any]]]:
        root = self.entities([start])[0]
        if root is None or (visible and not visible(root)):
            return {"nodes": [], "edges": []}
        wanted = set(relation_types) if relation_types else None
        nodes = {start: root}
        edges: dict[str, dict[str, Any]] = {}
        queue = deque([(start, 0)])
        while queue:
            current, depth = queue.popleft()
            if depth >= max_depth:
                continue
            for rel in self.relations(self.edges(current, direction)):
                if rel is None or rel["relation_id"] in edges:
                    continue
                if wanted is not None and rel["relation_type"] not in wanted:
                    continue
                if not include_superseded and rel.get("status") == "superseded":
                    continue
                if visible and not visible(rel):
                    continue
                other = rel["target_id"] if rel["source_id"] == current else rel["source_id"]
                if other not in nodes:
                    doc = self.entities([other])[0]
                    if doc is None:
                        continue
                    nodes[other] = doc
                    queue.append((other, depth + 1))
                edges[rel["relation_id"]] = rel
        return {
            "nodes": [{"id": d["entity_id"], "name": d["entity_name"], "type": d["entity_type"], "description": d.get("description", ""),
                       "sources": d.get("sources", [])} for d in nodes.values()],
            "edges": [{"id": r["relation_id"], "source": r["source_id"], "target": r["target_id"], "source_name": r["source"],
                       "target_name": r["target"], "type": r["relation_type"], "description": r.get("description", ""),
                       "status": r.get("status", "current"), "superseded_by": r.get("superseded_by"),
                       "sources": r.get("sources", []), "stale": r.get("stale", []),
                       **({"source_refs": r["source_refs"]} if r.get("source_refs") else {})} for r in edges.values()],
        }
