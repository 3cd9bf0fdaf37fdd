"""Namespaced JSON items with hybrid search (``mem.items``): ``api`` (the facet, keys, filters, points)
and ``health`` (the items kind: what the doctor, the index writer and reindex do for items)."""

from .api import (
    ITEM_NS,
    ITEMS,
    KIND,
    PENDING_KIND,
    USER_ITEM_NS,
    USER_ITEMS,
    Items,
    StoredItem,
    check_filter,
    check_namespace,
    doc_key,
    index_text,
    item_entry,
    matches,
    ns_key,
)

__all__ = [
    "ITEMS", "ITEM_NS", "KIND", "PENDING_KIND", "USER_ITEMS", "USER_ITEM_NS", "Items", "StoredItem", "check_filter",
    "check_namespace", "doc_key", "index_text", "item_entry", "matches", "ns_key",
]
