from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "grep-engine"


def run_engine(root: Path, query: str, n: int = 10, per_file: int = 1,
               backend: str = "grep") -> dict:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(root), str(n), str(per_file), query,
         "--backend", backend],
        capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout)


def test_keywords_drop_stopwords_and_split_identifiers() -> None:
    result = run_engine(REPO / "tests", "Where is the loadSettings parser_state handled?", n=1)
    terms = result["terms"]
    assert "where" not in terms and "the" not in terms
    assert "load" in terms and "setting" in terms, terms
    assert "parser" in terms and "state" in terms


def test_ranks_window_with_most_distinct_terms_first(small_tree: Path) -> None:
    result = run_engine(small_tree, "where are the settings parsed from json")
    hits = result["hits"]
    assert hits[0]["path"] == "pkg/config.py"
    assert all(not h["path"].startswith("./") for h in hits)
    first = hits[0]
    lines = (small_tree / first["path"]).read_text().splitlines()
    assert first["text"] == "\n".join(lines[first["start"] - 1 : first["end"]])


def test_per_file_and_n_limit_results(small_tree: Path) -> None:
    result = run_engine(small_tree, "settings json", n=1)
    assert len(result["hits"]) == 1


def test_query_with_shell_metacharacters_is_just_text(small_tree: Path) -> None:
    result = run_engine(small_tree, 'x"; rm -rf ~; echo "settings')
    assert any(h["path"] == "pkg/config.py" for h in result["hits"])
    assert small_tree.exists()


@pytest.mark.skipif(shutil.which("rg") is None, reason="ripgrep not installed")
def test_ripgrep_backend_agrees_with_grep(small_tree: Path) -> None:
    a = run_engine(small_tree, "where are the settings parsed from json")
    b = run_engine(small_tree, "where are the settings parsed from json", backend="rg")
    assert [h["path"] for h in a["hits"]] == [h["path"] for h in b["hits"]]
