"""Agent tools over ``mem.documents`` (seed 002's skills), shared by the LangChain and LlamaIndex adapters.

- ``vector_rag(query, k=5, filters=None)``: indexed documents, as seed 000-style Markdown text;
- ``search_repos(query, repo=None, path=None, language=None, k=10)``: indexed repositories;
- ``index_document(source, name=None, collection="docs", metadata=None)``: a file path (only under
  the ``roots`` the application allows) or the text itself;
- ``index_repo(path, include=None, exclude=None)``: a git working tree under ``roots``.

Like ``layered_memory.tools`` they never raise: a bad argument or a failure is answered with one of
the error texts below (``Error: <arg> is required ...`` or ``Error <doing>: <the engine's message>``,
which names the value, the rule and the fix). Reading the server's files is off unless the
application passes ``roots`` (an agent must not read ``/etc``): a path outside them is refused.
A ``None`` handle answers ``DOCUMENTS_NOT_CONFIGURED``.

    text = vector_rag_tool(mem.for_user("u1"), "how do I roll back?", k=3)
    text = index_document_tool(mem, "docs/runbook.md", roots=["/srv/docs"])
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, WithJsonSchema

from ..errors import LayeredMemoryError
from ..models import SearchResult
from ..tool_schemas import NULL_SCHEMA, AnyInteger, AnyObject, AnyOptionalString, AnyString, ToolArgs
from .parse import looks_like_path

if TYPE_CHECKING:
    from ..engine import LayeredMemory

logger = logging.getLogger(__name__)

DOCUMENT_TOOL_NAMES = ("vector_rag", "search_repos", "index_document", "index_repo")
DOCUMENTS_NOT_CONFIGURED = "Document search is not configured. Enable memory to search indexed documents and repositories."
QUERY_REQUIRED = "Error: query is required and must be a non-empty string"
SOURCE_REQUIRED = "Error: source is required and must be a non-empty string"
PATH_REQUIRED = "Error: path is required and must be a non-empty string"
RAG_ERROR_PREFIX = "Error searching documents: "
REPOS_ERROR_PREFIX = "Error searching repositories: "
INDEX_DOCUMENT_ERROR_PREFIX = "Error indexing document: "
INDEX_REPO_ERROR_PREFIX = "Error indexing repository: "
NO_DOCUMENTS_FOUND = "No relevant documents found."
NO_CODE_FOUND = "No relevant code found in the indexed repositories."
SEPARATOR = "\n\n---\n\n"

VECTOR_RAG_DESCRIPTION = (
    "Search the indexed documents (runbooks, manuals, wiki pages, PDFs) by meaning and keywords. Use it when the "
    "answer may be written in the team's documents. Optional: k (1-20, default 5) and filters: collection, source, "
    "title, format (a value or a list) and metadata (key -> value). Returns the matching passages, each with its "
    "citation (Title > Heading (page n) or (lines a-b)) to quote."
)
SEARCH_REPOS_DESCRIPTION = (
    "Search the indexed code repositories by meaning and identifiers (getUserById also matches 'get user by id'). "
    "Optional: repo (a repository name), path (a file or directory, e.g. src/api), language (python, typescript, "
    "go, markdown, ...), k (1-20, default 10). Returns code with its location path:start-end, symbol and language."
)
INDEX_DOCUMENT_DESCRIPTION = (
    "Add a document to the searchable documents: source is a file path (Markdown, text, HTML or PDF, inside the "
    "folders this agent may read) or the text itself (then give it a name, e.g. meeting-notes.md, to update it "
    "later). Optional: collection (default docs) and metadata (key -> value). Re-indexing an unchanged document "
    "does nothing; a changed one replaces its old version."
)
INDEX_REPO_DESCRIPTION = (
    "Index (or update) a local git repository for search_repos: its tracked files, chunked by functions and "
    "classes. Only changed files are re-indexed. path must be inside the folders this agent may read; optional "
    "include / exclude glob patterns (e.g. ['*.py'], ['tests/*'])."
)
MAX_TOOL_K = 20

AnyPatterns = Annotated[Any, WithJsonSchema({"anyOf": [{"type": "array", "items": {"type": "string"}}, NULL_SCHEMA]})]


class VectorRagArgs(ToolArgs):
    query: AnyString = Field(description="What you are looking for, in natural language or keywords")
    k: AnyInteger = Field(default=5, description="Number of passages (1-20, default 5)")
    filters: AnyObject = Field(default=None, description="Optional: collection, source, title, format, metadata")


class SearchReposArgs(ToolArgs):
    query: AnyString = Field(description="What the code does, or identifiers to find")
    repo: AnyOptionalString = Field(default=None, description="Only this repository (its name)")
    path: AnyOptionalString = Field(default=None, description="Only this file or directory, e.g. src/api")
    language: AnyOptionalString = Field(default=None, description="Only this language, e.g. python")
    k: AnyInteger = Field(default=10, description="Number of results (1-20, default 10)")


class IndexDocumentArgs(ToolArgs):
    source: AnyString = Field(description="A file path, or the document's text")
    name: AnyOptionalString = Field(default=None, description="The document's name when source is text, e.g. notes.md")
    collection: AnyOptionalString = Field(default=None, description="A collection name (default docs)")
    metadata: AnyObject = Field(default=None, description="Optional key -> value pairs kept with the document")


class IndexRepoArgs(ToolArgs):
    path: AnyString = Field(description="The local git repository's directory")
    include: AnyPatterns = Field(default=None, description="Only files matching these glob patterns")
    exclude: AnyPatterns = Field(default=None, description="Skip files matching these glob patterns")


def _k(value: Any, default: int) -> int | str:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"k={value!r}: must be an integer from 1 to {MAX_TOOL_K}; pass e.g. k={default}"
    return min(value, MAX_TOOL_K)


def _fail(prefix: str, exc: BaseException) -> str:
    if not isinstance(exc, LayeredMemoryError):
        logger.warning("%s%s: %s", prefix, type(exc).__name__, exc)
        return f"{prefix}{type(exc).__name__}: {exc}"
    return f"{prefix}{exc}"


# -- output formats ---------------------------------------------------------------------------------
def format_documents(result: SearchResult) -> str:
    if not result.hits:
        return NO_DOCUMENTS_FOUND
    blocks = []
    for i, h in enumerate(result.hits, start=1):
        m = h.meta
        lines = [f"### Result {i}", f"**Source:** {m.get('citation', '')}", f"**Document:** {m.get('source', '')}"]
        if m.get("collection") not in (None, "docs"):
            lines.append(f"**Collection:** {m['collection']}")
        lines.append(f"**Content:** {h.text}")
        blocks.append("\n".join(lines))
    return f"Found {len(result.hits)} relevant passage(s):\n\n" + SEPARATOR.join(blocks)


def format_code(result: SearchResult) -> str:
    if not result.hits:
        return NO_CODE_FOUND
    blocks = []
    for i, h in enumerate(result.hits, start=1):
        m = h.meta
        lines = [f"### Result {i}", f"**Location:** {m.get('citation', '')}", f"**Repository:** {m.get('repo', '')}"]
        if m.get("symbol"):
            lines.append(f"**Symbol:** {m['symbol']}" + (f" ({m['symbol_kind']})" if m.get("symbol_kind") else ""))
        lines.append(f"**Language:** {m.get('language', '')}")
        fence = "````" if "```" in h.text else "```"
        lang = m.get("language") if m.get("language") not in ("text", None) else ""
        lines.append(f"**Content:**\n{fence}{lang}\n{h.text}\n{fence}")
        blocks.append("\n".join(lines))
    return f"Found {len(result.hits)} code result(s):\n\n" + SEPARATOR.join(blocks)


# -- the tools ---------------------------------------------------------------------------------------
def vector_rag_tool(mem: LayeredMemory | None, query: Any, k: Any = 5, filters: Any = None) -> str:
    if mem is None:
        return DOCUMENTS_NOT_CONFIGURED
    if not isinstance(query, str) or not query.strip():
        return QUERY_REQUIRED
    kk = _k(k, 5)
    if isinstance(kk, str):
        return RAG_ERROR_PREFIX + kk
    try:
        return format_documents(mem.documents.vector_rag(query, k=kk, filters=filters))
    except Exception as exc:
        return _fail(RAG_ERROR_PREFIX, exc)


def search_repos_tool(mem: LayeredMemory | None, query: Any, repo: Any = None, path: Any = None, language: Any = None, k: Any = 10) -> str:
    if mem is None:
        return DOCUMENTS_NOT_CONFIGURED
    if not isinstance(query, str) or not query.strip():
        return QUERY_REQUIRED
    kk = _k(k, 10)
    if isinstance(kk, str):
        return REPOS_ERROR_PREFIX + kk
    try:
        return format_code(mem.documents.search_repos(query, repo=repo, path=path, language=language, k=kk))
    except Exception as exc:
        return _fail(REPOS_ERROR_PREFIX, exc)


def _inside(path: str, roots: Sequence[str | os.PathLike[str]] | None) -> str | None:
    """The refusal text when ``path`` is outside every allowed root (symlinks resolved), else None."""
    if not roots:
        return (f"path={path!r}: this agent may not read files (no document roots are configured); "
                "pass the text itself, or configure roots=[...] in the application")
    real = Path(path).expanduser().resolve()
    for root in roots:
        r = Path(root).expanduser().resolve()
        if real == r or r in real.parents:
            return None
    return f"path={path!r}: is outside the folders this agent may read; use a path under one of them"


def index_document_tool(
    mem: LayeredMemory | None, source: Any, name: Any = None, collection: Any = None, metadata: Any = None, *,
    roots: Sequence[str | os.PathLike[str]] | None = None,
) -> str:
    if mem is None:
        return DOCUMENTS_NOT_CONFIGURED
    if not isinstance(source, str) or not source.strip():
        return SOURCE_REQUIRED
    try:
        if looks_like_path(source):  # exactly what index_document would read as a file
            refused = _inside(source, roots)
            if refused:
                return INDEX_DOCUMENT_ERROR_PREFIX + refused
        done = mem.documents.index_document(source, name=name, collection=collection or "docs", metadata=metadata)
    except Exception as exc:
        return _fail(INDEX_DOCUMENT_ERROR_PREFIX, exc)
    if done.status == "unchanged":
        return f"Document '{done.title}' ({done.source}) is unchanged: nothing to do."
    verb = "Updated" if done.status == "replaced" else "Indexed"
    return f"{verb} document '{done.title}' ({done.source}) in collection '{done.collection}': {done.chunks} chunk(s)."


def index_repo_tool(
    mem: LayeredMemory | None, path: Any, include: Any = None, exclude: Any = None, *,
    roots: Sequence[str | os.PathLike[str]] | None = None,
) -> str:
    if mem is None:
        return DOCUMENTS_NOT_CONFIGURED
    if not isinstance(path, str) or not path.strip():
        return PATH_REQUIRED
    refused = _inside(path, roots)
    if refused:
        return INDEX_REPO_ERROR_PREFIX + refused
    try:
        r = mem.documents.index_repo(path, include=include, exclude=exclude)
    except Exception as exc:
        return _fail(INDEX_REPO_ERROR_PREFIX, exc)
    s = r.skipped
    return (
        f"Indexed repository '{r.repo}' ({r.root}): {r.indexed} file(s) indexed, {r.unchanged} unchanged, {r.removed} removed, "
        f"{r.chunks} chunk(s) written; skipped {s['binary']} binary, {s['too_large']} too large, {s['unreadable'] + s['empty']} other."
    )


async def avector_rag_tool(*args: Any, **kwargs: Any) -> str:
    return await asyncio.to_thread(vector_rag_tool, *args, **kwargs)


async def asearch_repos_tool(*args: Any, **kwargs: Any) -> str:
    return await asyncio.to_thread(search_repos_tool, *args, **kwargs)


async def aindex_document_tool(*args: Any, **kwargs: Any) -> str:
    return await asyncio.to_thread(index_document_tool, *args, **kwargs)


async def aindex_repo_tool(*args: Any, **kwargs: Any) -> str:
    return await asyncio.to_thread(index_repo_tool, *args, **kwargs)


TOOLS = {  # name -> (description, args schema, sync, async, takes roots)
    "vector_rag": (VECTOR_RAG_DESCRIPTION, VectorRagArgs, vector_rag_tool, avector_rag_tool, False),
    "search_repos": (SEARCH_REPOS_DESCRIPTION, SearchReposArgs, search_repos_tool, asearch_repos_tool, False),
    "index_document": (INDEX_DOCUMENT_DESCRIPTION, IndexDocumentArgs, index_document_tool, aindex_document_tool, True),
    "index_repo": (INDEX_REPO_DESCRIPTION, IndexRepoArgs, index_repo_tool, aindex_repo_tool, True),
}

__all__ = [
    "DOCUMENTS_NOT_CONFIGURED", "DOCUMENT_TOOL_NAMES", "NO_CODE_FOUND", "NO_DOCUMENTS_FOUND", "PATH_REQUIRED", "QUERY_REQUIRED",
    "SOURCE_REQUIRED", "TOOLS", "format_code", "format_documents", "index_document_tool", "index_repo_tool",
    "search_repos_tool", "vector_rag_tool",
]
