"""Where a source file documents its definitions, as byte ranges the blanking transform clears.

A *doc* is what the code's authors wrote to explain one definition:
- Python: the docstring, the first statement of a def or class body (a module's
  docstring is blanked too, but documents no definition);
- JavaScript, TypeScript, Java: a `/** ... */` block directly above the definition;
- Rust: `///` or `/** ... */` comments directly above (attributes included in the span);
- Go, C, C++: a comment block directly above the definition, no blank line between.
Besides those, every doc-style comment (`/**`, `/*!`, `///`, `//!`) anywhere is blanked,
so no documentation text of the tree survives in the variant engines search.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from tree_sitter import Node, Query, QueryCursor, Tree

from ..grammars import Definition, definitions_of, grammar, parse

#: Comment node types per language (tree-sitter grammar names).
_COMMENT_QUERY = {
    "python": "",
    "rust": "(line_comment) @c (block_comment) @c",
    "java": "(line_comment) @c (block_comment) @c",
}
_PY_DOCSTRINGS = """
(module . (expression_statement . (string) @doc))
(block . (expression_statement . (string) @doc))
"""
_NOT_LINE_END = re.compile(rb"[^\r\n]")
_DOC_STYLE = (b"/**", b"/*!", b"///", b"//!")
_JSDOC = frozenset({"javascript", "typescript", "tsx", "java"})
_ANY_ABOVE = frozenset({"go", "c", "cpp"})


@dataclass(frozen=True)
class Doc:
    definition: Definition
    raw: str  # the doc as written, markers included (summary.py takes the words out)
    style: str  # "docstring" or "comment"


@dataclass(frozen=True)
class Documented:
    definitions: tuple[Definition, ...]
    docs: tuple[Doc, ...]
    blank: tuple[tuple[int, int], ...]  # byte ranges to clear, sorted, not overlapping


@functools.cache
def _query(language: str, source: str) -> Query:
    return Query(grammar(language), source)


def _captures(tree: Tree, language: str, source: str) -> list[Node]:
    cursor = QueryCursor(_query(language, source))
    found = cursor.captures(tree.root_node)
    nodes = [n for group in found.values() for n in group]
    return sorted(nodes, key=lambda n: n.start_byte)


def find(source: bytes, language: str) -> Documented:
    tree = parse(source, language)
    defs = tuple(definitions_of(tree, language))
    if language == "python":
        docs, blank = _python(tree, defs)
    else:
        docs, blank = _comments(tree, source, language, defs)
    return Documented(defs, tuple(docs), _merge(blank))


def _python(tree: Tree, defs: tuple[Definition, ...]) -> tuple[list[Doc], list[tuple[int, int]]]:
    docs: list[Doc] = []
    blank: list[tuple[int, int]] = []
    for string in _captures(tree, "python", _PY_DOCSTRINGS):
        parts = string.named_children
        start = next((c for c in parts if c.type == "string_start"), None)
        end = next((c for c in reversed(parts) if c.type == "string_end"), None)
        if start is None or end is None or end.start_byte <= start.end_byte:
            continue
        blank.append((start.end_byte, end.start_byte))  # the quotes stay: still a string
        owner = string.parent.parent if string.parent is not None else None
        if owner is None or owner.type != "block" or owner.parent is None:
            continue  # the module's docstring, or a string opening an if/for block
        node = owner.parent
        if node.type not in ("function_definition", "class_definition"):
            continue
        definition = _owner(defs, node)
        if definition is not None:
            raw = (string.text or b"")[start.end_byte - string.start_byte:
                                       end.start_byte - string.start_byte]
            docs.append(Doc(definition, raw.decode("utf-8", "replace"), "docstring"))
    return docs, blank


def _owner(defs: tuple[Definition, ...], node: Node) -> Definition | None:
    """The definition the rules made of this def/class node (by name and line)."""
    name = node.child_by_field_name("name")
    label = (name.text or b"").decode("utf-8", "replace") if name is not None else ""
    line = node.start_point.row + 1
    inside = [d for d in defs if d.name == label and d.start <= line <= d.end]
    return min(inside, key=lambda d: d.end - d.start) if inside else None


def _standalone(source: bytes, node: Node) -> bool:
    """Nothing but indentation before the comment on its first line."""
    line_start = source.rfind(b"\n", 0, node.start_byte) + 1
    return not source[line_start:node.start_byte].strip()


def _comments(tree: Tree, source: bytes, language: str, defs: tuple[Definition, ...]
              ) -> tuple[list[Doc], list[tuple[int, int]]]:
    nodes = _captures(tree, language, _COMMENT_QUERY.get(language, "(comment) @c"))
    blocks: list[list[Node]] = []
    for node in nodes:
        if not _standalone(source, node):
            continue
        if blocks and node.start_point.row == _last_row(blocks[-1][-1]) + 1:
            blocks[-1].append(node)
        else:
            blocks.append([node])
    ending = {_last_row(block[-1]) + 1: block for block in blocks}  # 1-based last line
    lines = source.split(b"\n")
    docs: list[Doc] = []
    blank: list[tuple[int, int]] = [(n.start_byte, n.end_byte) for n in nodes
                                    if (n.text or b"").startswith(_DOC_STYLE)]
    seen: set[int] = set()
    for definition in defs:
        block = ending.get(definition.start - 1)
        if block is None and language in _JSDOC and definition.start >= 3 and \
                not lines[definition.start - 2].strip():
            block = ending.get(definition.start - 2)  # JSDoc a blank line above: still its own
        if block is None or not _accepts(block, language):
            continue
        key = block[0].start_byte
        blank.extend((n.start_byte, n.end_byte) for n in block)
        if key in seen:
            continue  # one block above two definitions on one line: the outer one has it
        seen.add(key)
        raw = b"\n".join(n.text or b"" for n in block).decode("utf-8", "replace")
        docs.append(Doc(definition, raw, "comment"))
    return docs, blank


def _last_row(node: Node) -> int:
    """0-based row of the node's last character (a Rust line comment owns its newline)."""
    row, column = node.end_point
    return row - 1 if column == 0 and row > node.start_point.row else row


def _accepts(block: list[Node], language: str) -> bool:
    texts = [n.text or b"" for n in block]
    if language in _JSDOC:
        return texts[-1].startswith(b"/**")
    if language == "rust":
        return all(t.startswith((b"///", b"/**")) and not t.startswith((b"////", b"/***"))
                   for t in texts)
    return language in _ANY_ABOVE


def _merge(ranges: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return tuple(out)


def blanked(source: bytes, ranges: tuple[tuple[int, int], ...]) -> bytes:
    """source with every byte in ranges but line ends made a space: lines never move."""
    if not ranges:
        return source
    out = bytearray(source)
    for start, end in ranges:
        out[start:end] = _NOT_LINE_END.sub(b" ", bytes(out[start:end]))
    return bytes(out)


_FUNCTION_MACRO = re.compile(rb"^\s*#\s*define\s+\w+\(")


def documents_one(definition: Definition, lines: list[bytes]) -> bool:
    """False for a C/C++ constant macro: the comment above it heads a group, not it."""
    if definition.kind != "macro":
        return True
    first = lines[definition.start - 1] if 0 < definition.start <= len(lines) else b""
    return bool(_FUNCTION_MACRO.match(first))
