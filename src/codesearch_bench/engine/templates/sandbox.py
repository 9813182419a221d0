"""jinja2's immutable sandbox, with every step of a render charged to a allowance.

The sandbox proper keeps a template from Python's internals. This subclass
also keeps it from the machine: operators, calls, filters, tests, loop
iterations, `~` joins, list literals and outputs each pay `allowance.py`'s price
before they run, and a call nests no deeper than a limit. jinja2 offers hooks
for operators (`intercepted_binops`/`call_binop`), calls (`call`), str.format
(`wrap_str_format`) and outputs (`finalize`); loops, `~` and literals have
none, so the parsed template is rewritten to pass them through internal
filters before it is compiled. Filters and tests are wrapped at start-up.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, cast

import jinja2
from jinja2 import nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.utils import Cycler, Joiner, Namespace, pass_context
from jinja2.visitor import NodeTransformer
from markupsafe import EscapeFormatter, Markup

from . import allowance
from .allowance import MAX_CALL_DEPTH, MAX_RANGE, RenderLimit

#: Filters that cannot be priced cheaply and serve no command line.
_DROPPED_FILTERS = frozenset({"urlize", "pprint", "xmlattr"})
#: A filler text generator: its size is its arguments' product, for no purpose here.
_DROPPED_GLOBALS = frozenset({"lipsum"})
_CALLABLE_TYPES = frozenset({dict, Namespace, Cycler, Joiner})
_BUILTIN_CALLABLES = (types.BuiltinFunctionType, types.BuiltinMethodType,
                      types.MethodWrapperType, types.WrapperDescriptorType,
                      types.MethodDescriptorType, types.ClassMethodDescriptorType)

_Args = tuple[Any, ...]
_Kwargs = dict[str, Any]


def _range(*args: int) -> range:
    """range() that refuses more than MAX_RANGE items before any is made."""
    numbers = range(*args)
    try:
        size = len(numbers)
    except OverflowError:  # longer than sys.maxsize
        size = -1
    if size < 0 or size > MAX_RANGE:
        raise RenderLimit(f"range() of {'more than 2**63' if size < 0 else size} items; "
                          f"a template may ask for at most {MAX_RANGE}")
    return numbers


def _guard_call(obj: Any, args: _Args, kwargs: _Kwargs) -> Any:
    """What to call instead of obj: refused, priced, or obj itself."""
    receiver = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "?")
    if isinstance(receiver, str):  # str and Markup
        if name == "join":  # its cost is in the items, which may be an iterator
            return functools.partial(_join, receiver)
        cost = allowance.STR_METHODS.get(name)
        if cost is None:
            raise SecurityError(f"str.{name}() is not allowed in spec templates")
        allowance.current().afford(cost(receiver, args, kwargs), f"str.{name}()")
        return obj
    for kind, allowed in allowance.OTHER_METHODS.items():
        if type(receiver) is kind:
            if name not in allowed:
                raise SecurityError(f"{kind.__name__}.{name}() is not allowed in spec templates")
            return obj
    if isinstance(obj, _BUILTIN_CALLABLES) or (isinstance(obj, type)
                                              and obj not in _CALLABLE_TYPES):
        qualname = getattr(obj, "__qualname__", name)
        raise SecurityError(f"calling {qualname}() is not allowed in spec templates")
    return obj


def _join(separator: str, items: Iterable[Any]) -> str:
    listed = list(items)
    escapes = 1 if type(separator) is str else 6  # Markup escapes each item
    allowance.current().afford(escapes * allowance.join_cost(separator, listed), "str.join()")
    return separator.join(listed)


class _Formatter(SandboxedFormatter):
    """str.format with each field priced by its width, precision and value."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        # Spent, not only afforded: one format string may hold a thousand fields.
        allowance.current().spend(allowance.format_field_cost(format_spec, value), "str.format()")
        return super().format_field(value, format_spec)


class _EscapeFormatter(_Formatter, EscapeFormatter):
    """Markup.format, escaping as jinja's own does."""


def _wrap_filter(name: str, func: Callable[..., Any], *, test: bool = False) -> Callable[..., Any]:
    """A filter (or test) that charges a step, its estimated cost, and its result."""
    pass_arg = getattr(getattr(func, "jinja_pass_arg", None), "name", None)
    price = None if test else _FILTER_PRICES.get(name)

    @pass_context  # never folded at compile time, where no budget applies
    def bounded(context: Context, *args: Any, **kwargs: Any) -> Any:
        charge = allowance.current()
        charge.step(steps=1 + (allowance.work(args[0]) if args else 0))
        if price is not None:
            args, kwargs = price(charge, args, kwargs)
        lead: _Args = {"context": (context,), "eval_context": (context.eval_ctx,),
                       "environment": (context.environment,)}.get(pass_arg or "", ())
        result = func(*lead, *args, **kwargs)
        return result if test else allowance.account(result)

    bounded.__name__ = getattr(func, "__name__", name)
    return bounded


def _price_join(b: allowance.Budget, args: _Args, kwargs: _Kwargs) -> tuple[_Args, _Kwargs]:
    items = list(args[0])
    b.afford(allowance.join_cost(allowance.argument(args, kwargs, 1, "d", ""), items), "join")
    return (items, *args[1:]), kwargs


def _price_sum(b: allowance.Budget, args: _Args, kwargs: _Kwargs) -> tuple[_Args, _Kwargs]:
    items = list(args[0])
    start = allowance.argument(args, kwargs, 2, "start", 0)
    if isinstance(start, list | tuple | str):  # each partial sum is copied: quadratic
        b.afford((allowance.weight(start) + allowance.join_cost("", items)) * max(len(items), 1),
                "sum")
    return (items, *args[1:]), kwargs


def _price_list(b: allowance.Budget, args: _Args, kwargs: _Kwargs) -> tuple[_Args, _Kwargs]:
    value = args[0]
    if isinstance(value, str):
        b.afford(len(value) * (8 if value.isascii() else 80), "list")
    return args, kwargs


def _priced(cost: Callable[[Any, _Args, _Kwargs], int], what: str,
            ) -> Callable[[allowance.Budget, _Args, _Kwargs], tuple[_Args, _Kwargs]]:
    def price(b: allowance.Budget, args: _Args, kwargs: _Kwargs) -> tuple[_Args, _Kwargs]:
        b.afford(cost(args[0], args[1:], kwargs), what)
        return args, kwargs
    return price


def _indent_cost(s: Any, args: _Args, kwargs: _Kwargs) -> int:
    width = allowance.argument(args, kwargs, 0, "width", 4)
    indent = (len(width) if isinstance(width, str)
              else max(width, 0) if allowance.is_int(width) else 0)
    return allowance.weight(s) + (str(s).count("\n") + 2) * indent


def _wordwrap_cost(s: Any, args: _Args, kwargs: _Kwargs) -> int:
    width = allowance.argument(args, kwargs, 0, "width", 79)
    wrap = allowance.argument(args, kwargs, 2, "wrapstring", None) or "\n"
    lines = allowance.weight(s) // max(width if allowance.is_int(width) else 1, 1) + 1
    return allowance.weight(s) + lines * allowance.weight(wrap)


def _tojson_cost(value: Any, args: _Args, kwargs: _Kwargs) -> int:
    weight, height = allowance.measure(value)
    indent = allowance.argument(args, kwargs, 0, "indent", None)
    per_line = len(indent) if isinstance(indent, str) else indent if allowance.is_int(indent) else 0
    return 6 * weight + (weight // 2 + 1) * max(per_line, 0) * (height + 1)


def _fill_cost(value: Any, args: _Args, kwargs: _Kwargs) -> int:
    count = args[0] if args else kwargs.get("linecount", kwargs.get("slices", 0))
    if not isinstance(count, int) or count > MAX_RANGE:
        raise RenderLimit(f"batches or slices of {count}; at most {MAX_RANGE}")
    fill = allowance.argument(args, kwargs, 1, "fill_with", None)
    return allowance.weight(value) + count * allowance.weight(fill)


_FILTER_PRICES: dict[str, Callable[[allowance.Budget, _Args, _Kwargs], tuple[_Args, _Kwargs]]] = {
    "join": _price_join, "sum": _price_sum, "list": _price_list,
    "center": _priced(lambda v, a, k: allowance.width_cost(str(v), a, k), "center"),
    "indent": _priced(_indent_cost, "indent"),
    "replace": _priced(lambda v, a, k: allowance.replace_cost(
        str(v), allowance.argument(a, k, 0, "old", ""), allowance.argument(a, k, 1, "new", ""),
        allowance.argument(a, k, 2, "count", None)), "replace"),
    "format": _priced(lambda v, a, k: allowance.percent_cost(str(v), k or tuple(a)), "format"),
    "wordwrap": _priced(_wordwrap_cost, "wordwrap"),
    "tojson": _priced(_tojson_cost, "tojson"),
    "batch": _priced(_fill_cost, "batch"), "slice": _priced(_fill_cost, "slice"),
    "string": _priced(lambda v, a, k: allowance.weight(v), "string"),
    # An escape is at most 6 characters for 1, a %-encoded character at most 12.
    **{name: _priced(lambda v, a, k: 12 * allowance.weight(v), name)
       for name in ("e", "escape", "forceescape", "urlencode")},
}


@pass_context
def _loop(context: Context, iterable: Iterable[Any], body: int) -> Iterator[Any]:
    """A for loop's iterable, charging each iteration a step and its literal text."""
    charge = allowance.current()
    for item in iterable:
        charge.step(body)
        yield item


@pass_context
def _concat(context: Context, parts: tuple[Any, ...]) -> str:
    """`a ~ b ~ c`, priced before the join."""
    charge = allowance.current()
    charge.step()
    charge.afford(sum(allowance.weight(p) for p in parts), "~")
    joined = "".join([str(p) for p in parts])
    charge.spend(allowance.weight(joined), "~")
    return joined


@pass_context
def _literal(context: Context, value: Any) -> Any:
    """A list, tuple or dict literal: references only, but its printed size is checked."""
    allowance.current().step(8 * len(value), what="a literal")
    allowance.measure(value)
    return value


_INTERNAL = {"_bench_loop": _loop, "_bench_concat": _concat, "_bench_literal": _literal}


class _Rewrite(NodeTransformer):
    """Route loops, `~` and collection literals through the internal filters."""

    def _wrap(self, node: nodes.Expr, name: str, *args: nodes.Expr) -> nodes.Filter:
        return nodes.Filter(node, name, list(args), [], None, None, lineno=node.lineno)

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        literal = sum(len(d.data) for d in node.find_all(nodes.TemplateData))
        assert isinstance(node.iter, nodes.Expr)
        node.iter = self._wrap(node.iter, "_bench_loop", nodes.Const(literal + 1))
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return self._wrap(nodes.Tuple(node.nodes, "load", lineno=node.lineno), "_bench_concat")

    def visit_List(self, node: nodes.List) -> nodes.Node:
        self.generic_visit(node)
        return self._wrap(node, "_bench_literal")

    def visit_Dict(self, node: nodes.Dict) -> nodes.Node:
        self.generic_visit(node)
        return self._wrap(node, "_bench_literal")

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        self.generic_visit(node)
        return self._wrap(node, "_bench_literal") if node.ctx == "load" else node


def _finalize(value: Any) -> Any:
    """Every `{{ ... }}` output: charged for the text it prints."""
    allowance.current().spend(allowance.weight(value), "an output")
    return value


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The immutable sandbox, with every render held to one `allowance.Budget`."""

    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, **options: Any) -> None:
        super().__init__(finalize=_finalize, **options)
        self.globals["range"] = _range
        for name in _DROPPED_GLOBALS:
            self.globals.pop(name, None)
        self.filters = {name: _wrap_filter(name, f) for name, f in self.filters.items()
                        if name not in _DROPPED_FILTERS}
        self.filters.update(_INTERNAL)
        tests = cast(dict[str, Callable[..., Any]], self.tests)  # typed as bare `function`
        self.tests = {name: _wrap_filter(name, t, test=True) for name, t in tests.items()}

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        _Rewrite().visit(tree)  # rewrites in place
        tree.set_environment(self)
        return tree

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        return allowance.binop(operator, left, right)

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        charge = allowance.current()
        charge.step(steps=allowance.CALL_STEPS)
        if not __self.is_safe_callable(__obj):
            raise SecurityError(f"{__obj!r} is not safely callable")
        __obj = _guard_call(__obj, args, kwargs)
        charge.depth += 1
        try:
            if charge.depth > MAX_CALL_DEPTH:
                raise RenderLimit(f"calls nested too deep (more than {MAX_CALL_DEPTH})")
            result = __context.call(__obj, *args, **kwargs)
        finally:
            charge.depth -= 1
        return allowance.account(result)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text: str = value.__self__
        formatter = (_EscapeFormatter(self, escape=text.escape) if isinstance(text, Markup)
                     else _Formatter(self))
        mapping_call = value.__name__ == "format_map"

        def bounded_format(*args: Any, **kwargs: Any) -> str:
            if mapping_call:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one mapping")
                return type(text)(formatter.vformat(text, (), args[0]))
            return type(text)(formatter.vformat(text, args, kwargs))

        return bounded_format


def render(template: jinja2.Template, context: Mapping[str, object]) -> str:
    """Render under a fresh budget; the output is capped like everything built."""
    with allowance.bounded() as charge:
        parts: list[str] = []
        size = 0
        stream: Generator[str, None, None] = template.generate(**context)  # type: ignore[assignment]
        try:
            for chunk in stream:
                size += len(chunk)
                if size > allowance.MAX_BYTES:
                    raise RenderLimit(f"an output of more than {allowance.MAX_BYTES} bytes")
                charge.step(steps=0)
                parts.append(chunk)
        finally:
            stream.close()
        return "".join(parts)
