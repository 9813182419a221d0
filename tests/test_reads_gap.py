"""An engine that reads only some files (a documentation index): no such file, a gap."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from minicorpus import make_corpus

from codesearch_bench.cli import main

# A documentation index's answer: the text of its one section.
FAKE = '''
import json, sys
text = open(sys.argv[1] + "/docs/guide.md").read()
print(json.dumps({"hits": [{"path": "docs/guide.md", "text": text}]}))
'''


def _compare(tmp_path: Path, *, with_docs: bool) -> dict[str, Any]:
    toml = make_corpus(tmp_path)
    if with_docs:
        guide = tmp_path / "mini-proj" / "docs" / "guide.md"
        guide.parent.mkdir()
        guide.write_text("# Cells\n\nThe width of a string in terminal cells:\n\n"
                         + (tmp_path / "mini-proj" / "pkg" / "cells.py").read_text()
                         + "\nLoading settings starts with `def load_settings(path):`.\n")
    (tmp_path / "fake.py").write_text(FAKE)
    spec = tmp_path / "docs-index.json"
    spec.write_text(json.dumps({
        "name": "docs-index", "answer": "text", "reads": ["*.md", "*.rst"], "tokens": True,
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{root}}", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "path": "path", "text": "text"},
    }))
    out = tmp_path / "out.json"
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(spec), "--json", str(out)])
    assert code == 0
    data: dict[str, Any] = json.loads(out.read_text())
    return data


def test_a_tree_without_the_files_an_engine_reads_is_a_gap(tmp_path: Path) -> None:
    data = _compare(tmp_path, with_docs=False)
    assert data["rows"] == [] and data["failures"] == []
    assert data["gaps"] == [{"engine": "docs-index", "corpus": "mini", "reason":
                             "the tree holds no file the engine reads (`reads`: *.md, *.rst)"}]


def test_a_tree_with_them_is_run_and_graded_by_content(tmp_path: Path) -> None:
    data = _compare(tmp_path, with_docs=True)
    assert data["gaps"] == []
    (row,) = data["rows"]
    assert "content_graded" in row["flags"]
    # The section holds cell_len's text (q2's gold) and only the first line of
    # load_settings (q1's): one of the three span-gold queries is found, by content alone
    # (the section's path is never a gold path); q4's gold is a file: not entered.
    assert row["metrics"]["content.recall@10"]["mean"] == pytest.approx(1 / 3)
    assert row["metrics"]["content.recall@10"]["n"] == 3
