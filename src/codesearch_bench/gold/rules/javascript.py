"""Gold-span naming rules for JavaScript and TypeScript (one classifier for both)."""

from __future__ import annotations

from collections.abc import Sequence

from tree_sitter import Node

from .base import Found, field, found, leading, text

_JS_LEAVES = frozenset({"string", "template_string", "regex", "number", "comment",
                        "formal_parameters", "type_annotation", "jsx_text"})
_JS_FUNCTIONS = frozenset({"function_expression", "function", "arrow_function",
                           "generator_function"})
_JS_KINDS = {"class_declaration": "class", "abstract_class_declaration": "class",
             "interface_declaration": "interface", "type_alias_declaration": "type",
             "enum_declaration": "enum", "internal_module": "namespace", "module": "namespace"}
_DECORATORS = frozenset({"decorator"})


def _js_value(node: Node | None) -> Node | None:
    """Look through ``a = b = value`` and parentheses to the value assigned."""
    while node is not None and node.type in ("assignment_expression", "parenthesized_expression"):
        node = field(node, "right") if node.type == "assignment_expression" else (
            node.named_children[0] if node.named_children else None)
    return node


def _js_path(node: Node) -> tuple[str, ...]:
    """``Foo.prototype.bar`` -> its components; () when it is not a plain dotted path."""
    if node.type in ("identifier", "this", "property_identifier", "private_property_identifier"):
        return (text(node),)
    if node.type == "member_expression":
        obj, prop = field(node, "object"), field(node, "property")
        if obj is not None and prop is not None:
            head = _js_path(obj)
            return (*head, text(prop)) if head else ()
    return ()


def _js_span(node: Node) -> Node:
    span, parent = node, node.parent
    if parent is not None and node.type == "variable_declarator" and parent.type in (
            "lexical_declaration", "variable_declaration") and len(
            [c for c in parent.named_children if c.type == "variable_declarator"]) == 1:
        span, parent = parent, parent.parent
    if parent is not None and node.type == "assignment_expression" and \
            parent.type == "expression_statement":
        span, parent = parent, parent.parent
    if parent is not None and parent.type in ("export_statement", "ambient_declaration"):
        span = parent
    return span


def _js_found(names: tuple[str, ...], kind: str, node: Node, *, is_declaration: bool = False,
              emit: bool = True, body: tuple[Node, ...] | None = None) -> Found:
    span = _js_span(node)
    return found(names, kind, span, start=leading(span, _DECORATORS),
                  is_declaration=is_declaration, emit=emit, body=body)


def _js_value_found(names: tuple[str, ...], value: Node | None, node: Node,
                    parent_kind: str, method: bool) -> Sequence[Found]:
    if value is None:
        return ()
    if value.type in _JS_FUNCTIONS:
        kind = "method" if method else "function"
    elif value.type == "class":
        kind = "class"
    elif value.type == "object":
        emit = node.type == "assignment_expression" or (
            node.type == "variable_declarator" and parent_kind in ("", "namespace"))
        return (_js_found(names, "variable", node, emit=emit, body=(value,)),)
    else:
        return ()
    return (_js_found(names, kind, node, body=(value,)),)


def _js(node: Node, parent_kind: str) -> Sequence[Found]:
    t = node.type
    if t in ("function_declaration", "generator_function_declaration", "function_signature"):
        name = field(node, "name")
        if name is None:
            return ()
        return (_js_found((text(name),), "function", node,
                          is_declaration=t == "function_signature"),)
    if t in _JS_KINDS:
        name = field(node, "name")
        return (_js_found((text(name).strip("'\""),), _JS_KINDS[t], node),) if name else ()
    if t in ("method_definition", "method_signature", "abstract_method_signature"):
        name = field(node, "name")
        if name is None:
            return ()
        tokens = {c.type for c in node.children if not c.is_named}
        kind = "property_getter" if "get" in tokens else \
            "property_setter" if "set" in tokens else "method"
        return (_js_found((text(name),), kind, node, is_declaration=t != "method_definition"),)
    if t in ("field_definition", "public_field_definition", "pair"):
        name = field(node, "property") or field(node, "name") or field(node, "key")
        if name is None:
            return ()
        return _js_value_found((text(name).strip("'\""),), field(node, "value"), node,
                               parent_kind, True)
    if t == "variable_declarator":
        name = field(node, "name")
        if name is None or name.type != "identifier":
            return ()
        return _js_value_found((text(name),), _js_value(field(node, "value")), node,
                               parent_kind, False)
    if t == "assignment_expression":
        left = field(node, "left")
        names = _js_path(left) if left is not None and left.type == "member_expression" else ()
        if not names:
            return ()
        return _js_value_found(names, _js_value(field(node, "right")), node, parent_kind,
                               "prototype" in names)
    return ()


CLASSIFY = _js
LEAVES = _JS_LEAVES
