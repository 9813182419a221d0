"""Engine output -> hits, by the spec's parse section (json, jsonl or regex).

Parsing never raises on engine output: whatever cannot be read is recorded
in `ParseResult.errors` (capped) and `bad_records`, so a query with garbage
output becomes a failed query with a reason, and the run goes on.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.parser import parse as jsonpath_parse

from ..model import Hit
from .spec import ParseSpec

MAX_ERRORS = 5
_REPLACEMENT = "\ufffd"
_ESCAPED = re.compile("[\udc80-\udcff]")
_LINE_RANGE = re.compile(r"^\s*L?(\d+)\s*(?:[-:–]\s*L?(\d+))?\s*$")


@dataclass
class ParseResult:
    hits: list[Hit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad_records: int = 0
    replaced_bytes: int = 0
    fatal: bool = False  # the document as a whole could not be read
    engine_error: str | None = None  # what the engine reported in its `error` field

    def note(self, message: str) -> None:
        self.bad_records += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(message)


def decode(data: bytes) -> tuple[str, int]:
    """UTF-8 with each undecodable byte replaced by U+FFFD; returns how many bytes."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        # surrogateescape maps each bad byte to one lone surrogate, so the count is exact
        # (errors="replace" may fold several bytes into one U+FFFD).
        text = data.decode("utf-8", errors="surrogateescape")
        return _ESCAPED.subn(_REPLACEMENT, text)


@lru_cache(maxsize=256)
def _compile_path(path: str) -> Any:
    try:
        return jsonpath_parse(path)
    except (JsonPathLexerError, JsonPathParserError, Exception):
        # Field names jsonpath cannot lex (dashes, spaces): plain dotted walk.
        return None


def lookup(obj: Any, path: str) -> Any:
    """The value at a dotted path (`data.path.text`), or None when absent."""
    if isinstance(obj, dict) and path in obj:
        return obj[path]
    expr = _compile_path(path)
    if expr is None:
        for part in path.split("."):
            if not isinstance(obj, dict) or part not in obj:
                return None
            obj = obj[part]
        return obj
    found = expr.find(obj)
    return found[0].value if found else None


def parse(spec: ParseSpec, stdout: bytes) -> ParseResult:
    text, replaced = decode(stdout)
    result = ParseResult(replaced_bytes=replaced)
    if spec.format == "regex":
        _parse_regex(spec, text, result)
    elif spec.format == "jsonl":
        _parse_jsonl(spec, text, result)
    else:
        _parse_json(spec, text, result)
    return result


def _parse_json(spec: ParseSpec, text: str, result: ParseResult) -> None:
    if not text.strip():
        return  # no output is zero results, not an error
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        result.fatal = True
        result.note(f"output is not JSON: {_brief(exc)} (starts {text[:60]!r})")
        return
    if _engine_error(spec, doc, result):
        return
    for record in _records(spec, doc, result, where="output"):
        _add(spec, record, result)


def _parse_jsonl(spec: ParseSpec, text: str, result: ParseResult) -> None:
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            result.note(f"line {lineno}: not JSON: {_brief(exc)}")
            continue
        if _engine_error(spec, doc, result):
            continue
        if spec.results is None:
            _add(spec, doc, result)
        else:
            for record in _records(spec, doc, result, where=f"line {lineno}"):
                _add(spec, record, result)


def _engine_error(spec: ParseSpec, doc: Any, result: ParseResult) -> bool:
    """True when the document carries the engine's own error report."""
    if spec.error is None or not isinstance(doc, dict):
        return False
    value = lookup(doc, spec.error)
    if value in (None, "", False, [], {}):
        return False
    message = value if isinstance(value, str) else json.dumps(value)
    result.engine_error = message if result.engine_error is None else result.engine_error
    return True


def _records(spec: ParseSpec, doc: Any, result: ParseResult, where: str) -> list[Any]:
    items = doc if spec.results is None else lookup(doc, spec.results)
    if items is None and spec.results is not None:
        if isinstance(doc, dict) and not doc.get(spec.results.split(".")[0]):
            return []  # e.g. {"hits": null} or {} for no results
        result.fatal = True
        result.note(f"{where}: no list at `{spec.results}`")
        return []
    if not isinstance(items, list):
        result.fatal = True
        kind = type(items).__name__
        result.note(f"{where}: expected a list at `{spec.results or '(top level)'}`, got {kind}")
        return []
    return items


def _add(spec: ParseSpec, record: Any, result: ParseResult) -> None:
    rank = len(result.hits)
    if not isinstance(record, dict):
        result.note(f"result {rank + result.bad_records}: not an object")
        return
    try:
        start, end = _span(spec, record)
        hit = Hit(
            path=_path(lookup(record, spec.path)),
            start=start,
            end=end,
            text=_text(lookup(record, spec.text)) if spec.text else None,
            score=_number(lookup(record, spec.score)) if spec.score else None,
            rank=rank,
        )
    except ValueError as exc:
        result.note(f"result {rank + result.bad_records}: {exc}")
        return
    result.hits.append(hit)


def _span(spec: ParseSpec, record: dict[str, Any]) -> tuple[int | None, int | None]:
    if spec.lines is not None:
        return _line_range(lookup(record, spec.lines))
    start = _line(lookup(record, spec.start)) if spec.start else None
    end = _line(lookup(record, spec.end)) if spec.end else None
    if end is None:
        end = start
    if start is None and end is not None:
        start = end
    if start is not None and end is not None and end < start:
        raise ValueError(f"end line {end} before start line {start}")
    return start, end


def _line_range(value: Any) -> tuple[int | None, int | None]:
    if value is None:
        return None, None
    if isinstance(value, list | tuple) and 1 <= len(value) <= 2:
        start = _line(value[0])
        end = _line(value[-1])
    elif isinstance(value, str) and (m := _LINE_RANGE.match(value)):
        start = int(m.group(1))
        end = int(m.group(2) or m.group(1))
    elif isinstance(value, int) and not isinstance(value, bool):
        start = end = _line(value)
    else:
        raise ValueError(f"cannot read a line range from {value!r}")
    if start is not None and end is not None and end < start:
        raise ValueError(f"end line {end} before start line {start}")
    return start, end


def _line(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"line {value!r} is not a number")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if not isinstance(value, int):
        raise ValueError(f"line {value!r} is not a whole number")
    if value < 0:
        raise ValueError(f"negative line number {value}")
    return value


def _path(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"no path (got {value!r})")
    return value


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    raise ValueError(f"text is {type(value).__name__}, not a string")


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"score {value!r} is not a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"score {value!r} is not a number") from None
    if math.isnan(number):
        return None
    return number


def _parse_regex(spec: ParseSpec, text: str, result: ParseResult) -> None:
    assert spec.pattern is not None
    pattern = re.compile(spec.pattern)
    groups = pattern.groupindex
    for line in text.splitlines():
        match = pattern.search(line)
        if match is None:
            continue  # lines that are not results are skipped, as documented
        record = {name: match.group(name) for name in groups if match.group(name) is not None}
        rank = len(result.hits)
        try:
            start = _line(record.get("start"))
            end = _line(record.get("end"))
            if end is None:
                end = start
            if start is not None and end is not None and end < start:
                raise ValueError(f"end line {end} before start line {start}")
            result.hits.append(Hit(
                path=_path(record.get("path")), start=start, end=end,
                text=record.get("text"), score=_number(record.get("score")), rank=rank,
            ))
        except ValueError as exc:
            result.note(f"line {line[:60]!r}: {exc}")


def _brief(exc: Exception) -> str:
    return str(exc).splitlines()[0][:120]
