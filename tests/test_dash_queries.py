"""A query that starts with `-` is a query, never an option, for every shipped adapter."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codesearch_bench.cli import main

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("spec", ["grep.json", "bm25.json", "bm25-persistent.json",
                                  "ctags-symbols.json"])
@pytest.mark.parametrize("query", ["-h", "--version", "-- settings"])
def test_a_dash_query_is_answered(spec: str, query: str, small_tree: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    if spec.startswith("ctags") and shutil.which("ctags") is None:
        pytest.skip("Universal Ctags is not installed")
    code = main(["probe", "--engine", str(REPO / "engines" / spec), "--root", str(small_tree),
                 f"--text={query}", "--work", str(tmp_path / "w")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "usage:" not in out and "error:" not in out
