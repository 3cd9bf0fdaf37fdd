"""``get_context_for_user``, end to end: read the blocks, recall candidates from every tier, rank, assemble.

    ctx = build_context(core, handle, "u1", "telegram:42", query="what did Bob bring?", max_tokens=2000)
    print(ctx)            # what the model reads; ctx is the list of ContextMessage (seed 002 order)

The stages and what they read:

1. window (``window.session_window``), session summary, user data: the record store;
2. recall (needs an embedder, a vector index and ``include_vector``): read-your-writes
   (``candidates.read_your_writes``), the query embedded once, one message search over everything the
   user may see (the window excluded inside the index), the following turn of the best hits, the
   user's topic summaries and facts, documents when asked; the dense vectors of the recalled points
   (one index read) for the relevance floor;
3. rank and assemble (``ranking``, ``assemble``): pure code over what was read.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..retrieval.plan import aligned_vectors, plan_search
from ..session_summaries import SessionSummaries
from .assemble import assemble
from .candidates import (
    document_candidates, fact_candidates, message_candidates, message_key, read_your_writes, topic_candidates,
)
from .lines import Context, context_tokens
from .ranking import Candidate, rescaled, score_relevance, terms_of
from .window import session_window, visible_scope

if TYPE_CHECKING:
    from ..models import Message
    from ..kernel import Kernel

LayeredMemory = Any  # the facade handle (engine.LayeredMemory) the call came through: its public methods only

MAX_SEARCH_K = 100
MIN_SEARCH_K = 10
LINE_TOKENS = 20


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


def _queries(handle: LayeredMemory, user_id: str, query: str | None, window: Sequence[Message], task_id: str | None) -> list[str]:
    texts = [query or next((m.content for m in reversed(window) if m.role == "user"), "")]
    if task_id:  # while a task runs, its latest tool results are queries too (fused by RRF)
        texts += [r["content"] for r in handle.get_task_memory(task_id, user_id=user_id)[-3:]]
    limit = handle.settings.retrieval.max_query_chars
    return [t[:limit] for t in texts if t and t.strip()]


def recall(core: Kernel, handle: LayeredMemory, user_id: str, session_id: str, texts: list[str], window: Sequence[Message],
           with_docs: bool, budget: int) -> list[Candidate]:
    """Every candidate the tiers offer for ``texts`` (the first is the question), scored for relevance."""
    tenant = handle.tenant_id
    cfg = core.settings.memory
    # as many candidates as lines could fit (about LINE_TOKENS a line), never more than the caps
    k = max(1, min(MAX_SEARCH_K, cfg.relevant_memory_k + cfg.conversation_memory_k, max(MIN_SEARCH_K, budget // LINE_TOKENS)))
    view = visible_scope(core.chats, handle.scope, user_id)
    plan = plan_search(view.spec(), texts, filters={"kind": "message"}, k=k, max_query_chars=core.settings.retrieval.max_query_chars)
    read_your_writes(core, tenant, plan, core.settings.context.read_your_writes)
    vectors = [core.embedder.embed_query(t) for t in texts]  # type: ignore[union-attr]
    refs = [m.ref for m in window]
    res = core.searcher.execute(plan, tenant, exclude_ids=refs, query_vectors=aligned_vectors(plan, texts, vectors), snippets=False)
    window_keys = {message_key(m) for m in window}
    query_terms = frozenset(t for text in texts for t in terms_of(core.analyzer, text))
    cands = message_candidates(core, view, session_id, res.hits, window_keys, query_terms=query_terms)
    cands += topic_candidates(core, view, texts[0], vectors[0])
    cands += fact_candidates(core, handle.scope, user_id, texts[0], vectors[0])
    if with_docs:
        cands += document_candidates(core, handle.for_user(user_id).documents, texts[0])
    dense = _dense(core, [c.vector_id for c in cands if c.vector_id], vectors)
    score_relevance(cands, [set(terms_of(core.analyzer, t)) for t in texts], dense, core.settings.context.relevance_floor)
    return cands


def _dense(core: Kernel, ids: list[str], query_vectors: list[Any]) -> dict[str, float]:
    """Calibrated cosines of the recalled points and the closest query: per query vector, the mean of the
    cosines of a point's two vectors (its own text, its context; the search's dense side), computed by
    the index over those points only (one batch; no vector leaves it)."""
    if not ids or core.index is None or core.embedder is None:
        return {}
    from .._lazy import qdrant_models as models
    from ..stores.base import IndexQuery
    from ..topics.threader import TOPICAL_LEVEL, embedder_calibration

    t = core.settings.topics
    floor, topical = embedder_calibration(core.embedder)
    floor = t.similarity_floor if t.similarity_floor is not None else floor
    topical = t.similarity_topical if t.similarity_topical is not None else topical
    ids = list(dict.fromkeys(ids))
    only = models.Filter(must=[models.HasIdCondition(has_id=ids)])
    n = len(ids)
    requests = [IndexQuery(dense=v, filter=only, limit=n, prefetch_limit=n, payload=False, using=using)
                for v in query_vectors for using in ("dense", "context")]
    got = core.index.query_batch(core.indexer.collection, requests)
    cos: dict[str, float] = {}
    for own, ctx in zip(got[0::2], got[1::2]):
        context = {h.id: h.score for h in ctx}
        for h in own:  # a point without a context vector (no turn before it): its text stands for both
            cos[h.id] = max(cos.get(h.id, -1.0), (h.score + context.get(h.id, h.score)) / 2)
    return rescaled(cos, floor, topical, TOPICAL_LEVEL)


def build_context(
    core: Kernel, handle: LayeredMemory, user_id: str, session_id: str, query: str | None, include_vector: bool, max_tokens: int | None,
    *, task_id: str | None = None, with_docs: bool = False,
) -> Context:
    """The context of ``user_id``'s session ``session_id`` (arguments already checked)."""
    t_start = time.perf_counter()
    cfg = core.settings.memory
    budget = max_tokens if max_tokens is not None else core.settings.context.max_tokens
    t0 = time.perf_counter()
    summary = SessionSummaries(core, handle.scope).current(user_id, session_id)
    user_data = handle.get_user_data(user_id)
    window = session_window(core.chats, handle.tenant_id, user_id, session_id, cfg.short_term_window)
    timings = {"window": _ms(t0)}
    cands: list[Candidate] = []
    t0 = time.perf_counter()
    texts = _queries(handle, user_id, query, window, task_id)
    if texts and include_vector and core.embedder is not None and core.index is not None:
        cands = recall(core, handle, user_id, session_id, texts, window, with_docs, budget)
    elif texts and with_docs:  # documents without the message tiers (no embedder: BM25 documents)
        cands = document_candidates(core, handle.for_user(user_id).documents, texts[0])
        score_relevance(cands, [set(terms_of(core.analyzer, t)) for t in texts], {})
    timings["recall"] = _ms(t0)
    t0 = time.perf_counter()
    caps = {"memory": cfg.relevant_memory_k, "conversation_memory": cfg.conversation_memory_k}
    out = assemble(summary=summary, user_data=user_data, window=window, candidates=cands, max_tokens=budget,
                   count=core.count_tokens, caps=caps, floor=core.settings.context.relevance_floor,
                   gate=core.settings.context.relevance_gate)
    timings["rank"] = _ms(t0)
    timings["total"] = _ms(t_start)
    return Context(out, tokens=context_tokens(out, core.count_tokens), max_tokens=budget, timings=timings, window=window)


__all__ = ["build_context", "recall"]
