"""`bench import repoqa`: a release file in RepoQA's format -> one corpus per repository."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import load_corpora
from codesearch_bench.datasets.base import ImportOptions
from codesearch_bench.datasets.repoqa import load
from codesearch_bench.errors import UsageError
from codesearch_bench.results.schema import ResultFile

POOL = '''import json


class Pool:
    def take(self, timeout):
        for conn in self.idle:
            if conn.alive():
                return conn
        return self.dial(timeout)


def checksum(data):
    total = 0
    for byte in data:
        total = (total * 31 + byte) % 65521
    return total
'''
LIB_RS = '''pub fn walk(root: &str) -> Vec<String> {
    let mut out = Vec::new();
    out.push(root.to_string());
    out
}
'''


def _release(base: Path, gz: bool = False) -> Path:
    lines = POOL.split("\n")
    take = next(i for i, line in enumerate(lines) if "def take" in line)
    data = {
        "python": [{
            "repo": "acme/pool", "commit_sha": "0" * 40,
            "content": {"pool/core.py": POOL, "../escape.py": "x = 1\n"},
            "dependency": {},
            "needles": [
                {"name": "take", "path": "pool/core.py", "start_line": take,
                 "end_line": take + 5, "description": "Hands out a live idle connection or "
                 "dials a new one when none is alive."},
                {"name": "not_a_def", "path": "pool/core.py", "start_line": 11,
                 "end_line": 16, "description": "Folds the bytes into a small modular sum."},
                {"name": "ghost", "path": "pool/missing.py", "start_line": 0, "end_line": 2,
                 "description": "Nothing."},
            ]}],
        "rust": [{"repo": "acme/walker", "commit_sha": "1" * 40,
                  "content": {"src/lib.rs": LIB_RS}, "dependency": {},
                  "needles": [{"name": "walk", "path": "src/lib.rs", "start_line": 0,
                               "end_line": 5, "description": "Lists a root and below."}]}],
    }
    path = base / ("repoqa-2024-04-20.json" + (".gz" if gz else ""))
    raw = json.dumps(data).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def test_each_repository_is_a_corpus_and_each_needle_a_query(tmp_path: Path) -> None:
    suite = load(ImportOptions(source=_release(tmp_path, gz=True)))
    by_name = {c.name: c for c in suite.corpora}
    assert set(by_name) == {"repoqa-python-acme-pool", "repoqa-rust-acme-walker"}
    pool = by_name["repoqa-python-acme-pool"]
    assert "../escape.py" not in pool.files  # an unsafe path never reaches the tree
    golds = [q.gold[0] for q in pool.queries]
    assert golds[0].symbol == "Pool.take" and golds[0].start is None  # named by its definition
    assert golds[1].symbol is None and (golds[1].start, golds[1].end) == (12, 16)  # by lines
    assert suite.provenance["gold"] == {"gold given by the needle's lines": 1,
                                        "gold named by its definition": 2}
    assert suite.dropped["needle whose path or lines are not in the repository"] == 1
    assert suite.dropped["file with an unsafe path"] == 1
    assert len(suite.provenance["sha256"]) == 64


def test_the_imported_suite_runs_with_line_span_gold(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    assert main(["import", "repoqa", "--from", str(_release(tmp_path)), "--out", str(out),
                 "--language", "python"]) == 0
    assert list(load_corpora(out / "corpora.toml")) == ["repoqa-python-acme-pool"]
    result_file = tmp_path / "r.json"
    assert main(["compare", "--suite", str(out), "--engine", "engines/grep.json",
                 "--work", str(tmp_path / "w"), "--json", str(result_file)]) == 0
    result = ResultFile.load(result_file)
    row = next(r for r in result.rows if r.headline)
    gold = {o.id: o.gold for o in row.queries}
    spans = sorted((g.path, g.start, g.end) for items in gold.values() for g in items)
    assert ("pool/core.py", 12, 16) in spans
    assert result.corpora["repoqa-python-acme-pool"].provenance is not None


def test_bad_files_say_what_they_are(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2]")
    with pytest.raises(UsageError, match="expected an object"):
        load(ImportOptions(source=bad))
    with pytest.raises(UsageError, match="no language go"):
        load(ImportOptions(source=_release(tmp_path), languages=["go"]))
