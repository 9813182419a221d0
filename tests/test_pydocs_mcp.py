"""The pydocs-mcp specs (BM25-only, offline) against the real tool on a tiny tree."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from codesearch_bench.engine import driver
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.scoring import normalize as scoring

REPO = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.real_engine,
    pytest.mark.skipif(importlib.util.find_spec("pydocs_mcp") is None,
                       reason="pydocs-mcp is not installed (pip install pydocs-mcp==0.8.1)"),
]


@pytest.mark.parametrize("name", ["pydocs-mcp", "pydocs-mcp-mcp"])
def test_spec_finds_the_function_with_tree_relative_paths_and_1_based_lines(
        tmp_path: Path, small_tree: Path, name: str) -> None:
    if name.endswith("-mcp") and importlib.util.find_spec("mcp") is None:
        pytest.skip("the MCP Python SDK is not installed (pip install -e '.[mcp]')")
    loaded = load_spec(REPO / "engines" / f"{name}.json")
    ctx = driver.Context(root=small_tree, state=tmp_path / "state", corpus="proj")
    _, index = driver.run_index(loaded, ctx)
    assert index is not None and index.ok, index.stderr_tail()
    with driver.Searcher(loaded, ctx) as searcher:
        result = searcher.search("where are the settings read from a json file", 20, 1)
        quoted = searcher.search('an "unbalanced quote', 20, 1)
    assert result.error is None, result.error
    assert quoted.error is None, quoted.error
    norm = scoring.normalize(result.hits, small_tree, strip_prefix=loaded.spec.strip_prefix,
                             line_base=loaded.spec.line_base)
    assert norm.outside == 0
    first = norm.hits[0]
    assert (first.path, first.start, first.end) == ("pkg/config.py", 4, 7)
