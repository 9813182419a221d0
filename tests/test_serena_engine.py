"""The serena engine (engines/serena.json): Serena's MCP server behind scripts/mcp-bridge.

Without Serena: the spec and its bridge config load; the query becomes the
keyword alternation querywords makes; the extraction reads a tool answer in
the shape Serena 2.1.0 gives (recorded from it on the rich tree, trimmed) as
one hit per file at its first matched line; and the whole chain -- spec,
bridge, engines/serena/start-server -- runs through bench against a stand-in
`serena` (tests/fakes/serena_stub.py) named by SERENA_BIN. The last test
drives the real Serena when it is installed.
"""

from __future__ import annotations

import json
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
SPEC = REPO / "engines" / "serena.json"
BRIDGE_CONFIG = REPO / "engines" / "serena" / "bridge.json"
FAKES = Path(__file__).resolve().parent / "fakes"
QUERY = "where are the settings read from a json file"
bridge = load_bridge()
from querywords import keywords  # noqa: E402  (scripts/, put on sys.path by the bridge)

VALUES = {"spec_dir": str(REPO / "engines"), "root": "/r", "state": "/s"}


def config() -> Any:
    return bridge.load_config(str(BRIDGE_CONFIG), VALUES)


def arguments(query: str) -> dict[str, Any]:
    return rendered_arguments(BRIDGE_CONFIG, VALUES, query)


def text_result(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text},
            **extra}


def test_the_spec_loads_and_names_its_pins() -> None:
    loaded = load_spec(SPEC)
    spec = loaded.spec
    assert (loaded.name, spec.mode, spec.spans, spec.line_base) == ("serena", "persistent", True, 0)
    assert spec.requires is not None
    for pin in ("serena-agent==2.1.0", "pyright@1.1.403", "SERENA_BIN"):
        assert pin in spec.requires
    assert str(BRIDGE_CONFIG.relative_to(REPO / "engines")) in " ".join(spec.search.command)


def test_the_server_is_serena_on_the_tree_with_its_pattern_search() -> None:
    loaded = config()
    assert loaded.command == "sh"
    assert loaded.args == [str(REPO / "engines" / "serena" / "start-server"), "/s", "/r"]
    assert loaded.tool == "search_for_pattern"
    assert loaded.mode == "markdown" and loaded.error_prefixes == ("Error",)


@pytest.mark.parametrize("query", [
    QUERY,
    "where are break offsets chosen when wrapping a paragraph, folding words longer than "
    "the available width",
    "Why are eager flags such as --help or --version evaluated before the other inputs?",
])
def test_the_pattern_is_the_query_keywords_or_ed_case_insensitively(query: str) -> None:
    args = arguments(query)
    assert args["substring_pattern"] == "(?i)(" + "|".join(keywords(query)) + ")"
    assert re.compile(args["substring_pattern"])
    assert args["multiline"] is False and args["max_answer_chars"] > 10**6


def test_regex_syntax_in_a_query_never_reaches_the_pattern() -> None:
    args = arguments('an "unbalanced quote (x|y)* [a- $HOME \\d')
    assert args["substring_pattern"] == "(?i)(unbalanc|quote|home)"
    assert arguments("how is it")["substring_pattern"] == "(?i)(QUERY_HAS_NO_KEYWORDS)"


# Serena 2.1.0's answer to search_for_pattern("(?i)(divide_line|fold)") on the rich
# tree, trimmed to four of its nine files and some of their lines: walk order, 0-based
# lines, a line listed once per match on it.
RECORDED = (
    '{"rich/_emoji_codes.py": ["  >1672:    \\"open_file_folder\\": \\"\U0001f4c2\\","], '
    '"rich/_log_render.py": ["  >  51:        output.add_column(ratio=1, '
    'style=\\"log.message\\", overflow=\\"fold\\")"], '
    '"rich/text.py": ["  >  20:from ._wrap import divide_line", '
    '"  >1236:                offsets = divide_line(str(line), width, fold=wrap_overflow == '
    '\\"fold\\")", "  >1236:                offsets = divide_line(str(line), width, '
    'fold=wrap_overflow == \\"fold\\")"], '
    '"rich/_wrap.py": ["  >  25:def divide_line(text: str, width: int, fold: bool = True) '
    '-> list[int]:", "  >  33:        fold: If True, words longer than `width` will be '
    'folded onto a new line."]}'
)


def test_a_recorded_answer_is_one_hit_per_file_at_its_first_matched_line() -> None:
    json.loads(RECORDED)  # the sample is the JSON text Serena sends
    hits = bridge.extract_hits(config(), text_result(RECORDED), {})
    assert [(h["path"], h["start"], h["end"]) for h in hits] == [
        ("rich/_emoji_codes.py", 1672, 1672), ("rich/_log_render.py", 51, 51),
        ("rich/text.py", 20, 20), ("rich/_wrap.py", 25, 25)]
    assert bridge.extract_hits(config(), text_result("{}"), {}) == []


def test_serena_errors_fail_the_query() -> None:
    message = ("Error executing tool search_for_pattern: ValueError: Invalid regular "
               "expression '(?i)(x': missing ), unterminated subpattern at position 4")
    with pytest.raises(bridge.ToolFailure, match="Invalid regular expression"):
        bridge.extract_hits(config(), {"content": [{"type": "text", "text": message}],
                                       "isError": True}, {})
    with pytest.raises(bridge.ToolFailure, match="Error: No active project"):
        bridge.extract_hits(config(), text_result("Error: No active project"), {})


def stand_in(tmp_path: Path) -> dict[str, str]:
    """SERENA_BIN and SERENA_PYRIGHT pointing at tests/fakes/serena_stub.py and a dummy."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    serena = bin_dir / "serena"
    serena.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKES / "serena_stub.py"} "$@"\n')
    pyright = bin_dir / "pyright"
    pyright.write_text("#!/bin/sh\necho 'pyright 1.1.403 (stub)'\n")
    langserver = bin_dir / "pyright-langserver"
    langserver.write_text("#!/bin/sh\nexit 1\n")
    for program in (serena, pyright, langserver):
        program.chmod(0o755)
    return {"SERENA_BIN": str(serena), "SERENA_PYRIGHT": str(langserver)}


@needs_mcp
def test_through_bench_with_a_stand_in_serena(
        tmp_path: Path, small_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in stand_in(tmp_path).items():
        monkeypatch.setenv(key, value)
    loaded = load_spec(SPEC)
    assert driver.engine_version(loaded) == "Serena 2.1.0 (stub) / pyright 1.1.403 (stub)"
    before = sorted(p.relative_to(small_tree) for p in small_tree.rglob("*"))
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
    # README.md line 3 "Settings live in a JSON file."; pkg/config.py line 1 "import json"
    assert [(h.path, h.start, h.end) for h in norm.hits] == [
        ("README.md", 3, 3), ("pkg/config.py", 1, 1)]
    assert (state / "serena-home" / "serena_config.yml").is_file()
    assert sorted(p.relative_to(small_tree) for p in small_tree.rglob("*")) == before


def real_serena() -> str | None:
    return shutil.which(os.environ.get("SERENA_BIN", "serena"))


@pytest.mark.real_engine
@pytest.mark.skipif(real_serena() is None,
                    reason="Serena is not installed: pip install serena-agent==2.1.0 into its "
                           "own venv and set SERENA_BIN (engines/serena.json `requires`)")
def test_real_serena_finds_the_keyword_lines_of_a_tiny_tree(
        tmp_path: Path, small_tree: Path) -> None:
    loaded = load_spec(SPEC)
    version = driver.engine_version(loaded) or ""
    assert version.startswith("Serena 2.1.0 / pyright 1.1.403"), version
    ctx = driver.Context(root=small_tree, state=tmp_path / "state", corpus="proj")
    (tmp_path / "state").mkdir()
    with driver.Searcher(loaded, ctx) as searcher:
        result = searcher.search(QUERY, 10, 1)
        quoted = searcher.search('an "unbalanced (quote', 10, 1)
    assert result.error is None, result.error
    assert quoted.error is None, quoted.error
    norm = scoring.normalize(result.hits, small_tree, strip_prefix=loaded.spec.strip_prefix,
                             line_base=loaded.spec.line_base)
    assert norm.outside == 0
    assert sorted((h.path, h.start, h.end) for h in norm.hits) == [
        ("README.md", 3, 3), ("pkg/config.py", 1, 1)]
    assert not (small_tree / ".serena").exists()
