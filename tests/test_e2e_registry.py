"""End to end against a real pinned corpus from the package index (marked `network`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import load_corpora, select
from codesearch_bench.corpus.setup import setup
from codesearch_bench.errors import CorpusError

REPO = Path(__file__).resolve().parent.parent
UNREACHABLE = ("download failed", "cannot read the index page")


@pytest.mark.network
def test_compare_grep_and_bm25_on_the_rich_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "corpora"
    table = load_corpora(REPO / "corpora.toml")
    (rich,) = select(table, "rich")
    try:  # ~200 KB sdist, verified against its sha256 pin
        setup(rich, root)
    except CorpusError as exc:
        if any(marker in str(exc) for marker in UNREACHABLE):
            pytest.skip(f"the package index cannot be reached: {exc}")
        raise
    code = main([
        "compare",
        "--engine", str(REPO / "engines" / "grep.json"),
        "--engine", str(REPO / "engines" / "bm25.json"),
        "--corpus", "rich", "--limit", "10",
        "--corpora-file", str(REPO / "corpora.toml"),
        "--corpora-root", str(root), "--work", str(tmp_path / "work"),
        "--json", str(tmp_path / "out.json"),
    ])
    out = capsys.readouterr().out
    assert code == 0, out
    # captured output is not a terminal: the headline table prints in plain ASCII, a row
    # a line beginning with the engine's name
    table = out.split("rich: ", 1)[1].split("\n\n", 1)[0].splitlines()
    assert set(table[2].strip()) == {"-"}, out
    assert sorted(line.split()[0] for line in table[3:]) == ["bm25", "grep"], out
    assert "!!" not in out
