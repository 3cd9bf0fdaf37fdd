"""Reading a document: the source (path, bytes or text), its format, and its sections.

    doc = load(Path("runbook.md"), max_bytes=20 * 2**20)          # or load(b"%PDF-...", name="guide.pdf")
    parsed = parse(doc)                                            # title + sections with heading paths and lines

Formats are read by well-kept parsers, never by hand: Markdown by ``markdown-it-py`` (CommonMark; its
block tokens carry source line maps, so every section and block keeps its exact line range), HTML by
BeautifulSoup over the standard library's ``html.parser`` (``Tag.sourceline`` gives the lines), PDF by
``pypdf`` (one section per page; the outline, when the file has one, gives the heading path). Plain
text needs no parser. A ``Section`` is a run of text under one heading path; ``blocks`` are its
line ranges that a chunk should not cut (paragraphs, lists, fenced code, tables).

Text, Markdown and HTML are read as UTF-8 (a byte-order mark is skipped); ``encoding="latin-1"`` (any
Python codec) reads another encoding, converted to UTF-8 on load. PDFs carry their own encoding.

Errors are ``InvalidInputError``s naming the value, the rule and the fix (missing file, a directory,
binary content, text that is not UTF-8, an unsupported type, a file over the size limit), raised before
anything is written.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from ..errors import ConfigurationError, InvalidInputError, install_hint

SUFFIXES = {
    ".md": "markdown", ".markdown": "markdown", ".mdown": "markdown", ".mkd": "markdown", ".mdx": "markdown",
    ".txt": "text", ".text": "text", ".rst": "text", ".log": "text", ".adoc": "text",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".pdf": "pdf",
}
FORMATS = ("markdown", "text", "html", "pdf")
_SNIFF = 8_192


@dataclass(slots=True)
class Loaded:
    """A document's bytes and identity: ``source`` is its stable name (absolute path, or the given name)."""

    source: str
    data: bytes
    format: str
    title_hint: str  # the file name stem or the given name
    path: str | None = None
    content_hash: str = ""


@dataclass(slots=True)
class Section:
    text: str
    heading_path: tuple[str, ...] = ()
    line_start: int | None = None  # 1-based, inclusive
    line_end: int | None = None
    page: int | None = None  # 1-based (PDF)
    blocks: list[tuple[int, int]] = field(default_factory=list)  # line ranges (1-based, inclusive) not to cut


@dataclass(slots=True)
class Parsed:
    title: str
    format: str
    sections: list[Section]


def _size_error(name: str, size: int, limit: int) -> InvalidInputError:
    return InvalidInputError(
        "source", name, f"is {size:,} bytes, over the limit of {limit:,} bytes (documents.max_document_bytes)",
        "split the document, or raise LAYERED_MEMORY_DOCUMENTS__MAX_DOCUMENT_BYTES",
    )


def looks_like_path(text: str) -> bool:
    """A one-line string names a file when it exists, or, without whitespace, when it has a document
    suffix, a directory separator or starts with ``~`` / ``.`` ("Read README.md" is text)."""
    if "\n" in text or len(text) > 4096 or not text.strip():
        return False
    if os.path.exists(os.path.expanduser(text)):
        return True
    if any(ch.isspace() for ch in text):
        return False
    return PurePath(text).suffix.lower() in SUFFIXES or os.sep in text or text.startswith(("~", "."))


def check_format(fmt: object) -> str | None:
    if fmt is None:
        return None
    if not isinstance(fmt, str) or fmt.lower() not in FORMATS:
        raise InvalidInputError("format", fmt, f"must be one of {', '.join(FORMATS)}", "pass e.g. format='markdown', or leave it None to detect")
    return fmt.lower()


def check_encoding(encoding: object) -> str | None:
    """A Python codec name, normalised (``"latin1"`` -> ``"iso8859-1"``), or None (UTF-8)."""
    if encoding is None:
        return None
    try:
        if not isinstance(encoding, str):
            raise LookupError(encoding)
        return codecs.lookup(encoding).name
    except LookupError:
        raise InvalidInputError("encoding", encoding, "is not a text encoding Python knows",
                                "pass e.g. encoding='latin-1', 'cp1252' or 'utf-16' (or leave it out for UTF-8)") from None


def _transcode(label: str, data: bytes, fmt: str | None, encoding: str | None) -> bytes:
    """``data`` in ``encoding`` as UTF-8 (PDFs and UTF-8 as they are)."""
    if encoding is None or encoding == "utf-8" or fmt == "pdf" or data.lstrip()[:5] == b"%PDF-":
        return data
    try:
        return data.decode(encoding).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            "source", label, f"is not {encoding} text (byte {data[exc.start]:#04x} at offset {exc.start} cannot be decoded)",
            "pass the file's real encoding, or re-save it as UTF-8 and leave encoding out",
        ) from None


def load(source: object, *, name: str | None = None, format: str | None = None, max_bytes: int, encoding: str | None = None) -> Loaded:
    """The bytes of ``source``: a path (``os.PathLike``, or a one-line string naming a file with a known
    suffix or a directory separator), ``bytes``, or text (any other string). Text and bytes need
    ``name`` to be re-indexable in place (without one their id is their content hash). ``encoding``: of
    a path's or bytes' text (default UTF-8); they are converted to UTF-8 here."""
    fmt = check_format(format)
    encoding = check_encoding(encoding)
    if name is not None and (not isinstance(name, str) or not name.strip() or len(name) > 1000):
        raise InvalidInputError("name", name, "must be a non-empty string of at most 1000 characters", "pass e.g. name='handbook.md'")
    if isinstance(source, os.PathLike) or (isinstance(source, str) and looks_like_path(source)):
        return _load_path(Path(os.fspath(source)).expanduser(), name, fmt, max_bytes, encoding)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = _transcode(name or "<bytes>", bytes(source), fmt, encoding)
    elif isinstance(source, str):
        if not source.strip():
            raise InvalidInputError("source", source, "is empty", "pass a path, bytes or non-empty text")
        data = source.encode("utf-8")
    else:
        raise InvalidInputError("source", source, "must be a path, bytes or text", "pass e.g. Path('guide.md') or the text itself")
    if not data.strip():
        raise InvalidInputError("source", source, "is empty", "pass a path, bytes or non-empty text")
    if len(data) > max_bytes:
        raise _size_error(name or "<bytes>", len(data), max_bytes)
    digest = hashlib.sha256(data).hexdigest()
    label = name or f"text:{digest[:16]}"
    if fmt is None and name is not None and PurePath(name).suffix:
        fmt = _format_of_suffix(name)
    fmt = fmt or _sniff(data)
    _check_text(label, data, fmt)
    return Loaded(source=label, data=data, format=fmt, title_hint=PurePath(name).stem if name else "", content_hash=digest)


def _load_path(path: Path, name: str | None, fmt: str | None, max_bytes: int, encoding: str | None = None) -> Loaded:
    shown = str(path)
    if not path.exists():
        raise InvalidInputError("source", shown, "does not exist", "check the path (relative paths start at the current directory)")
    if path.is_dir():
        raise InvalidInputError("source", shown, "is a directory", "pass its files (index_documents), or index_repo for a git tree")
    fmt = fmt or _format_of_suffix(shown)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise _size_error(shown, size, max_bytes)
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInputError("source", shown, f"cannot be read ({exc.strerror or exc})", "check the file's permissions") from exc
    if not data.strip():
        raise InvalidInputError("source", shown, "is empty", "index a file with content, or delete_document it")
    data = _transcode(shown, data, fmt, encoding)
    _check_text(shown, data, fmt)
    return Loaded(
        source=name or str(path.resolve()), data=data, format=fmt, title_hint=path.stem, path=str(path.resolve()),
        content_hash=hashlib.sha256(data).hexdigest(),
    )


def _format_of_suffix(name: str) -> str:
    suffix = PurePath(name).suffix.lower()
    fmt = SUFFIXES.get(suffix)
    if fmt is None:
        raise InvalidInputError(
            "source", name, f"has the unsupported type {suffix or '(no suffix)'!r} (supported: Markdown, plain text, HTML, PDF: "
            f"{', '.join(sorted(SUFFIXES))})", "convert it, or pass format='text' to index it as plain text",
        )
    return fmt


def _sniff(data: bytes) -> str:
    head = data[:_SNIFF].lstrip()
    if head.startswith(b"%PDF-"):
        return "pdf"
    low = head[:512].lower()
    if low.startswith((b"<!doctype html", b"<html")) or b"<body" in low:
        return "html"
    if re.search(rb"(?m)^#{1,6} \S", data[:65_536]) or re.search(rb"(?m)^(=+|-+)\s*$", data[:65_536]):
        return "markdown"
    return "text"


def is_binary(data: bytes) -> bool:
    """NUL bytes in the first 8 KiB, or not UTF-8: what git's own heuristic calls binary, plus encoding."""
    if b"\x00" in data[:_SNIFF]:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _check_text(label: str, data: bytes, fmt: str) -> None:
    if fmt != "pdf" and b"\x00" in data[:_SNIFF]:
        raise InvalidInputError(
            "source", label, f"is binary (NUL bytes), not {'plain' if fmt == 'text' else fmt} text",
            "index a text, Markdown, HTML or PDF file (convert others, e.g. with pandoc); UTF-16 text: pass encoding='utf-16'",
        )
    if fmt != "pdf":
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(
                "source", label, f"is not UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start}; Latin-1 or Windows-1252 "
                "text looks like this)", "re-save it as UTF-8, or pass its encoding: encoding='latin-1' (CLI: --encoding latin-1)",
            ) from None
    if fmt == "pdf" and not data.lstrip()[:5] == b"%PDF-":
        raise InvalidInputError("source", label, "is not a PDF (no %PDF- header)", "pass the right format, or the real file")


def decode(data: bytes) -> str:
    return data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")


# -- parsing --------------------------------------------------------------------------------------------


def parse(doc: Loaded) -> Parsed:
    if doc.format == "markdown":
        return _markdown(decode(doc.data), doc.title_hint)
    if doc.format == "html":
        return _html(decode(doc.data), doc.title_hint)
    if doc.format == "pdf":
        return _pdf(doc.data, doc.source, doc.title_hint)
    return _text(decode(doc.data), doc.title_hint)


def _push(path: list[tuple[int, str]], level: int, text: str) -> tuple[str, ...]:
    while path and path[-1][0] >= level:
        path.pop()
    path.append((level, text))
    return tuple(t for _, t in path)


def markdown_sections(text: str) -> tuple[str | None, list[Section]]:
    """(the first level-1 heading, the sections) of Markdown text; a section starts at each heading."""
    from markdown_it import MarkdownIt

    lines = text.split("\n")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    heads: list[tuple[int, int, str]] = []  # (line index, level, text)
    blocks: list[tuple[int, int]] = []  # 0-based [start, end) of top-level blocks
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.map is None or tok.nesting == -1:
            continue
        if tok.type == "heading_open":
            inline = tokens[i + 1].content if i + 1 < len(tokens) else ""
            heads.append((tok.map[0], int(tok.tag[1]), " ".join(inline.split())))
        else:
            blocks.append((tok.map[0], tok.map[1]))
    title = next((t for _, lv, t in heads if lv == 1 and t), None)
    starts = [0] + [h[0] for h in heads] + [len(lines)]
    path: list[tuple[int, str]] = []
    sections: list[Section] = []
    for j in range(len(starts) - 1):
        lo, hi = starts[j], starts[j + 1]
        hp = tuple(t for _, t in path)
        if j > 0:
            _, level, htext = heads[j - 1]
            hp = _push(path, level, htext or "(untitled)")
        body = "\n".join(lines[lo:hi]).strip("\n")
        if not body.strip() or (j > 0 and not any(ln.strip() for ln in lines[_heading_end(lines, lo, hi):hi])):
            continue  # empty, or a heading with nothing under it (its text is in the next sections' path)
        first = lo + next(k for k, ln in enumerate(lines[lo:hi]) if ln.strip())
        last = hi - 1 - next(k for k, ln in enumerate(reversed(lines[lo:hi])) if ln.strip())
        inside = [(max(a, first) + 1, min(b, last + 1)) for a, b in blocks if a >= lo and b <= hi and b > a]
        sections.append(Section(body, hp, first + 1, last + 1, blocks=inside))
    return title, sections


def _heading_end(lines: list[str], lo: int, hi: int) -> int:
    """The line after a heading starting at ``lo`` (a setext heading has its underline too)."""
    if lo + 1 < hi and re.fullmatch(r"\s*(=+|-+)\s*", lines[lo + 1]) and not lines[lo].lstrip().startswith("#"):
        return lo + 2
    return lo + 1


def _markdown(text: str, hint: str) -> Parsed:
    title, sections = markdown_sections(text)
    return Parsed(title or hint or _first_line(text), "markdown", sections)


def _first_line(text: str) -> str:
    for ln in text.split("\n"):
        if ln.strip():
            return " ".join(ln.split())[:80]
    return "untitled"


def _paragraph_blocks(lines: list[str], offset: int) -> list[tuple[int, int]]:
    """1-based inclusive ranges of the non-blank runs of ``lines`` (``offset``: 0-based line of lines[0])."""
    out: list[tuple[int, int]] = []
    start = None
    for i, ln in enumerate(lines):
        if ln.strip() and start is None:
            start = i
        elif not ln.strip() and start is not None:
            out.append((offset + start + 1, offset + i))
            start = None
    if start is not None:
        out.append((offset + start + 1, offset + len(lines)))
    return out


def _text(text: str, hint: str) -> Parsed:
    lines = text.split("\n")
    blocks = _paragraph_blocks(lines, 0)
    if not blocks:
        return Parsed(hint or "untitled", "text", [])
    body = "\n".join(lines[blocks[0][0] - 1: blocks[-1][1]])
    return Parsed(hint or _first_line(text), "text", [Section(body, (), blocks[0][0], blocks[-1][1], blocks=blocks)])


_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_SKIP = ("script", "style", "noscript", "template", "svg", "head", "nav", "footer")
_BLOCK = frozenset((
    "p", "div", "li", "ul", "ol", "pre", "blockquote", "table", "tr", "td", "th", "dt", "dd", "dl", "section", "article",
    "main", "header", "aside", "figure", "figcaption", "br", "hr", "caption", *_HEADINGS,
))


def _bs4() -> Any:
    try:
        from bs4 import BeautifulSoup
    except ImportError as exc:  # pragma: no cover - the extra is installed in development
        raise ConfigurationError(f"HTML documents need BeautifulSoup: {install_hint('documents')}") from exc
    return BeautifulSoup


def _html(text: str, hint: str) -> Parsed:
    from bs4 import NavigableString, Tag
    from bs4.element import Comment, Doctype, ProcessingInstruction

    soup = _bs4()(text, "html.parser")
    page_title = " ".join(soup.title.get_text(" ").split()) if soup.title else ""
    for tag in soup(list(_SKIP)):
        tag.decompose()
    root = soup.body or soup
    n_lines = text.count("\n") + 1
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    current: tuple[str, ...] = ()
    buf: list[str] = []
    start_line: int | None = None
    first_h1 = ""

    def flush(end_line: int | None) -> None:
        body = re.sub(r"[ \t]+", " ", "".join(buf))
        body = re.sub(r"\n\s*\n+", "\n\n", "\n".join(ln.strip() for ln in body.split("\n"))).strip()
        if body:
            sections.append(Section(body, current, start_line, end_line, blocks=[]))
        buf.clear()

    for el in root.descendants:
        if isinstance(el, Tag):
            if el.name in _HEADINGS:
                line = el.sourceline
                flush((line - 1) if line else None)
                htext = " ".join(el.get_text(" ").split()) or "(untitled)"
                if el.name == "h1" and not first_h1:
                    first_h1 = htext
                current = _push(path, int(el.name[1]), htext)
                start_line = line
                buf.append(htext + "\n\n")
            elif el.name in _BLOCK:
                buf.append("\n")
                if start_line is None:
                    start_line = el.sourceline
        elif isinstance(el, NavigableString) and not isinstance(el, (Comment, Doctype, ProcessingInstruction)):
            if el.find_parent(_HEADINGS) is None:  # a heading's text is in buf already
                buf.append(str(el))
    flush(n_lines)
    return Parsed(page_title or first_h1 or hint or "untitled", "html", sections)


def _pdf(data: bytes, label: str, hint: str) -> Parsed:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # pragma: no cover
        raise ConfigurationError(f"PDF documents need pypdf: {install_hint('documents')}") from exc
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InvalidInputError("source", label, "is an encrypted PDF", "decrypt it first (e.g. qpdf --decrypt)")
        pages = [page.extract_text() or "" for page in reader.pages]
        outline = _outline(reader)
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except InvalidInputError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInputError("source", label, f"is not a readable PDF ({type(exc).__name__}: {exc})", "check the file") from exc
    sections = []
    for number, page_text in enumerate(pages, start=1):
        body = "\n".join(ln.rstrip() for ln in page_text.replace("\r", "\n").split("\n")).strip()
        if not body:
            continue
        heading = ()
        for first_page, hp in outline:
            if first_page <= number:
                heading = hp
        lines = body.split("\n")
        sections.append(Section(body, heading, 1, len(lines), page=number, blocks=_paragraph_blocks(lines, 0)))
    if not sections:
        raise InvalidInputError("source", label, "has no extractable text (a scanned PDF?)", "run OCR first (e.g. ocrmypdf)")
    return Parsed(str(meta_title).strip() or hint or "untitled", "pdf", sections)


def _outline(reader: Any) -> list[tuple[int, tuple[str, ...]]]:
    """(first page, heading path) of every outline entry, in page order."""
    out: list[tuple[int, tuple[str, ...]]] = []

    def walk(items: Any, parents: tuple[str, ...]) -> None:
        last: tuple[str, ...] = parents
        for it in items:
            if isinstance(it, list):
                walk(it, last)
                continue
            try:
                page = reader.get_destination_page_number(it) + 1
            except Exception:
                continue
            last = parents + (" ".join(str(it.title).split()),)
            out.append((page, last))

    try:
        walk(reader.outline, ())
    except Exception:
        return []
    return sorted(out, key=lambda x: x[0])


__all__ = ["FORMATS", "Loaded", "looks_like_path", "Parsed", "SUFFIXES", "Section", "check_format", "decode", "is_binary", "load", "markdown_sections", "parse"]
