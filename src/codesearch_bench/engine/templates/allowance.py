"""What one template render may spend, and the price of each step it takes.

A spec's templates are untrusted input: `{{ 'x' * 10**10 }}` asks for 10 GB in
one operator, two nested loops over `range(100000)` ask for 10**10 steps, and
`[a, a]` nested forty times is a value whose text is a terabyte although it
holds eighty references. So every render gets a `Budget` -- steps, bytes,
call depth and a deadline -- and each operator, call, filter, loop iteration
and output is charged *before* it runs, from an estimate of what it would
build. The estimates are upper bounds computed from sizes already known, so
refusing a bomb never allocates it. `sandbox.py` wires these charges into
jinja2; this module only prices.
"""

from __future__ import annotations

import contextlib
import math
import re
import time
from collections import abc
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from jinja2.utils import Namespace

#: Longest template source accepted; an argv element or env value is a line,
#: and jinja2 takes about 0.15 s to compile 4 KiB of dense template.
MAX_TEMPLATE_CHARS = 4 * 1024
#: Bytes one render may build, output included. A query itself is not built:
#: `{{ query }}` of a 200 KB query costs 200 KB of it, once.
MAX_BYTES = 16 * 1024 * 1024
#: Operators, calls, filters and loop iterations in one render.
MAX_STEPS = 200_000
#: A backstop for time spent inside single C-level steps, which no count sees.
MAX_SECONDS = 0.5
#: Below this many steps the clock is not read: an ordinary template takes
#: dozens, and a loaded machine must not turn it into a spec error.
_UNTIMED_STEPS = 1000
#: Integers a template computes: enough for any count or size a tool takes.
MAX_INT_BITS = 128
#: Items in one range(), as jinja's own sandbox allows.
MAX_RANGE = 100_000
#: Macro, loop(...) and caller() calls inside one another.
MAX_CALL_DEPTH = 50
#: Lists inside lists: beyond this, printing one is recursion, not data.
MAX_NESTING = 32
#: Python-level filter work (textwrap, title case, sorting by key) per step charged.
_ITEMS_PER_STEP = 64
#: Steps one call costs: a macro call takes as long as a few dozen loop iterations.
CALL_STEPS = 8


class RenderLimit(Exception):
    """A render asked for more than its budget; the message says what and the limit."""


@dataclass
class Budget:
    """One render's allowance. Charged by every step; never refilled."""

    steps: int = MAX_STEPS
    bytes: int = MAX_BYTES
    deadline: float = field(default_factory=lambda: time.monotonic() + MAX_SECONDS)
    depth: int = 0
    # id -> (value, weight, height): kept alive here so an id is never reused.
    seen: dict[int, tuple[object, int, int]] = field(default_factory=dict)

    def step(self, cost: int = 0, steps: int = 1, what: str = "a loop iteration") -> None:
        self.steps -= steps
        if self.steps < 0:
            raise RenderLimit(f"more than {MAX_STEPS} steps (loop iterations, calls, "
                              f"operators) in one render")
        if cost:
            self.spend(cost, what)
        if MAX_STEPS - self.steps > _UNTIMED_STEPS and time.monotonic() > self.deadline:
            raise RenderLimit(f"rendering took longer than {MAX_SECONDS}s")

    def afford(self, cost: int, what: str) -> None:
        """Refuse, before it is built, what would not fit; the result is charged once made."""
        if cost > self.bytes:
            raise RenderLimit(f"{what} would build {cost} more bytes; one render may build "
                              f"at most {MAX_BYTES} and has built {MAX_BYTES - self.bytes}")

    def spend(self, cost: int, what: str) -> None:
        self.afford(cost, what)
        self.bytes -= cost


_ACTIVE: ContextVar[Budget | None] = ContextVar("template_budget", default=None)


def current() -> Budget:
    """The render's budget; outside a render (compile-time folding) a fresh one."""
    return _ACTIVE.get() or Budget()


@contextlib.contextmanager
def bounded() -> Iterator[Budget]:
    budget = Budget()
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE.reset(token)


# -- the size of a value --------------------------------------------------------

def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _children(value: object) -> abc.Iterable[object] | None:
    if isinstance(value, Mapping):
        return [*value.keys(), *value.values()]
    if isinstance(value, Namespace):
        return list(object.__getattribute__(value, "_Namespace__attrs").items())
    if isinstance(value, list | tuple | set | frozenset):
        return value
    if isinstance(value, abc.KeysView | abc.ValuesView | abc.ItemsView):
        return list(value)
    return None


def measure(value: object, budget: Budget | None = None, depth: int = 0) -> tuple[int, int]:
    """(weight, height): an upper bound on len(str(value)) and its nesting depth.

    Shared references count each time they are reached, as str() would print
    them, but each distinct object is walked once.
    """
    budget = budget or current()
    if depth > MAX_NESTING:  # also ends a namespace that holds itself
        raise RenderLimit(f"a value nested too deep (more than {MAX_NESTING} levels)")
    if isinstance(value, str):
        return len(value) if value.isascii() else 4 * len(value), 0  # UTF-8 at most 4 a char
    if isinstance(value, bytes):
        return len(value), 0
    if is_int(value):
        return value.bit_length() // 3 + 2, 0  # type: ignore[attr-defined]
    if isinstance(value, bool | float | complex | range) or value is None:
        return 64, 0
    key = id(value)
    if key in budget.seen:
        return budget.seen[key][1:]
    children = _children(value)
    if children is None:
        return 64, 0  # a macro, a loop, a cycler: printed as a short repr
    if not isinstance(value, Namespace):  # namespaces change; the rest cannot in the sandbox
        budget.seen[key] = (value, 0, 0)  # a cycle counts once
    weight, height = 2, 0
    for child in children:
        w, h = measure(child, budget, depth + 1)
        weight, height = weight + w + 2, max(height, h + 1)
        if height > MAX_NESTING:
            raise RenderLimit(f"a value nested too deep (more than {MAX_NESTING} levels)")
        if weight > MAX_BYTES:
            raise RenderLimit(f"a value of more than {MAX_BYTES} bytes")
    if not isinstance(value, Namespace):
        budget.seen[key] = (value, weight, height)
    return weight, height


def weight(value: object) -> int:
    return measure(value)[0]


def account(result: object) -> object:
    """Charge a fresh result for what it holds; refuse oversized integers."""
    if is_int(result) and result.bit_length() > MAX_INT_BITS:  # type: ignore[attr-defined]
        raise RenderLimit(f"an integer of {result.bit_length()} bits; "  # type: ignore[attr-defined]
                          f"a template may compute at most {MAX_INT_BITS}")
    if isinstance(result, str | bytes):
        current().spend(weight(result), "a result")
    elif isinstance(result, list | tuple):
        current().spend(8 * len(result), "a result")
        measure(result)
    elif _children(result) is not None:
        measure(result)
    return result


def _check_bits(bits: int | float, what: str) -> None:
    if bits > MAX_INT_BITS:
        raise RenderLimit(f"{what} makes an integer of about {int(bits)} bits; "
                          f"a template may compute at most {MAX_INT_BITS}")


# -- operators ------------------------------------------------------------------

def binop(operator: str, left: Any, right: Any) -> Any:
    """`*`, `**`, `%` and `+`, each priced before it runs."""
    budget = current()
    budget.step()
    if operator == "**":
        if is_int(left) and is_int(right) and right > 0 and abs(left) > 1:
            _check_bits(right * math.log2(abs(left)) + 1, "**")
        return account(left**right)
    if operator == "*":
        if is_int(left) and is_int(right):
            _check_bits(left.bit_length() + right.bit_length(), "*")
        elif isinstance(left, str | bytes | list | tuple) and is_int(right):
            budget.afford(max(weight(left), len(left)) * max(right, 0), "repeating a value")
        elif isinstance(right, str | bytes | list | tuple) and is_int(left):
            budget.afford(max(weight(right), len(right)) * max(left, 0), "repeating a value")
        return account(left * right)
    if operator == "%":
        if isinstance(left, str):
            budget.afford(percent_cost(left, right), "% formatting")
        return account(left % right)
    if operator == "+":
        if is_int(left) and is_int(right):
            _check_bits(max(left.bit_length(), right.bit_length()) + 1, "+")
        elif isinstance(left, str | bytes | list | tuple):
            budget.afford(weight(left) + weight(right), "+")
        return account(left + right)
    raise AssertionError(f"operator {operator} is not intercepted")


_CONVERSION = re.compile(
    r"%(?:\((?P<key>[^)]*)\))?[#0\- +]*(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?[hlL]?"
    r"(?P<type>[diouxXeEfFgGcrsa%])")


def _number(text: str | None, values: Iterator[object]) -> int:
    if text is None:
        return 0
    if text == "*":
        got = next(values, 0)
        return abs(got) if is_int(got) else 0  # type: ignore[arg-type]
    return int(text) if len(text) < 19 else MAX_BYTES + 1


def percent_cost(fmt: str, args: object) -> int:
    """An upper bound on len(fmt % args): the text, each field's width, precision and value."""
    mapping = args if isinstance(args, Mapping) else None
    values = iter(args if isinstance(args, tuple) else (args,))
    cost = len(fmt) * (6 if type(fmt) is not str else 1)  # Markup escapes what it formats
    for match in _CONVERSION.finditer(fmt):
        cost += _number(match["width"], values) + _number(match["prec"], values) + 32
        if match["type"] == "%":
            continue
        keyed = mapping is not None and match["key"] is not None
        value = mapping.get(match["key"]) if keyed else next(values, None)  # type: ignore[union-attr]
        cost += 6 * weight(value) if type(fmt) is not str else weight(value)
    return cost


def format_field_cost(spec: str, value: object) -> int:
    """An upper bound on format(value, spec): its width and precision plus the value."""
    numbers = [int(n) if len(n) < 19 else MAX_BYTES + 1 for n in re.findall(r"\d+", spec)]
    return sum(numbers) + weight(value) + 32


# -- methods of str, and what else may be called ------------------------------------

def argument(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str,
         default: Any) -> Any:
    return args[index] if len(args) > index else kwargs.get(name, default)


def width_cost(s: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    width = argument(args, kwargs, 0, "width", 0)
    return max(len(s), width if is_int(width) else 0)


def _expandtabs(s: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    size = argument(args, kwargs, 0, "tabsize", 8)
    return len(s) + s.count("\t") * (size if is_int(size) else 0)


def replace_cost(s: str, old: object, new: object, count: object = None) -> int:
    if not isinstance(old, str) or not isinstance(new, str):
        return len(s)
    places = len(s) + 1 if old == "" else s.count(old)
    if isinstance(count, int) and count >= 0:
        places = min(places, count)
    return len(s) + places * max(len(new) - len(old), 0)


def _replace(s: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    old, new = argument(args, kwargs, 0, "old", ""), argument(args, kwargs, 1, "new", "")
    return replace_cost(s, old, new, argument(args, kwargs, 2, "count", -1))


def join_cost(separator: object, items: list[Any]) -> int:
    return sum(weight(i) for i in items) + weight(separator) * max(len(items) - 1, 0)


def _split(s: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> int:
    return 24 * (len(s) + 1)  # up to one piece per character, each a str object


_Cost = Callable[[str, tuple[Any, ...], Mapping[str, Any]], int]
_FREE = ["capitalize", "casefold", "count", "endswith", "find", "index", "isalnum", "isalpha",
         "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric",
         "isprintable", "isspace", "istitle", "isupper", "lower", "lstrip", "partition",
         "removeprefix", "removesuffix", "rfind", "rindex", "rpartition", "rstrip",
         "startswith", "strip", "swapcase", "title", "upper", "striptags", "unescape"]
#: The str methods a template may call, with what each would build. The rest
#: (encode, translate, maketrans, ...) serve no command line and are refused.
STR_METHODS: dict[str, _Cost] = {
    **{name: (lambda s, a, k: 3 * len(s)) for name in _FREE},
    "center": width_cost, "ljust": width_cost, "rjust": width_cost, "zfill": width_cost,
    "expandtabs": _expandtabs, "replace": _replace,
    "split": _split, "rsplit": _split, "splitlines": _split,
}
OTHER_METHODS: dict[type, frozenset[str]] = {
    list: frozenset({"count", "index"}), tuple: frozenset({"count", "index"}),
    range: frozenset({"count", "index"}), dict: frozenset({"get", "keys", "values", "items"}),
    int: frozenset({"bit_length"}), float: frozenset({"is_integer"}),
}


def work(value: object) -> int:
    """Steps to charge for a filter that loops in Python over value's items."""
    return len(value) // _ITEMS_PER_STEP if isinstance(value, abc.Sized) else 0
