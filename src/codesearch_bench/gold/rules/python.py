"""Gold-span naming rules for Python."""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node

from .base import Found, field, found, text

_PY_CONTAINERS = frozenset({
    "module", "block", "if_statement", "elif_clause", "else_clause", "for_statement",
    "while_statement", "try_statement", "except_clause", "except_group_clause", "finally_clause",
    "with_statement", "match_statement", "case_clause", "decorated_definition", "ERROR",
})


def _python(node: Node, parent_kind: str) -> Sequence[Found]:
    if node.type not in ("function_definition", "class_definition"):
        return ()
    name = field(node, "name")
    if name is None:
        return ()
    parent = node.parent
    span = parent if parent is not None and parent.type == "decorated_definition" else node
    decorators = [text(d.named_children[0]) for d in span.named_children
                  if d.type == "decorator" and d.named_children]
    if node.type == "class_definition":
        return (found((text(name),), "class", span),)
    kind = "method" if parent_kind == "class" else "function"
    for decorator in decorators if kind == "method" else ():
        if decorator in ("property", "abc.abstractproperty") or decorator.endswith(".getter"):
            kind = "property_getter"
        elif decorator.endswith(".setter"):
            kind = "property_setter"
        elif decorator.endswith(".deleter"):
            kind = "property_deleter"
    overload = any(d in ("overload", "typing.overload") for d in decorators)
    return (found((text(name),), kind, span, is_declaration=overload),)


CLASSIFY = _python
CONTAINERS = _PY_CONTAINERS
