"""What the tiers offer a context: recalled messages and their neighbours, topic summaries, facts,
documents, each as a ``ranking.Candidate``; and read-your-writes for the messages still queued.

One search covers every message the user may see (``window.visible_filters``), this session's older
messages and the other sessions alike, with the window left out inside the index; a hit's session
decides its block ("Relevant memory" for this session, "Relevant conversation memory" for the others).

**Read your writes.** In the background index mode ``add_message`` returns once the message is durable
and its BM25 point written; the writer embeds it later. A context built meanwhile would miss the dense
side of those messages and differ from the one built after ``flush()``. So before searching, the
asking user's messages this process wrote and the writer has not embedded yet (at most
``context.read_your_writes`` of them, the newest) are embedded and indexed right here, through the
writer's own code path (``BackgroundIndexer.index_now``): the search then sees what it would see
after ``flush()``. Messages written by another process are not known here; they wait for its writer.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from datetime import datetime
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from ..index.points import message_payload, message_point_id, point_id
from ..models import MessageRef, parse_time
from .lines import MemoryLine, speaker_name
from .ranking import (
    DOCUMENT_SHARE, FACT_SHARE, NEIGHBOUR_SHARE, PROFILE_VALUE, TOPIC_SHARE, Candidate, as_candidates, content_size, rank_value, terms_of,
)
from .window import session_after

if TYPE_CHECKING:
    from ..index import Scope
    from ..retrieval.plan import SearchPlan
    from ..kernel import Kernel

logger = logging.getLogger(__name__)

NEIGHBOUR_HITS = 3  # the best hits whose following turn is fetched
TOPIC_K = 3
FACT_K = 3


def message_key(item: Any) -> str:
    """The dedup key of a message in the context: ``chat_id|message_id`` (ids repeat across chats).
    Takes a Message, a ContextMessage or a SearchHit (whose meta holds ``channel_id``)."""
    if hasattr(item, "meta"):
        return f"{item.meta.get('channel_id')}|{item.id}"
    return f"{item.chat_id}|{item.message_id}"


def _when(value: Any) -> datetime | None:
    try:
        return parse_time("timestamp", value) if value else None
    except Exception:
        return None


def read_your_writes(core: Kernel, tenant: str, plan: SearchPlan, limit: int) -> int:
    """Index now the messages this process wrote, the writer has not embedded yet and ``plan`` would find
    (its scope and filters), newest first, at most ``limit``. Returns how many were indexed."""
    bg = core.background
    if bg is None or not core.deferred or limit <= 0:
        return 0
    queued = [ref for t, ref in list(core.indexer.previous_refs) if t == tenant][-4 * limit:]
    if not queued:
        return 0
    msgs = [m for m in core.records.get_messages(tenant, queued) if m is not None]
    wanted = [m.ref for m in msgs if plan.filter.matches(message_payload(m, ""))][-limit:]
    return bg.index_now(tenant, "messages", wanted) if wanted else 0


def message_candidates(
    core: Kernel, view: Scope, session_id: str, hits: Sequence[Any], window_keys: set[str], *, query_terms: frozenset[str] = frozenset(),
    point_ids: Sequence[str] | None = None,
) -> list[Candidate]:
    """The search hits as candidates (valued by rank) and the turn that follows each of the best
    ``NEIGHBOUR_HITS`` hits. A low-content turn ("Noted.", "ok", "好的": fewer than ``topics.min_terms``
    content terms, none of them the query's) is only ever a neighbour: it is found because its index entry
    holds the turn before it (``index_context="neighbour"``), not for what it says; a short turn that
    names what the query asks ("It's Shia Labeouf!") is a hit. ``point_ids``: the hits' index point ids, in
    order, when the search gave them (else derived from each hit's chat and id)."""
    analyzer, min_terms = core.analyzer, core.settings.topics.min_terms
    tenant = view.tenant
    out: list[Candidate] = []
    by_key: dict[str, Candidate] = {}
    rank = 0
    for i, h in enumerate(hits):
        key = message_key(h)
        meta = h.meta
        block = "memory" if meta.get("session_key") == session_id else "conversation_memory"
        item = MemoryLine(h.text, key, _when(meta.get("date")), str(meta.get("author") or meta.get("role") or ""))
        vid = point_ids[i] if point_ids is not None else message_point_id(tenant, MessageRef(str(meta.get("channel_id")), h.id))
        c = Candidate(item, block, "message", 0.0, analyzer=analyzer, vector_id=vid)
        if content_size(h.text) >= min_terms or terms_of(analyzer, h.text) & query_terms:
            c.value = rank_value(rank)
            rank += 1
        out.append(c)
        by_key[key] = c
    parents = [(c, h) for c, h in zip(out, hits) if c.value > 0][:NEIGHBOUR_HITS]
    for parent, h in parents:
        hit = SimpleNamespace(session_key=h.meta.get("session_key"), seq=h.meta.get("seq") or 0)
        for m in session_after(core.chats, tenant, view, hit, 1):
            key = message_key(m)
            if key in window_keys:
                continue
            share = NEIGHBOUR_SHARE * parent.value
            known = by_key.get(key)
            if known is not None:  # already a candidate: a neighbour of a strong hit is worth more
                if share > known.value:
                    known.value, known.kind, known.parent = share, "neighbour", parent
                continue
            item = MemoryLine(m.content, key, m.create_time, speaker_name(m.role, m.user_name, m.user_id), sources=())
            nb = Candidate(item, parent.block, "neighbour", share, analyzer=analyzer, parent=parent)
            out.append(nb)
            by_key[key] = nb
    return [c for c in out if c.value > 0]


def topic_candidates(core: Kernel, view: Scope, text: str, vector: Any) -> list[Candidate]:
    """The topic summaries closest to the query that ``view``'s user sees (the topics they took part in
    and those of their member chats; the mid tier). A stale summary (it quotes an edited or deleted
    message until it is rewritten) is left out."""
    if not core.settings.topics.enabled:
        return []
    tenant = view.tenant
    try:
        hits = core.topics.summarizer(tenant).search(text, user_id=view.bound_user, k=TOPIC_K, vector=vector, chats=view.chats)
    except Exception as exc:
        logger.warning("topic summary search failed (%s)", type(exc).__name__)
        return []
    from ..topics.summaries import KIND

    items = [MemoryLine(str(p.get("text") or ""), f"topic:{p.get('topic_id')}", _when(p.get("timestamp")), f'topic "{p.get("title")}"')
             for p, _ in hits if not p.get("stale")]
    ids = [point_id(tenant, KIND, str(p.get("topic_id"))) for p, _ in hits if not p.get("stale")]
    return as_candidates(items, "memory", "topic", TOPIC_SHARE, partial(terms_of, core.analyzer), ids)


def fact_candidates(core: Kernel, scope: Any, user_id: str, text: str, vector: Any) -> list[Candidate]:
    """The long tier: the user's profile and the entities (with their relations) closest to the query."""
    from ..knowledge.api import Knowledge
    from ..knowledge.stale import unsupported

    try:
        kn = Knowledge(core, scope.narrow(user_id))
        prof = kn.get_profile(user_id)
        out: list[Candidate] = []
        if prof:
            when = _when(prof.get("update_time"))
            terms = partial(terms_of, core.analyzer)
            if prof.get("profile_text") and not unsupported(prof):  # every message it was drawn from edited or deleted: left out
                item = MemoryLine(str(prof["profile_text"]), f"profile:{user_id}", when, "profile")
                out.append(Candidate(item, "memory", "profile", PROFILE_VALUE, term_set=terms(item.text)))
            prefs = [f"{p['key']}={p['value']}" for p in prof.get("preferences", []) if p.get("status", "current") == "current" and not unsupported(p)]
            if prefs:
                item = MemoryLine("; ".join(prefs[:10]), f"prefs:{user_id}", when, "preferences")
                out.append(Candidate(item, "memory", "profile", PROFILE_VALUE, term_set=terms(item.text)))
        from ..knowledge.api import ENTITY_KIND

        items, ids = [], []
        for e in kn.search_entities(text, k=FACT_K, vector=vector):
            provenance = {"sources": e["sources"], "source_refs": e.get("source_refs"), "stale": (e.get("metadata") or {}).get("stale")}
            if e["relevance"] <= 0 or unsupported(provenance):
                continue  # only edited or deleted messages said it
            edges = [r for r in kn.query_graph(e["entity_name"], max_depth=1)["edges"] if not unsupported(r)][:3]
            facts = "; ".join(f"{r['source_name']} {r['type']} {r['target_name']}" for r in edges)
            meta = e.get("metadata") or {}
            refs = e.get("source_refs")  # chat and id; a fact written before them: every pair of its chats and ids
            sources = (tuple(f"{c}|{m}" for c, m in refs[-20:]) if refs
                       else tuple(f"{c}|{m}" for c in (meta.get("chat_ids") or [])[:5] for m in (e.get("sources") or [])[-20:]))
            body = f"{e['entity_name']} ({e['entity_type']}): {e['description']}" + (f" | {facts}" if facts else "")
            items.append(MemoryLine(body, f"kg:{e['entity_id']}", None, "fact", sources=sources))
            ids.append(point_id(scope.tenant, ENTITY_KIND, e["entity_id"]))
        return out + as_candidates(items, "memory", "fact", FACT_SHARE, partial(terms_of, core.analyzer), ids)
    except Exception as exc:
        logger.warning("knowledge memory source failed (%s)", type(exc).__name__)
        return []


def document_candidates(core: Kernel, docs: Any, query: str) -> list[Candidate]:
    """The best ``documents.context_k`` document chunks the user may see, each with its citation; nothing
    when the search fails (the context never breaks)."""
    if not query.strip():
        return []
    limit = core.settings.retrieval.max_query_chars
    try:
        hits = docs.vector_rag(query[:limit], k=docs.settings.context_k).hits
    except Exception as exc:  # a failing document search must not break the prompt
        logger.warning("document search for the context failed (%s: %s)", type(exc).__name__, exc)
        return []
    items = [MemoryLine(f"[{h.meta.get('citation', '')}] {h.text}", f"doc|{h.id}") for h in hits]
    return as_candidates(items, "documents", "document", DOCUMENT_SHARE, partial(terms_of, core.analyzer))


__all__ = ["document_candidates", "fact_candidates", "message_candidates", "message_key", "read_your_writes",
           "topic_candidates"]
