"""The bm25 engine's chunker, shared with the dense engine; stdlib only.

chunk_file(rel, text) cuts a file into chunks (1-based inclusive lines, and
the qualified name of the definition a chunk holds, or ""):

- Python (.py, .pyi) along its definitions, found with `ast`: a function or
  method with its decorators; a class over SMALL_CLASS_LINES lines becomes
  its header plus one chunk per method;
- brace languages (BRACE_EXTS) along top-level blocks found by counting
  braces outside strings and comments, with the comments, attributes and
  annotations just above a block; a block over MAX_DEF_LINES lines is cut
  along its own inner blocks, one level down;
- anything else, or anything that does not parse, into WINDOW-line windows
  overlapping by OVERLAP, blank edges trimmed.

Definitions over MAX_DEF_LINES lines are cut into DEF_WINDOW-line windows;
lines no definition covers are windowed too, so every non-blank line is in
some chunk.
"""

from __future__ import annotations

import ast
import os
import re
from typing import NamedTuple

from enginekit import split_lines

WINDOW, OVERLAP = 40, 10  # fixed windows for text that has no definitions we can find
MAX_DEF_LINES = 100  # a definition longer than this is cut into windows...
DEF_WINDOW, DEF_OVERLAP = 50, 10  # ...of this many lines
SMALL_CLASS_LINES = 40  # a class this short stays one chunk

BRACE_EXTS = frozenset({
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".go", ".rs", ".js", ".mjs",
    ".cjs", ".jsx", ".ts", ".tsx", ".java", ".kt", ".kts", ".scala", ".swift", ".cs", ".php",
    ".dart", ".m", ".mm", ".zig", ".proto", ".groovy",
})
_NAME_AFTER_KEYWORD = re.compile(
    r"\b(?:class|struct|union|enum|interface|trait|impl|fn|func|function|type|namespace|"
    r"module|object|record|protocol|extension)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
)
_NAME_BEFORE_PAREN = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")
_NOT_NAMES = frozenset({
    "if", "for", "while", "switch", "catch", "return", "sizeof", "defined", "elif", "else",
})
_LEAD_IN = re.compile(r"\s*(//|/\*|\*|#\[|#!\[|@)")  # comments, attributes, annotations


class Chunk(NamedTuple):
    start: int  # 1-based, inclusive
    end: int
    name: str


def windows(lo: int, hi: int, lines: list[str], name: str = "",
            size: int = WINDOW, overlap: int = OVERLAP) -> list[Chunk]:
    """Fixed windows over lines lo..hi (1-based, inclusive), blank edges trimmed."""
    while lo <= hi and not lines[lo - 1].strip():
        lo += 1
    while hi >= lo and not lines[hi - 1].strip():
        hi -= 1
    out: list[Chunk] = []
    start = lo
    while start <= hi:
        end = min(hi, start + size - 1)
        out.append(Chunk(start, end, name))
        if end >= hi:
            break
        start = end - overlap + 1
    return out


def definition(lo: int, hi: int, lines: list[str], name: str) -> list[Chunk]:
    if hi - lo + 1 <= MAX_DEF_LINES:
        return [Chunk(lo, hi, name)]
    return windows(lo, hi, lines, name, DEF_WINDOW, DEF_OVERLAP)


def fill_gaps(chunks: list[Chunk], lo: int, hi: int, lines: list[str],
              name: str = "") -> list[Chunk]:
    """Window every stretch of lo..hi that no chunk covers; return all, in order."""
    covered = [False] * (hi - lo + 1)
    for c in chunks:
        for i in range(max(c.start, lo), min(c.end, hi) + 1):
            covered[i - lo] = True
    out = list(chunks)
    i = lo
    while i <= hi:
        if covered[i - lo]:
            i += 1
            continue
        j = i
        while j + 1 <= hi and not covered[j + 1 - lo]:
            j += 1
        out.extend(windows(i, j, lines, name))
        i = j + 1
    return sorted(out, key=lambda c: (c.start, c.end))


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def python_chunks(source: str, lines: list[str]) -> list[Chunk]:
    """Definitions from the AST (decorators included); the rest in windows."""
    tree = ast.parse(source)

    def span(node: ast.AST) -> tuple[int, int]:
        decorators = getattr(node, "decorator_list", [])
        start = min([node.lineno, *(d.lineno for d in decorators)])
        return start, node.end_lineno or node.lineno

    def visit(body: list[ast.stmt], prefix: str) -> list[Chunk]:
        out: list[Chunk] = []
        for node in body:
            if not isinstance(node, _DEFS):
                continue
            lo, hi = span(node)
            name = prefix + node.name
            inner = [n for n in node.body if isinstance(n, _DEFS)]
            if isinstance(node, ast.ClassDef) and inner and hi - lo + 1 > SMALL_CLASS_LINES:
                members = visit(node.body, name + ".")
                first = min(c.start for c in members)
                header = windows(lo, first - 1, lines, name) if first > lo else []
                out.extend(fill_gaps(header + members, lo, hi, lines, name))
            else:
                out.extend(definition(lo, hi, lines, name))
        return out

    return fill_gaps(visit(tree.body, ""), 1, len(lines), lines)


def _strip_code(line: str, in_block: bool) -> tuple[str, bool]:
    """The line without string literals and comments (roughly), for brace counting."""
    out = []
    i, n = 0, len(line)
    while i < n:
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block = end + 2, False
            continue
        ch = line[i]
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            in_block, i = True, i + 2
            continue
        if ch in "\"'`":
            j = i + 1
            while j < n and line[j] != ch:
                j += 2 if line[j] == "\\" else 1
            i = j + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out), in_block


def _block_name(header: str) -> str:
    m = _NAME_AFTER_KEYWORD.search(header)
    if m:
        return m.group(1)
    for m in _NAME_BEFORE_PAREN.finditer(header):
        if m.group(1) not in _NOT_NAMES:
            return m.group(1)
    return ""


def brace_chunks(lines: list[str]) -> list[Chunk]:
    """Top-level brace blocks (with the comments and attributes just above them).

    A block too long to be one chunk is cut along its own inner blocks, one level
    down (a class or impl into its methods), then into windows.
    """
    depth_before: list[int] = []
    depth, in_block = 0, False
    for line in lines:
        depth_before.append(depth)
        code, in_block = _strip_code(line, in_block)
        depth = max(0, depth + code.count("{") - code.count("}"))
    depth_before.append(depth)

    def blocks(lo: int, hi: int, level: int, prefix: str) -> list[Chunk]:
        out: list[Chunk] = []
        i = lo
        while i <= hi:
            if depth_before[i - 1] != level or depth_before[i] <= level:
                i += 1
                continue
            j = i  # the block opened on line i runs until depth falls back to level
            while j < hi and depth_before[j] > level:
                j += 1
            head = i  # a header may run over a few lines before its brace
            while head > lo and i - head < 3 and lines[head - 2].strip() \
                    and depth_before[head - 2] == level \
                    and not lines[head - 2].rstrip().endswith((";", "}", "{")) \
                    and not _LEAD_IN.match(lines[head - 2]):
                head -= 1
            start = head  # and comments, attributes, annotations just above it belong too
            while start > lo and lines[start - 2].strip() and depth_before[start - 2] == level \
                    and _LEAD_IN.match(lines[start - 2]):
                start -= 1
            header = " ".join(lines[head - 1 : i])
            name = prefix + _block_name(header)
            if j - start + 1 > MAX_DEF_LINES and level < 1:
                inner = blocks(i + 1, j - 1, level + 1, name + "." if name else "")
                if inner:
                    first = min(c.start for c in inner)
                    head = windows(start, first - 1, lines, name) if first > start else []
                    out.extend(fill_gaps(head + inner, start, j, lines, name))
                else:
                    out.extend(definition(start, j, lines, name))
            else:
                out.extend(definition(start, j, lines, name))
            i = j + 1
        return out

    return fill_gaps(blocks(1, len(lines), 0, ""), 1, len(lines), lines)


def chunk_file(rel: str, text: str) -> list[Chunk]:
    """The file's chunks, in line order: by definitions where it can, else windows."""
    lines = split_lines(text)
    if not lines:
        return []
    ext = os.path.splitext(rel)[1].lower()
    try:
        if ext in (".py", ".pyi"):
            return python_chunks(text, lines)
        if ext in BRACE_EXTS:
            return brace_chunks(lines)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    return windows(1, len(lines), lines)
