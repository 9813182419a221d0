"""Tune on dev, report on test: splits at compare and at report time, and breakouts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from minicorpus import QUERIES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile

SPLITS = {"q1": ("dev", ["easy"]), "q2": ("test", ["easy", "ui"]), "q3": ("test", ["hard"]),
          "q4": ("dev", [])}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    toml = make_corpus(tmp_path)
    queries = [{**q, "split": SPLITS[q["id"]][0], "tags": SPLITS[q["id"]][1]} for q in QUERIES]
    (tmp_path / "mini.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    spec = tmp_path / "one.json"
    spec.write_text(json.dumps({
        "name": "one", "spans": True,
        "search": {"command": [sys.executable, "-c", "import json; print(json.dumps({'hits': "
                               "[{'path': 'pkg/config.py', 'start': 4, 'end': 7}]}))",
                               "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    return toml, spec


def run(tmp: Path, toml: Path, spec: Path, *extra: str) -> ResultFile:
    out = tmp / "out.json"
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp / "w"), "--engine",
                 str(spec), "--json", str(out), *extra]) == 0
    return ResultFile.load(out)


def test_compare_on_one_split_records_it(tmp_path: Path, setup: tuple[Path, Path]) -> None:
    result = run(tmp_path, *setup, "--split", "test")
    (row,) = result.rows
    assert row.split == "test" and [q.id for q in row.queries] == ["q2", "q3"]
    assert result.corpora["mini"].splits == {"test": 2}


def test_report_split_equals_compare_split(tmp_path: Path, setup: tuple[Path, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    whole = run(tmp_path, *setup)
    assert whole.corpora["mini"].splits == {"dev": 2, "test": 2}
    capsys.readouterr()
    assert main(["report", str(tmp_path / "out.json"), "--split", "test", "--format",
                 "json"]) == 0
    reported = ResultFile.model_validate_json(capsys.readouterr().out)
    direct = run(tmp_path, *setup, "--split", "test")
    assert reported.rows[0].metrics == direct.rows[0].metrics
    assert reported.rows[0].split == "test"


def test_quick_look_at_named_queries(tmp_path: Path, setup: tuple[Path, Path],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    result = run(tmp_path, *setup, "--query", "q3,q1")
    assert [q.id for q in result.rows[0].queries] == ["q1", "q3"]
    toml, spec = setup
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(spec), "--query", "q9"]) == 3
    assert "no query 'q9'" in capsys.readouterr().err


def test_breakout_by_tag(tmp_path: Path, setup: tuple[Path, Path],
                         capsys: pytest.CaptureFixture[str]) -> None:
    run(tmp_path, *setup)
    capsys.readouterr()
    assert main(["report", str(tmp_path / "out.json"), "--by", "tag", "--format", "json"]) == 0
    means = json.loads(capsys.readouterr().out)
    hit = {m["group"]: m["estimate"] for m in means if m["metric"] == "file.hit@10"}
    # the engine always answers pkg/config.py: right for q1 (easy) only among tagged queries
    assert hit["easy"]["mean"] == 0.5 and hit["easy"]["n"] == 2
    assert hit["hard"]["mean"] == 0.0 and hit["ui"]["mean"] == 0.0
    assert main(["report", str(tmp_path / "out.json"), "--by", "language"]) == 0
    assert "| python | one |" in capsys.readouterr().out


def test_a_split_the_result_lacks_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    golden = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"
    assert main(["report", str(golden), "--split", "dev"]) == 2
    assert "splits present" in capsys.readouterr().err


def test_split_less_queries_are_said_left_out_and_a_split_with_none_names_the_fix(
        tmp_path: Path, setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    toml, spec = setup
    queries = [q if q["id"] == "q3" else {**q, "split": SPLITS[q["id"]][0]} for q in QUERIES]
    (tmp_path / "mini.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    result = run(tmp_path, toml, spec, "--split", "test")
    assert [q.id for q in result.rows[0].queries] == ["q2"]
    assert "mini: 1 of 4 queries have no split and are left out by --split test" in " ".join(
        capsys.readouterr().err.split())
    (tmp_path / "mini.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(spec), "--split", "test"]) == 3
    err = " ".join(capsys.readouterr().err.split())
    assert "no query is in the test split; splits present: none" in err
    assert 'give each query of the set "split": "dev" or "test"' in err
    assert "or run without --split" in err
