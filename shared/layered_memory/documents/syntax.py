"""Code chunked by syntax: one chunk per function / class / method, with its qualified symbol.

    chunks = chunk_code(source_text, "python", max_chars=2400)
    chunks[0].symbol, chunks[0].kind, chunks[0].line_start, chunks[0].line_end

Parsers: tree-sitter (``tree-sitter`` plus the per-language grammar wheels ``tree-sitter-python``,
``-javascript``, ``-typescript``, ``-go``, ``-rust``, ``-java``: prebuilt, offline, ~9 MB together;
the ``code`` extra). ``tree-sitter-language-pack`` is not used: it downloads grammars at first use,
which fails offline. Without tree-sitter, Python falls back to the standard library's ``ast`` (same
definitions, same line ranges); other languages, and files the parser rejects, are cut into
windows of whole lines at blank lines (``kind="lines"``).

Layout of a file's chunks: every top-level definition is a chunk; code between definitions
(imports, constants, module docstring) is packed into ``kind="module"`` chunks; a definition larger
than ``max_chars`` that holds nested definitions (a class, an impl block) becomes a header chunk (its
lines before the first nested definition) plus one chunk per nested definition (``Class.method``);
a large leaf definition is cut at line ends (same symbol, consecutive line ranges).
"""

from __future__ import annotations

import ast
import functools
import importlib
import logging
from dataclasses import dataclass, field
from typing import Any

from ..errors import install_hint
from .prose import Chunk, pack_lines

logger = logging.getLogger(__name__)

LANGUAGES = {  # suffix -> language
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php",
    ".kt": "kotlin", ".swift": "swift", ".scala": "scala", ".sh": "shell", ".bash": "shell", ".sql": "sql",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json", ".ini": "ini", ".cfg": "ini", ".xml": "xml",
    ".css": "css", ".scss": "css", ".lua": "lua", ".r": "r", ".dockerfile": "dockerfile", ".proto": "protobuf",
}
NAMES = {"Dockerfile": "dockerfile", "Makefile": "make", "CMakeLists.txt": "cmake"}

# language -> (grammar module, its language function, definition node types -> kind)
_GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"), "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"), "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"), "rust": ("tree_sitter_rust", "language"), "java": ("tree_sitter_java", "language"),
}
_JS_DEFS = {
    "function_declaration": "function", "generator_function_declaration": "function", "class_declaration": "class",
    "method_definition": "method", "interface_declaration": "interface", "type_alias_declaration": "type",
    "enum_declaration": "enum", "abstract_class_declaration": "class", "module": "module", "internal_module": "namespace",
}
_DEFS: dict[str, dict[str, str]] = {
    "python": {"function_definition": "function", "class_definition": "class"},
    "javascript": _JS_DEFS, "typescript": _JS_DEFS, "tsx": _JS_DEFS,
    "go": {"function_declaration": "function", "method_declaration": "method", "type_declaration": "type"},
    "rust": {"function_item": "function", "impl_item": "impl", "struct_item": "struct", "enum_item": "enum",
             "trait_item": "trait", "mod_item": "module", "macro_definition": "macro"},
    "java": {"class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
             "method_declaration": "method", "constructor_declaration": "constructor", "record_declaration": "record"},
}
_WRAPPERS = {"decorated_definition", "export_statement"}  # a definition inside: the wrapper is the chunk
_JS_VALUE_DEFS = {"lexical_declaration", "variable_declaration"}  # const f = () => {...}


def language_of(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name in NAMES:
        return NAMES[name]
    if name.lower().endswith((".md", ".markdown", ".mdx")):
        return "markdown"
    if name.lower().endswith((".txt", ".rst", ".adoc")):
        return "text"
    dot = name.rfind(".")
    return LANGUAGES.get(name[dot:].lower(), "text") if dot > 0 else "text"


@dataclass(slots=True)
class Def:
    name: str
    kind: str
    start: int  # 1-based inclusive
    end: int
    children: list[Def] = field(default_factory=list)


@functools.lru_cache(maxsize=None)
def _parser(language: str) -> Any:
    """A tree-sitter parser, or None when tree-sitter or the grammar is not installed (logged once)."""
    spec = _GRAMMARS.get(language)
    if spec is None:
        return None
    try:
        import tree_sitter

        grammar = importlib.import_module(spec[0])
        return tree_sitter.Parser(tree_sitter.Language(getattr(grammar, spec[1])()))
    except Exception as exc:  # ImportError, or an ABI mismatch between tree-sitter and the grammar
        logger.info("tree-sitter for %s unavailable (%s); %s", language, type(exc).__name__, install_hint("code"))
        return None


def parser_name(language: str) -> str:
    """Which parser chunks ``language``: "tree-sitter", "ast" or "lines"."""
    if _parser(language) is not None:
        return "tree-sitter"
    return "ast" if language == "python" else "lines"


def _ts_name(node: Any) -> str:
    n = node.child_by_field_name("name")
    if n is None and node.type == "impl_item":
        t = node.child_by_field_name("type")
        trait = node.child_by_field_name("trait")
        n = t
        if t is not None and trait is not None:
            return f"{trait.text.decode('utf-8', 'replace')} for {t.text.decode('utf-8', 'replace')}"
    if n is None and node.type == "type_declaration":
        for c in node.named_children:
            if c.type == "type_spec" and c.child_by_field_name("name") is not None:
                n = c.child_by_field_name("name")
                break
    return n.text.decode("utf-8", "replace") if n is not None else "<anonymous>"


def _ts_defs(node: Any, defs: dict[str, str]) -> list[Def]:
    out: list[Def] = []
    for child in node.named_children:
        inner = child
        if child.type in _WRAPPERS:  # decorators / export: the definition inside, the wrapper's lines
            inner = next((c for c in child.named_children if c.type in defs or c.type in _JS_VALUE_DEFS), None)
            if inner is None:
                continue
        if inner.type in _JS_VALUE_DEFS:
            decl = next((c for c in inner.named_children if c.type == "variable_declarator"), None)
            value = decl.child_by_field_name("value") if decl is not None else None
            if value is None or value.type not in ("arrow_function", "function_expression", "function", "class"):
                continue
            out.append(Def(_ts_name(decl), "function" if value.type != "class" else "class",
                           child.start_point[0] + 1, child.end_point[0] + 1, _ts_defs(value, defs)))
            continue
        kind = defs.get(inner.type)
        if kind is None:
            continue
        body = inner.child_by_field_name("body")
        nested = _ts_defs(body, defs) if body is not None else []
        out.append(Def(_ts_name(inner), kind, child.start_point[0] + 1, child.end_point[0] + 1, nested))
    return out


def _ast_defs(body: list[ast.stmt]) -> list[Def]:
    out: list[Def] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            kind = "class" if isinstance(node, ast.ClassDef) else "function"
            out.append(Def(node.name, kind, start, node.end_lineno or node.lineno, _ast_defs(node.body)))
    return out


def definitions(text: str, language: str) -> list[Def] | None:
    """The definition tree of a file, or None when no parser handles the language (or it fails)."""
    parser = _parser(language)
    if parser is not None:
        tree = parser.parse(text.encode("utf-8"))
        return _ts_defs(tree.root_node, _DEFS[language])
    if language == "python":
        try:
            return _ast_defs(ast.parse(text).body)
        except (SyntaxError, ValueError, RecursionError):
            return None
    return None


def _method_kind(kind: str, parent: str | None) -> str:
    return "method" if kind == "function" and parent in ("class", "impl", "trait", "interface") else kind


def chunk_code(text: str, language: str, max_chars: int) -> list[Chunk]:
    """The chunks of one source file (see the module docstring)."""
    lines = text.split("\n")
    defs = definitions(text, language)
    if defs is None:
        return [Chunk(t, (), a, b, symbol=None, kind="lines") for t, a, b in _windows(lines, 1, len(lines), max_chars)]
    out: list[Chunk] = []
    _emit(lines, defs, 1, len(lines), None, None, max_chars, out)
    return out


def _emit(lines: list[str], defs: list[Def], lo: int, hi: int, prefix: str | None, parent_kind: str | None, max_chars: int, out: list[Chunk]) -> None:
    cursor = lo
    for d in defs:
        if d.start > cursor:
            _glue(lines, cursor, d.start - 1, prefix, max_chars, out)
        symbol = f"{prefix}.{d.name}" if prefix else d.name
        kind = _method_kind(d.kind, parent_kind)
        body = "\n".join(lines[d.start - 1: d.end])
        if len(body) <= max_chars:
            out.append(Chunk(body, (), d.start, d.end, symbol=symbol, kind=kind))
        elif d.children:
            head_end = d.children[0].start - 1
            if head_end >= d.start:
                out.extend(Chunk(t, (), a, b, symbol=symbol, kind=kind) for t, a, b in _windows(lines, d.start, head_end, max_chars))
            _emit(lines, d.children, d.children[0].start, d.end, symbol, d.kind, max_chars, out)
        else:
            out.extend(Chunk(t, (), a, b, symbol=symbol, kind=kind) for t, a, b in _windows(lines, d.start, d.end, max_chars))
        cursor = max(cursor, d.end + 1)
    if cursor <= hi:
        _glue(lines, cursor, hi, prefix, max_chars, out)


def _glue(lines: list[str], a: int, b: int, prefix: str | None, max_chars: int, out: list[Chunk]) -> None:
    """Code between definitions (imports, constants; a class's trailing lines): packed, if not blank."""
    for t, x, y in _windows(lines, a, b, max_chars):
        out.append(Chunk(t, (), x, y, symbol=prefix, kind="module" if prefix is None else "body"))


def _windows(lines: list[str], a: int, b: int, max_chars: int) -> list[tuple[str, int, int]]:
    """Lines a..b (1-based) in pieces of at most ``max_chars``, cut at blank lines where possible,
    without leading / trailing blank lines; all-blank ranges give nothing."""
    while a <= b and not lines[a - 1].strip():
        a += 1
    while b >= a and not lines[b - 1].strip():
        b -= 1
    if a > b:
        return []
    seg = lines[a - 1: b]
    if len("\n".join(seg)) <= max_chars:
        return [("\n".join(seg), a, b)]
    out: list[tuple[str, int, int]] = []
    start = a
    size = 0
    last_blank = None
    i = a
    while i <= b:
        size += len(lines[i - 1]) + 1
        if not lines[i - 1].strip():
            last_blank = i
        if size > max_chars and i > start:
            cut = last_blank if last_blank is not None and last_blank > start and (last_blank - start) * 2 >= (i - start) else i - 1
            out.extend(pack_lines(lines[start - 1: cut], start, max_chars))
            start, size, last_blank = cut + 1, 0, None
            i = start
            continue
        i += 1
    if start <= b:
        out.extend(pack_lines(lines[start - 1: b], start, max_chars))
    return [(t.strip("\n"), x, y) for t, x, y in out if t.strip()]


__all__ = ["Def", "LANGUAGES", "chunk_code", "definitions", "language_of", "parser_name"]
