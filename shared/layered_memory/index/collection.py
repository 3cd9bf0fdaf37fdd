"""One collection API for every indexed kind: upsert, query, delete, with embedding, BM25, fusion and
the fallback to BM25 when the embedder fails.

    coll = IndexedCollection(index, "lm_items", embedder, analyzer, encoder, settings.retrieval)
    coll.upsert([Entry(point_id, payload, text)])                  # dense in one batch + BM25 sparse
    found = coll.query("green tea", scope.spec("item").and_(...), k=10)
    found.hits, found.route_used, found.fallback_reason
    coll.delete(ids=[point_id])

Every query takes a ``FilterSpec``: a caller builds it from ``Scope.spec`` (the scope rule) and
narrows it. Without a vector index (the core mode) ``query_records`` scores BM25 in process over
the records a caller hands in, and runs the same spec as a predicate over their payloads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._lazy import qdrant_models as models
from ..config import RetrievalSettings
from ..errors import CapabilityError
from ..providers.base import Embedder
from ..retrieval.analyzer import Analyzer
from ..retrieval.bm25 import BM25Encoder, BM25Scorer, marker
from ..retrieval.preamble import dense_query
from ..retrieval.rerank import SIGNAL_KEYS, SecondStage, has_signals, join_ranked, reads_bm25_text, verbatim
from ..stores.base import IndexHit, IndexQuery, SparseVector, VectorIndex, VectorPoint
from ..filterspec import FilterSpec
from .points import SENTENCES_KEY

logger = logging.getLogger(__name__)

ROUTES = ("hybrid", "bm25", "dense")


@dataclass(slots=True)
class Entry:
    """What to index for one record: its point id, payload, the text BM25 and the embedder see, and
    optionally the BM25 terms when they differ from the analyzer's terms of ``text``, and a dense
    vector when one was computed before."""

    point_id: str
    payload: dict[str, Any]
    text: str
    terms: list[str] | None = None
    dense: list[float] | None = None  # a vector computed earlier (skips the embedder when every entry has one)


@dataclass(slots=True)
class Found:
    hits: list[IndexHit]
    route_used: str
    fallback_reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    cosines: dict[str, float] = field(default_factory=dict)  # the dense side's exact score per point it read (``exact_cosines``)


class IndexedCollection:
    """A vector-index collection holding one or more record kinds (told apart by the ``kind`` payload)."""

    def __init__(
        self,
        index: VectorIndex | None,
        name: str,
        embedder: Embedder | None,
        analyzer: Analyzer,
        encoder: BM25Encoder,
        settings: RetrievalSettings,
        *,
        ensured: bool = False,
    ) -> None:
        self.index = index
        self.name = name
        self.embedder = embedder
        self.analyzer = analyzer
        self.encoder = encoder
        self.settings = settings
        self._ensured = ensured  # the caller already created it in this process
        self._has_mean: bool | None = None  # the index holds the "mean" vector (asked once, ``has_mean``)
        self._has_sentences = False  # and the "sentences" vector (read with it)
        self._upgrade: str | None = None  # what an older release's collection lacks (``upgrade``)

    def ensure(self) -> None:
        """Create the collection (with its payload indexes) if missing; once per process."""
        if self.index is None or self._ensured:
            return
        emb = self.embedder
        self.index.ensure_collection(self.name, dense_dim=emb.dim if emb else None, embedder=emb.name if emb else None,
                                     bm25=marker(self.settings))
        self._ensured = True

    def has_mean(self) -> bool:
        """Whether the collection holds the ``mean`` vector (schema 3: one list scores a message by the mean of
        its two cosines exactly); a collection created before it is searched with both vectors' lists, and
        says so once (``upgrade``)."""
        self._read_schema()
        return bool(self._has_mean)

    def has_sentences(self) -> bool:
        """Whether the collection holds the ``sentences`` vector (schema 4: a message's best sentence rescores the
        dense side); a collection created before it is searched without, and says so once (``upgrade``)."""
        self._read_schema()
        return self._has_sentences

    def _read_schema(self) -> None:
        """Which of the message vectors the collection holds, read once, and what an older one lacks (``upgrade``)."""
        if self._has_mean is None:
            self.ensure()
            schema = self.index.info(self.name).get("schema") or {} if self.index is not None else {}
            self._has_mean = bool(schema.get("mean"))
            self._has_sentences = bool(schema.get("sentences"))
            if self._has_mean and not self._has_sentences:
                self._upgrade = (
                    f"collection {self.name!r} was created before the sentence vectors (schema 4): a message search does not "
                    "score a long message by its best sentence. Re-create it from the record store to add them: "
                    "LayeredMemory.embedded(..., recreate_index=True) or `layered-memory reindex --recreate`"
                )
                logger.warning("%s", self._upgrade)
            if not self._has_mean and schema.get("context"):
                self._upgrade = (
                    f"collection {self.name!r} was created before the mean vector (schema 3): a message search reads both dense "
                    "vectors' lists and merges them, slower and with approximate scores below each list's cut. Re-create it "
                    "from the record store to add it: LayeredMemory.embedded(..., recreate_index=True) or `layered-memory "
                    "reindex --recreate`"
                )
                logger.warning("%s", self._upgrade)

    def upgrade(self) -> str | None:
        """What the collection lacks because an older release created it, with the way to add it (None:
        nothing); ``mem.doctor()`` reports it."""
        self.has_mean()
        return self._upgrade

    # -- writes -----------------------------------------------------------------------------------
    def points(self, entries: Sequence[Entry], *, on_embed_error: str = "raise") -> list[VectorPoint]:
        """Points of entries: dense vectors in one batch, BM25 sparse vectors. ``on_embed_error="bm25"``
        writes sparse-only points when the embedder fails (they stay findable by keyword)."""
        dense: list[list[float]] | None = None
        emb = self.embedder
        if emb is not None and entries and all(e.dense is not None and len(e.dense) == emb.dim for e in entries):
            dense = [list(e.dense) for e in entries]  # type: ignore[arg-type]
        elif emb is not None and entries:
            try:
                dense = emb.embed_documents([e.text for e in entries])
            except Exception as exc:
                if on_embed_error != "bm25":
                    raise
                logger.warning("embedding %d entries of %s failed (%s); indexed for BM25 only", len(entries), self.name, type(exc).__name__)
        out = []
        for i, e in enumerate(entries):
            terms = e.terms if e.terms is not None else self.analyzer.terms(e.text)
            out.append(VectorPoint(
                id=e.point_id, payload=e.payload, dense=dense[i] if dense is not None else None,
                sparse=self.encoder.document(terms) if terms else SparseVector([], []),
            ))
        return out

    def upsert(self, entries: Sequence[Entry], *, on_embed_error: str = "raise") -> None:
        if self.index is None or not entries:
            return
        self.ensure()
        self.index.upsert(self.name, self.points(entries, on_embed_error=on_embed_error))

    def delete(self, *, ids: Sequence[str] | None = None, spec: FilterSpec | None = None) -> None:
        if self.index is None or (ids is not None and not ids):
            return
        self.ensure()
        self.index.delete(self.name, ids=list(ids) if ids is not None else None, filter=spec.to_qdrant() if spec else None)

    # -- reads ------------------------------------------------------------------------------------
    def query(
        self,
        text: str,
        spec: FilterSpec,
        *,
        k: int = 10,
        route: str = "hybrid",
        vector: Sequence[float] | None = None,
        depth: int | None = None,
        signals: bool = False,
        vectors: str = "text",
        now: Any = None,
        pool: int | None = None,
        whole: str | None = None,
    ) -> Found:
        """Hybrid (BM25 + dense, weighted RRF inside the index), bm25 or dense; ``vector`` is the query's
        embedding when the caller has it. The embedder failing or missing turns hybrid into bm25 and says so.

        ``vectors`` (messages) picks the dense vectors the dense side queries: "text" (``dense``, the
        record's text), "both" (also each point's ``context`` vector, the message embedded after the turn
        before it, scoring a point by the mean of its two cosines: a message is found by its own words
        and by the question it answers; one query of the ``mean`` vector where the collection has it
        (``has_mean``), else both vectors' lists merged by ``dense_of``) or "context" (the context vector where a point has
        one, else its text: the previous release's single vector). Hybrid with ``signals`` (the message search),
        ``vectors`` other than "text", ``settings.fusion`` other than "rrf" or a second-stage weight set
        fuses client-side (:mod:`layered_memory.retrieval.rerank`); other kinds keep weighted RRF inside
        the index (the second stage is measured on messages only); ``now`` anchors relative time
        expressions (default: ``settings.time_anchor``); ``pool`` is this call's deep tail: how deep each side of
        a hybrid second stage reads for the hits below the first ``deep_from`` (at least ``settings.deep_limit``;
        see ``_second_stage``); ``whole`` is the query before ``max_query_chars`` cut it (``text``): a message of
        exactly that text comes first (``exact_first``), however long it is."""
        if self.index is None:
            raise CapabilityError(f"{self.name}: no vector index configured; use query_records (the core mode)")
        self.ensure()
        route_used, reason = route, None
        timings: dict[str, float] = {}
        dense = list(vector) if vector is not None else None
        if route in ("hybrid", "dense") and dense is None and self.embedder is None:
            if route == "dense":
                raise CapabilityError("route='dense' needs an embedder; configure one or use route='bm25'")
            route_used, reason = "bm25", "no embedder configured"
        kind = spec.value_of("kind")
        if kind is not None and not self.index.holds_kind(self.name, kind):  # nothing to find: nothing to embed or ask
            return Found([], route_used, reason, timings)
        if route_used in ("hybrid", "dense") and dense is None and self.embedder is not None:
            t0 = time.perf_counter()
            try:
                dense = self.embedder.embed_query(dense_query(text[: self.settings.max_query_chars], self.settings))
                timings["embed"] = round((time.perf_counter() - t0) * 1000, 3)
            except Exception as exc:
                if route == "dense":
                    raise
                logger.warning("embedder failed (%s); %s search falls back to bm25", type(exc).__name__, self.name)
                route_used, reason = "bm25", f"embedder failed: {type(exc).__name__}: {exc}"
        sparse = self.encoder.query(self.analyzer.terms(text)) if route_used in ("hybrid", "bm25") else None
        if sparse is not None and not sparse.indices:
            sparse = None
        if route_used == "bm25":
            dense = None
        if dense is None and sparse is None:
            return Found([], route_used, reason, timings)
        t0 = time.perf_counter()
        s = self.settings
        limit = max(k, depth or k)
        context = vectors != "text"
        client_side = signals and (context or s.fusion != "rrf" or has_signals(s))
        if (route_used == "hybrid" and client_side) or (signals and route_used != "hybrid"):  # a side may be empty
            hits, cosines = self._second_stage(text, dense, sparse, spec, limit, now=now, vectors=vectors, pool=pool, whole=whole)
            timings["retrieve"] = round((time.perf_counter() - t0) * 1000, 3)
            return Found(hits, route_used, reason, timings, cosines)
        hits = self.index.query(self.name, IndexQuery(
            dense=dense, sparse=sparse, filter=spec.to_qdrant(), limit=limit,
            prefetch_limit=max(s.prefetch_limit, limit), rrf_k=s.rrf_k,
            weights=(s.dense_weight, s.sparse_weight) if dense is not None and sparse is not None else None,
        ))
        timings["retrieve"] = round((time.perf_counter() - t0) * 1000, 3)
        return Found(hits, route_used, reason, timings)

    def _second_stage(
        self, text: str, dense: list[float] | None, sparse: SparseVector | None, spec: FilterSpec, limit: int, *,
        now: Any, vectors: str = "text", pool: int | None = None, whole: str | None = None,
    ) -> tuple[list[IndexHit], dict[str, float]]:
        """Each side's top ``prefetch_limit`` with its scores (one batch of index queries carrying only the
        payload keys the signals read; the dense side as ``vectors`` says, see ``query``), fused client-side
        by ``settings.fusion`` and reranked by the second-stage signals; the whole payload is read for the
        best ``limit`` only. Without ``sparse`` (the dense route, or a query of stop words) the dense side
        alone is ranked. A hybrid search for more than ``deep_from`` hits reads each side ``deep_limit`` (or
        ``pool``, the deeper) deep and ranks the hits below the first ``deep_from`` from those deeper lists
        (``fuse_sides``). Returns the hits and the dense side's exact scores (``exact_cosines``; with the ``mean``
        vector every returned hit's too: its payload is read by a has-id query of that vector, not ``retrieve``,
        which costs the same and spares the relevance floor a second query for the hits BM25 alone found)."""
        s = self.settings
        flt = spec.to_qdrant()
        depth = max(s.prefetch_limit, limit)
        # the deep tail: hits below the first deep_from come from deeper lists, the head from their first prefetch_limit
        deep_limit = max(s.deep_limit, pool or 0)
        deep = dense is not None and sparse is not None and deep_limit > 0 and limit > s.deep_from
        read = max(deep_limit, depth) if deep else depth
        keys = [*SIGNAL_KEYS, "text"] if s.phrase_weight > 0 else list(SIGNAL_KEYS)
        if s.sentence_weight > 0:
            keys.append(SENTENCES_KEY)  # which listed messages have sentence vectors to read
        requests: list[tuple[str, IndexQuery]] = []
        # "both" with the mean vector: its one list is the dense side exactly, merged below as a single list
        mean = dense is not None and vectors == "both" and self.has_mean()
        merge = "text" if mean else vectors
        if dense is not None:
            requests.append(("dense", IndexQuery(dense=dense, filter=flt, limit=read, prefetch_limit=read, payload=keys, using="mean" if mean else "dense")))
            if merge != "text":
                requests.append(("context", IndexQuery(dense=dense, filter=flt, limit=read, prefetch_limit=read, payload=keys, using="context")))
        if sparse is not None:
            # a hybrid search's BM25 hits carry their text: how much of the query its best holds sets its weight
            coverage = dense is not None and reads_bm25_text(s) and "text" not in keys
            requests.append(("sparse", IndexQuery(sparse=sparse, filter=flt, limit=read, prefetch_limit=read, payload=[*keys, "text"] if coverage else keys)))
        got = dict(zip((name for name, _ in requests), self.index.query_batch(self.name, [q for _, q in requests])))  # type: ignore[union-attr]
        dense_side = dense_of(got.get("dense"), got.get("context"), merge, read)
        cosines = exact_cosines(got.get("dense"), got.get("context"), merge, dense_side) if dense_side is not None else {}
        if mean and s.sentence_weight > 0 and got.get("dense") and self.has_sentences():  # the cosines above stay the mean's
            got["dense"], dense_side = self._best_sentences(dense, got["dense"], s.prefetch_limit)
        if dense is None or sparse is None:  # one route: its own ranking, a verbatim match first
            side = list(dense_side if sparse is None else got.get("sparse", [])) or []
            ranked = [(h.id, h.score) for h in side]
            if s.exact_first and side:  # a verbatim match scores just above the best hit
                top = max(sc for _, sc in ranked) + 1e-3
                first = verbatim(whole or text, [h.payload for h in side])
                ranked = sorted(((key, top if ex else sc) for (key, sc), ex in zip(ranked, first)), key=lambda r: -r[1])
            ranked = ranked[:limit]
        else:
            ranked = fuse_sides(SecondStage(s, self.analyzer), text, got, merge, read, limit=limit, dense_side=dense_side, now=now,
                                head=s.deep_from if deep else 0, head_depth=s.prefetch_limit, whole=whole)
        if not ranked:
            return [], cosines
        ids = [str(key) for key, _ in ranked]
        if mean:  # the whole payload and the exact dense score of every hit in one query (the relevance floor reads the scores)
            only = models.Filter(must=[models.HasIdCondition(has_id=ids)])
            read_back = self.index.query(self.name, IndexQuery(dense=dense, filter=only, limit=len(ids), prefetch_limit=len(ids), using="mean"))  # type: ignore[union-attr]
            cosines.update((h.id, h.score) for h in read_back)
            seen = {h.id for h in read_back}
            missing = [i for i in ids if i not in seen]  # points without dense vectors yet (the writer's lag): BM25 found them
            if missing:
                read_back += self.index.retrieve(self.name, missing)  # type: ignore[union-attr]
        else:
            read_back = self.index.retrieve(self.name, ids)  # type: ignore[union-attr]
        full = {h.id: h.payload for h in read_back}
        return [IndexHit(id=key, score=score, payload=full[key]) for key, (_, score) in zip(ids, ranked) if key in full], cosines

    def _best_sentences(self, dense: list[float], hits: list[IndexHit], head: int) -> tuple[list[IndexHit], list[IndexHit]]:
        """The mean vector's list ``hits`` rescored with each point's best sentence (``retrieval.sentence_weight`` w:
        (1 - w) x its mean cosine + w x the higher of that and its best sentence's cosine, one has-id query of the
        ``sentences`` vector over the messages whose payload says they have one; a message of one sentence keeps its
        score, and a list of such messages is returned as it is, without a query). Returns the list for the deep
        tail's head (its first ``head`` stay those of the mean's list, each part in its new order) and the whole list
        in its new order."""
        long = [h.id for h in hits if h.payload.get(SENTENCES_KEY)]
        if not long:  # no listed message has two sentences or more: nothing to read, nothing moves
            return hits, hits
        w = self.settings.sentence_weight
        only = models.Filter(must=[models.HasIdCondition(has_id=long)])
        got = self.index.query(self.name, IndexQuery(dense=dense, filter=only, limit=len(hits), prefetch_limit=len(hits), payload=False,  # type: ignore[union-attr]
                                                     using="sentences"))
        best = {h.id: h.score for h in got}
        scored = [IndexHit(id=h.id, score=(1.0 - w) * h.score + w * max(h.score, best.get(h.id, h.score)), payload=h.payload) for h in hits]

        def order(part: list[IndexHit]) -> list[IndexHit]:
            return sorted(part, key=lambda h: -h.score)

        return order(scored[:head]) + order(scored[head:]), order(scored)

    def dense_scores(self, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> dict[str, float]:
        """The dense side's score of each point of ``ids`` (messages: the mean of its two cosines, its text's
        alone without a context), the best over the query ``vectors``, read for those points only (a has-id
        filter; no vector leaves the index): one list of the ``mean`` vector per query vector, or both
        vectors' lists in a collection created before it (every point is in both: the merge is exact)."""
        if not ids or self.index is None or not vectors:
            return {}
        only, n = models.Filter(must=[models.HasIdCondition(has_id=list(ids))]), len(ids)
        usings = ("mean",) if self.has_mean() else ("dense", "context")
        got = self.index.query_batch(self.name, [IndexQuery(dense=v, filter=only, limit=n, prefetch_limit=n, payload=False, using=u)
                                                 for v in vectors for u in usings])
        out: dict[str, float] = {}
        for lists in zip(*[iter(got)] * len(usings)):  # one query vector's lists
            scores = {h.id: h.score for h in lists[0]} if len(lists) == 1 else exact_cosines(lists[0], lists[1], "both", lists[0])
            for pid, c in scores.items():
                out[pid] = max(out.get(pid, -1.0), c)
        return out

    def query_records(
        self, text: str, spec: FilterSpec, records: Iterable[tuple[str, dict[str, Any], str]], *, k: int = 10
    ) -> Found:
        """The core mode: BM25 in process over ``(point_id, payload, text)`` records, those the spec admits."""
        kept = [(pid, payload, body) for pid, payload, body in records if spec.matches(payload, pid)]
        terms = self.analyzer.terms(text)
        if not kept or not terms:
            return Found([], "bm25")
        scorer = BM25Scorer([self.analyzer.terms(body) for _, _, body in kept], k1=self.settings.k1, b=self.settings.b)
        idx, scores = scorer.top_k(terms, min(k, len(kept)))
        hits = [IndexHit(id=kept[i][0], score=float(sc), payload=kept[i][1]) for i, sc in zip(idx.tolist(), scores.tolist()) if sc > 0]
        return Found(hits, "bm25")


def fuse_sides(stage: SecondStage, text: str, got: dict[str, list[IndexHit]], vectors: str, read: int, *, limit: int,
               head: int = 0, head_depth: int = 0, dense_side: list[IndexHit] | None = None, now: Any = None,
               whole: str | None = None) -> list[tuple[Any, float]]:
    """The second stage over the index's lists ``got`` ("dense", "context", "sparse": each side's top ``read``),
    the best ``limit`` as ``(id, score)``. With ``head`` (the deep tail, ``retrieval.deep_limit``): the first
    ``head`` are ranked from each list's first ``head_depth`` only, exactly as a search reading that deep, and
    the rest from the whole lists, so a hit further down both lists reaches the tail without moving the head.
    ``whole``: the query before ``max_query_chars`` cut it (``text``), which a verbatim match is compared with."""

    def sides(lists: dict[str, list[IndexHit]], depth: int, dense: list[IndexHit] | None = None) -> list[tuple[str, list[IndexHit]]]:
        dense = dense if dense is not None else dense_of(lists.get("dense"), lists.get("context"), vectors, depth)
        return [(side, hits) for side, hits in (("dense", dense), ("sparse", lists.get("sparse"))) if hits is not None]

    every = sides(got, read, dense_side)
    if head <= 0 or limit <= head:
        return stage.rank_sides(text, every, k=limit, now=now, whole=whole)
    top = stage.rank_sides(text, sides({name: hits[:head_depth] for name, hits in got.items()}, head_depth), k=head, now=now, whole=whole)
    return join_ranked(top, stage.rank_sides(text, every, k=limit + len(top), now=now, whole=whole), limit)


def dense_of(text: list[IndexHit] | None, context: list[IndexHit] | None, vectors: str, depth: int) -> list[IndexHit] | None:
    """The dense side of a message search from the hits of both dense vectors (each list the top ``depth``).

    "both": per point, the mean of its two cosines (a point without a context vector, the first turn of
    a chat, counts its text's twice); a cosine a list cut off is taken as that list's last one (an upper
    bound). Measured: the mean ranks better than either vector or the higher of the two on every dev set
    (docs/retrieval.md). "context": the context vector's cosine, the text vector's for points without a
    context (no ``prev`` in the payload: no turn before them), as the previous release's single vector."""
    if context is None or text is None:
        return text
    if vectors == "context":
        return best_of(context, [h for h in text if "prev" not in h.payload])
    own = {h.id: h for h in text}
    ctx = {h.id: h for h in context}
    own_floor = text[-1].score if len(text) >= depth and text else None
    ctx_floor = context[-1].score if len(context) >= depth and context else None
    out = []
    for pid in dict.fromkeys([*own, *ctx]):
        o, c = own.get(pid), ctx.get(pid)
        hit = o or c
        o_score = o.score if o is not None else own_floor
        if c is not None:
            c_score = c.score
        elif "prev" in hit.payload and ctx_floor is not None:
            c_score = ctx_floor
        else:
            c_score = o_score  # no context vector: its text stands for both
        if o_score is None:
            o_score = c_score
        out.append(IndexHit(id=hit.id, score=(o_score + c_score) / 2, payload=hit.payload))  # type: ignore[operator]
    return sorted(out, key=lambda h: -h.score)


def exact_cosines(text: list[IndexHit] | None, context: list[IndexHit] | None, vectors: str, side: list[IndexHit]) -> dict[str, float]:
    """The dense side's score of the points it knows exactly: with "both", those both lists returned
    (the mean of their two cosines) and those without a context vector (their text's); a point one list
    cut off has only an upper bound there and is left out. Otherwise every point of ``side``."""
    if vectors != "both" or text is None or context is None:
        return {h.id: h.score for h in side}
    ctx = {h.id: h.score for h in context}
    out: dict[str, float] = {}
    for h in text:
        c = ctx.get(h.id)
        if c is not None:
            out[h.id] = (h.score + c) / 2
        elif "prev" not in h.payload:  # no context vector: its text stands for both
            out[h.id] = h.score
    return out


def best_of(*lists: Sequence[IndexHit]) -> list[IndexHit]:
    """Hits of several lists of the same kind of score (e.g. cosines of two dense vectors), one per point
    with its best score, best first (ties: the earlier list, then its order)."""
    best: dict[str, IndexHit] = {}
    for hits in lists:
        for h in hits:
            seen = best.get(h.id)
            if seen is None or h.score > seen.score:
                best[h.id] = h
    return sorted(best.values(), key=lambda h: -h.score)


__all__ = ["Entry", "Found", "IndexedCollection", "ROUTES", "best_of", "dense_of", "exact_cosines", "fuse_sides"]
