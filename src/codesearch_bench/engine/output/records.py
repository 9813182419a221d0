"""Records -> hits: each record of a json/jsonl answer read into one Hit, or one error.

Two readers, one answer. The general one (`_add`) looks every configured field
up once (`jsonread.lookup`: dotted paths, doubled keys), converts it (`fields`:
string line numbers, NaN scores, text as a list of lines) and says precisely
what is wrong with a bad record. The plain one (`_take_plain`) is its shortcut
for the overwhelmingly common record -- plain keys, ints, strings, a float --
read in one pass; anything else it leaves untouched for the general reader, so
both give exactly the same ParseResult (tests/test_parse_plain.py).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from ...model import Hit
from . import fields
from .jsonread import lookup
from .parsed import ParseResult, describe
from .parsespec import ParseSpec


def read_all(spec: ParseSpec, records: list[Any], result: ParseResult,
             prefix: str = "") -> None:
    """Every record of one document, in order, into `result`."""
    wanted, plain = _wanted(spec), _plain(spec)
    if plain is None:
        for record in records:
            _add(spec, record, result, wanted, prefix)
        return
    # Which fields each plain record had, as a bit mask: counted once per document.
    masks: dict[int, int] = {}
    for record in records:
        mask = _take_plain(plain, record, result)
        if mask:
            masks[mask] = masks.get(mask, 0) + 1
        else:
            _add(spec, record, result, wanted, prefix)
    present = result.present
    for mask, n in masks.items():
        for bit, name in _BITS:
            if mask & bit:
                present[name] = present.get(name, 0) + n


def _add(spec: ParseSpec, record: Any, result: ParseResult,
         wanted: tuple[tuple[str, str], ...], prefix: str = "") -> None:
    rank = len(result.hits)
    if not isinstance(record, dict):
        result.note(f"{prefix}result {rank + result.bad_records}: not an object")
        return
    # Each configured field is looked up once: for the presence counts and the hit.
    found = _seen(wanted, record, result)
    try:
        start, end = _span(spec, found)
        # A text answer names no place: its items are graded by their text alone.
        path = fields.path(found.get("path")) if spec.path else ""
        text = fields.text(found.get("text")) if spec.text else None
        score = fields.number(found.get("score")) if spec.score else None
    except ValueError as exc:
        result.note(f"{prefix}result {rank + result.bad_records}: {exc}")
        return
    except Exception as exc:  # jsonpath on a strange value, a repr too deep: still one record
        result.note(f"{prefix}result {rank + result.bad_records}: "
                    f"cannot be read ({describe(exc)})")
        return
    text = result.clean(text) if text is not None else None
    result.hits.append(Hit(result.clean(path), start, end, text, score, rank))


_FIELDS = ("path", "start", "end", "lines", "text", "score")
_MAX_KEYS = 64
# A field path that is one plain key: read straight from a record no key of which
# is doubled (jsonread.Ambiguous marks those), exactly what `lookup` would return.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@lru_cache(maxsize=64)
def _wanted(spec: ParseSpec) -> tuple[tuple[str, str], ...]:
    """The spec's configured fields: (name, path)."""
    return tuple((name, path) for name in _FIELDS if (path := getattr(spec, name)) is not None)


# The keys of a spec whose every field is one plain key: path, start, end, text, score.
_PlainKeys = tuple[str | None, str | None, str | None, str | None, str | None]


@lru_cache(maxsize=64)
def _plain(spec: ParseSpec) -> _PlainKeys | None:
    """The spec's keys when every configured field is one plain key and lines come as
    start/end: then `_take_plain` may read its records."""
    if spec.lines is not None or not all(_PLAIN_KEY.fullmatch(p) for _, p in _wanted(spec)):
        return None
    return spec.path, spec.start, spec.end, spec.text, spec.score


def _take_plain(plain: _PlainKeys, record: Any, result: ParseResult) -> int:
    """Read a record whose every field holds an ordinary value, in one pass, and say
    which fields it had (a mask of _BITS, _TAKEN always set); 0 (having touched
    nothing) for anything else -- a doubled key, a string line number, a NaN score,
    a long path -- which the general reader (`_add`) then converts or reports exactly
    as it always has (tests/test_parse_plain.py)."""
    if type(record) is not dict:
        return 0
    path_key, start_key, end_key, text_key, score_key = plain
    get = record.get
    mask = _TAKEN
    path: Any = ""
    if path_key:
        path = get(path_key)
        if (type(path) is not str or not path or "\x00" in path or path.isspace()
                or len(path) * 4 > fields.MAX_PATH_BYTES):
            return 0
        mask |= _PATH
    start = get(start_key) if start_key else None
    if start is not None:
        if not (type(start) is int and 0 <= start <= fields.MAX_LINE):
            return 0
        mask |= _START
    end = get(end_key) if end_key else None
    if end is not None:
        if not (type(end) is int and 0 <= end <= fields.MAX_LINE):
            return 0
        mask |= _END
    text = get(text_key) if text_key else None
    if text is not None:
        if type(text) is not str:
            return 0
        mask |= _TEXT
    score = get(score_key) if score_key else None
    if score is not None:
        if type(score) is int and -_EXACT < score < _EXACT:
            score = float(score)
        elif type(score) is not float or score != score or score in (_INF, -_INF):
            return 0
        mask |= _SCORE
    if end is None:
        end = start
    elif start is None:
        start = end
    elif end < start:
        return 0
    result.records += 1
    seen = result.record_keys
    if len(seen) < _MAX_KEYS and not seen.issuperset(record):
        seen.update(keys(record))
    if text is not None and not text.isascii():
        text = result.clean(text)
    if not path.isascii():
        path = result.clean(path)
    hits = result.hits
    hits.append(Hit(path, start, end, text, score, len(hits)))
    return mask


_TAKEN, _PATH, _START, _END, _TEXT, _SCORE = 1, 2, 4, 8, 16, 32
_BITS = ((_PATH, "path"), (_START, "start"), (_END, "end"), (_TEXT, "text"), (_SCORE, "score"))
_INF = float("inf")
_EXACT = 2 ** 53  # ints a float holds exactly; past them the general reader decides


def keys(obj: dict[str, Any]) -> list[str]:
    """The first keys of an object, for telling a wrong field path from an empty answer."""
    return [k for k in list(obj)[:_MAX_KEYS] if isinstance(k, str)]


class _Found(dict[str, Any]):
    """A record's configured fields, each looked up once; a lookup's error kept for later."""

    errors: dict[str, Exception]

    def get(self, name: str, default: Any = None) -> Any:
        if name in self.errors:
            raise self.errors[name]  # the record reader reports it, as it always did
        return super().get(name, default)


def _seen(wanted: tuple[tuple[str, str], ...], record: dict[str, Any],
          result: ParseResult) -> _Found:
    """Look up each configured field once, counting which this record has."""
    result.records += 1
    if len(result.record_keys) < _MAX_KEYS:
        result.record_keys.update(keys(record))
    found = _Found()
    found.errors = {}
    for name, path in wanted:
        try:
            value = lookup(record, path)
        except Exception as exc:  # a strange value is the record reader's to report
            found.errors[name] = exc
            continue
        found[name] = value
        if value is not None:
            result.present[name] = result.present.get(name, 0) + 1
    return found


def _span(spec: ParseSpec, found: _Found) -> tuple[int | None, int | None]:
    if spec.lines is not None:
        return fields.line_range(found.get("lines"))
    start = fields.line(found.get("start")) if spec.start else None
    end = fields.line(found.get("end")) if spec.end else None
    return fields.ordered(start, end)
