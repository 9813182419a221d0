"""`bench probe` and `bench compare` can never disagree: probe runs compare's own steps.

For every query of a fixture corpus and both per_file settings, the outcome probe
shows (slots, gains, first gold slots, every score, tokens) equals the one compare
stored for that query.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from minicorpus import QUERIES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run.probe import ProbeOptions, probe
from codesearch_bench.workdir import Where

# Several chunks per file, so per_file 1 and 2 collapse differently.
FAKE = '''
import json, sys
answers = {
  "where are the settings parsed from a json file": [["pkg/cells.py", 1, 3],
      ["pkg/config.py", 9, 11], ["pkg/config.py", 4, 7]],
  "how wide is a string when shown in terminal cells": [["pkg/cells.py", 6, 8],
      ["pkg/cells.py", 1, 2], ["pkg/retry.py", 1, 1]],
  "how long to wait before the next retry attempt": [["pkg/config.py", 10, 12],
      ["pkg/retry.py", 1, 2], ["pkg/retry.py", 4, 6]],
  "which module writes settings": [["pkg/retry.py", 1, 6], ["pkg/config.py", 10, 12]],
}
hits = [{"path": p, "start": s, "end": e, "text": "word " * e}
        for p, s, e in answers.get(sys.argv[1], [])]
print(json.dumps({"hits": hits}))
'''

COMPARED = ("slots", "n_slots", "file_gains", "chunk_gains", "first_file_slot",
            "first_chunk_slot", "scores", "tokens", "tokens_to_first_gold", "chunk_entered",
            "raw_hits", "outside", "error", "depth_limited", "no_spans")


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Where, Path, ResultFile]:
    toml = make_corpus(tmp_path)
    (tmp_path / "fake.py").write_text(FAKE)
    spec = tmp_path / "fake.json"
    spec.write_text(json.dumps({
        "name": "fake", "spans": True, "tokens": True, "per_file": [1, 2],
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end",
                  "text": "text"},
    }))
    work = tmp_path / "work"
    out = tmp_path / "out.json"
    assert main(["compare", "--corpora-file", str(toml), "--work", str(work), "--engine",
                 str(spec), "--json", str(out)]) == 0
    where = Where(work=work, corpora_file=toml, corpora_root=work / "corpora")
    return where, spec, ResultFile.load(out)


@pytest.mark.parametrize("per_file", [1, 2])
def test_probe_shows_the_outcome_compare_stored(
        setup: tuple[Where, Path, ResultFile], per_file: int) -> None:
    where, spec, result = setup
    (row,) = [r for r in result.rows if r.per_file == per_file]
    stored = {q.id: q for q in row.queries}
    for query in QUERIES:
        report = probe(ProbeOptions(spec, where, corpus="mini", query_id=query["id"],
                                    per_file=per_file))
        assert report.outcome is not None
        shown = report.outcome.model_dump(include=set(COMPARED))
        assert shown == stored[query["id"]].model_dump(include=set(COMPARED)), query["id"]
        assert report.expected_file_rank == stored[query["id"]].first_file_slot
        assert report.expected_chunk_rank == stored[query["id"]].first_chunk_slot


def test_per_file_changes_what_both_see(setup: tuple[Where, Path, ResultFile]) -> None:
    """The fixture really exercises collapsing: per_file 2 finds a chunk per_file 1 drops."""
    _, _, result = setup
    one, two = (next(r for r in result.rows if r.per_file == p) for p in (1, 2))
    q1 = {q.id: q for q in one.queries}["q1"], {q.id: q for q in two.queries}["q1"]
    assert q1[0].first_chunk_slot is None and q1[1].first_chunk_slot == 2
