"""Per-language naming rules for gold spans: which syntax nodes define what, and their names.

Each language has a *classifier* (node, kind of the enclosing definition) -> ``Found`` records
and either a set of *container* node types -- the walk only descends into those (and into
definitions), which keeps it fast and out of expression bodies -- or, for JavaScript, a set
of *leaf* types it never descends into. ``walk`` turns a tree-sitter tree into raw
definitions; ``gold/grammars.py`` wraps them into ``Definition`` values. One module per
language family; the span policy they share is in ``base.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from . import c, go, java, javascript, python, rust
from .base import Classifier, Raw


@dataclass(frozen=True)
class Rule:
    classify: Classifier
    containers: frozenset[str] | None  # None: descend everywhere but into `leaves`
    leaves: frozenset[str] = frozenset()


_JS = Rule(javascript.CLASSIFY, None, javascript.LEAVES)
RULES: dict[str, Rule] = {
    "python": Rule(python.CLASSIFY, python.CONTAINERS),
    "c": Rule(c.CLASSIFY, c.CONTAINERS),
    "cpp": Rule(c.CLASSIFY, c.CONTAINERS),
    "go": Rule(go.CLASSIFY, go.CONTAINERS),
    "rust": Rule(rust.CLASSIFY, rust.CONTAINERS),
    "java": Rule(java.CLASSIFY, java.CONTAINERS),
    "javascript": _JS,
    "typescript": _JS,
    "tsx": _JS,
}


def walk(root: Node, language: str) -> Iterator[Raw]:
    """Every definition under ``root`` as (qualname parts, kind, start, end, is_declaration)."""
    rule = RULES[language]
    classify, containers = rule.classify, rule.containers
    stack: list[tuple[Node, tuple[str, ...], str]] = [(root, (), "")]
    while stack:
        node, scope, parent_kind = stack.pop()
        founds = classify(node, parent_kind) if node is not root else ()
        opened = None
        for found in founds:
            if found.emit:
                yield scope + found.names, found.kind, found.start, found.end, found.is_declaration
            if found.nest and opened is None:
                opened = found
        if opened is not None:
            inner = scope + opened.names
            children = opened.body if opened.body is not None else node.named_children
            stack.extend((child, inner, opened.kind) for child in reversed(children))
        elif founds or node is root or (
                node.type not in rule.leaves if containers is None else node.type in containers):
            stack.extend((child, scope, parent_kind) for child in reversed(node.named_children))
