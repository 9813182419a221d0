"""The terminal table fits: golden renderings at 80, 100 and 200 columns, and piped.

The fixture is a real comparison (grep, bm25, bm25-persistent and a fixed-table fake
over two small corpora) with its machine paths replaced. Regenerate the renderings
after a deliberate change of layout: `BENCH_WRITE_GOLDEN=1 pytest tests/test_table_fits.py`.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from codesearch_bench.render.table import render_compare
from codesearch_bench.results.schema import ResultFile

GOLDEN = Path(__file__).resolve().parent / "golden"
RESULT = ResultFile.load(GOLDEN / "result-two-corpora.json")


def render(width: int, *, terminal: bool, wide: bool = False) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=terminal, color_system=None,
                      legacy_windows=False)
    render_compare(console, RESULT, wide=wide)
    return buf.getvalue()


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("BENCH_WRITE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"{name} changed; see the module docstring"


@pytest.mark.parametrize("width", [80, 100, 200])
def test_headline_table_at(width: int) -> None:
    text = render(width, terminal=True)
    check(f"table-{width}.txt", text)
    assert max(len(line) for line in text.splitlines()) <= width


def test_headline_rows_keep_numbers_whole_at_100_columns() -> None:
    text = render(100, terminal=True)
    headline = text.split("paired comparisons")[0]  # the first corpus's headline table
    rows = [line for line in headline.splitlines()
            if line.startswith(("grep ", "bm25 ", "bm25-persistent ", "fixed-table-fake "))]
    assert len(rows) == 4
    for line in rows:
        assert "±" in line and "ms" in line, line  # one line per row: nothing folded


def test_piped_output_is_plain_pipe_tables() -> None:
    text = render(80, terminal=False)
    check("table-piped.txt", text)
    assert "━" not in text and "─" not in text
    assert ("| engine | tier | mode | file@10 | chunk@10 | MRR | tok@10 | p50 | index | flags |"
            in text)


def test_rows_and_pairs_follow_the_given_engine_order_on_every_corpus() -> None:
    text = render(200, terminal=True)
    for corpus in ("mini", "tiny"):
        block = text.split(f"{corpus}: 3 files")[1].split("paired")[0]
        names = [line.split()[0] for line in block.splitlines()
                 if line.split() and line.split()[0] in RESULT.engines]
        assert names == list(RESULT.engines)
    pairs = {(c.engine_a, c.engine_b) for c in RESULT.comparisons}
    order = list(RESULT.engines)
    assert all(order.index(a) < order.index(b) for a, b in pairs)


def test_wide_shows_every_pass() -> None:
    text = render(200, terminal=True, wide=True)
    check("table-wide-200.txt", text)
    assert "per_file" in text and "file@5" in text and "zero-miss" in text


@pytest.mark.parametrize("terminal", [True, False])
def test_a_corpus_with_no_row_prints_nothing(terminal: bool) -> None:
    # Ctrl-C before any cell on `tiny` finished: its corpus entry is there, no row is.
    cut = RESULT.model_copy(update={
        "interrupted": True, "rows": [r for r in RESULT.rows if r.corpus != "tiny"],
        "comparisons": [c for c in RESULT.comparisons if c.corpus != "tiny"],
        "tiers": [t for t in RESULT.tiers if t.corpus != "tiny"],
        "summary": None, "summaries": []})
    buf = io.StringIO()
    render_compare(Console(file=buf, width=100, force_terminal=terminal, color_system=None,
                           legacy_windows=False), cut)
    text = buf.getvalue()
    assert "mini: 3 files" in text and "tiny: 3 files" not in text
    assert f"pin={RESULT.corpora['tiny'].pin}" not in text
    assert "interrupted: partial results only; no rows for tiny" in text
