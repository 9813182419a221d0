"""Per-language naming rules for gold spans: which syntax nodes define what, and their names.

Each language has a *classifier* (node, kind of the enclosing definition) -> ``Found`` records
and, for most languages, a set of *container* node types: the walk only descends into those
(and into definitions), which keeps it fast and out of expression bodies. ``walk`` turns a
tree-sitter tree into raw definitions; ``gold.py`` wraps them into ``Definition`` values.
The span policy lives in ``first_line``/``last_line``/``leading``; see protocol/PROTOCOL.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
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


def _field(node: Node, name: str) -> Node | None:
    return node.child_by_field_name(name)


def _found(names: tuple[str, ...], kind: str, span: Node, *, start: Node | None = None,
           is_declaration: bool = False, emit: bool = True, nest: bool = True,
           body: tuple[Node, ...] | None = None) -> Found:
    """A definition spanning ``span`` (from ``start`` when leading attributes widen it)."""
    first = first_line(start if start is not None else span)
    return Found(names, kind, first, last_line(span), is_declaration, emit, nest, body)


def walk(root: Node, language: str) -> Iterator[Raw]:
    """Every definition under ``root`` as (qualname parts, kind, start, end, is_declaration)."""
    classify, containers = RULES[language]
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
                node.type not in _JS_LEAVES if containers is None else node.type in containers):
            stack.extend((child, scope, parent_kind) for child in reversed(node.named_children))


# --- Python -------------------------------------------------------------------------------

_PY_CONTAINERS = frozenset({
    "module", "block", "if_statement", "elif_clause", "else_clause", "for_statement",
    "while_statement", "try_statement", "except_clause", "except_group_clause", "finally_clause",
    "with_statement", "match_statement", "case_clause", "decorated_definition", "ERROR",
})


def _python(node: Node, parent_kind: str) -> Sequence[Found]:
    if node.type not in ("function_definition", "class_definition"):
        return ()
    name = _field(node, "name")
    if name is None:
        return ()
    parent = node.parent
    span = parent if parent is not None and parent.type == "decorated_definition" else node
    decorators = [text(d.named_children[0]) for d in span.named_children
                  if d.type == "decorator" and d.named_children]
    if node.type == "class_definition":
        return (_found((text(name),), "class", span),)
    kind = "method" if parent_kind == "class" else "function"
    for decorator in decorators if kind == "method" else ():
        if decorator in ("property", "abc.abstractproperty") or decorator.endswith(".getter"):
            kind = "property_getter"
        elif decorator.endswith(".setter"):
            kind = "property_setter"
        elif decorator.endswith(".deleter"):
            kind = "property_deleter"
    overload = any(d in ("overload", "typing.overload") for d in decorators)
    return (_found((text(name),), kind, span, is_declaration=overload),)


# --- C and C++ ----------------------------------------------------------------------------

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
        scope, name = _field(node, "scope"), _field(node, "name")
        return (_cpp_names(scope) if scope else ()) + (_cpp_names(name) if name else ())
    if node.type in ("template_function", "template_type", "template_method"):
        name = _field(node, "name")
        return _cpp_names(name) if name else ()
    if node.type == "operator_cast":  # `operator int() const` -> "operator int"
        return ("operator " + " ".join(text(_field(node, "type") or node).split()),)
    return (re.sub(r"operator (?=\W)", "operator", " ".join(text(node).split())),)


def _c_declarator(node: Node | None) -> tuple[tuple[str, ...], bool]:
    """Names declared by a declarator, and whether it declares a function (not a pointer to one)."""
    is_function = False
    while node is not None:
        if node.type in _C_NAMES:
            last: Node | None = node
            while last is not None and last.type == "qualified_identifier":
                last = _field(last, "name")
            cast = last is not None and last.type == "operator_cast"  # `operator int()`
            return _cpp_names(node), is_function or cast
        if node.type == "function_declarator":
            is_function = True
        elif node.type in ("pointer_declarator", "array_declarator", "reference_declarator"):
            is_function = False
        inner = _field(node, "declarator")
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
    spec, body = _field(node, "type"), _field(node, "body")
    if len(names) != 1 or spec is None or spec.type not in _C_TYPES or body is None \
            or _field(spec, "body") is not None:
        return ()
    return (_found(names, _C_TYPES[spec.type], _outer_template(node),
                   body=tuple(body.named_children)),)


def _c(node: Node, parent_kind: str) -> Sequence[Found]:
    kind_of_fn = "method" if parent_kind in CLASSLIKE else "function"
    t = node.type
    if t in ("preproc_def", "preproc_function_def"):
        name = _field(node, "name")
        return (_found((text(name),), "macro", node),) if name else ()
    if t == "function_definition":
        names, is_function = _c_declarator(_field(node, "declarator"))
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
                out.append(_found(names, kind, span, is_declaration=True, nest=False))
            elif t == "declaration" and parent_kind not in CLASSLIKE:
                declares = extern and declarator.type != "init_declarator"
                out.append(_found(names, "variable", span, is_declaration=declares, nest=False))
        return out
    if t in _C_TYPES and _field(node, "body") is not None:
        name = _field(node, "name")
        if name is None:
            return ()
        parent = node.parent
        span = node
        if parent is not None and parent.type in ("type_definition", "declaration",
                                                  "field_declaration"):
            span = parent
        return (_found(_cpp_names(name), _C_TYPES[t], _outer_template(span)),)
    if t == "type_definition":
        out = []
        for declarator in node.children_by_field_name("declarator"):
            names, _ = _c_declarator(declarator)
            if names:
                out.append(_found(names, "type", node, nest=False))
        return out
    if t == "alias_declaration":
        name = _field(node, "name")
        return (_found((text(name),), "type", _outer_template(node)),) if name else ()
    if t == "namespace_definition":
        name = _field(node, "name")
        return (_found(_cpp_names(name), "namespace", node),) if name else ()
    return ()


# --- Go -----------------------------------------------------------------------------------

_GO_CONTAINERS = frozenset({"source_file", "type_declaration", "interface_type",
                            "var_declaration", "const_declaration", "var_spec_list", "ERROR"})


def _go_type_name(node: Node | None) -> str:
    """``*List[T]`` -> "List"."""
    while node is not None and node.type in ("pointer_type", "generic_type", "qualified_type",
                                             "parenthesized_type"):
        inner = _field(node, "type") or _field(node, "name")
        node = inner if inner is not None else (node.named_children or [None])[-1]
    return text(node) if node is not None else ""


def _go_single(node: Node) -> Node:
    """A lone spec in its declaration takes the declaration's span (the keyword line)."""
    parent = node.parent
    if parent is not None and parent.type == "var_spec_list":
        parent = parent.parent if len(parent.named_children) == 1 else None
    if parent is not None and parent.type.endswith("_declaration"):
        specs = [c for c in parent.named_children if c.type not in COMMENTS]
        if len(specs) == 1:
            return parent
    return node


def _go(node: Node, parent_kind: str) -> Sequence[Found]:
    t, name = node.type, _field(node, "name")
    if name is None:
        return ()
    if t == "function_declaration":
        return (_found((text(name),), "function", node),)
    if t == "method_declaration":
        receiver = _field(node, "receiver")
        params = [c for c in receiver.named_children if c.type == "parameter_declaration"] \
            if receiver is not None else []
        owner = _go_type_name(_field(params[0], "type")) if params else ""
        names = (owner, text(name)) if owner else (text(name),)
        return (_found(names, "method", node),)
    if t in ("type_spec", "type_alias"):
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(
            getattr(_field(node, "type"), "type", ""), "type")
        return (_found((text(name),), kind, _go_single(node)),)
    if t in ("method_elem", "method_spec"):
        return (_found((text(name),), "method", node, is_declaration=True),)
    if t in ("var_spec", "const_spec"):
        span = _go_single(node)
        return [_found((text(n),), "variable", span) for n in node.children_by_field_name("name")]
    return ()


# --- Rust ---------------------------------------------------------------------------------

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
        node = _field(node, "type") or _field(node, "name") or _field(node, "trait")
    return re.sub(r"\s+", "", text(node)) if node is not None else ""


def _rust(node: Node, parent_kind: str) -> Sequence[Found]:
    t = node.type
    if t in ("function_item", "function_signature_item"):
        name = _field(node, "name")
        if name is None:
            return ()
        kind = "method" if parent_kind in ("impl", "trait") else "function"
        names: tuple[str, ...] = (text(name),)
        declaration = t == "function_signature_item"
    elif t == "impl_item":
        kind, names, declaration = "impl", (_rust_type_name(_field(node, "type")),), False
    elif t in _RUST_KINDS:
        name = _field(node, "name")
        if name is None or (t == "mod_item" and _field(node, "body") is None):
            return ()
        kind, names, declaration = _RUST_KINDS[t], (text(name),), False
    else:
        return ()
    return (_found(names, kind, node, start=leading(node, _ATTRIBUTES),
                   is_declaration=declaration),)


# --- Java ---------------------------------------------------------------------------------

_JAVA_CONTAINERS = frozenset({"program", "class_body", "interface_body", "enum_body",
                              "enum_body_declarations", "annotation_type_body", "ERROR"})
_JAVA_KINDS = {"class_declaration": "class", "record_declaration": "class",
               "interface_declaration": "interface", "annotation_type_declaration": "interface",
               "enum_declaration": "enum", "method_declaration": "method",
               "constructor_declaration": "method", "compact_constructor_declaration": "method"}


def _java(node: Node, parent_kind: str) -> Sequence[Found]:
    kind, name = _JAVA_KINDS.get(node.type), _field(node, "name")
    if kind is None or name is None:
        return ()
    declaration = kind == "method" and _field(node, "body") is None
    return (_found((text(name),), kind, node, is_declaration=declaration),)


# --- JavaScript and TypeScript ------------------------------------------------------------

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
        node = _field(node, "right") if node.type == "assignment_expression" else (
            node.named_children[0] if node.named_children else None)
    return node


def _js_path(node: Node) -> tuple[str, ...]:
    """``Foo.prototype.bar`` -> its components; () when it is not a plain dotted path."""
    if node.type in ("identifier", "this", "property_identifier", "private_property_identifier"):
        return (text(node),)
    if node.type == "member_expression":
        obj, prop = _field(node, "object"), _field(node, "property")
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
    return _found(names, kind, span, start=leading(span, _DECORATORS),
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
        name = _field(node, "name")
        if name is None:
            return ()
        return (_js_found((text(name),), "function", node,
                          is_declaration=t == "function_signature"),)
    if t in _JS_KINDS:
        name = _field(node, "name")
        return (_js_found((text(name).strip("'\""),), _JS_KINDS[t], node),) if name else ()
    if t in ("method_definition", "method_signature", "abstract_method_signature"):
        name = _field(node, "name")
        if name is None:
            return ()
        tokens = {c.type for c in node.children if not c.is_named}
        kind = "property_getter" if "get" in tokens else \
            "property_setter" if "set" in tokens else "method"
        return (_js_found((text(name),), kind, node, is_declaration=t != "method_definition"),)
    if t in ("field_definition", "public_field_definition", "pair"):
        name = _field(node, "property") or _field(node, "name") or _field(node, "key")
        if name is None:
            return ()
        return _js_value_found((text(name).strip("'\""),), _field(node, "value"), node,
                               parent_kind, True)
    if t == "variable_declarator":
        name = _field(node, "name")
        if name is None or name.type != "identifier":
            return ()
        return _js_value_found((text(name),), _js_value(_field(node, "value")), node,
                               parent_kind, False)
    if t == "assignment_expression":
        left = _field(node, "left")
        names = _js_path(left) if left is not None and left.type == "member_expression" else ()
        if not names:
            return ()
        return _js_value_found(names, _js_value(_field(node, "right")), node, parent_kind,
                               "prototype" in names)
    return ()


RULES: dict[str, tuple[Classifier, frozenset[str] | None]] = {
    "python": (_python, _PY_CONTAINERS),
    "c": (_c, _C_CONTAINERS),
    "cpp": (_c, _C_CONTAINERS),
    "go": (_go, _GO_CONTAINERS),
    "rust": (_rust, _RUST_CONTAINERS),
    "java": (_java, _JAVA_CONTAINERS),
    "javascript": (_js, None),
    "typescript": (_js, None),
    "tsx": (_js, None),
}
