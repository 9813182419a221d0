"""Engine output -> hits. Whatever the engine prints, parse records problems and never raises."""

from __future__ import annotations

import json
import random
import subprocess
from typing import Any

import pytest
from helpers import fake

from codesearch_bench.engine.output.parse import MAX_ERRORS, decode, lookup, parse
from codesearch_bench.engine.spec import ParseSpec
from codesearch_bench.model import Hit

JSON = ParseSpec(format="json", results="hits", path="file", start="from", end="to",
                 text="body", score="score")
REGEX = ParseSpec(
    format="regex",
    pattern=r"^(?P<path>[^\s:]+):(?P<start>\d+)-(?P<end>\d+): (?P<text>.*)$",
)


def dumps(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def run_fake(argv: list[str]) -> bytes:
    return subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, check=True,
                          timeout=30).stdout


# -- json ------------------------------------------------------------------

def test_json_from_fake() -> None:
    result = parse(JSON, run_fake(fake("oneshot_json.py")))
    assert not result.errors and not result.fatal
    assert result.hits == [
        Hit("src/a.py", 3, 9, "def a(): ...", 2.5, rank=0),
        Hit("src/b.py", 1, 2, "import a", 1.0, rank=1),
    ]


def test_json_top_level_list() -> None:
    spec = ParseSpec(format="json")
    result = parse(spec, dumps([{"path": "a.py"}, {"path": "b.py"}]))
    assert [h.path for h in result.hits] == ["a.py", "b.py"]
    assert result.hits[0].start is None and result.hits[0].text is None


def test_json_nested_results_and_fields() -> None:
    spec = ParseSpec(format="json", results="result.items", path="data.path.text",
                     start="loc.start.line", end="loc.end.line", text="data.body")
    doc = {"result": {"items": [
        {"data": {"path": {"text": "x/y.py"}, "body": "code"},
         "loc": {"start": {"line": 4}, "end": {"line": 6}}},
    ]}}
    assert parse(spec, dumps(doc)).hits == [Hit("x/y.py", 4, 6, "code", None, 0)]


def test_lookup() -> None:
    doc = {"data": {"path": {"text": "a.py"}}, "a.b": 1, "x-y": {"z": 2}, "where": {"v": 3}}
    assert lookup(doc, "data.path.text") == "a.py"
    assert lookup(doc, "data.path") == {"text": "a.py"}
    assert lookup(doc, "a.b") == 1  # a literal key with a dot wins
    assert lookup(doc, "x-y.z") == 2
    assert lookup(doc, "where.v") == 3
    assert lookup(doc, "data.missing.deeper") is None
    assert lookup([1, 2], "data") is None


@pytest.mark.parametrize(
    ("doc", "fatal"),
    [
        ({"hits": None}, False),
        ({}, False),
        ({"hits": []}, False),
        ({"hits": {"path": "a.py"}}, True),
        ({"hits": "a.py"}, True),
        ([{"path": "a.py"}], True),
        ({"other": [1]}, False),
    ],
)
def test_json_results_shapes(doc: object, fatal: bool) -> None:
    result = parse(JSON, dumps(doc))
    assert result.hits == []
    assert result.fatal is fatal
    assert bool(result.errors) is fatal


def test_json_no_output_is_no_results() -> None:
    for out in (b"", b"\n  \n"):
        result = parse(JSON, out)
        assert result.hits == [] and not result.errors and not result.fatal


def test_json_bad_records_are_counted_and_skipped() -> None:
    doc = {"hits": [
        {"file": "ok1.py", "from": 1, "to": 2},
        "not an object",
        {"file": "", "from": 1},
        {"file": "rev.py", "from": 9, "to": 3},
        {"file": "neg.py", "from": -1},
        {"file": "frac.py", "from": 1.5},
        {"file": "bool.py", "from": True},
        {"file": "score.py", "score": "high"},
        {"file": "text.py", "body": {"a": 1}},
        {"from": 3},
        {"file": "ok2.py", "from": "7", "to": 8.0, "score": "1.5"},
    ]}
    result = parse(JSON, dumps(doc))
    assert [(h.path, h.start, h.end, h.rank) for h in result.hits] == [
        ("ok1.py", 1, 2, 0), ("ok2.py", 7, 8, 1)]
    assert result.hits[1].score == 1.5
    assert result.bad_records == 9
    assert len(result.errors) == MAX_ERRORS
    assert not result.fatal
    assert "result 1: not an object" in result.errors[0]
    assert "end line 3 before start line 9" in result.errors[2]


def test_start_only_and_end_only() -> None:
    doc = {"hits": [{"file": "a.py", "from": 5}, {"file": "b.py", "to": 8}]}
    assert [(h.start, h.end) for h in parse(JSON, dumps(doc)).hits] == [(5, 5), (8, 8)]


def test_score_nan_is_an_error_like_infinity_and_text_list_joined() -> None:
    # NaN was read as "no score" while Infinity was the record's error: now both are errors.
    spec = ParseSpec(format="json", text="lines_text", score="s")
    doc = [{"path": "a.py", "s": "NaN", "lines_text": ["one", "two"]},
           {"path": "b.py", "lines_text": ["one", "two"]}]
    result = parse(spec, dumps(doc))
    hit = result.hits[0]
    assert hit.path == "b.py" and hit.score is None and hit.text == "one\ntwo"
    assert result.bad_records == 1 and "score 'NaN' is not a finite number" in result.errors[0]


@pytest.mark.parametrize(
    ("value", "span"),
    [("12-30", (12, 30)), ("12", (12, 12)), ("L5-L9", (5, 9)), ("5:9", (5, 9)),
     (" 3 - 4 ", (3, 4)), ([12, 30], (12, 30)), ([7], (7, 7)), (["2", "4"], (2, 4)),
     (7, (7, 7)), (None, (None, None))],
)
def test_lines_field(value: object, span: tuple[int | None, int | None]) -> None:
    spec = ParseSpec(format="json", lines="lines")
    result = parse(spec, dumps([{"path": "a.py", "lines": value}]))
    assert not result.errors
    assert (result.hits[0].start, result.hits[0].end) == span


@pytest.mark.parametrize("value", ["abc", "30-12", [1, 2, 3], [], True, {"a": 1}, 1.5, "1-x"])
def test_lines_field_bad(value: object) -> None:
    spec = ParseSpec(format="json", lines="lines")
    result = parse(spec, dumps([{"path": "a.py", "lines": value}]))
    assert result.hits == [] and result.bad_records == 1 and not result.fatal


# -- jsonl -----------------------------------------------------------------

def test_jsonl_nested_paths_from_fake() -> None:
    spec = ParseSpec(format="jsonl", path="data.path.text", lines="lines", score="score")
    result = parse(spec, run_fake(fake("oneshot_jsonl.py", "--bad-line")))
    assert [(h.path, h.start, h.end, h.rank) for h in result.hits] == [
        ("pkg/one.py", 12, 30, 0), ("pkg/two.py", 4, 8, 1), ("pkg/three.py", 7, 7, 2)]
    assert result.bad_records == 1
    assert result.errors[0].startswith("line 3: not JSON")
    assert not result.fatal


def test_jsonl_with_results_per_line() -> None:
    spec = ParseSpec(format="jsonl", results="hits")
    out = dumps({"hits": [{"path": "a.py"}]}) + b"\n" + dumps({"hits": [{"path": "b.py"}]})
    assert [h.rank for h in parse(spec, out).hits] == [0, 1]


# -- regex -----------------------------------------------------------------

def test_regex_from_fake_skips_noise() -> None:
    result = parse(REGEX, run_fake(fake("oneshot_regex.py", "handle")))
    assert [(h.path, h.start, h.end, h.text) for h in result.hits] == [
        ("src/a.py", 12, 20, "def handle(request):"),
        ("./src/b.py", 3, 3, "return handle(x)"),
    ]
    assert result.bad_records == 1  # src/c.py:40-7
    assert "end line 7 before start line 40" in result.errors[0]
    assert not result.fatal


def test_regex_optional_groups_and_score() -> None:
    spec = ParseSpec(format="regex",
                     pattern=r"^(?P<score>[\d.]+) (?P<path>[^\s:]+)(?::(?P<start>\d+))?$")
    result = parse(spec, b"0.9 a.py:3\n0.5 b.py\nnoise\n")
    assert [(h.path, h.start, h.end, h.score) for h in result.hits] == [
        ("a.py", 3, 3, 0.9), ("b.py", None, None, 0.5)]


# -- garbage and encodings -------------------------------------------------

@pytest.mark.parametrize(
    ("mode", "fatal"), [("text", True), ("binary", True)],
)
def test_garbage_from_fake(mode: str, fatal: bool) -> None:
    out = run_fake(fake("garbage.py", mode))
    result = parse(JSON, out)
    assert result.fatal is fatal
    assert result.errors and result.errors[0].startswith("output is not JSON")
    assert result.hits == []


def test_non_utf8_counted_in_replaced_bytes() -> None:
    result = parse(ParseSpec(format="json"), b'[{"path": "caf\xe9.py"}]')
    assert result.hits[0].path == "caf\ufffd.py"
    assert result.replaced_bytes == 1
    assert not result.errors


def test_decode_counts_bytes() -> None:
    assert decode(b"plain") == ("plain", 0)
    assert decode("caf\u00e9 \ufffd".encode()) == ("caf\u00e9 \ufffd", 0)
    text, replaced = decode(b"a\xff\xfeb")
    assert (text.count("\ufffd"), replaced) == (2, 2)
    # A truncated three-byte sequence is two undecodable bytes.
    _, replaced = decode(b"x\xe2\x82")
    assert replaced == 2
    # A literal U+FFFD already in the output is not counted.
    _, replaced = decode("\ufffd".encode() + b"\xff")
    assert replaced == 1


def test_deeply_nested_json_is_fatal_not_a_crash() -> None:
    result = parse(JSON, b"[" * 200_000)
    assert result.fatal and result.errors


@pytest.mark.parametrize("spec", [
    JSON, REGEX, ParseSpec(format="jsonl", lines="l"), ParseSpec(format="json", results="a.b")])
def test_parse_never_raises(spec: ParseSpec) -> None:
    rng = random.Random(0)
    pieces = [b"{", b"}", b"[", b"]", b'"path"', b":", b",", b"\n", b"\xff", b"null",
              b"1", b"-2", b'"a.py"', b'"12-3"', b"true", b"1e999", b"NaN", b"x.py:1-2: t"]
    for _ in range(300):
        out = b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 40)))
        result = parse(spec, out)
        assert all(isinstance(h, Hit) for h in result.hits)
        assert len(result.errors) <= MAX_ERRORS


def test_engine_error_field_fails_the_query_with_its_message() -> None:
    spec = ParseSpec(format="json", results="hits", error="error")
    result = parse(spec, b'{"error": "backend unavailable", "hits": []}')
    assert result.engine_error == "backend unavailable" and result.hits == []
    ok = parse(spec, b'{"error": null, "hits": [{"path": "a.py"}]}')
    assert ok.engine_error is None and [h.path for h in ok.hits] == ["a.py"]
    lines = ParseSpec(format="jsonl", error="err.msg")
    mixed = parse(lines, b'{"path": "a.py"}\n{"err": {"msg": "quota"}}\n')
    assert mixed.engine_error == "quota" and [h.path for h in mixed.hits] == ["a.py"]
