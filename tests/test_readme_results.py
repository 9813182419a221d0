"""The results page is generated, never typed: each block equals what its result file renders.

docs/results/default.json.gz and docs/results/full.json.gz are the comparisons the blocks of
docs/results.md rest on (their commands are on that page); `python tools/readme-results`
rewrites the blocks after a new measurement.
"""

from __future__ import annotations

import importlib.util
from importlib.machinery import SourceFileLoader
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_results_page_equals_its_result_files() -> None:
    loader = SourceFileLoader("readme_results", str(REPO / "tools" / "readme-results"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    text = (REPO / "docs" / "results.md").read_text()
    assert module.expected(text) == text, "docs/results.md's results are stale or edited by " \
        "hand: run `python tools/readme-results`"
