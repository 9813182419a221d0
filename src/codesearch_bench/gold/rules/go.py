"""Gold-span naming rules for Go."""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node

from .base import COMMENTS, Found, field, found, text

_GO_CONTAINERS = frozenset({"source_file", "type_declaration", "interface_type",
                            "var_declaration", "const_declaration", "var_spec_list", "ERROR"})


def _go_type_name(node: Node | None) -> str:
    """``*List[T]`` -> "List"."""
    while node is not None and node.type in ("pointer_type", "generic_type", "qualified_type",
                                             "parenthesized_type"):
        inner = field(node, "type") or field(node, "name")
        children = node.named_children
        node = inner if inner is not None else (children[-1] if children else None)
    return text(node) if node is not None else ""


def _go_single(node: Node) -> Node:
    """A lone spec in its declaration takes the declaration's span (the keyword line)."""
    parent = node.parent
    if parent is not None and parent.type == "var_spec_list":
        # Comments inside the block do not count: blanking them must not move a span.
        inner = [c for c in parent.named_children if c.type not in COMMENTS]
        parent = parent.parent if len(inner) == 1 else None
    if parent is not None and parent.type.endswith("_declaration"):
        specs = [c for c in parent.named_children if c.type not in COMMENTS]
        if len(specs) == 1:
            return parent
    return node


def _go(node: Node, parent_kind: str) -> Sequence[Found]:
    t, name = node.type, field(node, "name")
    if name is None:
        return ()
    if t == "function_declaration":
        return (found((text(name),), "function", node),)
    if t == "method_declaration":
        receiver = field(node, "receiver")
        params = [c for c in receiver.named_children if c.type == "parameter_declaration"] \
            if receiver is not None else []
        owner = _go_type_name(field(params[0], "type")) if params else ""
        names = (owner, text(name)) if owner else (text(name),)
        return (found(names, "method", node),)
    if t in ("type_spec", "type_alias"):
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            getattr(field(node, "type"), "type", ""), "type")
        return (found((text(name),), kind, _go_single(node)),)
    if t in ("method_elem", "method_spec"):
        return (found((text(name),), "method", node, is_declaration=True),)
    if t in ("var_spec", "const_spec"):
        span = _go_single(node)
        return [found((text(n),), "variable", span) for n in node.children_by_field_name("name")]
    return ()


CLASSIFY = _go
CONTAINERS = _GO_CONTAINERS
