"""Running a message search plan: routes hybrid | bm25 | dense, fallback to bm25, hits with snippets.

With a vector index, BM25 is a sparse vector; the hybrid route fuses each side's candidates and
reranks them with the second stage (``retrieval.rerank``: adaptive fusion, neighbour, session,
speaker and time signals), or runs RRF inside Qdrant with ``fusion="rrf"`` and no signals. Without
one (seed 002's Redis-only core) BM25 runs in-process over the RecordStore.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from ..config import RetrievalSettings
from ..errors import CapabilityError
from ..models import Message, MessageRef, SearchGroup, SearchHit, SearchResult
from ..providers.base import Embedder, Reranker
from ..providers.rerankers import checked_scores
from ..retrieval.analyzer import Analyzer
from ..retrieval.bm25 import BM25Encoder, BM25Scorer
from ..retrieval.fusion import rrf
from ..retrieval.groups import Group, group_ranked
from ..retrieval.plan import SearchPlan
from ..retrieval.preamble import dense_query
from ..retrieval.rerank import verbatim
from ..retrieval.snippet import make_snippet
from ..stores.base import RecordStore, VectorIndex
from .collection import IndexedCollection
from .points import message_payload, message_point_id

logger = logging.getLogger(__name__)

META_FIELDS = ("channel", "message_id", "author", "is_forward", "reply_to", "links", "media_types", "lang", "hash")
EXTRA_FIELDS = ("role", "session_key", "user_id", "topic_id", "task_id", "kind", "seq")


def hit_from_payload(payload: dict[str, Any], score: float, snippet: str) -> SearchHit:
    meta = {"channel_id": payload.get("chat_id")}
    meta.update({f: payload.get(f) for f in META_FIELDS})
    meta["date"] = payload.get("timestamp")
    meta.update({f: payload.get(f) for f in EXTRA_FIELDS if payload.get(f) is not None})
    # built from the index's own payload (types known): no validation pass, 50 hits per context call
    return SearchHit.model_construct(
        id=str(payload.get("message_id") or payload.get("id")),
        score=float(score),
        text=str(payload.get("text") or ""),
        snippet=snippet,
        meta=meta,
    )


MAX_CANDIDATES = 100  # candidates a grouped search ranks its sessions from
GROUP_HITS = 3  # hits shown per session of a grouped search


def _group(g: Group, hits: list[SearchHit]) -> SearchGroup:
    dates = sorted(str(h.meta.get("date")) for h in hits if h.meta.get("date"))
    return SearchGroup(chat_id=str(g.key[0]), session_key=str(g.key[1]), score=round(g.score, 6),
                       start=dates[0] if dates else None, end=dates[-1] if dates else None, hits=hits)


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


class SearchService:
    def __init__(
        self,
        records: RecordStore,
        index: VectorIndex | None,
        embedder: Embedder | None,
        analyzer: Analyzer,
        encoder: BM25Encoder,
        collection: str,
        settings: RetrievalSettings,
        *,
        rerank_model: Reranker | None = None,
    ) -> None:
        self.records = records
        self.rerank_model = rerank_model  # opt-in: reorders the best retrieval.rerank_depth hits (``_rerank``)
        self.index = index
        self.embedder = embedder
        self.analyzer = analyzer
        self.encoder = encoder
        self.collection = collection
        self.settings = settings
        self.coll = IndexedCollection(index, collection, embedder, analyzer, encoder, settings, ensured=True)

    def execute(
        self, plan: SearchPlan, tenant: str, *, exclude_ids: Sequence[MessageRef] = (), query_vectors: Sequence[list[float]] | None = None,
        snippets: bool = True, cosines: dict[str, float] | None = None, pool: int | None = None,
        point_ids: list[str] | None = None,
    ) -> SearchResult:
        """Run the plan. ``exclude_ids`` are (chat_id, message_id) refs left out inside the index (the context window);
        ``query_vectors`` are the queries' embeddings when the caller already has them; ``snippets=False``
        leaves ``snippet`` empty (the context shows whole messages); ``cosines`` (when given) receives the
        exact dense score of each point the dense side read, per point id, the best over the queries (the
        context's relevance floor reads them instead of asking the index again); ``pool``: this search's
        deep tail, how deep each side is read for the hits below the first ``retrieval.deep_from``
        (``IndexedCollection.query``); ``point_ids`` (when given, with a vector index, not grouped) receives the
        index point id of each returned hit, in order (the context keys its relevance floor by them)."""
        t_start = time.perf_counter()
        timings: dict[str, float] = {}
        route = plan.route
        fallback: str | None = None
        if route == "dense" and self.embedder is None:
            raise CapabilityError("route='dense' needs an embedder; configure one or use route='bm25'")
        if route == "hybrid" and self.embedder is None:
            route, fallback = "bm25", "no embedder configured"
        dense_vecs: list[list[float]] | None = None
        if route in ("hybrid", "dense") and query_vectors is not None:
            dense_vecs = [list(v) for v in query_vectors]
        elif route in ("hybrid", "dense"):
            t0 = time.perf_counter()
            try:
                dense_vecs = [self.embedder.embed_query(dense_query(q, self.settings)) for q in plan.queries]  # type: ignore[union-attr]
            except Exception as exc:  # any embedder failure: fall back, say so
                if route == "dense":
                    raise
                logger.warning("embedder failed (%s); search falls back to bm25", type(exc).__name__)
                route, fallback = "bm25", f"embedder failed: {type(exc).__name__}: {exc}"
            timings["embed"] = _ms(t0)
        t0 = time.perf_counter()
        per_query: list[list[tuple[Any, float, dict[str, Any]]]] = []
        if self.index is None:
            per_query = self._scan_bm25(plan, tenant, exclude_ids)
            route_used = "bm25"
        else:
            spec = plan.filter.excluding_ids([message_point_id(tenant, r) for r in exclude_ids])
            depth = max(plan.k, min(self.settings.prefetch_limit, 100)) if len(plan.queries) > 1 else plan.k
            if plan.group_by:  # sessions are ranked from every candidate's score
                depth = MAX_CANDIDATES
            elif self.rerank_model is not None:  # the rerank model reads the best rerank_depth, whatever k
                depth = max(depth, self.settings.rerank_depth)
            for i, q in enumerate(plan.queries):
                vector = dense_vecs[i] if dense_vecs is not None else None
                found = self.coll.query(q, spec, k=depth, route=route, vector=vector, signals=True, vectors=self.settings.dense_vectors,
                                        pool=pool, whole=plan.whole[i] if plan.whole else None)
                hits = found.hits
                if cosines is not None:
                    for pid, cos in found.cosines.items():
                        cosines[pid] = max(cos, cosines.get(pid, cos))
                per_query.append([(h.id, h.score, h.payload) for h in hits])  # point ids: message ids repeat across chats
            route_used = route
        timings["retrieve"] = _ms(t0)
        t0 = time.perf_counter()
        if len(per_query) == 1:
            ranked = per_query[0]
        else:
            payloads = {rid: p for lst in per_query for rid, _, p in lst}
            fused = rrf([[rid for rid, _, _ in lst] for lst in per_query], k=self.settings.rrf_k)
            ranked = [(rid, score, payloads[rid]) for rid, score in fused]
        # equal scores (frequent after RRF) come back in any order from the index: newest first, then id
        ranked.sort(key=lambda r: (-round(r[1], 9), -(r[2].get("seq") or 0), str(r[2].get("message_id") or r[0])))
        total = len(ranked)
        reranked: dict[Any, float] = {}
        rerank_error: str | None = None
        if self.rerank_model is not None and not plan.group_by and ranked:
            t_rerank = time.perf_counter()
            ranked, reranked, rerank_error = self._rerank(plan, ranked)
            timings["rerank"] = _ms(t_rerank)
        query_terms = sorted({t for q in plan.queries for t in self.analyzer.terms(q)}) if snippets else []

        def hit(i: int) -> SearchHit:
            rid, score, p = ranked[i]
            out = hit_from_payload(p, score, make_snippet(p.get("text", ""), query_terms, self.analyzer) if snippets else "")
            if rid in reranked:
                out.meta["rerank_score"] = reranked[rid]
            return out

        groups: list[SearchGroup] | None = None
        if plan.group_by:
            found = group_ranked([p for _, _, p in ranked], [sc for _, sc, _ in ranked],
                                 how=self.settings.group_aggregation, gap_seconds=self.settings.session_gap_hours * 3600.0)
            groups = [_group(g, [hit(i) for i in g.members[:GROUP_HITS]]) for g in found[: plan.k]]
            hits_out = [g.hits[0] for g in groups]
        else:
            hits_out = [hit(i) for i in range(min(plan.k, len(ranked)))]
            if point_ids is not None and self.index is not None:
                point_ids.extend(str(ranked[i][0]) for i in range(len(hits_out)))
        timings["fuse"] = _ms(t0)
        timings["total"] = _ms(t_start)
        result = SearchResult(hits=hits_out, total_found=total, route_used=route_used, queries=plan.queries, timings=timings, groups=groups)
        if fallback:
            result.fallback_reason = fallback
        if rerank_error:
            result.rerank_error = rerank_error
        logger.info("search route=%s queries=%d hits=%d in %.1f ms", route_used, len(plan.queries), len(hits_out), timings["total"])
        return result

    def _rerank(self, plan: SearchPlan, ranked: list[tuple[Any, float, dict[str, Any]]]
                ) -> tuple[list[tuple[Any, float, dict[str, Any]]], dict[Any, float], str | None]:
        """The best ``rerank_depth`` of ``ranked`` in the rerank model's order for the plan's first query (a
        verbatim match stays first, with ``exact_first``), each keeping the score of the place it takes (scores still fall down the
        list; the model's own is returned per id); the rest as they were. When the model fails or answers
        something else than one finite score per hit: ``ranked`` unchanged and why."""
        model = self.rerank_model
        assert model is not None
        head = ranked[: self.settings.rerank_depth]
        texts = [str(p.get("text") or "") for _, _, p in head]
        query = plan.queries[0]
        try:
            scores = checked_scores(model.rerank(query, texts), len(head), str(getattr(model, "name", type(model).__name__)))
        except Exception as exc:  # a model's failure never fails the search: the engine's own order stands
            logger.warning("rerank model failed (%s: %s); the search keeps its own order", type(exc).__name__, exc)
            return ranked, {}, f"{type(exc).__name__}: {exc}"
        first = verbatim(plan.whole[0] if plan.whole and plan.whole[0] else query, [p for _, _, p in head]) if self.settings.exact_first \
            else [False] * len(head)
        order = sorted(range(len(head)), key=lambda i: (not first[i], -scores[i], i))
        places = [sc for _, sc, _ in head]
        moved = [(head[i][0], places[place], head[i][2]) for place, i in enumerate(order)]
        return moved + ranked[len(head):], {head[i][0]: scores[i] for i in range(len(head))}, None

    # -- core mode: no vector index -----------------------------------------------------------
    def _scan_bm25(self, plan: SearchPlan, tenant: str, exclude_ids: Sequence[MessageRef]) -> list[list[tuple[Any, float, dict[str, Any]]]]:
        """The same plan filter as in the index, run as a predicate over the payloads of the scanned
        records (the scope rule holds in both modes); the scan is narrowed by the pinned user/session."""
        spec = plan.filter
        user, session = spec.value_of("user_id"), spec.value_of("session_key")
        msgs: list[Message] = []
        payloads: list[dict[str, Any]] = []
        after = 0
        excluded = {MessageRef(*r) for r in exclude_ids}
        while True:
            page = self.records.scan_messages(
                tenant,
                user_id=user if isinstance(user, str) else None,
                session_key=session if isinstance(session, str) else None,
                after_seq=after,
                limit=2000,
            )
            if not page:
                break
            after = page[-1].seq or after + len(page)
            for m in page:
                if m.ref in excluded:
                    continue
                payload = message_payload(m, self.analyzer.detect_lang(m.content))
                if spec.matches(payload):
                    msgs.append(m)
                    payloads.append(payload)
        if not msgs:
            return [[] for _ in plan.queries]
        scorer = BM25Scorer([self.analyzer.terms(m.content) for m in msgs], k1=self.settings.k1, b=self.settings.b)
        out = []
        depth = MAX_CANDIDATES if plan.group_by else plan.k if len(plan.queries) == 1 else max(plan.k, 50)
        for q in plan.queries:
            idx, scores = scorer.top_k(self.analyzer.terms(q), depth)
            out.append([(msgs[i].ref, float(s), payloads[i]) for i, s in zip(idx.tolist(), scores.tolist()) if s > 0])
        return out


__all__ = ["SearchService", "hit_from_payload"]
