"""What every language's rules are made of: the ``Found`` record and the span policy.

The span policy lives in ``first_line``/``last_line``/``leading``; see
protocol/PROTOCOL.md, "Gold spans".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from tree_sitter import Node

COMMENTS = frozenset({"comment", "line_comment", "block_comment"})
CLASSLIKE = frozenset({"class", "struct", "union", "interface", "trait", "impl"})


class Found(NamedTuple):
    names: tuple[str, ...]  # components added to the enclosing scope ("Foo", "bar")
    kind: str
    start: int
    end: int
    is_declaration: bool = False
    emit: bool = True  # False: a naming scope only (a JS object literal under a key)
    nest: bool = True  # False: children stay in the enclosing scope
    body: tuple[Node, ...] | None = None  # what to walk under the new scope (default: children)


Raw = tuple[tuple[str, ...], str, int, int, bool]
Classifier = Callable[[Node, str], Sequence[Found]]


def text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def first_line(node: Node) -> int:
    return node.start_point.row + 1


def last_line(node: Node) -> int:
    """1-based line of the last real token: trailing comments and zero-width nodes skipped."""
    leaf = node
    while True:
        for child in reversed(leaf.children):
            if child.type not in COMMENTS and child.end_byte > child.start_byte:
                leaf = child
                break
        else:
            break
    row, column = leaf.end_point
    return row if column == 0 and row > leaf.start_point.row else row + 1


def leading(node: Node, types: frozenset[str]) -> Node:
    """The earliest sibling of ``types`` (attributes, decorators) directly before ``node``."""
    first, sibling = node, node.prev_named_sibling
    while sibling is not None and (sibling.type in types or sibling.type in COMMENTS):
        if sibling.type in types:
            first = sibling
        sibling = sibling.prev_named_sibling
    return first


def field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def found(names: tuple[str, ...], kind: str, span: Node, *, start: Node | None = None,
           is_declaration: bool = False, emit: bool = True, nest: bool = True,
           body: tuple[Node, ...] | None = None) -> Found:
    """A definition spanning ``span`` (from ``start`` when leading attributes widen it)."""
    first = first_line(start if start is not None else span)
    return Found(names, kind, first, last_line(span), is_declaration, emit, nest, body)
