"""Texts stored as given, one chunk each, under caller ids: the engine side of the framework vector
stores (LangChain ``VectorStore``, LlamaIndex ``BasePydanticVectorStore``).

    texts = mem.documents.texts("langchain")                  # a collection of mem.documents
    texts.put([("doc-1", "Deploy with kubectl", {"team": "ops"})])
    texts.search("how to deploy", k=4, where={"team": "ops"})   # [(id, text, metadata, score)]
    texts.get(["doc-1"]); texts.delete(["doc-1"]); texts.delete(None)   # None: the whole collection
    texts.search_by_vector(mem.embedder.embed_query("deploy"), k=4)      # [(id, text, metadata, score, vector)]

Frameworks split documents themselves, so a text is one chunk: no parsing, no chunking. They are
sources of ``mem.documents`` (same records, points, scope rule and write protocol), so
``vector_rag(filters={"collection": ...})`` and the agent tools find them too. Re-putting an id with
the same text and metadata does nothing; a changed one replaces it.

A ``where`` value matches a metadata value equal to it, or a list value holding it (Qdrant's rule);
``scalars_only=True`` leaves list values out (LlamaIndex's rule: ``["a", "b"] == "a"`` is false).
Each text's payload names its list-valued metadata keys (``list_keys``) so both run inside the index.
Reads by id, ``items`` and deletes see the handle's own space; searches (and ``items(visible=True)``)
also see the tenant's texts when the handle is bound to a user.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import CapabilityError, InvalidInputError
from ..filterspec import Condition, Eq
from ..models import check_json, iso, utcnow
from .results import check_k, check_query, citation
from .store import CHUNKS, DOC_KIND, SHARED, SOURCES, NewChunk

if TYPE_CHECKING:
    from .store import DocumentSpace


LIST_KEYS = "list_keys"  # payload: the metadata keys whose value is a list (scalars_only leaves them out)


def _where(where: object) -> list[Condition]:
    if where is None:
        return []
    if not isinstance(where, Mapping):
        raise InvalidInputError("filter", where, "must be a dict of metadata key -> value", "e.g. {'team': 'ops'}")
    conds: list[Condition] = []
    for key, value in where.items():
        if not isinstance(key, str) or not key or not key.replace("_", "").replace("-", "").isalnum():
            raise InvalidInputError("filter", key, "keys are letters, digits, '_' and '-'", "e.g. {'team': 'ops'}")
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if not values or any(isinstance(v, bool) or not isinstance(v, (str, int)) for v in values):
            raise InvalidInputError(f"filter.{key}", value, "must be a string or an integer (or a list of them)", "e.g. 'ops'")
        conds.append(Eq(f"metadata.{key}", *values))
    return conds


class Texts:
    """One collection of caller-identified texts in a handle's space."""

    def __init__(self, docs: DocumentSpace, collection: str) -> None:
        self._docs = docs
        self.store = docs.store
        self.collection = collection

    def _key(self, text_id: str) -> str:
        return self.store.key("d", self.collection, text_id)

    @staticmethod
    def _check_id(text_id: object) -> str:
        if not isinstance(text_id, str) or not text_id or len(text_id) > 1000:
            raise InvalidInputError("id", text_id, "must be a non-empty string of at most 1000 characters", "pass e.g. 'doc-1'")
        return text_id

    def put(self, items: Sequence[tuple[str | None, str, Mapping[str, Any] | None]]) -> list[str]:
        """Store ``(id, text, metadata)`` items (id None: a new UUID); returns the ids. All are checked
        and embedded (one batch) before the first write; each is then written atomically."""
        rows: list[tuple[str, str, dict[str, Any]]] = []
        for text_id, text, metadata in items:
            tid = self._check_id(text_id) if text_id is not None else str(uuid.uuid4())
            if not isinstance(text, str):
                raise InvalidInputError("page_content", text, "must be a string", "pass the document's text")
            meta = dict(metadata or {})
            check_json("metadata", meta)
            rows.append((tid, text, meta))
        last = {tid: i for i, (tid, _, _) in enumerate(rows)}  # the same id twice in a batch: the last wins
        todo = []
        olds = self.store.get([self._key(tid) for tid, _, _ in rows])
        for i, ((tid, text, meta), old) in enumerate(zip(rows, olds)):
            version = hashlib.sha256(json.dumps([text, meta], sort_keys=True).encode()).hexdigest()[:16]
            if last[tid] == i and not (old is not None and old.get("version") == version):
                todo.append((tid, text, meta, version, old))
        core = self.store.runtime
        vectors: list[list[float] | None] = [None] * len(todo)
        if todo and core.embedder is not None and core.index is not None:
            vectors = list(core.embedder.embed_documents([t[1] for t in todo]))
        for (tid, text, meta, version, old), vector in zip(todo, vectors):
            title = str(meta.get("title") or meta.get("source") or tid)
            page = meta.get("page") if isinstance(meta.get("page"), int) else None
            payload = {
                "text": text, "title": title, "source": tid, "doc_collection": self.collection, "format": "text",
                "heading_path": [], "metadata": meta, "citation": citation(title, (), page, None, None),
            }
            lists = sorted(key for key, value in meta.items() if isinstance(value, (list, tuple)))
            if lists:
                payload[LIST_KEYS] = lists
            record = {"source": tid, "title": title, "format": "text", "collection": self.collection, "version": version,
                      "metadata": meta, "path": None, "indexed_at": iso(utcnow())}
            self.store.replace(self._key(tid), record, DOC_KIND, [NewChunk(payload, text, vector)], old=old)
        return [tid for tid, _, _ in rows]

    def get(self, ids: Sequence[str]) -> list[tuple[str, str, dict[str, Any]]]:
        """``(id, text, metadata)`` of the stored ids, in the given order; missing ids are left out."""
        out = []
        for tid in ids:
            key = self._key(self._check_id(tid))
            src = self.store.get([key])[0]
            if src is None:
                continue
            chunk = next((d for k, d in self.store.scan(CHUNKS, f"{key}#{src['version']}:")), None)
            if chunk is not None:
                out.append((tid, chunk["payload"]["text"], dict(chunk["payload"].get("metadata") or {})))
        return out

    def delete(self, ids: Sequence[str] | None) -> int:
        """Delete ids (missing ones are ignored), or with None every text of the collection."""
        if ids is None:
            keys = [k for k, _ in self.store.scan(SOURCES, self.store.prefix("d", self.collection))]
        else:
            keys = [self._key(self._check_id(t)) for t in ids]
        return self.store.remove(keys)

    def items(self, *, visible: bool = False) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(id, metadata)`` of every text of the collection in this handle's own space, or with
        ``visible`` every space its searches see (a user's handle: the tenant's texts too). A scan of the
        records: for filters the index cannot run, evaluated by the caller before a search by ``ids``."""
        own = self.store.token
        for token in ([SHARED, own] if visible and own != SHARED else [own]):
            for _, d in self.store.scan(SOURCES, self.store.prefix("d", self.collection, token=token)):
                yield d["source"], dict(d.get("metadata") or {})

    def delete_where(self, where: Mapping[str, Any]) -> int:
        """Delete the texts whose metadata match ``where`` (key -> value or list of values)."""
        _where(where)
        want = {k: (list(v) if isinstance(v, (list, tuple)) else [v]) for k, v in where.items()}
        ids = [tid for tid, meta in self.items() if all(meta.get(mk) in vals for mk, vals in want.items())]
        return self.delete(ids)

    def _conds(self, where: Mapping[str, Any] | None, ids: Sequence[str] | None, scalars_only: bool) -> tuple[list[Condition], list[Condition]] | None:
        """(must, must_not) of a search, or None when ``ids`` is empty (nothing can match)."""
        conds = [Eq("doc_collection", self.collection), *_where(where)]
        if ids is not None:
            if not ids:
                return None
            conds.append(Eq("source", *[self._check_id(i) for i in ids]))
        return conds, ([Eq(LIST_KEYS, *where)] if scalars_only and where else [])

    def search(
        self, query: str, *, k: int = 4, where: Mapping[str, Any] | None = None, route: str = "hybrid", ids: Sequence[str] | None = None,
        scalars_only: bool = False, k_name: str = "k",
    ) -> list[tuple[str, str, dict[str, Any], float]]:
        """The best ``k`` (1 to ``MAX_K``) texts for ``query`` (hybrid by default) whose metadata match
        ``where`` (and among ``ids``); ``k_name``: what the caller's API calls ``k``, for the error."""
        query, k = check_query(query), check_k(k, 4, k_name)
        conds = self._conds(where, ids, scalars_only)
        if conds is None:
            return []
        found = self.store.query(query, DOC_KIND, conds[0], k, "d", route, exclude=conds[1])
        return [(h.payload["source"], h.payload.get("text", ""), dict(h.payload.get("metadata") or {}), float(h.score)) for h in found.hits]

    def search_by_vector(
        self, vector: Sequence[float], *, k: int = 4, where: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None,
        scalars_only: bool = False, k_name: str = "k",
    ) -> list[tuple[str, str, dict[str, Any], float, list[float]]]:
        """The ``k`` texts nearest to ``vector`` (the engine's embedding space; dense only, cosine
        similarity as the score), each with its stored vector (for MMR). Needs a vector index."""
        k = check_k(k, 4, k_name)
        core = self.store.runtime
        if core.index is None or core.embedder is None:
            raise CapabilityError("a search by vector needs a vector index and an embedder (the engine keeps no "
                                  "vectors without them); open the engine with one, or search by text")
        if isinstance(vector, (str, bytes)) or not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in vector):
            raise InvalidInputError("embedding", vector, "must be a list of numbers", "pass the engine embedder's embed_query(text)")
        if len(vector) != core.embedder.dim:
            raise InvalidInputError("embedding", f"{len(vector)} numbers", f"must have the engine embedder's {core.embedder.dim} dimensions",
                                    f"embed with the engine's embedder ({core.embedder.name}): mem.embedder.embed_query(text)")
        conds = self._conds(where, ids, scalars_only)
        if conds is None:
            return []
        found = self.store.query("", DOC_KIND, conds[0], k, "d", "dense", exclude=conds[1], vector=[float(x) for x in vector])
        dense = {h.id: h.dense for h in core.index.retrieve(self.store.coll.name, [h.id for h in found.hits], with_vectors=True)}
        return [(h.payload["source"], h.payload.get("text", ""), dict(h.payload.get("metadata") or {}), float(h.score), list(dense.get(h.id) or []))
                for h in found.hits]


__all__ = ["Texts"]
