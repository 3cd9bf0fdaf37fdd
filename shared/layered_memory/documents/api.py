"""``mem.documents``: indexed documents and repositories, searched like messages (seed 002's skills
``index_document``, ``index_repo``, ``vector_rag``, ``search_repos``).

    docs = mem.documents                                   # the tenant's; mem.for_user("u1").documents: u1's private uploads
    docs.index_document(Path("runbook.md"), metadata={"team": "ops"})
    docs.index_documents(Path("docs").glob("**/*.md"))
    docs.vector_rag("how do I roll back a deploy?", k=5).hits[0].meta["citation"]   # "Runbook > Deploy > Rollback (lines 13-15)"
    docs.index_repo("~/src/app", include=["*.py", "*.md"])
    docs.search_repos("where is the user loaded by id", language="python").hits[0].meta["citation"]  # "app/users.py:10-24"

Re-indexing an unchanged document (same bytes, metadata and collection) does nothing; a changed one
replaces its chunks; ``delete_document`` removes one. A repository is re-indexed incrementally by git
blob id. Searches are hybrid (BM25 + dense, RRF inside the index) with the messages' contract: a
``SearchResult`` with hits, ``route_used``, ``fallback_reason`` (BM25 when the embedder fails or is
missing) and timings. Without a vector index (the Redis-only core) they are BM25 in process.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from ..filterspec import Condition, Eq
from ..models import SearchResult, check_json, iso, utcnow
from ..progress import report
from .prose import Chunk, chunk_sections
from .parse import Loaded, load, parse
from .results import check_k, check_query, check_route, citation, result
from .store import DOC_KIND, SOURCES, NewChunk, SourceStore

if TYPE_CHECKING:
    from ..index import Scope
    from ..kernel import Kernel
    from .repo import RepoIndexReport

CHUNKER_VERSION = "1"  # part of a document's version: a chunker change re-indexes unchanged files
DOC_FILTERS = ("collection", "source", "title", "format", "metadata")


@dataclass(slots=True)
class IndexedDocument:
    """What ``index_document`` did: ``status`` is "indexed" (new), "replaced" (changed) or "unchanged"."""

    source: str
    collection: str
    title: str
    format: str
    status: str
    chunks: int
    removed_chunks: int = 0
    version: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_collection_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200 or value != value.strip():
        raise InvalidInputError("collection", value, "must be a non-empty name of at most 200 characters", "pass e.g. collection='docs'")
    return value


def check_metadata(metadata: object) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping) or not all(isinstance(k, str) and k for k in metadata):
        raise InvalidInputError("metadata", metadata, "must be a dict with non-empty string keys", "pass e.g. {'team': 'ops'}")
    check_json("metadata", metadata)
    return dict(metadata)


class Documents:
    """Documents and repositories of one handle's space (see the module docstring)."""

    def __init__(self, core: Kernel, scope: Scope) -> None:
        self.store = SourceStore(core, scope)
        self.settings = core.settings.documents

    # -- documents ----------------------------------------------------------------------------------
    def _prepare(self, source: object, metadata: object, collection: object, name: object, format: object,
                 encoding: object = None) -> tuple[Loaded, dict[str, Any], str]:
        meta = check_metadata(metadata)
        coll = check_collection_name(collection)
        doc = load(source, name=name, format=format, max_bytes=self.settings.max_document_bytes, encoding=encoding)  # type: ignore[arg-type]
        return doc, meta, coll

    def index_document(
        self, source: str | os.PathLike[str] | bytes, *, metadata: Mapping[str, Any] | None = None, collection: str = "docs",
        name: str | None = None, format: str | None = None, encoding: str | None = None,
    ) -> IndexedDocument:
        """Index one document: a path, bytes or text (Markdown, plain text, HTML, PDF).

        Args:
            source: a path (``Path`` or a one-line string naming a file), bytes, or the text itself.
            metadata: JSON values kept on every chunk (``meta["metadata"]`` of hits; filterable).
            collection: a name to group documents (``vector_rag(filters={"collection": ...})``).
            name: the document's id for bytes and text (default: its content hash; a path's id is its
                absolute path). Re-indexing under the same id replaces the document.
            format: "markdown" | "text" | "html" | "pdf" (default: by suffix, then by content).
            encoding: the text encoding of a file or bytes (default UTF-8, a byte-order mark skipped), e.g.
                "latin-1" or "cp1252"; PDFs carry their own.

        Raises:
            InvalidInputError: a missing or unreadable file, binary content, text that is not UTF-8 (or
                not ``encoding``), an unsupported type, a file over ``documents.max_document_bytes``, bad
                metadata; nothing is written.
        """
        return self._index([self._prepare(source, metadata, collection, name, format, encoding)])[0]

    def index_documents(
        self, sources: Iterable[str | os.PathLike[str] | bytes], *, metadata: Mapping[str, Any] | None = None,
        collection: str = "docs", format: str | None = None, progress: Callable[[int, int], None] | None = None,
        encoding: str | None = None,
    ) -> list[IndexedDocument]:
        """Index many documents. Every source is read and checked before the first write (one bad file
        fails the call and nothing is written); then each document is written on its own (atomic per
        document). ``progress(done, total)`` is called after each; ``layered_memory.progress`` listeners
        get the stages "files", "chunks" and "embeddings" (cumulative)."""
        if isinstance(sources, (str, bytes, os.PathLike)) or not isinstance(sources, Iterable):
            raise InvalidInputError("sources", sources, "must be a list of paths, bytes or texts", "use index_document for one")
        prepared = [self._prepare(s, metadata, collection, None, format, encoding) for s in sources]
        return self._index(prepared, progress)

    def _index(self, prepared: list[tuple[Loaded, dict[str, Any], str]], progress: Callable[[int, int], None] | None = None) -> list[IndexedDocument]:
        out: list[IndexedDocument] = []
        store = self.store
        chunked = embedded = 0
        for n, (doc, meta, coll) in enumerate(prepared, start=1):
            version = hashlib.sha256(json.dumps(
                [doc.content_hash, doc.format, meta, coll, CHUNKER_VERSION, self.settings.chunk_chars], sort_keys=True,
            ).encode()).hexdigest()[:16]
            skey = store.key("d", coll, doc.source)
            old = store.get([skey])[0]
            if old is not None and old.get("version") == version:
                out.append(IndexedDocument(doc.source, coll, old.get("title", ""), doc.format, "unchanged", old.get("chunks", 0), 0, version))
            else:
                parsed = parse(doc)
                chunks = chunk_sections(parsed.sections, self.settings.chunk_chars)
                if not chunks:
                    raise InvalidInputError("source", doc.source, "has no text to index", "index a document with content")
                new = [NewChunk(self._payload(doc, parsed.title, coll, meta, c), c.indexed_text(parsed.title)) for c in chunks]
                record = {"source": doc.source, "title": parsed.title, "format": doc.format, "collection": coll, "version": version,
                          "metadata": meta, "path": doc.path, "indexed_at": iso(utcnow())}
                chunked += len(new)
                report("chunks", chunked)
                done = store.replace(skey, record, DOC_KIND, new, old=old)
                embedded += done.embedded
                report("embeddings", embedded)
                out.append(IndexedDocument(doc.source, coll, parsed.title, doc.format, "replaced" if old else "indexed", done.added, done.removed, version))
            report("files", n, len(prepared))
            if progress is not None:
                progress(n, len(prepared))
        return out

    @staticmethod
    def _payload(doc: Loaded, title: str, coll: str, meta: dict[str, Any], c: Chunk) -> dict[str, Any]:
        return {
            "text": c.text, "title": title, "source": doc.source, "doc_collection": coll, "format": doc.format,
            "heading_path": list(c.heading_path), "page": c.page, "line_start": c.line_start, "line_end": c.line_end,
            "metadata": meta, "citation": citation(title, c.heading_path, c.page, c.line_start, c.line_end),
        }

    def _source_id(self, source: object) -> str:
        if isinstance(source, os.PathLike) or (isinstance(source, str) and os.path.isfile(os.path.expanduser(source))):
            return str(Path(os.fspath(source)).expanduser().resolve())
        if not isinstance(source, str) or not source:
            raise InvalidInputError("source", source, "must be a path or a document name", "pass what index_document returned as .source")
        return source

    def delete_document(self, source: str | os.PathLike[str], *, collection: str = "docs") -> bool:
        """Delete a document (by path, or the ``source`` that ``index_document`` returned). Returns whether it existed."""
        coll = check_collection_name(collection)
        return bool(self.store.remove([self.store.key("d", coll, self._source_id(source))]))

    def list_documents(self, collection: str | None = None) -> list[dict[str, Any]]:
        """This space's documents: source, title, format, collection, chunks, version, metadata, indexed_at."""
        coll = check_collection_name(collection) if collection is not None else None
        pfx = self.store.prefix("d", coll)
        keep = ("source", "title", "format", "collection", "chunks", "version", "metadata", "indexed_at")
        return [{k: d.get(k) for k in keep} for _, d in self.store.scan(SOURCES, pfx)]

    # -- search -------------------------------------------------------------------------------------
    def vector_rag(self, query: str, *, k: int = 5, filters: Mapping[str, Any] | None = None, route: str = "hybrid") -> SearchResult:
        """Hybrid search over the indexed documents this handle may see (the tenant's and, bound, the user's).

        Args:
            query: what to look for (non-empty).
            k: 1..100 chunks.
            filters: ``collection``, ``source``, ``title``, ``format`` (a value or a list of values) and
                ``metadata`` (a dict of key -> value, all must match). Applied inside the index.
            route: "hybrid" (default) | "bm25" | "dense" (as ``mem.search``).

        Returns:
            SearchResult: hits (chunk text, snippet, ``meta["citation"]`` like ``Runbook > Deploy (lines
            5-11)``, source, title, heading_path, page, line range, collection, metadata), route_used,
            fallback_reason, timings.
        """
        t0 = time.perf_counter()
        query, k, route = check_query(query), check_k(k, 5), check_route(route)
        conds = _doc_conditions(filters)
        found = self.store.query(query, DOC_KIND, conds, k, "d", route)
        return result(self.store, query, found, t0)

    # -- repositories -------------------------------------------------------------------------------
    def index_repo(
        self, path: str | os.PathLike[str], *, include: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
        name: str | None = None, progress: Callable[[str, int, int], None] | None = None,
    ) -> RepoIndexReport:
        """Index the tracked files of a local git working tree, incrementally (see ``documents.repo``)."""
        from .repo import index_repo

        return index_repo(self, path, include=include, exclude=exclude, name=name, progress=progress)

    def search_repos(
        self, query: str, *, repo: str | None = None, path: str | None = None, language: str | None = None, k: int = 10,
        route: str = "hybrid",
    ) -> SearchResult:
        """Hybrid search over indexed repositories; hits cite ``path:start-end`` (``meta["citation"]``) and
        carry repo, path, language, symbol, symbol_kind and the line range. ``path`` is a file or a
        directory (``src/app``)."""
        from .repo import search_repos

        return search_repos(self, query, repo=repo, path=path, language=language, k=k, route=route)

    def list_repos(self) -> list[dict[str, Any]]:
        from .repo import list_repos

        return list_repos(self)

    def delete_repo(self, name: str) -> int:
        """Delete an indexed repository's chunks. Returns how many files were removed."""
        from .repo import delete_repo

        return delete_repo(self, name)

    def texts(self, collection: str = "texts") -> Any:
        """Caller-identified texts, one chunk each (the framework vector stores): see ``documents.texts``."""
        from .texts import Texts

        return Texts(self, check_collection_name(collection))

    # -- maintenance --------------------------------------------------------------------------------
    def reindex(self) -> int:
        """Re-create the points of this space's chunks from the records (after ``recreate_index``)."""
        return self.store.reindex()

    # -- async twins --------------------------------------------------------------------------------
    async def aindex_document(self, *args: Any, **kwargs: Any) -> IndexedDocument:
        return await asyncio.to_thread(self.index_document, *args, **kwargs)

    async def aindex_documents(self, *args: Any, **kwargs: Any) -> list[IndexedDocument]:
        return await asyncio.to_thread(self.index_documents, *args, **kwargs)

    async def adelete_document(self, *args: Any, **kwargs: Any) -> bool:
        return await asyncio.to_thread(self.delete_document, *args, **kwargs)

    async def avector_rag(self, *args: Any, **kwargs: Any) -> SearchResult:
        return await asyncio.to_thread(self.vector_rag, *args, **kwargs)

    async def aindex_repo(self, *args: Any, **kwargs: Any) -> RepoIndexReport:
        return await asyncio.to_thread(self.index_repo, *args, **kwargs)

    async def asearch_repos(self, *args: Any, **kwargs: Any) -> SearchResult:
        return await asyncio.to_thread(self.search_repos, *args, **kwargs)


def _values(name: str, value: object) -> list[str]:
    vals = list(value) if isinstance(value, (list, tuple)) else [value]
    if not vals or not all(isinstance(v, str) and v for v in vals):
        raise InvalidInputError(f"filters.{name}", value, "must be a non-empty string or a list of them", f"pass e.g. {{'{name}': '...'}}")
    return vals  # type: ignore[return-value]


def _doc_conditions(filters: object) -> list[Condition]:
    if filters is None:
        return []
    if not isinstance(filters, Mapping):
        raise InvalidInputError("filters", filters, "must be a dict", f"use keys among {', '.join(DOC_FILTERS)}")
    conds: list[Condition] = []
    for key, value in filters.items():
        if key not in DOC_FILTERS:
            raise InvalidInputError("filters", key, f"is not a document filter (supported: {', '.join(DOC_FILTERS)})", "drop it or use metadata={...}")
        if value is None:
            continue
        if key == "metadata":
            if not isinstance(value, Mapping) or not value:
                raise InvalidInputError("filters.metadata", value, "must be a non-empty dict of key -> value", "e.g. {'metadata': {'team': 'ops'}}")
            for mk, mv in value.items():
                if not isinstance(mk, str) or not mk.replace("_", "").replace("-", "").isalnum():
                    raise InvalidInputError("filters.metadata", mk, "keys are letters, digits, '_' and '-'", "e.g. {'team': 'ops'}")
                if isinstance(mv, bool) or not isinstance(mv, (str, int)):
                    raise InvalidInputError(f"filters.metadata.{mk}", mv, "must be a string or an integer", "e.g. 'ops' or 2024")
                conds.append(Eq(f"metadata.{mk}", mv))
            continue
        field = {"collection": "doc_collection"}.get(key, key)
        conds.append(Eq(field, *_values(key, value)))
    return conds


__all__ = ["Documents", "IndexedDocument", "citation"]
