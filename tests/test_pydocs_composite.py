"""engines/pydocs-mcp-composite.json: pydocs-mcp's default search_codebase text as one blob.

The fixture tests need no pydocs-mcp: the spec loads, answers in a blob graded by content
(parse.text, no path), and its index and search commands render to pydocs-mcp's CLI and
scripts/mcp-bridge on this folder's config. The real_engine test indexes a tiny tree and
asks one question when an interpreter with pydocs-mcp and the MCP SDK is at hand
(PYDOCS_MCP_PYTHON, else the one running pytest): the blob is the server's composite
Markdown, and it holds the gold function's text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from codesearch_bench.engine import driver
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.engine.templates import rendering, variables
from codesearch_bench.scoring import content

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "engines" / "pydocs-mcp-composite.json"
CONFIG_DIR = REPO / "engines" / "pydocs-mcp-composite"
GOLD = ("def load_settings(path):\n    \"\"\"Read the settings file and parse it.\"\"\"\n"
        "    with open(path) as fh:\n        return json.load(fh)\n")  # conftest's small_tree


def test_spec_is_a_blob_graded_by_content() -> None:
    spec = load_spec(SPEC).spec
    assert spec.name == "pydocs-mcp-composite"
    assert spec.answer == "blob" and spec.mode == "persistent"
    assert spec.parse.format == "json" and spec.parse.results == "hits"
    assert spec.parse.path is None and spec.parse.text == "text"
    assert spec.parse.error == "error"
    assert spec.content_threshold == content.DEFAULT_THRESHOLD
    assert spec.candidates == 1 and spec.per_file == [1] and spec.tokens and not spec.spans
    assert "pip install pydocs-mcp==0.8.1" in (spec.requires or "")
    assert "own venv" in (spec.requires or "")


def test_commands_render_to_pydocs_mcp_and_the_bridge(tmp_path: Path) -> None:
    loaded = load_spec(SPEC)
    spec = loaded.spec
    ctx = variables.Context(root=tmp_path / "tree", state=tmp_path / "state", corpus="c")
    ask = variables.Ask(query="where is it", k=1, n=1, per_file=1)
    index_vars = variables.values(spec.name, loaded.spec_dir, ctx)
    assert spec.index is not None
    index = rendering.render_argv(spec.index.command, index_vars)
    search = rendering.render_argv(spec.search.command,
                                    variables.values(spec.name, loaded.spec_dir, ctx, ask))
    config = str(CONFIG_DIR / "config.yaml")
    # Found as engines/pydocs-mcp.json finds it: the interpreter running bench.
    assert index == [sys.executable, "-m", "pydocs_mcp", "--config", config, "index",
                     "--skip-deps", "--no-inspect", "--cache-dir", str(tmp_path / "state"),
                     str(tmp_path / "tree")]
    assert search == [sys.executable, str(REPO / "engines" / ".." / "scripts" / "mcp-bridge"),
                      "--config", str(CONFIG_DIR / "bridge.json"),
                      "--set", f"python={sys.executable}",
                      "--set", f"spec_dir={loaded.spec_dir}",
                      "--set", f"root={tmp_path / 'tree'}",
                      "--set", f"state={tmp_path / 'state'}"]
    env = rendering.render_env(spec.env, index_vars)
    assert env == {"PYDOCS_BENCH_DUMMY_KEY": "offline-never-sent",
                   "PYDOCS_CACHE_DIR": str(tmp_path / "state")}


def test_bridge_asks_with_the_server_defaults_and_keeps_the_whole_text() -> None:
    bridge = json.loads((CONFIG_DIR / "bridge.json").read_text())
    assert bridge["tool"] == "search_codebase"
    # No limit: the server's default (search.output.default_limit) applies.
    assert bridge["arguments"] == {"query": "{{ query }}", "scope": "project"}
    assert bridge["extract"]["mode"] == "blob"
    args = bridge["server"]["args"]
    assert args[args.index("--config") + 1] == "{{ spec_dir }}/pydocs-mcp-composite/config.yaml"
    assert "serve" in args


def test_config_is_offline_bm25_with_the_shipped_output_defaults() -> None:
    config = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text())
    assert config["embedding"]["provider"] == "openai"
    assert config["embedding"]["base_url"].startswith("http://127.0.0.1:")
    assert config["pipelines"]["chunk"] == [
        {"default": True, "pipeline_path": "pipelines/chunk_search.yaml"}]
    # The answer is the default one: no search.output or output overrides.
    assert "search" not in config and "output" not in config
    assert config["git"]["enabled"] == "off"
    ingestion = yaml.safe_load((CONFIG_DIR / config["extraction"]["ingestion"]
                                ["pipeline_path"]).read_text())
    stages = [s["type"] for s in ingestion["stages"]]
    assert "embed_chunks" not in stages and "synthesize_similar_edges" not in stages


# --- the real pydocs-mcp ----------------------------------------------------
def _pydocs_python() -> tuple[str | None, str]:
    """An interpreter with pydocs-mcp and the MCP SDK, or None and why not."""
    python = os.environ.get("PYDOCS_MCP_PYTHON") or sys.executable
    check = "import importlib.util as u; assert all(u.find_spec(m) for m in ('pydocs_mcp', 'mcp'))"
    try:
        probe = subprocess.run([python, "-c", check], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{python}: {exc}"
    if probe.returncode != 0:
        return None, (f"{python} cannot import pydocs_mcp and mcp (pip install "
                      f"pydocs-mcp==0.8.1 in its own venv, then set PYDOCS_MCP_PYTHON to its "
                      f"python)")
    return python, ""


@pytest.mark.real_engine
def test_real_composite_answer_on_a_tiny_tree(tmp_path: Path, small_tree: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    python, why = _pydocs_python()
    if python is None:
        pytest.skip(why)
    # {{python}} is the interpreter running bench; here, the one with pydocs-mcp, which
    # also runs the bridge (it imports bench from src/).
    monkeypatch.setattr(variables, "python_executable", lambda: python)
    src = str(REPO / "src")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH")) if p))
    loaded = load_spec(SPEC)
    ctx = driver.Context(root=small_tree, state=tmp_path / "state", corpus="proj")
    _, index = driver.run_index(loaded, ctx)
    assert index is not None and index.ok, index.stderr_tail()
    with driver.Searcher(loaded, ctx) as searcher:
        result = searcher.search("where are the settings read from a json file", 1, 1)
    assert result.error is None, result.error
    assert len(result.hits) == 1 and result.hits[0].text
    blob = result.hits[0].text
    # The composite Markdown: a located heading per hit, the chunk's text under it.
    assert "pkg/config.py:4-7" in blob, blob
    assert content.relevant(content.normalized(blob), content.normalized(GOLD),
                            content.DEFAULT_THRESHOLD), blob
