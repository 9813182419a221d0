"""Records -> hits: each record of a json/jsonl answer read into one Hit, or one error.

One reader. Each configured field is looked up once -- straight from the record
when its path is one plain key and no key of the record is doubled, else by
`jsonread.lookup` (dotted paths, doubled keys) -- and converted: an ordinary
value (an int line, a plain path with no control character, a string text, a
finite float) is taken as it is, anything else goes to its converter in
`fields` (string line numbers, non-finite scores, control characters, text as a
list of lines), which says precisely what is wrong with a bad record. Both ways
give the value the converter alone would
(tests/test_parse_plain.py); the first costs a type check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from ...model import Hit
from . import fields
from .jsonread import lookup
from .parsed import ParseResult, describe
from .parsespec import ParseSpec
from .roles import shapes_of

_FIELDS = ("path", "start", "end", "lines", "text", "score")
_MAX_KEYS = 64
# A field path that is one plain key: read straight from a record no key of which
# is doubled (jsonread.Ambiguous marks those), exactly what `lookup` would return.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATH, _START, _END, _LINES, _TEXT, _SCORE = 1, 2, 4, 8, 16, 32
_BITS = tuple(zip((_PATH, _START, _END, _LINES, _TEXT, _SCORE), _FIELDS, strict=True))
_INF = float("inf")
_EXACT = 2 ** 53  # ints a float holds exactly; past them fields.number decides
_MAX_LINE, _MAX_PATH_BYTES = fields.MAX_LINE, fields.MAX_PATH_BYTES
_CONTROL = fields.CONTROL.search  # NUL and every other C0/C1 control: fields.path says which
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Paths:
    """A spec's field paths (None: not configured), and whether each is one plain key."""

    path: str | None
    start: str | None
    end: str | None
    lines: str | None
    text: str | None
    score: str | None
    plain: bool


@lru_cache(maxsize=64)
def _paths(spec: ParseSpec) -> _Paths:
    given = [getattr(spec, name) for name in _FIELDS]
    plain = all(_PLAIN_KEY.fullmatch(p) for p in given if p is not None)
    return _Paths(spec.path, spec.start, spec.end, spec.lines, spec.text, spec.score, plain)


def read_all(spec: ParseSpec, records: list[Any], result: ParseResult,
             prefix: str = "") -> None:
    """Every record of one document, in order, into `result`."""
    paths = _paths(spec)
    # Which fields each record had, as a bit mask: counted once per document.
    masks: dict[int, int] = {}
    for record in records:
        mask = _read(paths, record, result, prefix)
        masks[mask] = masks.get(mask, 0) + 1
    present = result.present
    for mask, n in masks.items():
        for bit, name in _BITS:
            if mask & bit:
                present[name] = present.get(name, 0) + n


class _Failed:
    """A field whose lookup raised: the record's error, reported when the field is read."""

    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


def _read(paths: _Paths, record: Any, result: ParseResult, prefix: str) -> int:
    """One record into a hit or an error; the fields it had, as a mask of _BITS."""
    rank = len(result.hits)
    if not isinstance(record, dict):
        result.note(f"{prefix}result {rank + result.bad_records}: not an object")
        return 0
    result.records += 1
    seen = result.record_keys
    if len(seen) < _MAX_KEYS and not seen.issuperset(record):
        new = keys(record)
        seen.update(new)
        shapes_of(record, new, result.record_shapes)
    if paths.plain and type(record) is dict:
        get = record.get
        path_v = get(paths.path) if paths.path else None
        start_v = get(paths.start) if paths.start else None
        end_v = get(paths.end) if paths.end else None
        lines_v = get(paths.lines) if paths.lines else None
        text_v = get(paths.text) if paths.text else None
        score_v = get(paths.score) if paths.score else None
        mask = ((path_v is not None) | (start_v is not None) << 1 | (end_v is not None) << 2
                | (lines_v is not None) << 3 | (text_v is not None) << 4
                | (score_v is not None) << 5)
    else:
        path_v, start_v, end_v, lines_v, text_v, score_v, mask = _looked_up(paths, record)
    try:
        if paths.lines is not None:
            start, end = _slow(fields.line_range, lines_v)
        else:
            start, end = start_v, end_v
            if start is not None and not (type(start) is int and 0 <= start <= _MAX_LINE):
                start = _slow(fields.line, start)
            if end is not None and not (type(end) is int and 0 <= end <= _MAX_LINE):
                end = _slow(fields.line, end)
            if end is None:
                end = start
            elif start is None:
                start = end
            elif end < start:
                raise ValueError(f"end line {end} before start line {start}")
        # A text answer names no place: its items are graded by their text alone.
        if paths.path is None:
            path = ""
        elif (type(path_v) is str and path_v and not path_v.isspace()
              and len(path_v) * 4 <= _MAX_PATH_BYTES and _CONTROL(path_v) is None):
            path = path_v
        else:
            path = _slow(fields.path, path_v)
        text = text_v if text_v is None or type(text_v) is str else _slow(fields.text, text_v)
        score = None if score_v is None else _score(score_v)
    except ValueError as exc:
        result.note(f"{prefix}result {rank + result.bad_records}: {exc}")
        return mask
    except Exception as exc:  # jsonpath on a strange value, a repr too deep: still one record
        result.note(f"{prefix}result {rank + result.bad_records}: "
                    f"cannot be read ({describe(exc)})")
        return mask
    if text is not None and not text.isascii():
        text = result.clean(text)
    if not path.isascii():
        path = result.clean(path)
    result.hits.append(Hit(path, start, end, text, score, rank))
    return mask


def _score(value: Any) -> float | None:
    if type(value) is float:
        if value == value and value not in (_INF, -_INF):
            return value
    elif type(value) is int and -_EXACT < value < _EXACT:
        return float(value)
    return _slow(fields.number, value)


def _slow(convert: Callable[[Any], T], value: Any) -> T:
    """`convert(value)`, or the error the field's lookup raised."""
    if type(value) is _Failed:
        raise value.exc
    return convert(value)


_Looked = tuple[Any, Any, Any, Any, Any, Any, int]


def _looked_up(paths: _Paths, record: dict[str, Any]) -> _Looked:
    """Each configured field by `lookup` (dotted paths, doubled keys), and the mask of
    those present; a lookup that raised is kept as _Failed, neither present nor absent."""
    values: list[Any] = []
    mask = 0
    for bit, name in _BITS:
        where = getattr(paths, name)
        value: Any = None
        if where is not None:
            try:
                value = lookup(record, where)
            except Exception as exc:  # a strange value is the record reader's to report
                value = _Failed(exc)
            else:
                if value is not None:
                    mask |= bit
        values.append(value)
    return (*values, mask)


def keys(obj: dict[str, Any]) -> list[str]:
    """The first keys of an object, for telling a wrong field path from an empty answer."""
    return [k for k in list(obj)[:_MAX_KEYS] if isinstance(k, str)]
