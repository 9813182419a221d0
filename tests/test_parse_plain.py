"""One record reader, exact and fast: for every record, ordinary or hostile, parsing
gives exactly what a straightforward reader -- every field looked up with
`jsonread.lookup` and converted by `fields`, written out below -- gives."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from codesearch_bench.engine.output import fields
from codesearch_bench.engine.output import parse as parse_module
from codesearch_bench.engine.output.jsonread import lookup
from codesearch_bench.engine.output.parse import parse
from codesearch_bench.engine.output.parsed import ParseResult, describe
from codesearch_bench.engine.output.parsespec import ParseSpec
from codesearch_bench.engine.output.roles import shape
from codesearch_bench.model import Hit

SPECS = [
    ParseSpec(format="json", results="hits", start="start", end="end", text="text",
              score="score"),
    ParseSpec(format="jsonl", start="start", end="end", text="text", score="score"),
    ParseSpec(format="json", results="hits", start="start"),
    ParseSpec(format="json", results="hits", path=None, text="text"),
    ParseSpec(format="json", results="hits", lines="start", text="text"),
    ParseSpec(format="json", results="hits", path="path", start="loc.start", score="score"),
]
RECORDS = [
    '{"path": "a.py", "start": 3, "end": 9, "text": "x = 1", "score": 0.5}',
    '{"path": "a.py", "start": 3, "end": 9, "text": "x = 1", "score": 2}',
    '{"path": "a.py", "start": 9, "end": 3}',
    '{"path": "a.py", "end": 4}',
    '{"path": "a.py", "start": 0}',
    '{"path": "a.py", "start": -1}',
    '{"path": "a.py", "start": 1000000001}',
    '{"path": "a.py", "start": 1e400}',
    '{"path": "a.py", "start": ' + "9" * 40 + "}",
    '{"path": "a.py", "start": "12", "end": "14"}',
    '{"path": "a.py", "start": true}',
    '{"path": "a.py", "start": 3.0, "end": 4.5}',
    '{"path": "a.py", "start": null, "end": null}',
    '{"path": "a\\u0000b.py"}',
    '{"path": ""}',
    '{"path": "   "}',
    '{"path": "' + "d/" * 1100 + 'x.py"}',
    '{"path": "' + "\u00e9" * 1100 + '"}',
    '{"path": "\\ud800.py", "text": "lone \\udfff surrogate"}',
    '{"path": "caf\u00e9.py", "text": "na\u00efve"}',
    '{"path": 7}',
    '{"path": ["a.py"]}',
    '{"text": "no path"}',
    '{"path": "a.py", "text": ["two", "lines"]}',
    '{"path": "a.py", "text": 5}',
    '{"path": "a.py", "score": NaN}',
    '{"path": "a.py", "score": Infinity}',
    '{"path": "a.py", "score": -Infinity}',
    '{"path": "a.py", "score": "0.75"}',
    '{"path": "a.py", "score": ""}',
    '{"path": "a.py", "score": false}',
    '{"path": "a.py", "score": ' + "1" * 400 + "}",
    '{"path": "a.py", "score": 9007199254740993}',
    '{"path": "a.py", "path": "b.py"}',
    '{"path": "a.py", "path": "a.py", "start": 2}',
    '{"path": "a.py", ' + ", ".join(f'"k{i}": {i}' for i in range(80)) + "}",
    '"just a string"',
    "[1, 2]",
]


_NAMES = ("path", "start", "end", "lines", "text", "score")


def _reference_read_all(spec: ParseSpec, records: list[Any], result: ParseResult,
                        prefix: str = "") -> None:
    """The record reader at its plainest: one lookup per field, one converter per value."""
    for record in records:
        rank = len(result.hits)
        if not isinstance(record, dict):
            result.note(f"{prefix}result {rank + result.bad_records}: not an object")
            continue
        result.records += 1
        if len(result.record_keys) < 64:
            found_keys = [k for k in list(record)[:64] if isinstance(k, str)]
            result.record_keys.update(found_keys)
            for key in found_keys:  # what a did-you-mean ranks by: each key's first value
                result.record_shapes.setdefault(key, shape(record.get(key)))
        found: dict[str, Any] = {}
        for name in _NAMES:
            if (where := getattr(spec, name)) is None:
                continue
            try:
                found[name] = value = lookup(record, where)
            except Exception as exc:
                found[name] = exc
                continue
            if value is not None:
                result.present[name] = result.present.get(name, 0) + 1

        def get(name: str, found: dict[str, Any] = found) -> Any:
            if isinstance(value := found.get(name), Exception):
                raise value
            return value

        try:
            if spec.lines is not None:
                start, end = fields.line_range(get("lines"))
            else:
                start, end = fields.ordered(fields.line(get("start")), fields.line(get("end")))
            path = fields.path(get("path")) if spec.path else ""
            text = fields.text(get("text"))
            score = fields.number(get("score"))
        except ValueError as exc:
            result.note(f"{prefix}result {rank + result.bad_records}: {exc}")
            continue
        except Exception as exc:
            result.note(f"{prefix}result {rank + result.bad_records}: "
                        f"cannot be read ({describe(exc)})")
            continue
        text = result.clean(text) if text is not None else None
        result.hits.append(Hit(result.clean(path), start, end, text, score, rank))


def _general(monkeypatch: pytest.MonkeyPatch, spec: ParseSpec, data: bytes) -> ParseResult:
    with monkeypatch.context() as m:
        m.setattr(parse_module, "read_all", _reference_read_all)
        return parse(spec, data)


@pytest.mark.parametrize("spec", SPECS, ids=["json", "jsonl", "start-only", "text-answer",
                                             "lines", "dotted"])
def test_the_reader_equals_the_reference_reader(spec: ParseSpec,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    if spec.format == "jsonl":
        data = "\n".join(RECORDS).encode() + b"\n"
    else:
        data = ('{"hits": [' + ", ".join(RECORDS) + "]}").encode()
    fast, general = parse(spec, data), _general(monkeypatch, spec, data)
    assert dataclasses.asdict(fast) == dataclasses.asdict(general)
    assert fast.hits  # the ordinary records came through
    # Each record alone too: error numbering and counts per document.
    for record in RECORDS:
        one = (record + "\n").encode() if spec.format == "jsonl" else \
            ('{"hits": [' + record + "]}").encode()
        assert dataclasses.asdict(parse(spec, one)) == \
            dataclasses.asdict(_general(monkeypatch, spec, one)), record
