"""``LayeredMemoryStore``: a LangGraph ``BaseStore`` backed by the engine's items (``mem.items``).

    store = LayeredMemoryStore(mem)
    store.put(("memories", "u1"), "k1", {"text": "likes green tea"})
    store.search(("memories", "u1"), query="what does the user drink?")   # hybrid BM25 + dense
    agent = create_agent(model, tools=..., store=store)                    # runtime.store in tools

Namespaces map to key prefixes of the tenant's item documents; ``search`` with a query runs the
engine's hybrid search inside the vector index (with the namespace and the pushable parts of the
filter applied there); filters support ``$eq $ne $gt $gte $lt $lte``. TTL is not supported.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from layered_memory import LayeredMemory


def _item(stored: Any) -> Item:
    return Item(value=stored.value, key=stored.key, namespace=stored.namespace, created_at=stored.created_at, updated_at=stored.updated_at)


def _search_item(stored: Any) -> SearchItem:
    return SearchItem(
        namespace=stored.namespace, key=stored.key, value=stored.value, created_at=stored.created_at,
        updated_at=stored.updated_at, score=stored.score,
    )


class LayeredMemoryStore(BaseStore):
    """LangGraph long-term memory store over ``LayeredMemory`` items.

    Args:
        memory: the engine (or a tenant handle): every namespace lives inside its tenant.
        index: ``{"fields": [...]}`` (as LangGraph's ``IndexConfig``; ``dims`` / ``embed`` are ignored:
            the engine's embedder is used) = the JSON paths embedded when ``put`` gets ``index=None``;
            default: the whole value.

    ``batch`` runs the ops in order, one engine call each; ``abatch`` runs ``batch`` in a worker thread.
    """

    supports_ttl: bool = False

    def __init__(self, memory: LayeredMemory, *, index: dict[str, Any] | None = None) -> None:
        fields = (index or {}).get("fields")
        if fields is not None and (isinstance(fields, str) or not all(isinstance(f, str) for f in fields)):
            raise ValueError(f"index['fields']={fields!r} must be a list of JSON paths, e.g. ['text', 'sections[*].text']")
        self.memory = memory
        self.index_config = index
        self.items = memory.items.with_fields(fields) if fields else memory.items

    def __repr__(self) -> str:
        return f"LayeredMemoryStore(tenant={self.memory.tenant_id!r})"

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        return await asyncio.to_thread(self.batch, ops)

    def _run(self, op: Op) -> Result:
        items = self.items
        if isinstance(op, GetOp):
            got = items.get(op.namespace, op.key)
            return _item(got) if got is not None else None
        if isinstance(op, PutOp):
            if op.value is None:
                items.delete(op.namespace, op.key)
            else:
                # LangGraph's stores embed in put: a query search right after it finds the item by meaning
                items.put(op.namespace, op.key, op.value, index=op.index, index_mode="sync")
            return None
        if isinstance(op, SearchOp):
            found = items.search(op.namespace_prefix, query=op.query, filter=op.filter, limit=op.limit, offset=op.offset)
            return [_search_item(s) for s in found]
        if isinstance(op, ListNamespacesOp):
            prefix: Sequence[str] | None = None
            suffix: Sequence[str] | None = None
            for cond in op.match_conditions or ():
                if cond.match_type == "prefix":
                    prefix = cond.path
                elif cond.match_type == "suffix":
                    suffix = cond.path
                else:
                    raise ValueError(f"match_type={cond.match_type!r} is not supported; use 'prefix' or 'suffix'")
            return items.list_namespaces(prefix, suffix, op.max_depth, op.limit, op.offset)
        raise TypeError(f"{type(op).__name__} is not a LangGraph store op; pass GetOp, PutOp, SearchOp or ListNamespacesOp")
