"""The write side of the message index: payloads, BM25 sparse vectors, dense embeddings, and
``PendingMessages``, the background writer's source over the messages' pending flag.

The RecordStore is written first (durable); messages stay ``pending`` there until the index has
them. ``Indexer.flush`` indexes whatever is pending, so a crash between the two writes is repaired
on the next start or by ``reindex``. Deletes go the other way round: see ``index.intents``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from .._lazy import qdrant_models as models
from ..errors import ConfigurationError
from ..models import Message, MessageRef
from ..progress import report
from ..providers.base import Embedder
from ..retrieval.analyzer import Analyzer
from ..retrieval.bm25 import BM25Encoder
from ..sentences import split_sentences
from ..stores.base import INDEX_UPGRADES, MESSAGE_POINTS_V2, RecordStore, VectorIndex, VectorPoint
from .points import SENTENCES_KEY, legacy_message_point_id, message_payload, message_point_id, scope_filter, scroll_all, speaker

logger = logging.getLogger(__name__)

INDEX_CONTEXTS = ("neighbour", "speaker", "text")
PREVIOUS_CHARS = 300
CONTEXT_GAP = 6 * 3600.0  # seconds: an older turn of the chat is not the context of a message
MAX_SENTENCES = 12  # sentence vectors per message at most (a pasted page is not embedded sentence by sentence)
Vectors = tuple[list[float], list[float] | None, list[list[float]] | None]  # a message's dense, context and sentence vectors


class Indexer:
    """Turns records into points and keeps the index in line with the RecordStore.

    A message point holds two dense vectors: ``dense``, its own text ("Speaker: text"), so a message is
    found by its own words, and ``context``, the text after the turn before it in the same chat (whoever
    wrote it), so a reply is found by the question it answers; a search queries both (``retrieval.rerank``).
    The turn before counts only within ``context_gap`` seconds: a chat resumed days later starts afresh,
    so one chat per conversation or one per session index the same texts. BM25 indexes the context with
    the turn's own words counted twice, with the messages' own parameters (``message_encoder``)."""

    def __init__(
        self,
        records: RecordStore,
        index: VectorIndex | None,
        embedder: Embedder | None,
        analyzer: Analyzer,
        encoder: BM25Encoder,
        collection: str,
        context: str = "neighbour",
        context_gap: float = CONTEXT_GAP,
        *,
        message_encoder: BM25Encoder | None = None,
        bm25: Mapping[str, Any] | None = None,
    ) -> None:
        if context not in INDEX_CONTEXTS:
            raise ConfigurationError(f"index_context={context!r} must be one of {', '.join(INDEX_CONTEXTS)}")
        self.context = context
        self.context_gap = context_gap
        self.records = records
        self.index = index
        self.embedder = embedder
        self.analyzer = analyzer
        self.encoder = encoder  # the other kinds' BM25 (documents, items, agents, summaries)
        self.message_encoder = message_encoder or encoder  # the messages' (``retrieval.message_k1`` / ``_b`` / ``_avgdl``)
        self.collection = collection
        self.bm25 = bm25  # what the engine writes sparse vectors with (``retrieval.bm25.marker``), recorded on creation
        self._upgraded: set[str] = set()  # tenants checked for the schema v2 point upgrade
        # The previous turn each BM25-only point was written with (see index_sparse): refs, never texts.
        self.previous_refs: dict[tuple[str, MessageRef], MessageRef | None] = {}
        # Messages made pending again by an edit in this process (see bump): (tenant, ref) -> generation.
        self.generations: dict[tuple[str, MessageRef], int] = {}
        if index is not None:
            index.ensure_collection(collection, dense_dim=embedder.dim if embedder else None, embedder=embedder.name if embedder else None,
                                    bm25=bm25)

    def own_text(self, msg: Message) -> str:
        """What the ``dense`` vector embeds: "Speaker: text" (``index_context="text"``: the text alone).

        Measured on LoCoMo (share of evidence turns in the top 10, BM25): plain text 0.58,
        "Speaker: text" 0.61, with the previous turn 0.68. Hits still show the message text alone.
        """
        return self._as_written(msg, msg.content)

    def _as_written(self, msg: Message, text: str) -> str:
        """``text`` of ``msg`` as its vectors embed it: "Speaker: text", or the text alone with ``index_context="text"``."""
        return text if self.context == "text" else f"{speaker(msg)}: {text}"

    def indexed_texts(self, msg: Message, previous: Message | None) -> tuple[str, str | None]:
        """(own text, context text): the context is the turn before, then the own text; None without a
        turn before (or with ``index_context`` other than "neighbour")."""
        own = self.own_text(msg)
        if self.context != "neighbour" or previous is None:
            return own, None
        prev = previous.content if len(previous.content) <= PREVIOUS_CHARS else previous.content[:PREVIOUS_CHARS] + "…"
        return own, f"{speaker(previous)}: {prev}\n{own}"

    def sentence_texts(self, msg: Message) -> list[str]:
        """What the ``sentences`` multivector embeds besides the own text: each sentence of a message of two
        sentences or more, as the own text is written ("Speaker: sentence"), at most ``MAX_SENTENCES`` (none for
        a one-sentence message: its own vector is its best sentence). A fact said in passing among filler is
        found by its sentence (``retrieval.sentence_weight``)."""
        parts = split_sentences(msg.content)
        if len(parts) < 2:
            return []
        return [self._as_written(msg, p) for p in parts[:MAX_SENTENCES]]

    def indexed_text(self, msg: Message, previous: Message | None) -> str:
        """The text BM25 indexes: the context when there is one, else the own text."""
        own, ctx = self.indexed_texts(msg, previous)
        return ctx or own

    def sparse_terms(self, msg: Message, text: str) -> list[str]:
        """BM25 terms of the indexed text, with the turn's own words counted twice, so a turn
        outranks the next one, whose context repeats it (LoCoMo: NDCG@10 0.47 -> 0.52)."""
        terms = self.analyzer.terms(text)
        if self.context == "neighbour" and text != msg.content:
            terms += self.analyzer.terms(msg.content)
        return terms

    def is_neighbour(self, previous: Message, msg: Message) -> bool:
        """Whether ``previous`` (an earlier message of the same chat) is close enough in time to be the
        context of ``msg``."""
        return previous.chat_id == msg.chat_id and abs((msg.create_time - previous.create_time).total_seconds()) <= self.context_gap

    def points(
        self, messages: Sequence[Message], previous: dict[MessageRef, Message | None] | None = None,
        known: dict[MessageRef, Vectors] | None = None, *,
        texts: Sequence[tuple[str, str | None]] | None = None, dense: bool = True,
    ) -> list[VectorPoint]:
        """Points of messages; ``previous`` maps a message's ref to the turn before it in its chat (its id
        goes into the payload as ``prev``: the neighbour signal reads it), ``known`` holds (dense,
        context, sentences) vectors already computed (only the others are embedded), ``texts`` the (own, context)
        texts when the caller has them. ``dense=False``: BM25 points without dense vectors (what the
        write path stores before the background writer embeds)."""
        previous = previous or {}
        known = known or {}
        if texts is None:
            texts = [self.indexed_texts(m, previous.get(m.ref)) for m in messages]
        vectors: list[Vectors | None] = [known.get(m.ref) for m in messages]
        if dense and self.embedder is not None:
            todo = [i for i, v in enumerate(vectors) if v is None]
            if todo:
                vectors = list(vectors)
                got = self.embed_pairs([texts[i] for i in todo], [self.sentence_texts(messages[i]) for i in todo])
                for i, triple in zip(todo, got):
                    vectors[i] = triple
        out = []
        for i, msg in enumerate(messages):
            own, ctx = texts[i]
            payload = message_payload(msg, self.analyzer.detect_lang(msg.content))
            prev = previous.get(msg.ref)
            if prev is not None:
                payload["prev"] = prev.message_id
            pair = vectors[i] if dense and self.embedder is not None else None
            if pair is not None and pair[2]:
                payload[SENTENCES_KEY] = len(pair[2])
            out.append(
                VectorPoint(
                    id=message_point_id(msg.tenant, msg.ref), payload=payload,
                    dense=pair[0] if pair is not None else None, context=pair[1] if pair is not None else None, mean=True,
                    sentences=pair[2] if pair is not None else None,
                    sparse=self.message_encoder.document(self.sparse_terms(msg, ctx or own)),
                )
            )
        return out

    def embed_pairs(self, texts: Sequence[tuple[str, str | None]], sentences: Sequence[Sequence[str]] | None = None) -> list[Vectors]:
        """(dense, context, sentences) vectors of (own, context) texts and each message's ``sentence_texts``, in one
        ``embed_documents`` call (sentences: None for a message without them)."""
        sentences = sentences if sentences is not None else [()] * len(texts)
        flat = [t for own, ctx in texts for t in ((own, ctx) if ctx is not None else (own,))]
        flat += [t for group in sentences for t in group]
        got = iter(self.embedder.embed_documents(flat)) if flat else iter(())  # type: ignore[union-attr]
        pairs = [(next(got), next(got) if ctx is not None else None) for _, ctx in texts]
        return [(d, c, [next(got) for _ in group] or None) for (d, c), group in zip(pairs, sentences)]

    def previous_turns(self, tenant: str, messages: Sequence[Message], carry: dict[str, Message] | None = None) -> dict[MessageRef, Message | None]:
        """The turn before each message in its chat (whoever wrote it), from the batch, ``carry`` (the
        last message per chat seen earlier in the same pass) or the store; None when it is more than
        ``context_gap`` older, or there is none."""
        if self.context != "neighbour":
            return {}
        carry = carry if carry is not None else {}
        groups: dict[str, list[Message]] = {}
        for m in sorted(messages, key=lambda m: m.seq or 0):
            groups.setdefault(m.chat_id, []).append(m)
        out: dict[MessageRef, Message | None] = {}
        for chat, group in groups.items():
            prev = carry.get(chat)
            if prev is None or (prev.seq or 0) >= (group[0].seq or 0):
                prev = self._turn_before(tenant, chat, group[0].seq or 0)
            for m in group:
                out[m.ref] = prev if prev is not None and self.is_neighbour(prev, m) else None
                prev = m
            carry[chat] = group[-1]
        return out

    def _turn_before(self, tenant: str, chat_id: str, seq: int) -> Message | None:
        """The chat's message just before ``seq``: read the chat's messages in a window of seqs below it
        (one indexed read of at most ``span`` rows), widened eightfold while it holds none."""
        span = 8
        while True:
            lo = max(0, seq - span)
            page = self.records.scan_messages(tenant, chat_id=chat_id, after_seq=lo, limit=span)
            older = [m for m in page if (m.seq or 0) < seq]
            if older or lo == 0:
                return older[-1] if older else None
            span *= 8

    def index_messages(
        self, tenant: str, messages: Sequence[Message], carry: dict[str, Message] | None = None,
        *, legacy: bool = False,
    ) -> None:
        """Upsert the points of stored messages and clear their pending flag. ``legacy``: the
        tenant's points may still sit at schema 1 ids; their vectors are reused, then they are deleted."""
        if self.index is None or not messages:
            return
        known, old = self._legacy_points(tenant, messages) if legacy else ({}, [])
        self.index.upsert(self.collection, self.points(messages, self.previous_turns(tenant, messages, carry), known))
        if old:
            self.index.delete(self.collection, ids=old)
        self.records.mark_indexed(tenant, [m.ref for m in messages])

    def _legacy_points(self, tenant: str, messages: Sequence[Message]) -> tuple[dict[MessageRef, Vectors], list[str]]:
        """The schema 1 points of these messages: their dense vectors (to move them without
        embedding again; a schema 1 point has no context vector) and their ids (to delete). A point counts
        only when its payload names the same chat: a message stored after the upgrade may reuse an old
        message_id in another chat."""
        wanted: dict[str, set[MessageRef]] = {}
        for m in messages:
            wanted.setdefault(legacy_message_point_id(tenant, m.message_id), set()).add(m.ref)
        hits, _ = self.index.scroll(  # type: ignore[union-attr]
            self.collection, filter=models.Filter(must=[models.HasIdCondition(has_id=list(wanted))]),
            limit=len(wanted), with_vectors=self.embedder is not None,
        )
        vectors: dict[MessageRef, Vectors] = {}
        old: list[str] = []
        for h in hits:
            ref = MessageRef(str(h.payload.get("chat_id")), str(h.payload.get("message_id")))
            if ref in wanted.get(h.id, ()):
                old.append(h.id)
                if h.dense:
                    vectors[ref] = (h.dense, None, None)
        return vectors, old

    def _needs_upgrade(self, tenant: str) -> bool:
        if tenant in self._upgraded:
            return False
        if self.records.get_docs(tenant, INDEX_UPGRADES, [MESSAGE_POINTS_V2])[0] is None:
            self._upgraded.add(tenant)
            return False
        return True

    def flush(self, tenant: str, *, batch: int = 256) -> int:
        """Index every pending message of a tenant, oldest first. Returns how many were indexed.

        After the schema 2 upgrade (message point ids include the chat) every message is pending
        once: its point moves to the new id with its vector, and the upgrade marker is dropped."""
        if self.index is None:
            return 0
        legacy = self._needs_upgrade(tenant)
        done = 0
        carry: dict[str, Message] = {}
        while True:
            refs = self.records.pending_index(tenant, limit=batch)
            if not refs:
                break
            msgs = [m for m in self.records.get_messages(tenant, refs) if m is not None]
            missing = set(refs) - {m.ref for m in msgs}
            if missing:  # deleted after being queued: nothing to index
                self.records.mark_indexed(tenant, sorted(missing))
            self.index_messages(tenant, msgs, carry, legacy=legacy)
            done += len(msgs)
            report("messages indexed", done)
        if legacy:
            self.records.delete_docs(tenant, INDEX_UPGRADES, [MESSAGE_POINTS_V2])
            self._upgraded.add(tenant)
            logger.info("tenant %s: %d message points moved to per-chat ids", tenant, done)
        return done

    def index_sparse(self, tenant: str, messages: Sequence[Message]) -> None:
        """The write path of the background mode: BM25 points of new messages (keyword search sees them
        at once), no dense vector yet; the messages stay pending until ``PendingMessages`` embeds them.
        Each one's previous turn is remembered (by ref), so the dense vector embeds the very text BM25 indexed."""
        if self.index is None or not messages:
            return
        previous = self.previous_turns(tenant, messages)
        self.index.upsert(self.collection, self.points(messages, previous, dense=False))
        for m in messages:
            prev = previous.get(m.ref)
            self.previous_refs[(tenant, m.ref)] = prev.ref if prev is not None else None

    def bump(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        """An edit (under the engine's write lock) is about to make these messages pending again: a writer
        batch that read them before must neither upsert its old points nor clear the new pending flag."""
        if len(self.generations) > 100_000:  # settled entries are dropped by the writer; this bounds the rest
            self.generations.clear()
        for r in refs:
            key = (tenant, MessageRef(*r))
            self.generations[key] = self.generations.get(key, 0) + 1

    def delete_messages(self, tenant: str, refs: Sequence[MessageRef]) -> None:
        """Delete the messages' points, then take their text out of the turns after them (``drop_context``)."""
        if self.index is not None and refs:
            self.index.delete(self.collection, ids=[message_point_id(tenant, r) for r in refs])
            self.drop_context(tenant, refs)

    def drop_context(self, tenant: str, refs: Sequence[MessageRef] | None = None, *, rewrite: bool = True) -> int:
        """Rewrite the points whose context is a turn that no longer exists (``refs``, deleted; None: look
        at every point with a context, the crash-recovery path): a deleted message's words must not stay
        in another message's context vector or BM25 terms. The point keeps its own dense vector and
        loses the context (no embedding). Returns how many points were found stale (rewritten when
        ``rewrite``). Idempotent."""
        if self.index is None or (refs is not None and not refs):
            return 0
        must: list[Any] = list(scope_filter(tenant, "message").must or [])
        gone: set[MessageRef] | None = set(refs) if refs is not None else None
        if refs is not None:
            must += [models.FieldCondition(key="chat_id", match=models.MatchAny(any=sorted({r.chat_id for r in refs}))),
                     models.FieldCondition(key="prev", match=models.MatchAny(any=sorted({r.message_id for r in refs})))]
        flt = models.Filter(must=must, must_not=[models.IsEmptyCondition(is_empty=models.PayloadField(key="prev"))])
        done = 0
        for hits in scroll_all(self.index, self.collection, flt):
            prevs = [MessageRef(str(h.payload.get("chat_id")), str(h.payload.get("prev"))) for h in hits]
            if gone is not None:
                stale = [h for h, p in zip(hits, prevs) if p in gone]
            else:
                stale = [h for h, m in zip(hits, self.records.get_messages(tenant, prevs)) if m is None]
            own = self.records.get_messages(tenant, [MessageRef(str(h.payload.get("chat_id")), str(h.payload.get("message_id"))) for h in stale])
            kept = [(h, m) for h, m in zip(stale, own) if m is not None]  # a deleted one is an orphan: orphan_messages takes it
            if not kept or not rewrite:
                done += len(kept)
                continue
            vectors = {h.id: h for h in self.index.retrieve(self.collection, [h.id for h, _ in kept], with_vectors=True)}
            points = []
            for h, msg in kept:
                point = self.points([msg], {}, texts=[(self.own_text(msg), None)], dense=False)[0]
                point.payload = {k: v for k, v in h.payload.items() if k != "prev"}
                back = vectors.get(h.id)
                point.dense, point.sentences = (back.dense, back.sentences) if back is not None else (None, None)
                points.append(point)
            if points:
                self.index.upsert(self.collection, points)
                done += len(points)
        if done and rewrite:
            logger.info("tenant %s: the context of %d messages dropped with the turns before them", tenant, done)
        return done

    def upsert_messages(self, tenant: str, messages: Sequence[Message], previous: dict[MessageRef, Message | None]) -> None:
        """Index stored messages with their previous turns known (the repair path) and clear their pending flag."""
        if self.index is None or not messages:
            return
        self.index.upsert(self.collection, self.points(messages, previous))
        self.records.mark_indexed(tenant, [m.ref for m in messages])

    def orphan_messages(self, tenant: str, *, user_id: str | None = None, session_key: str | None = None, delete: bool = True) -> int:
        """Points of messages (in the given user / session scope) whose record no longer exists: deleted
        when ``delete``. Returns how many were found. Idempotent; points of stored messages stay."""
        if self.index is None:
            return 0
        found = 0
        for hits in scroll_all(self.index, self.collection, scope_filter(tenant, "message", user_id=user_id, session_key=session_key)):
            refs = [MessageRef(str(h.payload.get("chat_id")), str(h.payload.get("message_id"))) for h in hits]
            stored = self.records.get_messages(tenant, refs)
            orphans = [h.id for h, m in zip(hits, stored) if m is None]
            found += len(orphans)
            if orphans and delete:
                self.index.delete(self.collection, ids=orphans)
        return found


class PendingMessages:
    """The messages pending for the background writer (a ``PendingSource``): the record store's pending flag, set in the same
    transaction as the message (``put_messages``), cleared once the message's full point is written.

    ``index`` embeds and builds the points outside the engine's write lock and upserts under it: it
    reads the messages again there, so a message deleted meanwhile gets no point back, and the payload
    is the stored one (a topic set since is kept). The flag is cleared after the lock is released.
    Points are upserted whole: a search sees the BM25-only point or the full one, never a half of either."""

    name = "messages"

    def __init__(self, indexer: Indexer, lock: Any) -> None:
        self.indexer = indexer
        self.lock = lock
        # (tenant, chat) -> (ref, seq) of the newest message embedded (an edited older one never moves it back)
        self._carry: dict[tuple[str, str], tuple[MessageRef, int]] = {}

    def count(self, tenant: str) -> int:
        return self.indexer.records.count_pending(tenant)

    def pending(self, tenant: str, limit: int) -> list[MessageRef]:
        return self.indexer.records.pending_index(tenant, limit=limit)

    def index(self, tenant: str, refs: Sequence[MessageRef]) -> int:
        ix = self.indexer
        if ix.index is None:
            return 0
        if ix._needs_upgrade(tenant):  # once per tenant after the schema 2 upgrade: the old path, under the lock
            with self.lock:
                return ix.flush(tenant)
        first = self._generations(tenant, refs)
        msgs = [m for m in ix.records.get_messages(tenant, refs) if m is not None]
        return self._write(tenant, refs, msgs, self._previous(tenant, msgs), first)

    def index_now(self, tenant: str, refs: Sequence[MessageRef]) -> int:
        """Read-your-writes (``get_context_for_user``): index these messages now, in the calling thread,
        beside the writer. Only messages this process wrote and the writer has not embedded (their previous
        turn is remembered by ref) are taken, and no batch state of the writer is touched (its per-chat
        carry stays), so the points are the very ones the writer would write (a second upsert of the same
        point changes nothing)."""
        ix = self.indexer
        if ix.index is None or ix._needs_upgrade(tenant):
            return 0
        prev = {r: ix.previous_refs.get((tenant, r)) for r in refs if (tenant, r) in ix.previous_refs}
        first = self._generations(tenant, list(prev))
        msgs = [m for m in ix.records.get_messages(tenant, list(prev)) if m is not None] if prev else []
        if not msgs:
            return 0
        wanted = sorted({p for p in prev.values() if p is not None})
        by_ref = {m.ref: m for m in ix.records.get_messages(tenant, wanted) if m is not None} if wanted else {}
        previous = {m.ref: by_ref.get(prev[m.ref]) if prev[m.ref] is not None else None for m in msgs}  # type: ignore[arg-type]
        return self._write(tenant, [m.ref for m in msgs], msgs, previous, first)

    def _generations(self, tenant: str, refs: Sequence[MessageRef]) -> dict[MessageRef, int | None]:
        """The edit generation of each ref before its first read (empty unless messages were edited here)."""
        gens = self.indexer.generations  # edits in this process (Indexer.bump)
        return {r: gens.get((tenant, r)) for r in refs} if gens else {}

    def _write(self, tenant: str, refs: Sequence[MessageRef], msgs: Sequence[Message], previous: dict[MessageRef, Message | None],
               first: dict[MessageRef, int | None]) -> int:
        """Embed ``msgs`` (own text and context, outside the lock), upsert their points under it (re-read: a
        message deleted meanwhile gets no point back, a changed one its new payload, one edited since
        ``first`` none, one whose turn before was deleted no context), clear the pending flag of ``refs``."""
        ix = self.indexer
        gens = ix.generations
        texts = {m.ref: ix.indexed_texts(m, previous.get(m.ref)) for m in msgs}
        pairs = ix.embed_pairs([texts[m.ref] for m in msgs], [ix.sentence_texts(m) for m in msgs]) if ix.embedder is not None and msgs else []
        known = {m.ref: v for m, v in zip(msgs, pairs)}
        built = dict(zip((m.ref for m in msgs), ix.points(msgs, previous, known, texts=[texts[m.ref] for m in msgs])))
        with self.lock:  # short: a read and an upsert (the writes waiting for it are single adds)
            # edited since the first read (text or previous turn): no old point, and they stay pending
            edited = {r for r in refs if gens.get((tenant, r)) != first.get(r)} if gens else set()
            fresh = [m for m in ix.records.get_messages(tenant, [m.ref for m in msgs]) if m is not None and m.ref not in edited]
            read = {m.ref: m for m in msgs}
            changed = [m for m in fresh if m != read[m.ref]]  # threaded (topic_id) since the first read
            before = sorted({p.ref for p in previous.values() if p is not None})
            alive = {m.ref for m in ix.records.get_messages(tenant, before) if m is not None} if before else set()
            for m in fresh:  # the turn before was deleted meanwhile: its words must not land in this point
                p = previous.get(m.ref)
                if p is not None and p.ref not in alive:
                    previous[m.ref], texts[m.ref] = None, (texts[m.ref][0], None)
                    if m.ref in known:
                        known[m.ref] = (known[m.ref][0], None, known[m.ref][2])
                    changed.append(m)
            points = {**built, **dict(zip((m.ref for m in changed), ix.points(changed, previous, known, texts=[texts[m.ref] for m in changed])))}
            if fresh:
                ix.index.upsert(ix.collection, [points[m.ref] for m in fresh])
            upserted = {r: gens.get((tenant, r)) for r in refs} if gens else {}
        # Outside the lock: its commit is the slow part, and a crash before it only indexes the batch again.
        ix.records.mark_indexed(tenant, [r for r in refs if r not in edited])
        for r in refs:
            if r not in edited:  # an edited one keeps the previous turn its new BM25 point was written with
                ix.previous_refs.pop((tenant, r), None)
        if gens:
            self._after_edits(tenant, [r for r in refs if r not in edited], upserted)
        return len(fresh)

    def _after_edits(self, tenant: str, refs: Sequence[MessageRef], upserted: dict[MessageRef, int | None]) -> None:
        """An edit between the upsert and ``mark_indexed`` just lost its pending flag: put it back. Refs no edit
        touched since the upsert are settled and forgotten."""
        ix, gens = self.indexer, self.indexer.generations
        with self.lock:
            again = [r for r in refs if gens.get((tenant, r)) != upserted.get(r)]
            if again:
                ix.records.update_messages(tenant, [m for m in ix.records.get_messages(tenant, again) if m is not None], reindex=True)
            for r in refs:
                if r not in again:
                    gens.pop((tenant, r), None)

    def _previous(self, tenant: str, msgs: Sequence[Message]) -> dict[MessageRef, Message | None]:
        """The turns before the messages that their BM25 points were written with (the write path saw them);
        after a restart, found again (the batch follows each chat in seq order, the last message of the
        previous batch is carried by ref). Only refs outlive a batch: no other user's text stays in memory."""
        ix = self.indexer
        known = {m.ref: ix.previous_refs[(tenant, m.ref)] for m in msgs if (tenant, m.ref) in ix.previous_refs}
        rest = [m for m in msgs if m.ref not in known]
        first: dict[str, int] = {}  # the oldest seq of each chat in the rest of the batch
        for m in rest:
            first[m.chat_id] = min(first.get(m.chat_id, m.seq or 0), m.seq or 0)
        # carried only when older than the batch's part of its chat (an edited older message is not its tail)
        carried = {chat: r for (t, chat), (r, seq) in self._carry.items() if t == tenant and seq < first.get(chat, -1)}
        wanted = sorted({r for r in known.values() if r is not None} | set(carried.values()))
        by_ref = {m.ref: m for m in ix.records.get_messages(tenant, wanted) if m is not None} if wanted else {}
        previous: dict[MessageRef, Message | None] = {ref: by_ref.get(p) if p is not None else None for ref, p in known.items()}
        if rest:
            carry = {k: by_ref[r] for k, r in carried.items() if r in by_ref}
            previous.update(ix.previous_turns(tenant, rest, carry))
        for m in sorted(msgs, key=lambda m: m.seq or 0):
            key = (tenant, m.chat_id)
            if key not in self._carry or self._carry[key][1] < (m.seq or 0):
                self._carry[key] = (m.ref, m.seq or 0)
        if len(self._carry) > 10_000:
            self._carry.clear()
        return previous
