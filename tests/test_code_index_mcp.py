"""The code-index-mcp engine (engines/code-index-mcp.json): its MCP server behind mcp-bridge.

Without code-index-mcp: the spec and its bridge config load; the query becomes
the keyword alternation querywords makes, sent in regex mode, case-insensitive,
max_results n; the extraction reads an answer in the shape code-index-mcp
2.17.1 gives (recorded from it on the rich tree, trimmed) as one hit per line;
and the whole chain -- spec, bridge, engines/code-index-mcp/start-server --
runs through bench against a stand-in server (tests/fakes/code_index_stub.py)
named by CODE_INDEX_MCP_BIN. The last test drives the real server when it is
installed.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from bridgekit import load_bridge, needs_mcp, rendered_arguments

from codesearch_bench.engine import driver
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.scoring import normalize as scoring

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "engines" / "code-index-mcp.json"
BRIDGE_CONFIG = REPO / "engines" / "code-index-mcp" / "bridge.json"
FAKES = Path(__file__).resolve().parent / "fakes"
QUERY = "where are the settings read from a json file"
bridge = load_bridge()
from querywords import keywords  # noqa: E402  (scripts/, put on sys.path by the bridge)

VALUES = {"spec_dir": str(REPO / "engines"), "root": "/r", "state": "/s"}


def config() -> Any:
    return bridge.load_config(str(BRIDGE_CONFIG), VALUES)


def arguments(query: str, n: int = 30) -> dict[str, Any]:
    return rendered_arguments(BRIDGE_CONFIG, VALUES, query, n=n)


def test_the_spec_loads_and_names_its_pins() -> None:
    loaded = load_spec(SPEC)
    spec = loaded.spec
    assert (loaded.name, spec.mode, spec.spans, spec.line_base, spec.strip_prefix) == (
        "code-index-mcp", "persistent", True, 1, "./")
    assert spec.requires is not None
    for pin in ("code-index-mcp==2.17.1", "CODE_INDEX_MCP_BIN", "ripgrep"):
        assert pin in spec.requires


def test_the_server_is_code_index_mcp_on_the_tree_with_its_search_tool() -> None:
    loaded = config()
    assert loaded.command == "sh"
    assert loaded.args == [str(REPO / "engines" / "code-index-mcp" / "start-server"), "/s", "/r"]
    assert (loaded.tool, loaded.mode) == ("search_code_advanced", "structured")


@pytest.mark.parametrize("query", [
    QUERY,
    "How is a long docstring condensed into a brief summary, cut at a sentence end or with "
    "an ellipsis?",
    'an "unbalanced quote (x|y)* [a- $HOME',
])
def test_the_pattern_is_the_query_keywords_in_regex_mode(query: str) -> None:
    args = arguments(query, n=60)
    assert args["pattern"] == "|".join(keywords(query))
    assert re.compile(args["pattern"])
    assert (args["regex"], args["case_sensitive"], args["max_results"]) == (True, False, 60)


# code-index-mcp 2.17.1's answer to search_code_advanced("divide_line", max_results=3) on
# the rich tree, as received: ./-prefixed paths, 1-based lines, sorted by path and line.
RECORDED = {
    "results": [
        {"file": "./rich/_wrap.py", "line": 26,
         "text": "def divide_line(text: str, width: int, fold: bool = True) -> list[int]:"},
        {"file": "./rich/text.py", "line": 21, "text": "from ._wrap import divide_line"},
        {"file": "./rich/text.py", "line": 1237,
         "text": "                offsets = divide_line(str(line), width, "
                 'fold=wrap_overflow == "fold")'},
    ],
    "pagination": {"total_matches": 3, "returned": 3, "start_index": 0, "has_more": False,
                   "max_results": 3, "end_index": 3},
}


def test_a_recorded_answer_is_one_hit_per_line() -> None:
    result = {"content": [], "structuredContent": RECORDED}
    hits = bridge.extract_hits(config(), result, {})
    assert [(h["path"], h["start"], h["end"], h["text"]) for h in hits] == [
        ("./rich/_wrap.py", 26, 26,
         "def divide_line(text: str, width: int, fold: bool = True) -> list[int]:"),
        ("./rich/text.py", 21, 21, "from ._wrap import divide_line"),
        ("./rich/text.py", 1237, 1237,
         "                offsets = divide_line(str(line), width, "
         'fold=wrap_overflow == "fold")'),
    ]
    none = {"results": [], "pagination": {"total_matches": 0, "returned": 0}}
    assert bridge.extract_hits(config(), {"structuredContent": none}, {}) == []
    with pytest.raises(bridge.ToolFailure, match="Project path not set"):
        bridge.extract_hits(config(), {"structuredContent": {"error": "Project path not set"}},
                            {})


def stand_in(tmp_path: Path) -> str:
    program = tmp_path / "bin" / "code-index-mcp"
    program.parent.mkdir()
    program.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKES / "code_index_stub.py"} "$@"\n')
    program.chmod(0o755)
    return str(program)


@needs_mcp
def test_through_bench_with_a_stand_in_server(
        tmp_path: Path, small_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODE_INDEX_MCP_BIN", stand_in(tmp_path))
    loaded = load_spec(SPEC)
    state = tmp_path / "state"
    state.mkdir()
    ctx = driver.Context(root=small_tree, state=state, corpus="proj")
    with driver.Searcher(loaded, ctx) as searcher:
        result = searcher.search(QUERY, 10, 1)
        regex_chars = searcher.search('an "unbalanced (quote', 10, 1)
    assert result.error is None, result.error
    assert regex_chars.error is None, regex_chars.error
    norm = scoring.normalize(result.hits, small_tree, strip_prefix=loaded.spec.strip_prefix,
                             line_base=loaded.spec.line_base)
    assert norm.outside == 0
    assert [(h.path, h.start, h.end) for h in norm.hits] == [
        ("README.md", 3, 3), ("pkg/config.py", 1, 1), ("pkg/config.py", 4, 4),
        ("pkg/config.py", 5, 5), ("pkg/config.py", 7, 7)]
    assert (state / "code-index").is_dir() and (state / "tmp").is_dir()


def real_server() -> str | None:
    return shutil.which(os.environ.get("CODE_INDEX_MCP_BIN", "code-index-mcp"))


@pytest.mark.real_engine
@pytest.mark.skipif(real_server() is None,
                    reason="code-index-mcp is not installed: pip install code-index-mcp==2.17.1 "
                           "into its own venv and set CODE_INDEX_MCP_BIN "
                           "(engines/code-index-mcp.json `requires`)")
def test_real_code_index_mcp_finds_the_keyword_lines_of_a_tiny_tree(
        tmp_path: Path, small_tree: Path) -> None:
    loaded = load_spec(SPEC)
    version = driver.engine_version(loaded) or ""
    assert version.startswith("code-index-mcp 2.17.1 / mcp "), version
    state = tmp_path / "state"
    state.mkdir()
    before = sorted(p.relative_to(small_tree) for p in small_tree.rglob("*"))
    ctx = driver.Context(root=small_tree, state=state, corpus="proj")
    with driver.Searcher(loaded, ctx) as searcher:
        result = searcher.search(QUERY, 10, 1)
        quoted = searcher.search('an "unbalanced (quote', 10, 1)
    assert result.error is None, result.error
    assert quoted.error is None, quoted.error
    norm = scoring.normalize(result.hits, small_tree, strip_prefix=loaded.spec.strip_prefix,
                             line_base=loaded.spec.line_base)
    assert norm.outside == 0
    assert [(h.path, h.start, h.end) for h in norm.hits] == [
        ("README.md", 3, 3), ("pkg/config.py", 1, 1), ("pkg/config.py", 4, 4),
        ("pkg/config.py", 5, 5), ("pkg/config.py", 7, 7)]
    assert sorted(p.relative_to(small_tree) for p in small_tree.rglob("*")) == before
