"""Sources and their chunks: the records, the points, and the one write protocol both use.

A *source* is one indexed document (``index_document``) or one file of a repository (``index_repo``).
The RecordStore holds the truth: ``doc_sources`` (one record per source: its version hash and chunk
keys) and ``doc_chunks`` (one record per chunk: its payload and indexed text, so ``reindex`` and the
core mode without a vector index need nothing else). The vector collection ``<prefix>documents``
holds one point per chunk (``kind`` ``doc_chunk`` or ``code_chunk``).

Replacing a source's chunks (``SourceStore.replace``):

1. every chunk is embedded before anything is written (a failing embedder writes nothing);
2. a durable delete intent (``index.intents``, op ``doc``) is recorded;
3. the new chunks (keys carry the new version) are written to the records and the index;
4. the source record is written with the new version: the commit point;
5. the old version's chunks are deleted; the intent is dropped.

An exception in 3-4 deletes what 3 wrote and re-raises: nothing half-indexed. A crash leaves the
intent, and ``repair`` (run when the intents are finished on the next open / ``sync_index``) deletes every chunk
whose version is not the source record's. Searches only return chunks of the committed version.

The scope rule: a source written through an unbound handle is the tenant's (``visible_to: ["*"]``);
one written through ``mem.for_user(u)`` is u's private upload (``visible_to: [u]``, ``user_id: u``).
A handle sees the tenant's sources plus, when bound, its own user's, never another user's; keys
start with the owner, so no write of one space touches another.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from ..index.collection import Entry, Found, IndexedCollection
from ..filterspec import Condition, Eq, FilterSpec
from ..index.points import point_id
from ..stores.base import iter_docs
from ..index.intents import drop_intent, put_intent
from ..stores.base import IndexHit

if TYPE_CHECKING:
    from ..config import DocumentSettings
    from ..index import Scope
    from ..kernel import Kernel

logger = logging.getLogger(__name__)

SOURCES = "doc_sources"
CHUNKS = "doc_chunks"
REPOS = "doc_repos"
VECTORS = "documents"
DOC_KIND = "doc_chunk"
CODE_KIND = "code_chunk"
SHARED = "*"
PAGE = 500


def enc(label: str) -> str:
    return quote(label, safe="")


class DocumentSpace(Protocol):
    """What the parts of ``mem.documents`` (``repo``, ``texts``) use of it (``api.Documents``): one space's
    store and the documents settings."""

    store: SourceStore
    settings: DocumentSettings


@dataclass(slots=True)
class NewChunk:
    """A chunk to write: its payload fields (without the scope fields) and the text to index."""

    payload: dict[str, Any]
    indexed_text: str
    dense: list[float] | None = None  # a vector computed by the caller (a batch for many sources)


@dataclass(slots=True)
class Replaced:
    added: int = 0
    removed: int = 0
    embedded: int = 0  # chunks the embedder ran on (0 without a vector index or an embedder)
    seconds: dict[str, float] = field(default_factory=dict)


class SourceStore:
    """The sources of one handle's space (the tenant's, or a bound user's)."""

    def __init__(self, core: Kernel, scope: Scope) -> None:
        self.runtime = core
        self.tenant = scope.tenant
        self.owner = scope.bound_user
        self.token = SHARED if self.owner is None else enc(self.owner)
        self.visible = [SHARED] if self.owner is None else [SHARED, self.owner]
        name = core.settings.qdrant.collection_prefix + VECTORS
        self.coll = IndexedCollection(
            core.index, name, core.embedder, core.analyzer, core.indexer.encoder, core.settings.retrieval,
            ensured=name in core.ensured_collections,
        )

    def _ensure(self) -> None:
        """Create the vector collection on first use (not on ``mem.documents``: most handles never index)."""
        core = self.runtime
        if core.index is not None and self.coll.name not in core.ensured_collections:
            self.coll.ensure()
            core.ensured_collections.add(self.coll.name)

    @property
    def records(self) -> Any:
        return self.runtime.records

    def key(self, space: str, group: str, name: str) -> str:
        """The record key of a source: owner, space ("d" documents, "r" repository files), group, name."""
        return f"{self.token}!{space}|{enc(group)}|{enc(name)}"

    def prefix(self, space: str, group: str | None = None, token: str | None = None) -> str:
        base = f"{token or self.token}!{space}|"
        return base if group is None else f"{base}{enc(group)}|"

    # -- reads --------------------------------------------------------------------------------------
    def get(self, keys: Sequence[str]) -> list[dict[str, Any] | None]:
        return self.records.get_docs(self.tenant, SOURCES, list(keys)) if keys else []

    def scan(self, collection: str, prefix: str) -> Iterable[tuple[str, dict[str, Any]]]:
        return iter_docs(self.records, self.tenant, collection, prefix=prefix, page=PAGE)

    def chunk_keys(self, skey: str) -> list[str]:
        return [k for k, _ in self.scan(CHUNKS, skey + "#")]

    # -- writes -------------------------------------------------------------------------------------
    def _scoped(self, kind: str, skey: str, version: str, payload: dict[str, Any]) -> dict[str, Any]:
        out = {**payload, "tenant": self.tenant, "kind": kind, "source_key": skey, "version": version,
               "visible_to": [SHARED] if self.owner is None else [self.owner]}
        if self.owner is not None:
            out["user_id"] = self.owner
        return out

    def replace(self, skey: str, source: dict[str, Any], kind: str, chunks: Sequence[NewChunk], *, old: dict[str, Any] | None) -> Replaced:
        """Make ``chunks`` the chunks of source ``skey`` (see the module docstring). ``source["version"]``
        is the new version; ``old`` the stored source record (None: new)."""
        version = source["version"]
        core = self.runtime
        keys = [f"{skey}#{version}:{i:05d}" for i in range(len(chunks))]
        entries = [
            Entry(point_id(self.tenant, kind, k), self._scoped(kind, skey, version, c.payload), c.indexed_text, dense=c.dense)
            for k, c in zip(keys, chunks)
        ]
        t0 = time.perf_counter()
        self._ensure()
        points = self.coll.points(entries) if core.index is not None else []  # embeds: fails before any write
        out = Replaced(seconds={"embed": round(time.perf_counter() - t0, 4)})
        if core.index is not None and core.embedder is not None:
            out.embedded = sum(1 for c in chunks if c.dense is None)
        t0 = time.perf_counter()
        with core.write_lock:
            intent = put_intent(self.records, self.tenant, "doc", skey=skey, owner=self.owner)
            try:
                self.records.put_docs(self.tenant, CHUNKS, {
                    k: {"payload": e.payload, "text": e.text} for k, e in zip(keys, entries)
                })
                if points:
                    core.index.upsert(self.coll.name, points)
                self.records.put_docs(self.tenant, SOURCES, {skey: {**source, "chunks": len(keys), "kind": kind, "owner": self.owner}})
            except BaseException:
                self._drop_chunks(kind, [k for k in keys], keep_version=old.get("version") if old else None, quiet=True)
                drop_intent(self.records, self.tenant, intent)
                raise
            stale = [k for k in self.chunk_keys(skey) if not k.startswith(f"{skey}#{version}:")]
            self._drop_chunks(kind, stale)
            drop_intent(self.records, self.tenant, intent)
        out.added, out.removed = len(keys), len(stale)
        out.seconds["write"] = round(time.perf_counter() - t0, 4)
        return out

    def _drop_chunks(self, kind: str, keys: Sequence[str], *, keep_version: str | None = None, quiet: bool = False) -> None:
        if not keys:
            return
        try:
            self.records.delete_docs(self.tenant, CHUNKS, list(keys))
            if self.runtime.index is not None:
                self.coll.delete(ids=[point_id(self.tenant, kind, k) for k in keys])
        except Exception:
            if not quiet:
                raise
            logger.warning("cleanup of %d new chunks failed; the delete intent's repair removes them", len(keys))

    def remove(self, skeys: Sequence[str]) -> int:
        """Delete sources and their chunks. Returns how many sources existed."""
        if not skeys:
            return 0
        core = self.runtime
        n = 0
        with core.write_lock:
            for skey, doc in zip(skeys, self.get(skeys)):
                intent = put_intent(self.records, self.tenant, "doc", skey=skey, owner=self.owner)
                kind = (doc or {}).get("kind", DOC_KIND)
                self._drop_chunks(kind, self.chunk_keys(skey))
                n += self.records.delete_docs(self.tenant, SOURCES, [skey])
                drop_intent(self.records, self.tenant, intent)
        return n

    def repair(self, skey: str) -> None:
        """Finishing the intent of an interrupted replace / remove: drop chunks of other versions (idempotent)."""
        with self.runtime.write_lock:
            doc = self.get([skey])[0]
            keep = f"{skey}#{doc['version']}:" if doc else None
            kind = (doc or {}).get("kind")
            stale = [k for k in self.chunk_keys(skey) if keep is None or not k.startswith(keep)]
            for kd in ([kind] if kind else [DOC_KIND, CODE_KIND]):
                self._drop_chunks(kd, stale)
            if doc is not None and self.runtime.index is not None:
                self.reindex(prefix=skey + "#", missing_only=True)

    def reindex(self, *, prefix: str | None = None, missing_only: bool = False) -> int:
        """Re-create the points of this space's chunks (an unbound handle: every space of the tenant)
        from the records. Returns how many were indexed."""
        core = self.runtime
        if core.index is None:
            return 0
        prefixes = [prefix] if prefix else ([f"{self.token}!"] if self.owner is not None else [""])
        n = 0
        batch = core.settings.documents.batch_size
        for pfx in prefixes:
            page: list[tuple[str, dict[str, Any]]] = []
            for item in self.scan(CHUNKS, pfx):
                page.append(item)
                if len(page) >= batch:
                    n += self._reindex_page(page, missing_only)
                    page = []
            n += self._reindex_page(page, missing_only)
        return n

    def _reindex_page(self, page: list[tuple[str, dict[str, Any]]], missing_only: bool) -> int:
        if not page:
            return 0
        entries = [Entry(point_id(self.tenant, d["payload"]["kind"], k), d["payload"], d["text"]) for k, d in page]
        self._ensure()
        if missing_only:
            have = {h.id for h in self.runtime.index.retrieve(self.coll.name, [e.point_id for e in entries])}
            entries = [e for e in entries if e.point_id not in have]
        with self.runtime.write_lock:
            self.coll.upsert(entries)
        return len(entries)

    # -- search -------------------------------------------------------------------------------------
    def spec(self, kind: str, *conds: Condition) -> FilterSpec:
        """The scope rule of a query: the tenant, the kind, what this handle may see; then ``conds``."""
        return FilterSpec.of(Eq("tenant", self.tenant), Eq("kind", kind), Eq("visible_to", *self.visible)).and_(*conds)

    def query(
        self, text: str, kind: str, conds: Sequence[Condition], k: int, space: str, route: str = "hybrid", *,
        exclude: Sequence[Condition] = (), vector: Sequence[float] | None = None,
    ) -> Found:
        """Hybrid search (or BM25 in process without a vector index) over committed chunks only;
        ``exclude``: conditions no hit may meet; ``vector``: the query's embedding (route "dense")."""
        spec = self.spec(kind, *conds).and_(must_not=exclude)
        if self.runtime.index is None:
            tokens = [SHARED] + ([enc(self.owner)] if self.owner else [])
            records = (
                (point_id(self.tenant, kind, key), d["payload"], d["text"])
                for tok in tokens for key, d in self.scan(CHUNKS, self.prefix(space, token=tok))
            )
            found = self.coll.query_records(text, spec, records, k=k * 2)
        else:
            self._ensure()
            found = self.coll.query(text, spec, k=k * 2, route=route, vector=vector)
        found.hits = self._committed(found.hits)[:k]
        return found

    def _committed(self, hits: Sequence[IndexHit]) -> list[IndexHit]:
        skeys = sorted({h.payload.get("source_key") for h in hits if h.payload.get("source_key")})
        current = {k: (d or {}).get("version") for k, d in zip(skeys, self.get(skeys))}
        return [h for h in hits if h.payload.get("version") and current.get(h.payload.get("source_key")) == h.payload.get("version")
                and h.payload.get("tenant") == self.tenant and set(h.payload.get("visible_to") or ()) & set(self.visible)]


__all__ = ["CHUNKS", "CODE_KIND", "DOC_KIND", "NewChunk", "REPOS", "Replaced", "SHARED", "SOURCES", "SourceStore", "VECTORS", "enc"]
