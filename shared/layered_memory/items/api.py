"""Namespaced JSON items with hybrid search: the engine side of the LangGraph ``BaseStore`` adapter.

    items = mem.items
    items.put(("memories", "u1"), "k1", {"text": "likes green tea"})
    items.search(("memories",), query="what does the user drink?", filter={"kind": {"$ne": "x"}})

Documents live in the RecordStore (collection ``items``, tenant-scoped): the source of truth. An
item whose ``index`` is not ``False`` is also a point (``kind="item"``) in the VectorIndex
collection ``<prefix>items``, with a BM25 sparse vector and, with an embedder, a dense one, so a
query search is hybrid (RRF inside Qdrant) and filtered inside the index. Items get their own
collection so that message searches (``mem.search``, the context) never see them.

Keys: a namespace ``("a", "b")`` and key ``k`` become the document key ``a.b.|k`` (labels are
percent-encoded, so ``.`` and ``|`` cannot collide); a namespace prefix ``("a",)`` is the key
prefix ``a.``. A second collection ``item_ns`` counts items per namespace for ``list_namespaces``.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from ..errors import InvalidInputError
from ..index.collection import Entry, IndexedCollection
from ..filterspec import Condition, Eq, Range
from ..index.pending import PENDING, Target, mark, write_sparse
from ..index.points import point_id
from ..index.intents import drop_intent, put_intent
from ..models import check_json, iso, parse_time, utcnow

if TYPE_CHECKING:
    from ..index import Scope
    from ..kernel import Kernel

logger = logging.getLogger(__name__)

ITEMS = "items"
ITEM_NS = "item_ns"
USER_ITEMS = "user_items"  # items written through a user-bound handle: keys start with the owner
USER_ITEM_NS = "user_item_ns"
KIND = "item"
PENDING_KIND = "items"  # the writer's source name and the markers' key prefix (see index.pending)
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_RANGE = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
MAX_LIMIT = 1000
_SCAN_PAGE = 500
_MAX_DEPTH = 65_536  # candidates fetched at most by one query search (a bound on pathological filters)


@dataclass(frozen=True, slots=True)
class StoredItem:
    """One item; ``score`` is set by a query search (higher is better), else None."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    score: float | None = None


# -- keys ---------------------------------------------------------------------------------------------


def _enc(label: str) -> str:
    return quote(label, safe="").replace(".", "%2E")


def check_namespace(namespace: object, *, prefix: bool = False) -> tuple[str, ...]:
    """Validate a namespace (tuple of non-empty strings); ``prefix`` allows the empty tuple."""
    if isinstance(namespace, str) or not isinstance(namespace, Sequence):
        raise InvalidInputError("namespace", namespace, "must be a tuple of strings", 'pass e.g. ("memories", "u1")')
    ns = tuple(namespace)
    if not ns and not prefix:
        raise InvalidInputError("namespace", ns, "must have at least one label", 'pass e.g. ("memories",)')
    for label in ns:
        if not isinstance(label, str) or not label:
            raise InvalidInputError("namespace", ns, "every label must be a non-empty string", "drop empty labels")
    return ns


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise InvalidInputError("key", key, "must be a non-empty string", "pass e.g. key='pref-1'")
    return key


def ns_key(namespace: tuple[str, ...]) -> str:
    """Key prefix of a namespace: ``("a", "b")`` -> ``"a.b."`` (``()`` -> ``""``)."""
    return "".join(_enc(label) + "." for label in namespace)


def doc_key(namespace: tuple[str, ...], key: str) -> str:
    return ns_key(namespace) + "|" + _enc(key)


def _ns_from_key(nskey: str) -> tuple[str, ...]:
    return tuple(unquote(p) for p in nskey.split(".")[:-1])


# -- filters ------------------------------------------------------------------------------------------


def _compare(actual: Any, cond: Any) -> bool:
    """LangGraph's filter semantics: a dict of ``$op`` keys, a nested dict, or equality."""
    if isinstance(cond, Mapping) and cond and all(isinstance(k, str) and k.startswith("$") for k in cond):
        return all(_apply(op, actual, want) for op, want in cond.items())
    if isinstance(cond, Mapping):
        return isinstance(actual, Mapping) and all(_compare(actual.get(k), v) for k, v in cond.items())
    return actual == cond


def _apply(op: str, actual: Any, want: Any) -> bool:
    if op == "$eq":
        return actual == want
    if op == "$ne":
        return actual != want
    try:
        if op == "$gt":
            return actual is not None and actual > want
        if op == "$gte":
            return actual is not None and actual >= want
        if op == "$lt":
            return actual is not None and actual < want
        if op == "$lte":
            return actual is not None and actual <= want
    except TypeError:  # e.g. "a" > 1: no match, as in InMemoryStore
        return False
    raise InvalidInputError("filter", op, f"is not a supported operator (supported: {', '.join(OPERATORS)})", "use one of them")


_LABEL = re.compile(r"[\w-]+(?:\[\d*\])*")


def check_filter(flt: object) -> dict[str, Any]:
    if flt is None:
        return {}
    if not isinstance(flt, Mapping):
        raise InvalidInputError("filter", flt, "must be a dict of field -> value or {'$op': value}", "e.g. {'kind': {'$ne': 'x'}}")

    def walk(node: Any) -> None:
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            try:
                if not math.isfinite(float(node)):
                    raise OverflowError
            except OverflowError:
                raise InvalidInputError("filter", node, "numbers must be finite and fit a 64-bit float", "use a smaller number") from None
        if isinstance(node, Mapping):
            for k, v in node.items():
                if isinstance(k, str) and k.startswith("$") and k not in OPERATORS:
                    raise InvalidInputError("filter", k, f"is not a supported operator (supported: {', '.join(OPERATORS)})", "use one of them")
                walk(v)

    for field in flt:  # becomes a Qdrant JSON path: "a.b", "a[0]"; other punctuation is invalid there
        if not isinstance(field, str) or (not field.startswith("$") and not all(_LABEL.fullmatch(x) for x in field.split("."))):
            raise InvalidInputError("filter", field, "field names are dot-separated labels of letters, digits, '_' and '-'",
                                    "e.g. {'kind': 'note'} or {'meta.lang': 'en'}")
    walk(flt)
    return dict(flt)


def matches(value: Mapping[str, Any], flt: Mapping[str, Any]) -> bool:
    return all(_compare(value.get(k), cond) for k, cond in flt.items())


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _payload_values(value: Mapping[str, Any]) -> dict[str, Any]:
    """Top-level strings and numbers, filterable inside the index (bools stay out: Edge cannot match them)."""
    return {k: v for k, v in value.items() if isinstance(k, str) and (isinstance(v, str) or _is_num(v))}


def _index_conditions(flt: Mapping[str, Any]) -> tuple[list[Condition], list[Condition], bool]:
    """(must, must_not, complete): the part of a filter the index can apply; ``complete`` when all of it."""
    must: list[Condition] = []
    must_not: list[Condition] = []
    complete = True
    for field, cond in flt.items():
        key = f"v.{field}"
        ops = cond if isinstance(cond, Mapping) and cond and all(str(k).startswith("$") for k in cond) else None
        if ops is None:
            ops = {"$eq": cond}
        for op, want in ops.items():
            if op in ("$eq", "$ne") and isinstance(want, str):
                (must if op == "$eq" else must_not).append(Eq(key, want))
            elif op in ("$eq", "$ne") and _is_num(want):  # a range, not a keyword match: 4 finds 4.0 and 4.0 finds 4
                (must if op == "$eq" else must_not).append(Range(key, gte=float(want), lte=float(want)))
            elif op in _RANGE and _is_num(want):
                must.append(Range(key, **{_RANGE[op]: float(want)}))
            else:
                complete = False
    return must, must_not, complete


# -- text to index ------------------------------------------------------------------------------------


def _texts_at(value: Any, path: list[str]) -> list[str]:
    if not path:
        if isinstance(value, str):
            return [value]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return [str(value)]
        if isinstance(value, Mapping):
            return [t for v in value.values() for t in _texts_at(v, [])]
        if isinstance(value, list):
            return [t for v in value for t in _texts_at(v, [])]
        return []
    head, rest = path[0], path[1:]
    if head.endswith("[*]"):
        inner = value.get(head[:-3]) if isinstance(value, Mapping) else None
        return [t for v in inner for t in _texts_at(v, rest)] if isinstance(inner, list) else []
    return _texts_at(value.get(head), rest) if isinstance(value, Mapping) else []


def index_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The text embedded for an item: the given JSON paths (``"text"``, ``"a.b"``, ``"sections[*].text"``,
    ``"$"`` = everything), or the whole value when ``fields`` is None."""
    paths = list(fields) if fields else ["$"]
    parts: list[str] = []
    for path in paths:
        parts.extend(_texts_at(value, [] if path == "$" else path.split(".")))
    return "\n".join(p for p in parts if p.strip())


class Items:
    """Namespaced JSON items of one tenant (``mem.items``). Every call is scoped to ``mem``'s tenant.

    Args:
        core: the engine's runtime. scope: the handle's tenant and bound user; they scope every read and write.
        default_fields: JSON paths indexed when ``put`` gets ``index=None`` (None = the whole value).
    """

    def __init__(self, core: Kernel, scope: Scope, *, default_fields: Sequence[str] | None = None) -> None:
        self._runtime = core
        self.tenant = scope.tenant
        # The scope rule for items: a handle bound to a user owns a space of its own (its namespaces are
        # not the tenant's nor another user's); an unbound handle works in the tenant's shared space.
        self.owner = scope.bound_user
        self._docs = ITEMS if self.owner is None else USER_ITEMS
        self._ns_docs = ITEM_NS if self.owner is None else USER_ITEM_NS
        self._pfx = "" if self.owner is None else _enc(self.owner) + "!"
        self._spec = scope.owned_spec(KIND, self.owner)
        self.default_fields = list(default_fields) if default_fields else None
        core = self._runtime
        self.collection = core.settings.qdrant.collection_prefix + ITEMS
        self._coll = IndexedCollection(
            core.index, self.collection, core.embedder, core.analyzer, core.indexer.encoder, core.settings.retrieval,
            ensured=self.collection in core.ensured_collections,
        )
        if core.index is not None and self.collection not in core.ensured_collections:
            self._coll.ensure()
            core.ensured_collections.add(self.collection)
            if core.background is not None:
                core.background.watch(self.collection)

    def with_fields(self, default_fields: Sequence[str]) -> Items:
        """The same items with other default JSON paths to index (the handle's own ``mem.items`` is shared)."""
        other = copy.copy(self)
        other.default_fields = list(default_fields) if default_fields else None
        return other

    # -- writes ---------------------------------------------------------------------------------------
    def put(
        self, namespace: Sequence[str], key: str, value: Mapping[str, Any], *, index: Sequence[str] | bool | None = None,
        index_mode: str | None = None,
    ) -> StoredItem:
        """Insert or replace an item; ``index=False`` keeps it out of query search, a list of JSON paths
        says what text to index (None: ``default_fields``). ``index_mode="sync"`` embeds it before the call
        returns (a query search right after finds it by meaning, as LangGraph's stores do); None follows
        the engine's ``index_mode`` (background: keyword search sees it at once, the vector follows).

        Raises:
            InvalidInputError: bad namespace, key, value (not a JSON object) or index; nothing is written.
        """
        ns, key = check_namespace(namespace), _check_key(key)
        if not isinstance(value, Mapping):
            raise InvalidInputError("value", value, "must be a dict (a JSON object)", "wrap it, e.g. {'text': ...}")
        check_json("value", value)
        if index is True:
            index = None
        if index is not False and index is not None and (
            not isinstance(index, (list, tuple)) or not all(isinstance(f, str) and f for f in index)
        ):
            raise InvalidInputError("index", index, "must be False, None or a list of JSON paths", "e.g. index=['text']")
        if index_mode not in (None, "sync", "background"):
            raise InvalidInputError("index_mode", index_mode, "must be 'sync', 'background' or None", "pass index_mode='sync'")
        fields = None if index is None else (False if index is False else list(index))
        records, core, dkey = self._runtime.records, self._runtime, self._pfx + doc_key(ns, key)
        with core.write_lock:
            intent = put_intent(records, self.tenant, "item", dkey=dkey, namespace=list(ns), owner=self.owner)  # see repair
            # background mode: the writer's pending marker, before the record (a crash after it loses nothing)
            deferred = core.deferred and core.index is not None and fields is not False and index_mode != "sync"
            marks = mark(records, self.tenant, PENDING_KIND, [[self._docs, dkey]]) if deferred else []
            old = records.get_docs(self.tenant, self._docs, [dkey])[0]
            now = iso(utcnow())
            doc = {
                "namespace": list(ns), "key": key, "value": dict(value),
                "created_at": old["created_at"] if old else now, "updated_at": now,
                "index": fields if fields is not None else self.default_fields,
            }
            if self.owner is not None:
                doc["owner"] = self.owner
            try:
                records.put_docs(self.tenant, self._docs, {dkey: doc})  # validates JSON before anything else is written
            except InvalidInputError:
                drop_intent(records, self.tenant, intent)
                records.delete_docs(self.tenant, PENDING, marks)
                raise
            if old is None:
                self._count_ns(ns, +1)
            self._index([(dkey, doc)], dense=not marks)
            drop_intent(records, self.tenant, intent)
        if marks:  # after the write lock: the writer embeds it (keyword search already sees it)
            core.background.notify(self.tenant, marks, source=PENDING_KIND)  # type: ignore[union-attr]
        return _item(doc)

    def delete(self, namespace: Sequence[str], key: str) -> bool:
        """Delete an item. Returns whether it existed."""
        ns, key = check_namespace(namespace), _check_key(key)
        core, dkey = self._runtime, self._pfx + doc_key(ns, key)
        with core.write_lock:
            intent = put_intent(core.records, self.tenant, "item", dkey=dkey, namespace=list(ns), owner=self.owner)  # see repair
            n = core.records.delete_docs(self.tenant, self._docs, [dkey])
            if n:
                self._count_ns(ns, -1)
                self._coll.delete(ids=[point_id(self.tenant, KIND, dkey)])
            drop_intent(core.records, self.tenant, intent)
        return bool(n)

    def repair(self, dkey: str, namespace: tuple[str, ...]) -> None:
        """Bring one item's point and its namespace counter in line with the RecordStore (idempotent): the
        drain of an interrupted ``put`` / ``delete`` (``doctor.drain_intents``)."""
        with self._runtime.write_lock:
            doc = self._runtime.records.get_docs(self.tenant, self._docs, [dkey])[0]
            if doc is not None:
                self._index([(dkey, doc)])
            elif self._runtime.index is not None:
                self._coll.delete(ids=[point_id(self.tenant, KIND, dkey)])
            self.recount(namespace)

    def recount(self, namespace: tuple[str, ...]) -> None:
        """Set a namespace's item counter from the items stored under exactly that namespace."""
        records, k = self._runtime.records, self._pfx + ns_key(namespace)
        n = records.count_docs(self.tenant, self._docs, prefix=k + "|")
        if n:
            records.put_docs(self.tenant, self._ns_docs, {k: {"namespace": list(namespace), "count": n}})
        else:
            records.delete_docs(self.tenant, self._ns_docs, [k])

    def _count_ns(self, ns: tuple[str, ...], delta: int) -> None:
        records, k = self._runtime.records, self._pfx + ns_key(ns)
        doc = records.get_docs(self.tenant, self._ns_docs, [k])[0] or {"namespace": list(ns), "count": 0}
        doc["count"] += delta
        if doc["count"] <= 0:
            records.delete_docs(self.tenant, self._ns_docs, [k])
        else:
            records.put_docs(self.tenant, self._ns_docs, {k: doc})

    def _index(self, docs: Sequence[tuple[str, dict[str, Any]]], *, dense: bool = True) -> None:
        """The points of stored items (``dense=False``: BM25 only, the writer embeds them from their markers)."""
        core = self._runtime
        if core.index is None:
            return
        entries = [item_entry(self.tenant, k, d) for k, d in docs if d["index"] is not False]
        if dense:
            self._coll.upsert(entries)
        elif entries:
            self._coll.ensure()
            targets = [Target(self.collection, e.point_id, e) for e in entries]
            write_sparse(core.index, targets, core.analyzer, core.indexer.encoder, core.background.optimizing)  # type: ignore[union-attr]
        self._coll.delete(ids=[point_id(self.tenant, KIND, k) for k, d in docs if d["index"] is False])

    def reindex(self) -> int:
        """Re-create the item points of this space from the RecordStore (an unbound handle: the tenant's
        shared items and every user's). Returns how many were indexed."""
        n = 0
        spaces = [(self._docs, self._pfx)] if self.owner is not None else [(ITEMS, ""), (USER_ITEMS, "")]
        for collection, pfx in spaces:
            after = ""
            while True:
                page = self._runtime.records.list_docs(self.tenant, collection, prefix=pfx, after=after, limit=_SCAN_PAGE)
                if not page:
                    break
                with self._runtime.write_lock:
                    self._index(page)
                n += sum(1 for _, d in page if d["index"] is not False)
                after = page[-1][0]
        return n

    # -- reads ----------------------------------------------------------------------------------------
    def get(self, namespace: Sequence[str], key: str) -> StoredItem | None:
        ns, key = check_namespace(namespace), _check_key(key)
        doc = self._runtime.records.get_docs(self.tenant, self._docs, [self._pfx + doc_key(ns, key)])[0]
        return _item(doc) if doc else None

    def search(
        self, namespace_prefix: Sequence[str] = (), *, query: str | None = None, filter: Mapping[str, Any] | None = None,
        limit: int = 10, offset: int = 0,
    ) -> list[StoredItem]:
        """Items under a namespace prefix matching ``filter`` (``$eq $ne $gt $gte $lt $lte`` or equality).

        With ``query``: hybrid BM25 + dense search (RRF) inside the index, best first, with scores; items
        put with ``index=False`` are not found. Without: key order, ``score`` None.

        Raises:
            InvalidInputError: bad prefix, filter operator, limit (1..1000) or offset.
        """
        prefix = check_namespace(namespace_prefix, prefix=True)
        flt = check_filter(filter)
        for name, v, lo in (("limit", limit, 1), ("offset", offset, 0)):
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= (MAX_LIMIT if name == "limit" else 10**9):
                raise InvalidInputError(name, v, f"must be an integer from {lo} to {MAX_LIMIT if name == 'limit' else 10**9}", f"pass e.g. {name}={lo}")
        if query is not None and (not isinstance(query, str) or not query.strip()):
            query = None
        if query is None:
            return self._scan(prefix, flt, limit, offset)
        if self._runtime.index is None:
            return self._scan_bm25(prefix, flt, query, limit, offset)
        return self._query(prefix, flt, query, limit, offset)

    def _scan(self, prefix: tuple[str, ...], flt: Mapping[str, Any], limit: int, offset: int) -> list[StoredItem]:
        out: list[StoredItem] = []
        skipped, after, pfx = 0, "", self._pfx + ns_key(prefix)
        while len(out) < limit:
            page = self._runtime.records.list_docs(self.tenant, self._docs, prefix=pfx, after=after, limit=_SCAN_PAGE)
            for _, doc in page:
                if not matches(doc["value"], flt):
                    continue
                if skipped < offset:
                    skipped += 1
                    continue
                out.append(_item(doc))
                if len(out) == limit:
                    break
            if len(page) < _SCAN_PAGE:
                break
            after = page[-1][0]
        return out

    def _scan_bm25(self, prefix: tuple[str, ...], flt: Mapping[str, Any], query: str, limit: int, offset: int) -> list[StoredItem]:
        """No vector index (Redis-only core): BM25 in-process over the prefix's documents."""
        from ..retrieval.bm25 import BM25Scorer

        analyzer, docs, after, pfx = self._runtime.analyzer, [], "", self._pfx + ns_key(prefix)
        while True:
            page = self._runtime.records.list_docs(self.tenant, self._docs, prefix=pfx, after=after, limit=_SCAN_PAGE)
            docs.extend(d for _, d in page if d["index"] is not False and matches(d["value"], flt))
            if len(page) < _SCAN_PAGE:
                break
            after = page[-1][0]
        terms = analyzer.terms(query)
        if not docs or not terms:
            return []
        r = self._runtime.settings.retrieval
        scorer = BM25Scorer([analyzer.terms(index_text(d["value"], d["index"])) for d in docs], k1=r.k1, b=r.b)
        idx, scores = scorer.top_k(terms, min(len(docs), offset + limit))
        ranked = [(_item(docs[i], float(s))) for i, s in zip(idx.tolist(), scores.tolist()) if s > 0]
        return ranked[offset: offset + limit]

    def _query(self, prefix: tuple[str, ...], flt: Mapping[str, Any], query: str, limit: int, offset: int) -> list[StoredItem]:
        extra_must, must_not, complete = _index_conditions(flt)
        spec = self._spec.and_(*([Eq("ns", ns_key(prefix))] if prefix else []), *extra_must, must_not=must_not)
        want = offset + limit
        depth = want if complete else want * 4
        while True:
            hits = self._coll.query(query, spec, k=depth).hits
            # Equal scores come back in any order, so ties sort by key, and a page is cut only below the
            # tie group at its end: offset paging then shows every item once. Every filter is exact: the
            # search pages deeper until `want` items pass it (and the cut is clean) or the candidates run out.
            out = sorted(self._passing(hits, flt), key=lambda it: (-round(it.score or 0.0, 9), it.namespace, it.key))
            clean_cut = len(out) >= want and round(hits[-1].score, 9) < round(out[want - 1].score or 0.0, 9)
            if len(hits) < depth or clean_cut or depth >= _MAX_DEPTH:
                return out[offset: offset + limit]
            depth *= 4

    def _passing(self, hits: Sequence[Any], flt: Mapping[str, Any]) -> list[StoredItem]:
        """The stored items behind index hits that pass the whole filter, in hit order."""
        keys = [h.payload.get("item_key") for h in hits]
        keys = [k if k and k.startswith(self._pfx) else None for k in keys]  # never another space's document
        found = [k for k in keys if k]
        docs = self._runtime.records.get_docs(self.tenant, self._docs, found) if found else []
        by_key = dict(zip(found, docs))
        out: list[StoredItem] = []
        for h, k in zip(hits, keys):
            d = by_key.get(k) if k else None
            if d is None or d["index"] is False or not matches(d["value"], flt):  # stale point or an unpushed filter
                continue
            out.append(_item(d, float(h.score)))
        return out

    def list_namespaces(
        self, prefix: Sequence[str] | None = None, suffix: Sequence[str] | None = None, max_depth: int | None = None,
        limit: int = 100, offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Distinct namespaces (sorted), optionally by prefix / suffix (``"*"`` matches any one label),
        truncated to ``max_depth`` labels."""
        pre = check_namespace(prefix or (), prefix=True)
        suf = check_namespace(suffix or (), prefix=True)
        for name, v, lo in (("max_depth", max_depth, 1), ("limit", limit, 0), ("offset", offset, 0)):
            if (v is not None or name != "max_depth") and (isinstance(v, bool) or not isinstance(v, int) or v < lo):
                raise InvalidInputError(name, v, f"must be an int >= {lo}", f"pass e.g. {name}={max(lo, 1)}")
        fixed: list[str] = []
        for label in pre:
            if label == "*":
                break
            fixed.append(label)
        found: set[tuple[str, ...]] = set()
        after, pfx = "", self._pfx + ns_key(tuple(fixed))
        while True:
            page = self._runtime.records.list_docs(self.tenant, self._ns_docs, prefix=pfx, after=after, limit=_SCAN_PAGE)
            for _, doc in page:
                ns = tuple(doc["namespace"])
                if _match_path(ns, pre, head=True) and _match_path(ns, suf, head=False):
                    found.add(ns[:max_depth] if max_depth is not None else ns)
            if len(page) < _SCAN_PAGE:
                break
            after = page[-1][0]
        return sorted(found)[offset: offset + limit]

    # -- async twins ----------------------------------------------------------------------------------
    async def aput(self, *args: Any, **kwargs: Any) -> StoredItem:
        return await asyncio.to_thread(self.put, *args, **kwargs)

    async def aget(self, *args: Any, **kwargs: Any) -> StoredItem | None:
        return await asyncio.to_thread(self.get, *args, **kwargs)

    async def adelete(self, *args: Any, **kwargs: Any) -> bool:
        return await asyncio.to_thread(self.delete, *args, **kwargs)

    async def asearch(self, *args: Any, **kwargs: Any) -> list[StoredItem]:
        return await asyncio.to_thread(self.search, *args, **kwargs)

    async def alist_namespaces(self, *args: Any, **kwargs: Any) -> list[tuple[str, ...]]:
        return await asyncio.to_thread(self.list_namespaces, *args, **kwargs)


def _match_path(ns: tuple[str, ...], path: tuple[str, ...], *, head: bool) -> bool:
    if len(path) > len(ns):
        return False
    part = ns[: len(path)] if head else ns[len(ns) - len(path):]
    return all(p == "*" or p == n for p, n in zip(path, part))


def _item(doc: Mapping[str, Any], score: float | None = None) -> StoredItem:
    return StoredItem(
        namespace=tuple(doc["namespace"]), key=doc["key"], value=dict(doc["value"]),
        created_at=parse_time("created_at", doc["created_at"]), updated_at=parse_time("updated_at", doc["updated_at"]),
        score=score,
    )


def item_entry(tenant: str, k: str, d: Mapping[str, Any]) -> Entry:
    """The point of a stored item (its ``index`` is not False): payload and the text to index."""
    ns = tuple(d["namespace"])
    payload = {
        "tenant": tenant, "kind": KIND, "item_key": k,
        "ns": [ns_key(ns[: j + 1]) for j in range(len(ns))],
        "v": _payload_values(d["value"]), "timestamp": d["updated_at"],
    }
    if d.get("owner") is not None:
        payload["user_id"] = d["owner"]
    return Entry(point_id(tenant, KIND, k), payload, index_text(d["value"], d["index"]))

