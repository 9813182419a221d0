"""A wrong parse path is a flag, never a silent row of zeros."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench.cli import main
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
