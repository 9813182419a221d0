"""Gold-span naming rules for Java."""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node

from .base import Found, field, found, text

_JAVA_CONTAINERS = frozenset({"program", "class_body", "interface_body", "enum_body",
                              "enum_body_declarations", "annotation_type_body", "ERROR"})
_JAVA_KINDS = {"class_declaration": "class", "record_declaration": "class",
               "interface_declaration": "interface", "annotation_type_declaration": "interface",
               "enum_declaration": "enum", "method_declaration": "method",
               "constructor_declaration": "method", "compact_constructor_declaration": "method"}


def _java(node: Node, parent_kind: str) -> Sequence[Found]:
    kind, name = _JAVA_KINDS.get(node.type), field(node, "name")
    if kind is None or name is None:
        return ()
    declaration = kind == "method" and field(node, "body") is None
    return (found((text(name),), kind, node, is_declaration=declaration),)


CLASSIFY = _java
CONTAINERS = _JAVA_CONTAINERS
