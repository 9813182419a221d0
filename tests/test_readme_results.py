"""README's results are generated, never typed: the block equals what its result file renders.

docs/results/default.json.gz is the comparison the block rests on (its command is in
README.md); `python scripts/readme-results` rewrites the block after a new measurement.
"""

from __future__ import annotations

import importlib.util
from importlib.machinery import SourceFileLoader
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_readme_results_equal_their_result_file() -> None:
    loader = SourceFileLoader("readme_results", str(REPO / "scripts" / "readme-results"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    text = (REPO / "README.md").read_text()
    assert module.expected(text) == text, "README.md's results are stale or edited by hand: " \
        "run `python scripts/readme-results`"
