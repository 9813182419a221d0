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


def test_piped_output_is_the_same_tables_in_plain_ascii() -> None:
    text = render(80, terminal=False)
    check("table-piped.txt", text)
    assert "━" not in text and "─" not in text and "\x1b" not in text
    lines = text.splitlines()
    head = next(line for line in lines if line.startswith("engine "))
    assert head.split() == ["engine", "tier", "mode", "file@10", "chunk@10", "MRR", "tok@10",
                            "p50", "index"]  # no flags anywhere: no flags column
    assert set(lines[lines.index(head) + 1].strip()) == {"-"}
    assert max(len(line) for line in lines) <= 80


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


def test_wide_shows_every_pass_as_a_row() -> None:
    text = render(200, terminal=True, wide=True)
    check("table-wide-200.txt", text)
    assert "per_file" in text and "file@k" in text and "zero-miss" in text
    assert "file@5" not in text  # a cutoff is a row, not a column
    mini = text.split("mini: recall at each cutoff k")[1].split("mini: index")[0]
    grep = [line.split()[:3] for line in mini.splitlines() if line.startswith("grep ")]
    assert grep == [["grep", str(p), str(k)] for p in (1, 2, 3) for k in RESULT.cutoffs]
