"""Repositories: the tracked files of a local git working tree, chunked by syntax, re-indexed by blob id.

    report = mem.documents.index_repo("~/src/app", include=["*.py", "docs/*"], exclude=["*_pb2.py"])
    report.indexed, report.unchanged, report.removed, report.skipped   # {"binary": 3, "too_large": 1, ...}

Files: ``git ls-files -s`` (tracked files only, so ``.gitignore`` is respected; submodules and
symlinks are skipped), filtered by ``include`` / ``exclude`` (``fnmatch`` patterns over the path
relative to the repository root; ``*`` crosses ``/``). Each file's version is its git blob id: the
index's for clean files, the hash of the working-tree bytes for modified ones (``git ls-files -m``),
so a re-index embeds only the files whose content changed and deletes the chunks of files gone.
Binary files (NUL bytes or not UTF-8) and files over ``documents.max_file_bytes`` are skipped and
counted. Code is chunked by ``documents.syntax`` (tree-sitter / ``ast``), Markdown by headings, other
text by blocks; every chunk carries repo, path, language, symbol, symbol kind and line range, and
cites ``path:start-end``. Each file is written atomically (``SourceStore.replace``); an interrupted
run leaves the files done indexed and the rest for the next run.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from ..filterspec import Condition, Eq
from ..models import SearchResult, iso, utcnow
from ..progress import report as report_progress
from .results import check_k, check_query, check_route, result
from .prose import Chunk, chunk_sections
from .syntax import chunk_code, language_of, parser_name
from .parse import Section, _paragraph_blocks, decode, is_binary, markdown_sections
from .store import CODE_KIND, REPOS, SOURCES, NewChunk

if TYPE_CHECKING:
    from .store import DocumentSpace

_BINARY_SUFFIXES = frozenset(
    ".png .jpg .jpeg .gif .bmp .ico .webp .pdf .zip .gz .tgz .bz2 .xz .7z .jar .whl .so .dll .dylib .exe .bin .o .a "
    ".class .pyc .woff .woff2 .ttf .otf .eot .mp3 .mp4 .wav .ogg .mov .avi .sqlite .db .parquet .npy .pkl".split()
)
REPO_VERSION = "1"  # part of a file's version: a chunker change re-indexes unchanged files


@dataclass(slots=True)
class RepoIndexReport:
    repo: str
    root: str
    files: int = 0  # tracked files considered (after include / exclude)
    indexed: int = 0  # new or changed files (re-embedded)
    unchanged: int = 0
    removed: int = 0  # files indexed before and gone (or now excluded / skipped)
    chunks: int = 0  # chunks written
    skipped: dict[str, int] = field(default_factory=lambda: {"binary": 0, "too_large": 0, "unreadable": 0, "empty": 0})
    parsers: dict[str, int] = field(default_factory=dict)  # parser -> files chunked by it
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _git(root: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", root, *args], check=True, capture_output=True, timeout=120).stdout


def _root(path: object) -> tuple[str, str]:
    """(repository root, path prefix of ``path`` inside it ("" at the root))."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise InvalidInputError("path", path, "must be the path of a local git working tree", "pass e.g. '~/src/app'")
    p = Path(os.fspath(path)).expanduser()
    if not p.exists():
        raise InvalidInputError("path", str(p), "does not exist", "check the path of the repository")
    if not p.is_dir():
        raise InvalidInputError("path", str(p), "is not a directory", "pass the repository's directory (index_document for one file)")
    try:
        top = _git(str(p), "rev-parse", "--show-toplevel").decode().strip()
    except FileNotFoundError as exc:
        raise InvalidInputError("path", str(p), "cannot be read: the git executable is not installed", "install git") from exc
    except subprocess.CalledProcessError as exc:
        raise InvalidInputError(
            "path", str(p), "is not a git working tree (git rev-parse failed)", "run git init and commit, or pass the repository root",
        ) from exc
    rel = os.path.relpath(p.resolve(), Path(top).resolve())
    return top, "" if rel == "." else rel.replace(os.sep, "/") + "/"


def _patterns(name: str, value: object) -> list[str]:
    if value is None:
        return []
    vals = [value] if isinstance(value, str) else value
    if not isinstance(vals, (list, tuple)) or not all(isinstance(v, str) and v for v in vals):
        raise InvalidInputError(name, value, "must be a list of glob patterns (fnmatch, over repo-relative paths)", f"e.g. {name}=['*.py', 'docs/*']")
    return list(vals)


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def _tracked(root: str, sub: str) -> dict[str, str]:
    """Tracked regular files under ``sub``: path -> blob id of the index (modified files: None, hashed later)."""
    out: dict[str, str] = {}
    for rec in _git(root, "ls-files", "-s", "-z", "--", sub or ".").split(b"\x00"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, blob, _stage = meta.split(b" ")
        if mode not in (b"100644", b"100755"):  # symlinks (120000) and submodules (160000)
            continue
        out[path.decode("utf-8", "surrogateescape")] = blob.decode()
    modified = {p.decode("utf-8", "surrogateescape") for p in _git(root, "ls-files", "-m", "-z", "--", sub or ".").split(b"\x00") if p}
    for p in modified:
        if p in out:
            out[p] = ""  # the working tree differs from the index: hash its bytes
    return out


def index_repo(
    docs: DocumentSpace, path: object, *, include: object = None, exclude: object = None, name: object = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> RepoIndexReport:
    t0 = time.perf_counter()
    inc, exc = _patterns("include", include), _patterns("exclude", exclude)
    root, sub = _root(path)
    repo = os.path.basename(root.rstrip("/")) if name is None else name
    if not isinstance(repo, str) or not repo.strip() or "|" in repo or len(repo) > 200:
        raise InvalidInputError("name", repo, "must be a non-empty repository name without '|'", "pass e.g. name='app'")
    store, settings = docs.store, docs.settings
    rkey = f"{store.token}!{repo}"
    known = store.records.get_docs(store.tenant, REPOS, [rkey])[0]
    if known is not None and known.get("root") != root:
        raise InvalidInputError(
            "path", root, f"repository name {repo!r} is already indexed from {known.get('root')!r}",
            "pass name='...' to index this tree under another name, or delete_repo the old one",
        )
    files = {p: b for p, b in _tracked(root, sub).items()
             if (not inc or any(fnmatch.fnmatch(p, g) for g in inc)) and not any(fnmatch.fnmatch(p, g) for g in exc)}
    report = RepoIndexReport(repo=repo, root=root, files=len(files))
    store.records.put_docs(store.tenant, REPOS, {rkey: {"repo": repo, "root": root, "indexed_at": iso(utcnow()), "owner": store.owner}})
    prefix = store.prefix("r", repo)
    stored = {d["path"]: (k, d) for k, d in store.scan(SOURCES, prefix) if "path" in d}
    seen: set[str] = set()
    total = len(files)
    chunked = embedded = 0
    for n, (rel, blob) in enumerate(sorted(files.items()), start=1):
        if progress is not None:
            progress(rel, n, total)
        report_progress("files", n, total)
        full = os.path.join(root, rel)
        if Path(rel).suffix.lower() in _BINARY_SUFFIXES:
            report.skipped["binary"] += 1
            continue
        try:
            size = os.path.getsize(full)
        except OSError:
            report.skipped["unreadable"] += 1  # deleted in the working tree, not yet in the index
            continue
        if size > settings.max_file_bytes:
            report.skipped["too_large"] += 1
            continue
        old = stored.get(rel, (None, None))[1]
        if blob and old is not None and old.get("blob") == blob and old.get("version", "").endswith(REPO_VERSION):
            seen.add(rel)
            report.unchanged += 1
            continue
        try:
            data = Path(full).read_bytes()
        except OSError:
            report.skipped["unreadable"] += 1
            continue
        blob = blob or _blob_id(data)
        if old is not None and old.get("blob") == blob and old.get("version", "").endswith(REPO_VERSION):
            seen.add(rel)
            report.unchanged += 1
            continue
        if is_binary(data):
            report.skipped["binary"] += 1
            continue
        text = decode(data)
        if not text.strip():
            report.skipped["empty"] += 1
            continue
        language = language_of(rel)
        chunks, parser = _chunks(text, language, settings)
        report.parsers[parser] = report.parsers.get(parser, 0) + 1
        skey = store.key("r", repo, rel)
        new = [NewChunk(_payload(repo, rel, language, blob, c), c.indexed_text(rel)) for c in chunks]
        record = {"repo": repo, "path": rel, "blob": blob, "language": language, "version": f"{blob[:12]}{REPO_VERSION}"}
        chunked += len(new)
        report_progress("chunks", chunked)
        done = store.replace(skey, record, CODE_KIND, new, old=old)
        embedded += done.embedded
        report_progress("embeddings", embedded)
        seen.add(rel)
        report.indexed += 1
        report.chunks += done.added
    gone = [k for rel, (k, _) in stored.items() if rel not in seen and (not sub or rel.startswith(sub))]
    report.removed = store.remove(gone)
    report.seconds = round(time.perf_counter() - t0, 3)
    return report


def _chunks(text: str, language: str, settings: Any) -> tuple[list[Chunk], str]:
    if language == "markdown":
        _, sections = markdown_sections(text)
        return chunk_sections(sections, settings.chunk_chars), "markdown-it"
    if language == "text":
        lines = text.split("\n")
        blocks = _paragraph_blocks(lines, 0)
        section = Section(text, (), 1, len(lines), blocks=blocks)
        return chunk_sections([section], settings.chunk_chars), "lines"
    return chunk_code(text, language, settings.code_chunk_chars), parser_name(language)


def _payload(repo: str, rel: str, language: str, blob: str, c: Chunk) -> dict[str, Any]:
    parts = rel.split("/")
    dirs = ["/".join(parts[: i + 1]) for i in range(len(parts))]  # "src", "src/app", "src/app/x.py"
    a, b = c.line_start, c.line_end
    where = f"{rel}:{a}-{b}" if a is not None and b is not None and b != a else f"{rel}:{a}" if a is not None else rel
    return {
        "text": c.text, "repo": repo, "path": rel, "dirs": dirs, "language": language, "blob": blob,
        "symbol": c.symbol or (" > ".join(c.heading_path) if c.heading_path else None), "symbol_kind": c.kind,
        "line_start": a, "line_end": b, "citation": where,
    }


def search_repos(
    docs: DocumentSpace, query: object, *, repo: object = None, path: object = None, language: object = None, k: object = 10,
    route: object = "hybrid",
) -> SearchResult:
    t0 = time.perf_counter()
    q, kk, rt = check_query(query), check_k(k, 10), check_route(route)
    conds: list[Condition] = []
    for field_name, value, key in (("repo", repo, "repo"), ("path", path, "dirs"), ("language", language, "language")):
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip("/ "):
            raise InvalidInputError(field_name, value, "must be a non-empty string", f"pass e.g. {field_name}='...' or leave it out")
        v = value.strip().strip("/") if field_name == "path" else value.strip()
        conds.append(Eq(key, v.casefold() if field_name == "language" else v))
    found = docs.store.query(q, CODE_KIND, conds, kk, "r", rt)
    return result(docs.store, q, found, t0)


def list_repos(docs: DocumentSpace) -> list[dict[str, Any]]:
    store = docs.store
    out = []
    for _, d in store.scan(REPOS, f"{store.token}!"):
        files = store.records.count_docs(store.tenant, SOURCES, prefix=store.prefix("r", d["repo"]))
        out.append({"repo": d["repo"], "root": d["root"], "files": files, "indexed_at": d.get("indexed_at")})
    return out


def delete_repo(docs: DocumentSpace, name: object) -> int:
    if not isinstance(name, str) or not name:
        raise InvalidInputError("name", name, "must be a repository name", "see list_repos()")
    store = docs.store
    keys = [k for k, _ in store.scan(SOURCES, store.prefix("r", name))]
    n = store.remove(keys)
    store.records.delete_docs(store.tenant, REPOS, [f"{store.token}!{name}"])
    return n


__all__ = ["RepoIndexReport", "delete_repo", "index_repo", "list_repos", "search_repos"]
