"""What the memory viewer shows, assembled from the engine's public calls on a user's handle
(``u = mem.tenant(t).for_user(user)``); the HTTP API returns these dicts as JSON.

- ``context_view``: exactly what ``get_context_for_user`` hands the model, block by block, with tokens;
- ``search_view``: the hybrid hits with each hit's rank in a dense-only and a BM25-only search of the
  same query and scope (None: not in that route's top ``RANK_DEPTH``), plus matching facts;
- ``facts_view``: the profile, entities and relations with the messages they came from;
- ``topic_view`` / ``topics_view`` / ``summary_view``: topics as a timeline, their summaries with every
  version, the session summary with its quality history.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..context import message_key
from ..errors import CapabilityError, LayeredMemoryError
from . import access

if TYPE_CHECKING:
    from ..engine import LayeredMemory
    from ..models import Message

RANK_DEPTH = 50  # how deep the dense and BM25 searches look for a hybrid hit's rank
SOURCES_SHOWN = 5  # the newest source messages resolved per fact
TOPIC_MESSAGES = 200


def message_json(m: Message) -> dict[str, Any]:
    out = m.model_dump(mode="json")
    out.pop("tenant", None)
    return out


def messages_view(u: LayeredMemory, chat_id: str, *, limit: int) -> dict[str, Any]:
    return {"chat_id": chat_id, "messages": [message_json(m) for m in access.chat_messages(u, chat_id, limit=limit)]}


def context_view(u: LayeredMemory, chat_id: str, *, query: str | None = None, max_tokens: int | None = None,
                 include_vector: bool = True) -> dict[str, Any]:
    """The context of ``u``'s user for ``chat_id``, each block with its token count (the engine's tokenizer)."""
    msgs = u.get_context_for_user(None, chat_id, query=query, include_vector=include_vector, max_tokens=max_tokens)
    blocks = [{**m.model_dump(mode="json"), "tokens": u.count_tokens(m.content)} for m in msgs]
    budget = max_tokens if max_tokens is not None else u.settings.context.max_tokens
    return {"chat_id": chat_id, "query": query, "blocks": blocks, "total_tokens": sum(b["tokens"] for b in blocks), "max_tokens": budget}


def search_view(u: LayeredMemory, query: str, *, chat_id: str | None = None, k: int = 10) -> dict[str, Any]:
    """Hybrid hits with their dense and BM25 ranks side by side, and the facts that match."""
    filters = {"session_key": chat_id} if chat_id else None
    hybrid = u.search(query, filters=filters, k=k)
    ranks: dict[str, dict[str, int]] = {}
    routes: dict[str, str] = {"hybrid": hybrid.route_used}
    for route in ("dense", "bm25"):
        try:
            res = u.search(query, filters=filters, k=max(k, RANK_DEPTH), route=route)
        except LayeredMemoryError as exc:  # dense without an embedder: the column says why
            routes[route] = f"unavailable: {exc}"
            continue
        if res.route_used != route:
            routes[route] = f"unavailable: {res.fallback_reason or 'ran as ' + res.route_used}"
            continue
        routes[route] = route
        ranks[route] = {message_key(h): i for i, h in enumerate(res.hits, 1)}  # ids repeat across chats: chat|id
    hits = [{**h.model_dump(mode="json"), "rank": i, "dense_rank": ranks.get("dense", {}).get(message_key(h)),
             "bm25_rank": ranks.get("bm25", {}).get(message_key(h))} for i, h in enumerate(hybrid.hits, 1)]
    facts = [{k_: v for k_, v in f.items() if k_ != "metadata"} for f in u.knowledge.search_entities(query, k=5)]
    return {"query": query, "chat_id": chat_id, "routes": routes, "fallback_reason": hybrid.fallback_reason,
            "hits": hits, "facts": facts, "timings": hybrid.timings}


def _attach_sources(u: LayeredMemory, facts: list[dict[str, Any]], chats_of: Any) -> None:
    """``source_messages`` on each fact: the newest ``SOURCES_SHOWN`` of its sources the user may read."""
    wanted: list[tuple[str, str]] = []
    per_fact = []
    for f in facts:
        if f.get("source_refs"):  # each message with its chat
            refs = [(c, m) for c, m in f["source_refs"][-SOURCES_SHOWN:]]
        else:  # a fact written before source_refs: its ids in each of its chats
            refs = [(c, m) for m in list(f.get("sources") or [])[-SOURCES_SHOWN:] for c in chats_of(f)]
        per_fact.append(refs)
        wanted.extend(refs)
    found = access.readable(u, wanted)
    for f, refs in zip(facts, per_fact):
        f["source_messages"] = [message_json(found[r]) for r in refs if r in found]


def facts_view(u: LayeredMemory, *, limit: int = 500) -> dict[str, Any]:
    """The user's profile, and the entities and relations the user's messages produced, with provenance."""
    kn = u.knowledge
    facts = kn.list_facts(limit=limit)
    _attach_sources(u, facts["entities"] + facts["relations"], lambda f: list(f.get("chat_ids") or []))
    profile = kn.get_profile(None)
    if profile is not None:
        profile = dict(profile)
        user_chats = access.chats(u)
        _attach_sources(u, [profile], lambda f: user_chats)
    return {"user_id": u.bound_user, "profile": profile, **facts}


def topics_view(u: LayeredMemory, chat_id: str) -> dict[str, Any]:
    """The chat's topics oldest first (the timeline), without their vectors."""
    topics = [t.model_dump(mode="json", exclude={"topic_vector", "tenant"}) for t in access.chat_topics(u, chat_id)]
    return {"chat_id": chat_id, "topics": topics}


def topic_view(u: LayeredMemory, topic_id: str) -> dict[str, Any]:
    """One topic: its fields, every summary version (oldest first, each with its quality score) and its messages."""
    topic = u.topics.get(topic_id).model_dump(mode="json", exclude={"topic_vector"})
    summaries = [s.model_dump(mode="json") for s in u.topics.summaries(topic_id)]
    msgs = [message_json(m) for m in access.topic_messages(u, topic_id, limit=TOPIC_MESSAGES)]
    return {"topic": topic, "summaries": summaries, "messages": msgs}


def summary_view(u: LayeredMemory, chat_id: str) -> dict[str, Any]:
    """The session summary (seed 002's "Previous context summary") and its quality, with earlier versions' scores."""
    return {"chat_id": chat_id, "summary": u.get_summary(None, chat_id), "quality": u.get_summary_quality(None, chat_id)}


def agents_view(u: LayeredMemory, *, period_days: int = 7) -> dict[str, Any]:
    """The user's agents, each with its registration and stats over ``period_days``."""
    out: list[dict[str, Any]] = []
    try:
        infos = u.agents.list()
    except CapabilityError as exc:  # agents need a vector index (not in the records-only core mode)
        return {"user_id": u.bound_user, "agents": out, "unavailable": str(exc)}
    for info in infos:
        agent = u.agents.get(info.user_id, info.agent_name)
        out.append({**info.to_doc(), "stats": agent.stats(period_days=period_days)})
    return {"user_id": u.bound_user, "agents": out}


__all__ = ["agents_view", "context_view", "facts_view", "messages_view", "search_view", "summary_view", "topic_view", "topics_view"]
