"""Gold-span naming rules for Rust."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tree_sitter import Node

from .base import Found, field, found, leading, text

_RUST_CONTAINERS = frozenset({"source_file", "declaration_list", "block", "foreign_mod_item",
                              "ERROR"})
_RUST_KINDS = {"struct_item": "struct", "enum_item": "enum", "union_item": "union",
               "trait_item": "trait", "mod_item": "module", "type_item": "type",
               "macro_definition": "macro", "const_item": "variable", "static_item": "variable"}
_ATTRIBUTES = frozenset({"attribute_item"})


def _rust_type_name(node: Node | None) -> str:
    """``&'a fmt::Wrapper<T>`` -> "Wrapper"."""
    while node is not None and node.type in ("generic_type", "reference_type", "pointer_type",
                                             "scoped_type_identifier", "dynamic_type"):
        node = field(node, "type") or field(node, "name") or field(node, "trait")
    return re.sub(r"\s+", "", text(node)) if node is not None else ""


def _rust(node: Node, parent_kind: str) -> Sequence[Found]:
    t = node.type
    if t in ("function_item", "function_signature_item"):
        name = field(node, "name")
        if name is None:
            return ()
        kind = "method" if parent_kind in ("impl", "trait") else "function"
        names: tuple[str, ...] = (text(name),)
        declaration = t == "function_signature_item"
    elif t == "impl_item":
        kind, names, declaration = "impl", (_rust_type_name(field(node, "type")),), False
    elif t in _RUST_KINDS:
        name = field(node, "name")
        if name is None or (t == "mod_item" and field(node, "body") is None):
            return ()
        kind, names, declaration = _RUST_KINDS[t], (text(name),), False
    else:
        return ()
    return (found(names, kind, node, start=leading(node, _ATTRIBUTES),
                   is_declaration=declaration),)


CLASSIFY = _rust
CONTAINERS = _RUST_CONTAINERS
