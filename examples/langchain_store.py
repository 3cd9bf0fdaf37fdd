"""LangGraph long-term memory on layered memory: a BaseStore with hybrid search over namespaced items.

Run: python examples/langchain_store.py [data_dir]
"""

from __future__ import annotations

import sys
import tempfile

from langchain_layered_memory import LayeredMemoryStore
from layered_memory import LayeredMemory


def main(path: str) -> list[str]:
    with LayeredMemory.embedded(path, embedder="none") as mem:
        store = LayeredMemoryStore(mem, index={"fields": ["text"]})
        store.put(("memories", "u1"), "tea", {"text": "drinks green tea every morning", "confidence": 0.9})
        store.put(("memories", "u1"), "city", {"text": "lives in Kazan", "confidence": 0.6})
        store.put(("memories", "u2"), "tea", {"text": "hates tea", "confidence": 0.8})
        hits = store.search(("memories", "u1"), query="what tea does the user drink?", filter={"confidence": {"$gte": 0.5}})
        for h in hits:
            print(f"{h.score:.3f} {h.namespace} {h.key}: {h.value['text']}")
        print("namespaces:", store.list_namespaces(prefix=("memories",)))
        return [h.key for h in hits]


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="lm-example-"))
