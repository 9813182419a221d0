"""A wrong parse path is a flag, never a silent row of zeros."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench.cli import main
from codesearch_bench.engine.output.parse import parse
from codesearch_bench.engine.output.parsespec import ParseSpec
from codesearch_bench.engine.output.unmatched import problems, tally
from codesearch_bench.results.schema import ResultFile

TOOL = '''
import json, sys
hits = [] if "EMPTY" in sys.argv[1] else [
    {"path": "pkg/config.py", "start": 4, "end": 7, "text": "def load_settings"}]
print(json.dumps({"hits": hits}))
'''


def spec(tmp: Path, name: str, *, empty: bool = False, **parse: str) -> Path:
    (tmp / "tool.py").write_text(TOOL)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({
        "name": name, "spans": True,
        "search": {"command": [sys.executable, str(tmp / "tool.py"),
                               "EMPTY" if empty else "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end",
                  **parse}}))
    return path


def compare(tmp: Path, engine: Path) -> ResultFile:
    toml = tmp / "corpora.toml"
    if not toml.exists():
        make_corpus(tmp)
    out = tmp / f"{engine.stem}-out.json"
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp / "work"),
                 "--engine", str(engine), "--json", str(out)]) == 0
    return ResultFile.load(out)


def test_a_wrong_results_path_is_flagged_with_a_did_you_mean(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = compare(tmp_path, spec(tmp_path, "typo", results="hit"))
    (row,) = [r for r in result.rows if r.headline]
    assert "!! parse" in row.flags and "!! empty" in row.flags
    (problem,) = row.parse_problems
    assert "parse.results `hit` matched nothing" in problem and "did you mean `hits`" in problem
    # the table's note wraps to the console's width: read it as words
    assert "did you mean `hits`" in " ".join(capsys.readouterr().out.split())


def test_probe_names_the_path_that_matched_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "root").mkdir()
    engine = spec(tmp_path, "typo", results="hit")
    assert main(["probe", "--engine", str(engine), "--root", str(tmp_path / "root"),
                 "--text", "settings", "--work", str(tmp_path / "w")]) == 0
    out = capsys.readouterr().out
    assert "parse.results `hit` matched nothing" in out and "did you mean `hits`" in out


def test_a_field_absent_from_every_hit_is_flagged(tmp_path: Path) -> None:
    result = compare(tmp_path, spec(tmp_path, "noline", start="line"))
    (row,) = [r for r in result.rows if r.headline]
    assert "!! parse" in row.flags and "!! empty" not in row.flags
    assert any("parse.start `line` is in none of" in p for p in row.parse_problems)


def test_a_tool_that_finds_nothing_is_empty_not_a_parse_problem(tmp_path: Path) -> None:
    result = compare(tmp_path, spec(tmp_path, "nothing", empty=True))
    (row,) = [r for r in result.rows if r.headline]
    assert "!! empty" in row.flags and "!! parse" not in row.flags and not row.parse_problems


def test_a_right_spec_has_neither_flag(tmp_path: Path) -> None:
    result = compare(tmp_path, spec(tmp_path, "right"))
    (row,) = [r for r in result.rows if r.headline]
    assert not {"!! parse", "!! empty"} & set(row.flags)


# -- which field a wrong path meant: by what it holds, then by its spelling ------------

RECORDS = [{"file": "src/config.py", "line": 4, "end": 7, "score": 0.82,
            "snippet": "def load_settings(path):\n    with open(path) as fh:"},
           {"file": "src/retry.py", "line": 1, "end": 3, "score": 0.4,
            "snippet": "import time"}]


def suggestion(records: list[dict[str, object]] | None = None, **fields: str | None) -> str:
    given = {"path": "file", "start": "line", "end": "end", "score": "score",
             "text": "snippet", **fields}
    parse_spec = ParseSpec(format="json", results="hits",
                           **{k: v for k, v in given.items() if v is not None})
    answer = parse(parse_spec, json.dumps({"hits": records or RECORDS}).encode())
    (problem,) = problems(parse_spec, tally([answer]))
    assert "the output has: end, file, line, score, snippet" in problem or records
    match = re.search(r"did you mean `([^`]+)`\?$", problem)
    return match.group(1) if match else ""


@pytest.mark.parametrize("wrong", ["fle", "pth", "location", "filepath", "src"])
def test_a_wrong_path_field_points_at_the_field_holding_paths(wrong: str) -> None:
    # Spelling alone sends `pth` to `snippet` and `location` to `line`.
    assert suggestion(path=wrong) == "file"


@pytest.mark.parametrize(("role", "wrong", "meant"), [
    ("start", "from", "line"),       # `end` is read by parse.end already
    ("start", "lnum", "line"),
    ("end", "to", "end"),
    ("score", "relevance", "score"),  # spelt nearer `line`, but a line is a whole number
    ("score", "similarity", "score"),
    ("text", "body", "snippet"),
    ("text", "txt", "snippet"),
])
def test_each_role_points_at_a_field_of_its_type(role: str, wrong: str, meant: str) -> None:
    assert suggestion(**{role: wrong}) == meant


def test_a_path_named_like_one_wins_without_a_slash() -> None:
    records = [{"uri": "README", "name": "load settings", "line": 2}]
    assert suggestion(records, path="pth", end=None, score=None, text="name") == "uri"


def test_a_slash_beats_a_dot_for_a_path() -> None:
    records = [{"symbol": "Config.load", "where": "src/config.py", "line": 2}]
    assert suggestion(records, path="pth", end=None, score=None, text=None) == "where"
    records = [{"symbol": "config.py", "body": "def load(self):\n    ...", "line": 2}]
    assert suggestion(records, path="pth", end=None, score=None, text="body") == "symbol"


def test_a_dotted_path_points_at_an_object() -> None:
    records = [{"location": {"file": "a.py", "line": 3}, "loc": "a.py:3", "text": "x"}]
    parse_spec = ParseSpec(format="json", results="hits", path="locaton.file")
    answer = parse(parse_spec, json.dumps({"hits": records}).encode())
    (problem,) = problems(parse_spec, tally([answer]))
    assert problem.endswith("did you mean `location`?")


def test_no_field_of_the_type_and_nothing_spelt_near_suggests_nothing() -> None:
    records = [{"file": "a.py", "hits": 3}]
    parse_spec = ParseSpec(format="json", results="hits", path="file", score="zzz")
    answer = parse(parse_spec, json.dumps({"hits": records}).encode())
    (problem,) = problems(parse_spec, tally([answer]))
    assert "the output has: file, hits" in problem and "did you mean" not in problem


def test_a_wrong_results_path_points_at_the_list() -> None:
    parse_spec = ParseSpec(format="json", results="items")
    doc = {"count": 1, "hits": [{"path": "a.py"}], "query": "x"}
    (problem,) = problems(parse_spec, tally([parse(parse_spec, json.dumps(doc).encode())]))
    assert problem.endswith("did you mean `hits`?")
