"""JSON from an engine, read so that no value in it can crash what comes after.

`loads` turns every way json fails (syntax, depth, an integer past int()'s
digit limit) into a `Problem` with a one-line reason, and marks what json
would silently resolve: an integer too long to read becomes a `HugeInt`
(only a record that uses it fails), an object naming a key twice with
different values an `Ambiguous` dict (`lookup` refuses that key).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.parser import parse as jsonpath_parse


class Problem(ValueError):
    """A value the parser cannot use; its message is the reason shown."""


class NotJSON(Problem):
    """Text json cannot read; what it starts with helps to see why."""


class HugeInt:
    """An integer literal longer than int() reads (sys.get_int_max_str_digits)."""

    __slots__ = ("digits",)

    def __init__(self, literal: str) -> None:
        self.digits = len(literal.lstrip("-"))

    def __repr__(self) -> str:
        return f"({self.digits}-digit integer)"


class Ambiguous(dict[str, Any]):
    """A JSON object naming some keys twice with different values."""

    keys_twice: frozenset[str] = frozenset()


def loads(text: str) -> Any:
    """json.loads; every way it fails is a Problem with a one-line reason."""
    try:
        try:
            return _DECODER.decode(text)
        except json.JSONDecodeError:
            raise
        except ValueError:
            # An integer past int()'s digit limit: read on, and let only the records
            # that use it fail (parse_int costs a call per integer, so only now).
            return _HUGE_DECODER.decode(text)
    except json.JSONDecodeError as exc:
        hint = "; it has NUL bytes (UTF-16 without a BOM?)" if "\x00" in text else ""
        raise NotJSON(f"not JSON: {brief(exc)}{hint}") from None
    except RecursionError:
        raise Problem("nested too deeply to read (past Python's recursion limit)") from None


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: dict[str, Any] = {}
    twice = set()
    for key, value in pairs:
        if key in seen and seen[key] != value:
            twice.add(key)
        seen[key] = value
    if not twice:
        return obj  # the same value twice: nothing to choose between
    out = Ambiguous(obj)
    out.keys_twice = frozenset(twice)
    return out


def _int_or_huge(literal: str) -> int | HugeInt:
    try:
        return int(literal)
    except ValueError:
        return HugeInt(literal)


# Built once: json.loads with any hook builds a new decoder per call, per jsonl line.
_DECODER = json.JSONDecoder(object_pairs_hook=_object)
_HUGE_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_int=_int_or_huge)


@lru_cache(maxsize=256)
def _compile_path(path: str) -> Any:
    try:
        return jsonpath_parse(path)
    except (JsonPathLexerError, JsonPathParserError, Exception):
        # Field names jsonpath cannot lex (dashes, spaces): plain dotted walk.
        return None


def lookup(obj: Any, path: str) -> Any:
    """The value at a dotted path (`data.path.text`), or None when absent.

    A key on the way that an object names twice with different values is a
    Problem: which one the engine meant is unknowable.
    """
    if isinstance(obj, dict) and path in obj:
        _unique(obj, path)
        return obj[path]
    _check_walk(obj, path)
    expr = _compile_path(path)
    if expr is None:
        for part in path.split("."):
            if not isinstance(obj, dict) or part not in obj:
                return None
            obj = obj[part]
        return obj
    found = expr.find(obj)
    return found[0].value if found else None


def _unique(obj: dict[str, Any], key: str) -> None:
    if isinstance(obj, Ambiguous) and key in obj.keys_twice:
        raise Problem(f"duplicate key `{key}` with different values")


def _check_walk(obj: Any, path: str) -> None:
    for part in path.split("."):
        if not isinstance(obj, dict) or part not in obj:
            return
        _unique(obj, part)
        obj = obj[part]


def brief(exc: BaseException) -> str:
    """The first line of an exception's message, short; "" when it has none."""
    try:
        lines = str(exc).splitlines()
    except Exception:
        return ""
    return lines[0][:120] if lines else ""
