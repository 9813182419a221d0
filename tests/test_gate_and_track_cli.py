"""The regression gate and run tracking through the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench.cli import main

GOLDEN = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"


def test_a_result_gated_against_itself_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(GOLDEN), "--baseline", str(GOLDEN), "--fail-on", "regression",
                 "--max-drop", "0"]) == 0
    out = capsys.readouterr().out
    assert "| engine |" in out and "Gate: passed" in out


def test_gate_flags_need_a_baseline(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(GOLDEN), "--fail-on", "regression"]) == 2
    assert "add --baseline" in capsys.readouterr().err


def _spec(tmp: Path) -> Path:
    spec = tmp / "one.json"
    spec.write_text(json.dumps({
        "name": "one", "spans": True,
        "search": {"command": [sys.executable, "-c", "import json; print(json.dumps({'hits': "
                               "[{'path': 'pkg/config.py', 'start': 4, 'end': 7}]}))",
                               "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    return spec


def test_track_jsonl_appends_a_line_per_row(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path)
    log = tmp_path / "runs" / "runs.jsonl"
    args = ["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
            "--engine", str(_spec(tmp_path)), "--json", str(tmp_path / "out.json"),
            "--log-to", f"jsonl:{log}"]
    assert main(args) == 0
    assert main(args) == 0
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 2 and {line["engine"] for line in lines} == {"one"}


def test_a_bad_track_value_fails_before_any_engine(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    toml = make_corpus(tmp_path)
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(_spec(tmp_path)), "--track", "nowhere:x"]) == 2
    assert not (tmp_path / "w" / "state").exists()
