"""Hostile engine output: whatever bytes an engine prints, parse() says what is wrong and goes on.

Class "output" of the hostile suite. Every garbage kind is either one record's
error (the other records of the answer stay), or the whole answer's error
(fatal: the query fails with that reason), never an exception; strings that
reach the hits carry no lone surrogate, NUL or unbounded length. The
end-to-end cases run a whole `bench compare` over a fake engine that prints
the garbage for one query only, and `bench probe` on that query.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
import regex
from answers import FAULTY, JSON, answer, hostile_engine, write_engine
from hypothesis import given, settings
from hypothesis import strategies as st
from minicorpus import QUERIES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.engine.output import parse as parse_module
from codesearch_bench.engine.output.parse import MAX_ERRORS, ParseResult, parse
from codesearch_bench.engine.spec import ParseSpec
from codesearch_bench.model import Hit
from codesearch_bench.processes import guardian
from codesearch_bench.results.schema import QueryOutcome, ResultFile, SlotOut

pytestmark = pytest.mark.hostile

JSONL = ParseSpec(format="jsonl", start="start", end="end", text="text", score="score")
LINES = ParseSpec(format="json", lines="lines")
REGEX = ParseSpec(format="regex",
                  pattern=r"^(?P<path>[^:]+):(?P<start>\d+)(?::(?P<score>[^:]*))?: (?P<text>.*)$")
OK = Hit("ok.py", 1, 1, None, None, rank=0)
DIGITS_LIMIT = sys.get_int_max_str_digits()
PAST = "is past any file (the limit is 1,000,000,000)"


def check_clean(result: ParseResult) -> None:
    """What every result must be, whatever the input: data that dumps and reloads."""
    assert isinstance(result, ParseResult)
    assert len(result.errors) <= MAX_ERRORS
    assert all("\n" not in e and len(e) <= 200 for e in result.errors)
    for hit in result.hits:
        for value in (hit.path, hit.text, result.engine_error):
            if value is not None:
                value.encode("utf-8")  # no lone surrogate
        assert "\x00" not in hit.path and len(hit.path.encode()) <= 4096
        assert hit.score is None or abs(hit.score) < float("inf")
        for line in (hit.start, hit.end):
            assert line is None or (type(line) is int and 0 <= line <= 1_000_000_000)
    json.dumps([h._asdict() for h in result.hits], ensure_ascii=False, allow_nan=False).encode()


# -- one record is bad, the next one is read --------------------------------------------

BIG = "1" + "0" * 400
HUGE = "1" * 5000

BAD_RECORDS = [
    ("score-int-overflow", f'{{"path": "a.py", "score": {BIG}}}',
     "score (401-digit integer) is not a finite number"),
    ("score-int-digit-limit", f'{{"path": "a.py", "score": {HUGE}}}',
     "score (5000-digit integer) is not a finite number"),
    ("score-1e999", '{"path": "a.py", "score": 1e999}', "score inf is not a finite number"),
    ("score-minus-Infinity", '{"path": "a.py", "score": -Infinity}',
     "score -inf is not a finite number"),
    ("score-string-inf", '{"path": "a.py", "score": "inf"}', "score 'inf' is not a finite number"),
    ("score-string-1e400", '{"path": "a.py", "score": "1e400"}',
     "score '1e400' is not a finite number"),
    ("start-digit-limit", f'{{"path": "a.py", "start": {HUGE}}}',
     f"line (5000-digit integer) {PAST}"),
    ("start-401-digits", f'{{"path": "a.py", "start": {BIG}}}', f"line (401-digit integer) {PAST}"),
    ("start-1e300", '{"path": "a.py", "start": 1e300}', f"line (301-digit integer) {PAST}"),
    ("start-two-billion", '{"path": "a.py", "start": 2000000000}', f"line 2000000000 {PAST}"),
    ("start-string-5000-digits", f'{{"path": "a.py", "start": "{HUGE}"}}',
     f"line (5000-digit string) {PAST}"),
    ("end-past-any-file", '{"path": "a.py", "start": 1, "end": 1e12}',
     f"line 1000000000000 {PAST}"),
    ("start-Infinity", '{"path": "a.py", "start": Infinity}', "line inf is not a whole number"),
    ("start-NaN", '{"path": "a.py", "start": NaN}', "line nan is not a whole number"),
    ("start-negative-float", '{"path": "a.py", "start": -2.0}', "negative line number -2"),
    ("start-superscript", '{"path": "a.py", "start": "\\u00b2"}',
     "line '\u00b2' is not a whole number"),
    ("start-double-minus", '{"path": "a.py", "start": "--5"}', "line '--5' is not a whole number"),
    ("start-bool", '{"path": "a.py", "start": false}', "line False is not a number"),
    ("path-nul", '{"path": "a\\u0000.py"}', "path contains a NUL byte"),
    ("path-enormous", '{"path": "' + "d/" * 5000 + 'x.py"}',
     "path is 10004 bytes long (the limit is 4096)"),
    ("path-number", '{"path": 5}', "no path (got 5)"),
    ("text-number", '{"path": "a.py", "text": 5}', "text is a number, not a string"),
    ("text-object", '{"path": "a.py", "text": {"a": "b"}}', "text is an object, not a string"),
    ("text-bool", '{"path": "a.py", "text": true}', "text is a boolean, not a string"),
    ("text-list-of-numbers", '{"path": "a.py", "text": ["x", 1]}',
     "text is a list with non-string items, not a string"),
    ("text-nested-500-deep", '{"path": "a.py", "text": ' + "[" * 500 + "]" * 500 + "}",
     "text is a list with non-string items, not a string"),
    ("duplicate-path", '{"path": "a.py", "path": "b.py"}',
     "duplicate key `path` with different values"),
    ("duplicate-start", '{"path": "a.py", "start": 1, "start": 9}',
     "duplicate key `start` with different values"),
]


@pytest.mark.parametrize(("record", "reason"), [c[1:] for c in BAD_RECORDS],
                         ids=[c[0] for c in BAD_RECORDS])
def test_bad_record_is_that_records_error(record: str, reason: str) -> None:
    result = parse(JSON, answer(record, '{"path": "ok.py", "start": 1}'))
    assert result.errors == [f"result 0: {reason}"]
    assert result.hits == [OK] and result.bad_records == 1 and not result.fatal
    check_clean(result)


@pytest.mark.parametrize(("value", "reason"), [
    ('"1-99999999999999999999"', f"line (20-digit string) {PAST}"),
    (f"[1, {BIG}]", f"line (401-digit integer) {PAST}"),
    (f"{HUGE}", f"line (5000-digit integer) {PAST}"),
    ("[[1], 2]", "line [1] is not a whole number"),
], ids=["range-string", "range-list", "range-digit-limit", "range-nested"])
def test_bad_line_range(value: str, reason: str) -> None:
    raw = f'[{{"path": "a.py", "lines": {value}}}, {{"path": "ok.py", "lines": 1}}]'.encode()
    result = parse(LINES, raw)
    assert result.errors == [f"result 0: {reason}"] and result.hits == [OK]


@pytest.mark.parametrize("record", [
    f'{{"path": "ok.py", "start": 1, "id": {HUGE}}}',
    f'{{"path": "ok.py", "start": 1, "meta": {{"n": [{HUGE}, {BIG}]}}}}',
    '{"path": "ok.py", "start": 1, "start": 1}',
], ids=["digit-limit-in-unused-field", "nested-unused", "duplicate-same-value"])
def test_harmless_oddities_lose_nothing(record: str) -> None:
    result = parse(JSON, answer(record))
    assert result.hits == [OK] and not result.errors and result.bad_records == 0


# -- the whole answer is unreadable -----------------------------------------------------

FATAL = [
    ("nested-document", b"[" * 100_000,
     "output is nested too deeply to read (past Python's recursion limit)"),
    ("nested-in-a-record", answer('{"path": "a.py", "text": ' + "[" * 5000 + "]" * 5000 + "}"),
     "output is nested too deeply to read (past Python's recursion limit)"),
    ("results-object", b'{"hits": {"path": "a.py"}}',
     "output: expected a list at `hits`, got an object"),
    ("results-string", b'{"hits": "a.py"}', "output: expected a list at `hits`, got a string"),
    ("results-number", b'{"hits": 7}', "output: expected a list at `hits`, got a number"),
    ("results-digit-limit", b'{"hits": ' + HUGE.encode() + b"}",
     "output: expected a list at `hits`, got a number"),
    ("top-null", b"null", "output: expected an object with `hits`, got null"),
    ("top-true", b"true", "output: expected an object with `hits`, got a boolean"),
    ("top-string", b'"a.py"', "output: expected an object with `hits`, got a string"),
    ("top-number", b"12", "output: expected an object with `hits`, got a number"),
    ("top-list", b'[{"path": "a.py"}]', "output: expected an object with `hits`, got a list"),
    ("duplicate-results", b'{"hits": [], "hits": [{"path": "a.py"}]}',
     "output: duplicate key `hits` with different values"),
]


@pytest.mark.parametrize(("raw", "reason"), [c[1:] for c in FATAL], ids=[c[0] for c in FATAL])
def test_unreadable_answer_is_fatal(raw: bytes, reason: str) -> None:
    result = parse(JSON, raw)
    assert result.fatal and result.hits == [] and result.errors == [reason]


def test_top_level_null_without_results_path() -> None:
    result = parse(ParseSpec(format="json"), b"null")
    assert result.fatal and result.errors == ["output: expected a list at the top level, got null"]


def test_utf16_without_bom_names_the_nul_bytes() -> None:
    result = parse(JSON, answer('{"path": "a.py"}').decode().encode("utf-16-le"))
    assert result.fatal and len(result.errors) == 1
    assert result.errors[0].startswith("output is not JSON: ")
    assert "it has NUL bytes (UTF-16 without a BOM?)" in result.errors[0]


# -- encodings: read what can be read, count what was replaced --------------------------

@pytest.mark.parametrize(("raw", "replaced"), [
    (b"\xef\xbb\xbf" + answer('{"path": "ok.py", "start": 1}'), 0),
    (answer('{"path": "ok.py", "start": 1}').decode().encode("utf-16"), 0),
    (b"\xfe\xff" + answer('{"path": "ok.py", "start": 1}').decode().encode("utf-16-be"), 0),
    (answer('{"path": "ok.py",\r\n "start": 1}').replace(b"[", b"[\r\n"), 0),
    # A lone surrogate code unit (2 bytes) in a string and one odd byte at the end.
    (b"\xff\xfe" + '{"hits": [{"path": "ok.py", "start": 1, "x": "\ud800"}]}'
     .encode("utf-16-le", "surrogatepass") + b"\n", 3),
], ids=["utf8-bom", "utf16-le-bom", "utf16-be-bom", "crlf", "utf16-lone-unit-odd-byte"])
def test_encodings_are_read(raw: bytes, replaced: int) -> None:
    result = parse(JSON, raw)
    assert result.hits == [OK] and not result.errors and result.replaced_bytes == replaced


@pytest.mark.parametrize(("record", "path", "text", "replaced"), [
    ('{"path": "a\\ud800.py"}', "a\ufffd.py", None, 1),
    ('{"path": "a.py", "text": "x\\udfff\\udfffy"}', "a.py", "x\ufffd\ufffdy", 2),
    ('{"path": "a.py", "text": "\\ud83d\\ude00"}', "a.py", "\U0001f600", 0),
    ('{"path": "a.py", "text": ["\\udc80", "b"]}', "a.py", "\ufffd\nb", 1),
], ids=["path", "text", "valid-pair-kept", "text-list"])
def test_lone_surrogates_are_replaced_and_counted(record: str, path: str, text: str | None,
                                                  replaced: int) -> None:
    result = parse(JSON, answer(record))
    assert [(h.path, h.text) for h in result.hits] == [(path, text)]
    assert result.replaced_bytes == replaced and not result.errors
    check_clean(result)


@pytest.mark.parametrize(("raw", "message"), [
    (b'{"error": "bad \\ud800 thing"}', "bad \ufffd thing"),
    (b'{"error": "line one\\nline two\\r\\n  three"}', "line one line two three"),
    (b'{"error": {"code": ' + HUGE.encode() + b"}}", '{"code": "(5000-digit integer)"}'),
    (b'{"error": ' + b"[" * 500 + b"1" + b"]" * 500 + b"}", None),
    (b'{"error": "' + b"x" * 100_000 + b'"}', "x" * 499 + "\u2026"),
], ids=["surrogate", "multi-line", "digit-limit", "nested-500", "huge"])
def test_engine_error_is_one_clean_line(raw: bytes, message: str | None) -> None:
    spec = ParseSpec(format="json", results="hits", error="error")
    result = parse(spec, raw)
    assert result.engine_error is not None and result.hits == []
    assert "\n" not in result.engine_error and len(result.engine_error) <= 500
    result.engine_error.encode("utf-8")
    if message is not None:
        assert result.engine_error == message


def test_no_surrogate_reaches_an_error_message() -> None:
    spec = ParseSpec(format="json", results="h\ud800")  # from a spec file's own escapes
    result = parse(spec, b'{"h\\ud800": 5}')
    assert result.fatal and result.errors == ["output: expected a list at `h\ufffd`, got a number"]


def test_message_of_an_enormous_value_is_short() -> None:
    result = parse(JSON, answer('{"path": [' + ", ".join(["1"] * 100_000) + "]}"))
    assert result.bad_records == 1 and len(result.errors[0]) <= 200
    assert result.errors[0].startswith("result 0: no path (got [1, 1, 1")


# -- jsonl ------------------------------------------------------------------------------

@pytest.mark.parametrize(("first", "errors"), [
    (f'{{"path": "a.py", "score": {BIG}}}',
     ["line 1: result 0: score (401-digit integer) is not a finite number"]),
    (f'{{"path": "a.py", "start": {HUGE}}}',
     [f"line 1: result 0: line (5000-digit integer) {PAST}"]),
    ("[" * 100_000, ["line 1: nested too deeply to read (past Python's recursion limit)"]),
    ('{"path": "a.py", "path": "b.py"}',
     ["line 1: result 0: duplicate key `path` with different values"]),
], ids=["score-overflow", "digit-limit", "nested", "duplicate"])
def test_jsonl_bad_line_spares_the_next(first: str, errors: list[str]) -> None:
    result = parse(JSONL, first.encode() + b'\n{"path": "ok.py", "start": 1}\n')
    assert result.hits == [OK] and result.errors == errors and not result.fatal


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_jsonl_line_separators_inside_strings_do_not_split(separator: str) -> None:
    raw = json.dumps({"path": "ok.py", "start": 1, "text": f"x{separator}y"},
                     ensure_ascii=False).encode() + b"\r\n"
    result = parse(JSONL, raw)
    assert [(h.path, h.text) for h in result.hits] == [("ok.py", f"x{separator}y")]
    assert not result.errors


def test_jsonl_giant_line() -> None:
    big = json.dumps({"path": "ok.py", "start": 1, "text": "x" * 8_000_000}).encode()
    started = time.monotonic()
    result = parse(JSONL, big + b"\n" + b"{not json" * 100_000 + b"\n")
    assert time.monotonic() - started < 5
    assert [h.path for h in result.hits] == ["ok.py"] and result.bad_records == 1
    assert result.errors[0].startswith("line 2: not JSON: ") and len(result.errors[0]) <= 200


# -- regex ------------------------------------------------------------------------------

CATASTROPHIC = ParseSpec(format="regex", pattern=r"^(?P<path>(a|aa)+)$")


def test_regex_catastrophic_backtracking_stops_at_the_deadline() -> None:
    started = time.monotonic()
    result = parse(CATASTROPHIC, b"aaaa\n" + b"a" * 40 + b"!\nzzz\n", timeout=0.3)
    assert time.monotonic() - started < 2
    assert result.fatal and result.timed_out and result.hits == [Hit("aaaa", rank=0)]
    assert result.errors == ["pattern ran past the 0.3s parse deadline on line 2 "
                             "(catastrophic backtracking?); the rest was not read"]


def test_regex_deadline_covers_all_lines_together() -> None:
    # Each line alone is quick; 400 of them together are not.
    started = time.monotonic()
    result = parse(CATASTROPHIC, (b"a" * 24 + b"!\n") * 400, timeout=0.3)
    assert time.monotonic() - started < 2
    assert result.fatal and result.timed_out and result.hits == []


@pytest.mark.parametrize(("line", "reason"), [
    (f"a.py:{HUGE}: x", f"line (5000-digit string) {PAST}"),
    ("a\x00.py:1: x", "path contains a NUL byte"),
    ("a.py:1:inf: x", "score 'inf' is not a finite number"),
    ("a.py:\u0663\u0663\u0663\u0663\u0663\u0663\u0663\u0663\u0663\u0663: x",
     f"line 3333333333 {PAST}"),
], ids=["digits", "nul", "score-inf", "unicode-digits"])
def test_regex_bad_line_spares_the_next(line: str, reason: str) -> None:
    result = parse(REGEX, f"{line}\nok.py:1: fine\n".encode())
    assert [(h.path, h.start, h.text) for h in result.hits] == [("ok.py", 1, "fine")]
    assert result.errors == [f"line {line[:60]!r}: {reason}"]


def test_regex_bom_and_form_feed() -> None:
    result = parse(REGEX, b"\xef\xbb\xbfa.py:3: x\x0cy\r\nb.py:4: z\r\n")
    assert [(h.path, h.start, h.text) for h in result.hits] == [("a.py", 3, "x\x0cy"),
                                                               ("b.py", 4, "z")]


def test_regex_library_refusal_falls_back_to_re(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> Any:
        raise regex.error("refused")

    monkeypatch.setattr(regex, "compile", refuse)
    spec = ParseSpec(format="regex", pattern=r"^(?P<path>\S+) fallback$")
    result = parse(spec, b"a.py fallback\n")
    assert [h.path for h in result.hits] == ["a.py"] and not result.errors


# -- the safety nets: an unforeseen exception is still data -----------------------------

def test_unforeseen_error_in_a_record_is_that_records(monkeypatch: pytest.MonkeyPatch) -> None:
    real = parse_module.fields.line

    def flaky(value: Any) -> int | None:
        if value == "3":
            raise KeyError("surprise")
        return real(value)

    monkeypatch.setattr(parse_module.fields, "line", flaky)
    # The converters' net: an ordinary value (an int line) never reaches them, a string does.
    result = parse(JSON, answer('{"path": "boom.py", "start": "3"}',
                                '{"path": "ok.py", "start": 1}'))
    assert result.hits == [OK] and result.errors == ["result 0: cannot be read (KeyError: "
                                                     "'surprise')"]


def test_unforeseen_error_in_the_document_is_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(data: bytes) -> tuple[str, int]:
        raise MemoryError

    monkeypatch.setattr(parse_module, "decode", broken)
    result = parse(JSON, b"[]")
    assert result.fatal and result.errors == ["output could not be read (MemoryError)"]


# -- property-based: arbitrary bytes, every format --------------------------------------

PROPERTY_SPECS = [
    JSON, LINES, JSONL, REGEX,
    ParseSpec(format="jsonl", results="r", path="p.q", lines="l", error="e"),
    ParseSpec(format="regex", pattern=r"^(?P<path>\S+)\s+(?P<start>\S+)?\s*(?P<end>\S+)?"
                                      r"\s*(?P<score>\S+)?\s*(?P<text>.*)"),
]
ATOMS = [b"{", b"}", b"[", b"]", b",", b":", b'"path"', b'"start"', b'"score"', b'"text"',
         b'"hits"', b'"lines"', b'"error"', b'"r"', b'"l"', b'"p"', b'"q"', b'"e"',
         b'"a.py"', b'"\\ud800"', b'"\\u0000"', b'"\\udfff.py"', BIG.encode(), HUGE.encode(),
         b"1e999", b"-Infinity", b"NaN", b"-0", b"2.5", b"true", b"null", b"\n", b"\r\n",
         b"\xff\xfe", b"\xef\xbb\xbf", b"\xed\xa0\x80", b"\x00", b"\xe2\x80\xa8", b"\x85",
         b" a.py 3 4 inf t", b"[[[[[[[[[["]
hostile_bytes = st.one_of(
    st.binary(max_size=400),
    st.lists(st.sampled_from(ATOMS), max_size=40).map(b"".join),
)


@settings(max_examples=250, deadline=None)
@given(hostile_bytes, st.sampled_from(PROPERTY_SPECS))
def test_arbitrary_bytes_only_give_data(data: bytes, spec: ParseSpec) -> None:
    result = parse(spec, data, timeout=2.0)
    check_clean(result)
    slots = [SlotOut(path=h.path, chunks=[(h.start, h.end)]) for h in result.hits]
    outcome = QueryOutcome(id="q", error="; ".join(result.errors) or result.engine_error,
                           slots=slots, replaced_bytes=result.replaced_bytes)
    assert QueryOutcome.model_validate_json(outcome.model_dump_json()) == outcome


json_leaves = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(),
    st.text(max_size=8), st.sampled_from(["\ud800", "a\x00b", "\udfff", "x" * 5000]),
)
json_docs = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["hits", "path", "start", "end", "text", "score", "lines", "error"]),
        inner, max_size=5),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_docs, st.sampled_from([JSON, LINES, JSONL]))
def test_arbitrary_json_documents_only_give_data(doc: object, spec: ParseSpec) -> None:
    raw = json.dumps(doc).encode()  # ASCII: lone surrogates and NULs travel as escapes
    check_clean(parse(spec, raw + b"\n" + raw))


# -- end to end: one query's garbage, a whole compare, and probe ------------------------

GARBAGE = [
    ("score-int-overflow", answer(f'{{"path": "pkg/cells.py", "start": 1, "score": {BIG}}}'),
     "unparseable output: result 0: score (401-digit integer) is not a finite number"),
    ("int-digit-limit", answer(f'{{"path": "pkg/cells.py", "start": {HUGE}}}'),
     f"unparseable output: result 0: line (5000-digit integer) {PAST}"),
    ("score-1e999", answer('{"path": "pkg/cells.py", "start": 1, "score": 1e999}'),
     "unparseable output: result 0: score inf is not a finite number"),
    ("nested", b"[" * 50_000,
     "unparseable output: output is nested too deeply to read (past Python's recursion limit)"),
    ("path-nul", answer('{"path": "pkg/cells.py\\u0000"}'),
     "unparseable output: result 0: path contains a NUL byte"),
    ("top-null", b"null\n", "unparseable output: output: expected an object with `hits`, "
                            "got null"),
]


def compare(tmp: Path, bad: Path) -> tuple[int, ResultFile]:
    toml = make_corpus(tmp)
    good = write_engine(tmp, "good", [sys.executable, str(FAULTY), "ok", "{{query}}"])
    out = tmp / "out.json"
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp / "work"),
                 "--json", str(out), "--engine", str(good), "--engine", str(bad)])
    # The guardian is started by the first one-shot command of the test process and kept
    # to its end: run alone, this test is the one that starts it.
    left = {p.pid for p in psutil.Process().children(recursive=True)} - before - {guardian.pid()}
    assert not left, f"processes left running: {left}"
    assert out.is_file(), "the JSON must be written whatever the engine printed"
    return code, ResultFile.load(out)


def probe_q2(tmp: Path, engine: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["probe", "--engine", str(engine), "--root", str(tmp / "mini-proj"),
                 "--text", QUERIES[1]["query"], "--work", str(tmp / "probe-work")])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, " ".join(captured.out.split())


def headline(result: ResultFile, engine: str) -> Any:
    return next(r for r in result.rows if r.engine == engine and r.headline)


@pytest.mark.parametrize(("garbage", "reason"), [c[1:] for c in GARBAGE],
                         ids=[c[0] for c in GARBAGE])
def test_garbage_for_one_query_end_to_end(tmp_path: Path, garbage: bytes, reason: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = hostile_engine(tmp_path, garbage)
    code, result = compare(tmp_path, bad)
    assert code == 0 and not result.failures  # one failed query fails no combination
    good = headline(result, "good")
    assert good.errors == 0 and good.metrics["file.recall@5"].mean == 0.5
    row = headline(result, "bad")
    assert "errors=1" in row.flags
    by_id = {q.id: q for q in row.queries}
    assert by_id["q2"].error == reason
    assert [by_id[q].error for q in ("q1", "q3", "q4")] == [None, None, None]
    assert [by_id[q].scores["file.recall@5"] for q in ("q1", "q3", "q4")] == [1.0, 0.0, 1.0]
    code, shown = probe_q2(tmp_path, bad, capsys)
    assert code == 1
    assert f"search failed: {reason}" in shown


def test_lone_surrogates_and_odd_numbers_end_to_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    garbage = answer(
        '{"path": "pkg/cells\\udc80.py", "start": 1, "text": "\\ud800 shown", "score": 2}',
        f'{{"path": "pkg/cells.py", "start": 1, "end": 3, "text": "ok", "id": {HUGE}}}')
    bad = hostile_engine(tmp_path, garbage)
    code, result = compare(tmp_path, bad)
    assert code == 0
    q2 = next(q for q in headline(result, "bad").queries if q.id == "q2")
    assert q2.error is None and q2.replaced_bytes == 2
    assert [s.path for s in q2.slots] == ["pkg/cells\ufffd.py", "pkg/cells.py"]
    assert q2.scores["file.recall@5"] == 1.0 and q2.first_file_slot == 2
    assert q2.tokens is not None and q2.tokens["tokens@5"] > 0
    code, shown = probe_q2(tmp_path, bad, capsys)
    assert code == 0 and "pkg/cells\ufffd.py" in shown
