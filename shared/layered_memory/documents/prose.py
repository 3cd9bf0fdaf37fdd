"""Structure-aware chunking of prose: a chunk never crosses a heading, and is cut at block ends.

    chunks = chunk_sections(parsed.sections, max_chars=1500)
    chunks[0].text, chunks[0].heading_path, chunks[0].line_start, chunks[0].line_end, chunks[0].page

Why our own packer instead of a splitting library: the parsers (``parse.py``) already give the
structure (sections under a heading path, blocks with exact line ranges), and citations need those
line ranges on every chunk. LangChain's ``MarkdownHeaderTextSplitter`` returns heading metadata but
no line numbers, and ``RecursiveCharacterTextSplitter`` (``add_start_index``) gives character
offsets of chunks it cut by separators it guessed; both pull in ``langchain-core`` for what is here
a greedy pack of ~60 lines. LlamaIndex's ``MarkdownNodeParser`` has the same gap. The rule here:

1. a section (one heading path, or one PDF page) is chunked on its own;
2. its blocks (paragraphs, lists, fenced code, tables) are packed greedily up to ``max_chars``;
3. a block larger than ``max_chars`` is cut at line ends, and a line larger than that at spaces
   (a very long line is the only case where two chunks share a line number).

No overlap: chunks end at block boundaries, and the heading path travels with every chunk (it is
prefixed to the text that is embedded and BM25-indexed, see ``Chunk.indexed_text``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .parse import Section


@dataclass(slots=True)
class Chunk:
    text: str
    heading_path: tuple[str, ...] = ()
    line_start: int | None = None
    line_end: int | None = None
    page: int | None = None
    symbol: str | None = None  # code: the qualified name of the definition ("Class.method")
    kind: str | None = None  # code: function | class | method | module | ...

    def indexed_text(self, head: str) -> str:
        """What BM25 and the embedder see: a context line (title / path, heading path or symbol), then the text."""
        ctx = " > ".join(p for p in (head, *self.heading_path) if p)
        if self.symbol:
            ctx = f"{ctx} {self.symbol}".strip()
        return f"{ctx}\n{self.text}" if ctx else self.text


def _split_long_line(line: str, max_chars: int) -> list[str]:
    out: list[str] = []
    while len(line) > max_chars:
        cut = line.rfind(" ", max_chars // 2, max_chars)
        cut = cut if cut > 0 else max_chars
        out.append(line[:cut])
        line = line[cut:].lstrip(" ")
    if line:
        out.append(line)
    return out


def pack_lines(lines: Sequence[str], first_line: int, max_chars: int) -> list[tuple[str, int, int]]:
    """Cut consecutive lines (the first is line ``first_line``) into pieces of at most ``max_chars``:
    at line ends, and long lines at spaces. Returns (text, first line, last line)."""
    out: list[tuple[str, int, int]] = []
    buf: list[str] = []
    size = 0
    start = first_line
    for i, line in enumerate(lines):
        no = first_line + i
        if len(line) > max_chars:
            if buf:
                out.append(("\n".join(buf), start, no - 1))
                buf, size = [], 0
            out.extend((piece, no, no) for piece in _split_long_line(line, max_chars))
            start = no + 1
            continue
        if buf and size + len(line) + 1 > max_chars:
            out.append(("\n".join(buf), start, no - 1))
            buf, size = [], 0
        if not buf:
            start = no
        buf.append(line)
        size += len(line) + 1
    if buf:
        out.append(("\n".join(buf), start, first_line + len(lines) - 1))
    return [(t, a, b) for t, a, b in out if t.strip()]


def chunk_section(section: Section, max_chars: int) -> list[Chunk]:
    """Chunks of one section (see the module docstring)."""
    def mk(text: str, a: int | None, b: int | None) -> Chunk:
        return Chunk(text.strip("\n"), section.heading_path, a, b, section.page)

    text = section.text
    if len(text) <= max_chars:
        return [mk(text, section.line_start, section.line_end)]
    if section.line_start is None:  # no line map (HTML without sourcelines): paragraphs, then lines
        return [mk(t, None, None) for t, _, _ in pack_lines(text.split("\n"), 1, max_chars)]
    lines = text.split("\n")
    base = section.line_start

    def lines_of(a: int, b: int) -> list[str]:
        return lines[a - base: b - base + 1]

    blocks = sorted(section.blocks) or [(base, base + len(lines) - 1)]
    # the gaps between blocks (blank lines, a heading line) join the following block
    spans: list[tuple[int, int]] = []
    cursor = base
    for a, b in blocks:
        if b < cursor:
            continue
        spans.append((cursor, b))
        cursor = b + 1
    if cursor <= base + len(lines) - 1:
        spans.append((cursor, base + len(lines) - 1))
    out: list[Chunk] = []
    cur: list[str] = []
    cur_a = cur_b = base
    size = 0
    for a, b in spans:
        block = "\n".join(lines_of(a, b))
        if len(block) > max_chars:
            if "".join(cur).strip():
                out.append(mk("\n".join(cur), cur_a, cur_b))
            cur, size = [], 0
            out.extend(mk(t, x, y) for t, x, y in pack_lines(lines_of(a, b), a, max_chars))
            continue
        if cur and size + len(block) + 1 > max_chars:
            if "".join(cur).strip():
                out.append(mk("\n".join(cur), cur_a, cur_b))
            cur, size = [], 0
        if not cur:
            cur_a = a
        cur.append(block)
        cur_b = b
        size += len(block) + 1
    if "".join(cur).strip():
        out.append(mk("\n".join(cur), cur_a, cur_b))
    return [_trim(c, lines, base) for c in out if c.text.strip()]


def _trim(c: Chunk, lines: Sequence[str], base: int) -> Chunk:
    """Line range without the leading / trailing blank lines of a chunk."""
    a, b = c.line_start, c.line_end
    if a is None or b is None:
        return c
    while a < b and not lines[a - base].strip():
        a += 1
    while b > a and not lines[b - base].strip():
        b -= 1
    c.line_start, c.line_end = a, b
    return c


def chunk_sections(sections: Sequence[Section], max_chars: int) -> list[Chunk]:
    return [c for s in sections for c in chunk_section(s, max_chars)]


__all__ = ["Chunk", "chunk_section", "chunk_sections", "pack_lines"]
