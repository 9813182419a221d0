"""Engine output -> hits, by the spec's parse section (json, jsonl or regex).

Parsing never raises on engine output: whatever cannot be read is recorded
in `ParseResult.errors` (capped, one short line each) and `bad_records`, so a
query with garbage output becomes a failed query with a reason, and the run
goes on. One bad record costs only that record (`fields` says why); a
document that cannot be read at all (`jsonread`), or a regex that runs past
the deadline, is `fatal`. Every string that reaches a hit is safe downstream:
lone surrogates are replaced by U+FFFD and counted in `replaced_bytes`.
"""

from __future__ import annotations

import json
import re
import time
from functools import lru_cache
from typing import Any

import regex  # type: ignore[import-untyped, unused-ignore]

from ...model import Hit
from . import fields
from .jsonread import NotJSON, Problem, loads, lookup
from .parsed import MAX_ERRORS, REPLACEMENT, SURROGATE, ParseResult, one_line
from .parsed import describe as _describe
from .parsespec import ParseSpec
from .records import keys as _keys
from .records import read_all
from .roles import shapes_of

__all__ = ["DEFAULT_TIMEOUT", "MAX_ERRORS", "ParseResult", "decode", "lookup", "parse"]

MAX_ENGINE_ERROR = 500
DEFAULT_TIMEOUT = 10.0  # seconds a regex parse may take when the caller names no deadline
_ESCAPED = re.compile("[\udc80-\udcff]")
# Only CR and LF end a line: U+2028, U+2029 and NEL are legal unescaped inside a JSON
# string, and a form feed is part of a line of code, so str.splitlines() would cut records.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def decode(data: bytes) -> tuple[str, int]:
    """The text of an engine's output and how many bytes were replaced by U+FFFD.

    UTF-8, without a leading BOM; UTF-16 when a UTF-16 BOM says so.
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _decode_utf16(data)
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        # surrogateescape maps each bad byte to one lone surrogate, so the count is exact
        # (errors="replace" may fold several bytes into one U+FFFD).
        text = data.decode("utf-8", errors="surrogateescape")
        return _ESCAPED.subn(REPLACEMENT, text)


def _decode_utf16(data: bytes) -> tuple[str, int]:
    codec = "utf-16-le" if data.startswith(b"\xff\xfe") else "utf-16-be"
    body = data[2:]
    odd = len(body) % 2
    text = body[:len(body) - odd].decode(codec, errors="surrogatepass")
    text, lone = SURROGATE.subn(REPLACEMENT, text)
    return text, 2 * lone + odd


def parse(spec: ParseSpec, stdout: bytes, *, timeout: float | None = None) -> ParseResult:
    """The hits in an engine's output; never raises, whatever the bytes.

    `timeout` bounds the regex format (seconds for the whole output, default
    DEFAULT_TIMEOUT); json and jsonl are linear in the output, which the
    process layer caps.
    """
    budget = DEFAULT_TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + budget
    result = ParseResult()
    try:
        text, result.replaced_bytes = decode(stdout)
        if spec.format == "regex":
            _parse_regex(spec, text, result, deadline, budget)
        elif spec.format == "jsonl":
            _parse_jsonl(spec, text, result)
        else:
            _parse_json(spec, text, result)
    except Exception as exc:  # the promise above; known failures are handled where they occur
        result.fatal = True
        result.note(f"output could not be read ({_describe(exc)})")
    return result


def _parse_json(spec: ParseSpec, text: str, result: ParseResult) -> None:
    if not text.strip():
        return  # no output is zero results, not an error
    try:
        doc = loads(text)
    except Problem as exc:
        result.fatal = True
        starts = f" (starts {text[:60]!r})" if isinstance(exc, NotJSON) else ""
        result.note(f"output is {exc}{starts}")
        return
    try:
        if _engine_error(spec, doc, result):
            return
        records = _records(spec, doc, result, where="output")
    except Problem as exc:
        result.fatal = True
        result.note(f"output: {exc}")
        return
    read_all(spec, records, result)


def _parse_jsonl(spec: ParseSpec, text: str, result: ParseResult) -> None:
    for lineno, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        where = f"line {lineno}"
        try:
            doc = loads(line)
            if _engine_error(spec, doc, result):
                continue
            records = [doc] if spec.results is None else _records(spec, doc, result, where)
        except Problem as exc:
            result.note(f"{where}: {exc}")
            continue
        read_all(spec, records, result, prefix=f"{where}: ")


def _lines(text: str) -> list[str]:
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()  # the newline ending the last line does not open another
    return lines


def _engine_error(spec: ParseSpec, doc: Any, result: ParseResult) -> bool:
    """True when the document carries the engine's own error report."""
    if spec.error is None or not isinstance(doc, dict):
        return False
    value = lookup(doc, spec.error)
    if value in (None, "", False, [], {}):
        return False
    if result.engine_error is None:
        message = value if isinstance(value, str) else _dump(value)
        result.engine_error = one_line(result.clean(message), MAX_ENGINE_ERROR)
    return True


def _records(spec: ParseSpec, doc: Any, result: ParseResult, where: str) -> list[Any]:
    if spec.results is None:
        items = doc
    else:
        items = lookup(doc, spec.results)
        if items is None and not isinstance(doc, dict):
            result.fatal = True
            result.note(f"{where}: expected an object with `{spec.results}`, "
                        f"got {fields.kind(doc)}")
            return []
        if items is None:
            if not doc.get(spec.results.split(".")[0]):
                if spec.results.split(".")[0] not in doc:
                    # Absent, not empty: a wrong path looks exactly like "no results".
                    result.results_missing += 1
                    found = _keys(doc)
                    result.document_keys.update(found)
                    shapes_of(doc, found, result.document_shapes)
                return []  # e.g. {"hits": null} or {} for no results
            result.fatal = True
            result.note(f"{where}: no list at `{spec.results}`")
            return []
    if not isinstance(items, list):
        result.fatal = True
        at = f"at `{spec.results}`" if spec.results else "at the top level"
        result.note(f"{where}: expected a list {at}, got {fields.kind(items)}")
        return []
    return items


def _parse_regex(spec: ParseSpec, text: str, result: ParseResult, deadline: float,
                 budget: float) -> None:
    assert spec.pattern is not None
    pattern, bounded = _compile_pattern(spec.pattern)
    groups = pattern.groupindex
    for lineno, line in enumerate(_lines(text), 1):
        try:
            if bounded:
                # A timeout of 0 stops at once: a spent deadline reads no further line.
                match = pattern.search(line, timeout=max(deadline - time.monotonic(), 0.0))
            else:
                match = pattern.search(line)
        except TimeoutError:
            result.fatal = result.timed_out = True
            result.note(f"pattern ran past the {budget:g}s parse deadline on line {lineno} "
                        "(catastrophic backtracking?); the rest was not read")
            return
        if match is None:
            continue  # lines that are not results are skipped, as documented
        record = {name: match.group(name) for name in groups if match.group(name) is not None}
        try:
            start, end = fields.ordered(fields.line(record.get("start")),
                                        fields.line(record.get("end")))
            result.hits.append(Hit(
                path=fields.path(record.get("path")), start=start, end=end,
                text=record.get("text"), score=fields.number(record.get("score")),
                rank=len(result.hits),
            ))
        except ValueError as exc:
            result.note(f"line {line[:60]!r}: {exc}")


@lru_cache(maxsize=64)
def _compile_pattern(pattern: str) -> tuple[Any, bool]:
    """The pattern under `regex`, whose search can stop at a deadline; True if so.

    The spec was validated with `re`; `regex` reads every such pattern alike as
    far as known, but if it ever refuses one, `re` runs it, without a deadline.
    """
    try:
        return regex.compile(pattern), True
    except Exception:
        return re.compile(pattern), False


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, default=repr, ensure_ascii=False)
    except (ValueError, TypeError, RecursionError):
        return fields.show(value)
