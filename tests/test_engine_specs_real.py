"""The shipped ripgrep and code-search-cli specs, driven for real through `bench probe`."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

from codesearch_bench.cli import main

REPO = Path(__file__).resolve().parent.parent
QUERY = "where are the settings parsed from json"

needs_rg = pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep (`rg`) not installed")
needs_code_search = pytest.mark.skipif(
    importlib.util.find_spec("code_retrieval") is None,
    reason="code-search-cli not installed in this environment (pip install code-search-cli)",
)


def probe(engine: str, root: Path, work: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["probe", "--engine", str(REPO / "engines" / f"{engine}.json"),
                 "--root", str(root), "--text", QUERY, "--expect", "pkg/config.py:4-7",
                 "--work", str(work)])
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def assert_found(out: str) -> None:
    assert "file slot: 1" in out, out
    assert "pkg/config.py" in out
    assert "do not exist in the tree" not in out  # every path resolved under the root
    assert "!!" not in out and "losing recall" not in out and "no line spans" not in out


@pytest.mark.real_engine
@needs_rg
def test_ripgrep_spec_finds_the_file(small_tree: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert_found(probe("ripgrep", small_tree, tmp_path / "w", capsys))


@pytest.mark.real_engine
@needs_rg
def test_ripgrep_searches_files_an_enclosing_ignore_file_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outer = tmp_path / "checkout"
    tree = outer / "work" / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "config.py").write_text(
        "import json\n\n\ndef load_settings(path):\n    with open(path) as fh:\n"
        "        return json.load(fh)  # settings parsed\n\n"
    )
    # ripgrep honours an enclosing folder's .ignore (and, in a git checkout, .gitignore)
    (outer / ".ignore").write_text("*.py\n")
    assert_found(probe("ripgrep", tree, tmp_path / "w", capsys))


@pytest.mark.real_engine
@needs_code_search
def test_code_search_cli_spec_finds_the_file(small_tree: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert_found(probe("code-search-cli", small_tree, tmp_path / "w", capsys))
    # its index went to the state dir, not the user's cache
    assert list((tmp_path / "w" / "probe" / "code-search-cli").rglob("*.sqlite3"))


@pytest.mark.real_engine
@needs_code_search
@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_code_search_cli_indexes_a_tree_inside_an_ignoring_checkout(
    small_tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outer = tmp_path / "checkout"
    outer.mkdir()
    subprocess.run(["git", "init", "-q", str(outer)], check=True)
    (outer / ".gitignore").write_text("work/\n")
    tree = outer / "work" / "tree"
    tree.parent.mkdir()
    shutil.copytree(small_tree, tree)
    assert_found(probe("code-search-cli", tree, tmp_path / "w", capsys))
