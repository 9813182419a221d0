"""The plain-record reader is a shortcut, never a second opinion: for every record,
ordinary or hostile, parsing with it gives exactly what the general reader gives."""

from __future__ import annotations

import dataclasses

import pytest

from codesearch_bench.engine.output import parse as parse_module
from codesearch_bench.engine.output import records
from codesearch_bench.engine.output.parse import parse
from codesearch_bench.engine.output.parsespec import ParseSpec

SPECS = [
    ParseSpec(format="json", results="hits", start="start", end="end", text="text",
              score="score"),
    ParseSpec(format="jsonl", start="start", end="end", text="text", score="score"),
    ParseSpec(format="json", results="hits", start="start"),
    ParseSpec(format="json", results="hits", path=None, text="text"),
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


def _general(monkeypatch: pytest.MonkeyPatch, spec: ParseSpec, data: bytes
             ) -> parse_module.ParseResult:
    with monkeypatch.context() as m:
        m.setattr(records, "_plain", lambda spec: None)
        return parse(spec, data)


@pytest.mark.parametrize("spec", SPECS, ids=["json", "jsonl", "start-only", "text-answer"])
def test_plain_reader_equals_the_general_reader(spec: ParseSpec,
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


def test_the_shortcut_is_taken_for_plain_specs_only() -> None:
    assert records._plain(SPECS[0]) == ("path", "start", "end", "text", "score")
    assert not records._plain(ParseSpec(format="json", results="hits", path="loc.path"))
    assert not records._plain(ParseSpec(format="json", results="hits", lines="lines"))
