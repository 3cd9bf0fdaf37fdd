"""``get_context_for_user``, end to end: read the blocks, recall candidates from every tier, rank, assemble.

    ctx = build_context(core, handle, "u1", "telegram:42", query="what did Bob bring?", max_tokens=2000)
    print(ctx)            # what the model reads; ctx is the list of ContextMessage (seed 002 order)

The stages and what they read:

1. window (``window.session_window``), session summary, user data: the record store;
2. recall (needs an embedder, a vector index and ``include_vector``): the query embedded once, then each
   memory source in order (``sources``: the message search over everything the user may see with
   read-your-writes and the turn after the best hits, topic summaries, profile and facts, documents when
   asked; a source of your own plugs in beside them); the dense vectors of the recalled points (one
   index read) for the relevance floor;
3. rank and assemble (``ranking``, ``assemble``): pure code over what was read.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..retrieval.preamble import dense_query
from ..session_summaries import SessionSummaries
from .assemble import assemble
from .candidates import document_candidates
from .lines import Context, context_tokens
from .ranking import Candidate, rescaled, score_relevance, terms_of
from .sources import MemorySource, Recall, default_sources, gather
from .window import session_window, visible_scope

if TYPE_CHECKING:
    from ..models import Message
    from ..kernel import Kernel

LayeredMemory = Any  # the facade handle (engine.LayeredMemory) the call came through: its public methods only


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


def _queries(handle: LayeredMemory, user_id: str, query: str | None, window: Sequence[Message], task_id: str | None) -> list[str]:
    texts = [query or next((m.content for m in reversed(window) if m.role == "user"), "")]
    if task_id:  # while a task runs, its latest tool results are queries too (fused by RRF)
        texts += [r["content"] for r in handle.get_task_memory(task_id, user_id=user_id)[-3:]]
    limit = handle.settings.retrieval.max_query_chars
    return [t[:limit] for t in texts if t and t.strip()]


def recall(core: Kernel, handle: LayeredMemory, user_id: str, session_id: str, texts: list[str], window: Sequence[Message],
           with_docs: bool, budget: int, sources: Sequence[MemorySource] | None = None) -> list[Candidate]:
    """Every candidate ``sources`` offer for ``texts`` (the first is the question; default:
    ``sources.default_sources``), scored for relevance."""
    view = visible_scope(core.chats, handle.scope, user_id)
    vectors = [core.embedder.embed_query(dense_query(t, core.settings.retrieval)) for t in texts]  # type: ignore[union-attr]
    request = Recall(core, handle, user_id, session_id, view, texts, vectors, window, budget)
    cands = gather(default_sources(with_docs) if sources is None else sources, request)
    dense = _dense(core, [c.vector_id for c in cands if c.vector_id], vectors, request.cosines)
    score_relevance(cands, [set(terms_of(core.analyzer, t)) for t in texts], dense, core.settings.context.relevance_floor)
    return cands


def _dense(core: Kernel, ids: list[str], query_vectors: list[Any], known: dict[str, float] | None = None) -> dict[str, float]:
    """Calibrated cosines of the recalled points and the closest query: per query vector, the mean of the
    cosines of a point's two vectors (its own text, its context; the search's dense side). ``known``: the
    raw scores the message search already read exactly (``SearchService.execute(cosines=...)``); the
    index is asked for the others only (one batch over those points, one query per query vector of the
    ``mean`` vector, or of both vectors in a collection created before it: ``IndexedCollection.dense_scores``)."""
    if not ids or core.index is None or core.embedder is None:
        return {}
    from ..topics.threader import TOPICAL_LEVEL, embedder_calibration

    t = core.settings.topics
    floor, topical = embedder_calibration(core.embedder)
    floor = t.similarity_floor if t.similarity_floor is not None else floor
    topical = t.similarity_topical if t.similarity_topical is not None else topical
    known = known or {}
    ids = list(dict.fromkeys(ids))
    cos = {i: known[i] for i in ids if i in known}
    cos.update(core.searcher.coll.dense_scores([i for i in ids if i not in known], query_vectors))
    return rescaled(cos, floor, topical, TOPICAL_LEVEL)


def build_context(
    core: Kernel, handle: LayeredMemory, user_id: str, session_id: str, query: str | None, include_vector: bool, max_tokens: int | None,
    *, task_id: str | None = None, with_docs: bool = False, sources: Sequence[MemorySource] | None = None,
) -> Context:
    """The context of ``user_id``'s session ``session_id`` (arguments already checked). ``sources``: the
    memory sources to recall from (default ``sources.default_sources(with_docs)``); they are read when
    the engine has an embedder and a vector index; without them only documents are, when asked (BM25).
    Chat memberships are read once for the whole context (``ChatRegistry.snapshot``): the window, the
    summary and every recalled turn's neighbour see the same members."""
    t_start = time.perf_counter()
    cfg = core.settings.memory
    budget = max_tokens if max_tokens is not None else core.settings.context.max_tokens
    with core.chats.snapshot():
        t0 = time.perf_counter()
        summary = SessionSummaries(core, handle.scope).current(user_id, session_id)
        user_data = handle.get_user_data(user_id)
        window = session_window(core.chats, handle.tenant_id, user_id, session_id, cfg.short_term_window)
        timings = {"window": _ms(t0)}
        cands: list[Candidate] = []
        t0 = time.perf_counter()
        texts = _queries(handle, user_id, query, window, task_id)
        if texts and include_vector and core.embedder is not None and core.index is not None:
            cands = recall(core, handle, user_id, session_id, texts, window, with_docs, budget, sources)
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
