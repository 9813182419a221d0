"""Gold-span naming rules for C and C++ (one classifier; C++ adds namespaces and templates)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tree_sitter import Node

from .base import CLASSLIKE, COMMENTS, Found, field, first_line, found, last_line, text

_C_CONTAINERS = frozenset({
    "translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
    "preproc_elifdef", "linkage_specification", "declaration_list", "template_declaration",
    "type_definition", "declaration", "field_declaration", "field_declaration_list",
    "namespace_definition", "struct_specifier", "union_specifier", "class_specifier", "ERROR",
    "friend_declaration", "labeled_statement",  # `public:` in a class _c_macro_class recovers
})
_C_TYPES = {"struct_specifier": "struct", "union_specifier": "union", "enum_specifier": "enum",
            "class_specifier": "class"}
_C_NAMES = frozenset({"identifier", "field_identifier", "type_identifier", "qualified_identifier",
                      "destructor_name", "operator_name", "template_function", "operator_cast",
                      "namespace_identifier", "template_type", "primitive_type"})


def _cpp_names(node: Node) -> tuple[str, ...]:
    """``Foo<T>::bar`` -> ("Foo", "bar"); template arguments dropped, operators kept."""
    if node.type in ("qualified_identifier", "nested_namespace_specifier"):
        if node.type == "nested_namespace_specifier":
            return tuple(p for p in re.split(r"\s*::\s*", text(node)) if p)
        scope, name = field(node, "scope"), field(node, "name")
        return (_cpp_names(scope) if scope else ()) + (_cpp_names(name) if name else ())
    if node.type in ("template_function", "template_type", "template_method"):
        name = field(node, "name")
        return _cpp_names(name) if name else ()
    if node.type == "operator_cast":  # `operator int() const` -> "operator int"
        return ("operator " + " ".join(text(field(node, "type") or node).split()),)
    return (re.sub(r"operator (?=\W)", "operator", " ".join(text(node).split())),)


def _c_declarator(node: Node | None) -> tuple[tuple[str, ...], bool]:
    """Names declared by a declarator, and whether it declares a function (not a pointer to one)."""
    is_function = False
    while node is not None:
        if node.type in _C_NAMES:
            last: Node | None = node
            while last is not None and last.type == "qualified_identifier":
                last = field(last, "name")
            cast = last is not None and last.type == "operator_cast"  # `operator int()`
            return _cpp_names(node), is_function or cast
        if node.type == "function_declarator":
            is_function = True
        elif node.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
            is_function = False
        inner = field(node, "declarator")
        if inner is None:  # parenthesized_declarator, reference_declarator: no field name
            named = [c for c in node.named_children if c.type not in COMMENTS]
            inner = named[0] if named else None
        node = inner
    return (), False


def _outer_template(node: Node) -> Node:
    while node.parent is not None and node.parent.type == "template_declaration":
        node = node.parent
    return node


def _c_macro_class(node: Node, names: tuple[str, ...]) -> Sequence[Found]:
    """``class EXPORT_MACRO Name {...}`` parses as a function ``Name`` returning ``class
    EXPORT_MACRO``: recover the class, its span and the members that still parse."""
    spec, body = field(node, "type"), field(node, "body")
    if len(names) != 1 or spec is None or spec.type not in _C_TYPES or body is None \
            or field(spec, "body") is not None:
        return ()
    return (found(names, _C_TYPES[spec.type], _outer_template(node),
                   body=tuple(body.named_children)),)


def _c(node: Node, parent_kind: str) -> Sequence[Found]:
    kind_of_fn = "method" if parent_kind in CLASSLIKE else "function"
    t = node.type
    if t in ("preproc_def", "preproc_function_def"):
        name = field(node, "name")
        return (found((text(name),), "macro", node),) if name else ()
    if t == "function_definition":
        names, is_function = _c_declarator(field(node, "declarator"))
        if not is_function:
            return _c_macro_class(node, names)
        kind = "method" if len(names) > 1 else kind_of_fn
        span = _outer_template(node)
        return (Found(names, kind, first_line(span), last_line(node)),)
    if t in ("declaration", "field_declaration"):
        out = []
        span = _outer_template(node)
        extern = any(c.type == "storage_class_specifier" and text(c) == "extern"
                     for c in node.children)
        for declarator in node.children_by_field_name("declarator"):
            names, is_function = _c_declarator(declarator)
            if not names:
                continue
            if is_function:
                kind = "method" if len(names) > 1 else kind_of_fn
                out.append(found(names, kind, span, is_declaration=True, nest=False))
            elif t == "declaration" and parent_kind not in CLASSLIKE:
                declares = extern and declarator.type != "init_declarator"
                out.append(found(names, "variable", span, is_declaration=declares, nest=False))
        return out
    if t in _C_TYPES and field(node, "body") is not None:
        name = field(node, "name")
        if name is None:
            return ()
        parent = node.parent
        span = node
        if parent is not None and parent.type in ("type_definition", "declaration",
                                                  "field_declaration"):
            span = parent
        return (found(_cpp_names(name), _C_TYPES[t], _outer_template(span)),)
    if t == "type_definition":
        out = []
        for declarator in node.children_by_field_name("declarator"):
            names, _ = _c_declarator(declarator)
            if names:
                out.append(found(names, "type", node, nest=False))
        return out
    if t == "alias_declaration":
        name = field(node, "name")
        return (found((text(name),), "type", _outer_template(node)),) if name else ()
    if t == "namespace_definition":
        name = field(node, "name")
        return (found(_cpp_names(name), "namespace", node),) if name else ()
    return ()


CLASSIFY = _c
CONTAINERS = _C_CONTAINERS
