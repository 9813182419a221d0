"""The redesign changed no number: a fixed comparison's quality fields equal a saved file.

`tests/golden/quality-mini.json` was written by the harness before the package
was restructured. The comparison (grep, bm25, bm25-persistent and a fixed-table
fake over the mini corpus, every per_file pass) must give the same quality
fields -- everything but timings, memory, sizes on disk, timestamps and
machine paths. Regenerate only for a deliberate change of numbers:
`BENCH_WRITE_GOLDEN=1 pytest tests/test_behaviour_golden.py`, and say why in
the commit.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from minicorpus import make_corpus

from codesearch_bench.cli import main

REPO = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden" / "quality-mini.json"

# Fixed answers with several chunks in one file, so per_file 2 and 3 differ from 1.
FAKE = '''
import json, sys
answers = {
  "where are the settings parsed from a json file": [["pkg/cells.py", 1, 3],
      ["pkg/config.py", 9, 11], ["pkg/config.py", 4, 7]],
  "how wide is a string when shown in terminal cells": [["pkg/cells.py", 6, 8],
      ["pkg/cells.py", 1, 2], ["pkg/retry.py", 1, 1]],
  "how long to wait before the next retry attempt": [["pkg/config.py", 10, 12],
      ["pkg/retry.py", 1, 2], ["pkg/retry.py", 3, 3], ["pkg/retry.py", 4, 6]],
}
hits = [{"path": p, "start": s, "end": e, "text": "x " * s}
        for p, s, e in answers.get(sys.argv[1], [])]
print(json.dumps({"hits": hits}))
'''

_TIMING = {"latency_s", "wall_s", "p50_s", "p95_s", "peak_rss_bytes", "rss_method",
           "state_bytes", "command", "tree", "created", "spec_file", "query_set", "version",
           "host",
           # How a pass got its answers (asked, or re-graded from the headline's), not what
           # they scored: the fake cannot see per_file, so its passes 2 and 3 re-grade.
           "answers_of"}


# The values a field added since the file was saved has when it says nothing new.
_SILENT: list[object] = [None, [], {}, 0, "all", {"none": 4}, "questions", "ranked"]
_ADDED = {"tree_changes", "unsolicited", "parse_problems", "split", "tags", "splits", "gold",
          "track", "corpus", "track_info", "summaries", "answer", "content_entered",
          "content_threshold", "provenance", "grade", "dropped_records", "coverage"}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        # Fields added since the file was saved are compared only when they say something.
        return {k: _strip(v) for k, v in value.items()
                if k not in _TIMING and not (k in _ADDED and v in _SILENT)
                # A corpus's own track names its corpus: the name it already had.
                and not (k == "corpus" and "track" in value and v == value.get("name"))}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def quality(data: dict[str, Any]) -> dict[str, Any]:
    """The fields a behaviour-preserving change must leave exactly as they were."""
    return {
        "protocol_version": data["protocol_version"],
        "cutoffs": data["cutoffs"],
        "corpora": _strip(data["corpora"]),
        "engines": {name: {"name": e["name"], "spec_sha256": e["spec_sha256"], "mode": e["mode"]}
                    for name, e in data["engines"].items()},
        "rows": _strip(data["rows"]),
        "comparisons": data["comparisons"],
        "failures": [{k: f[k] for k in ("engine", "corpus", "stage")} for f in data["failures"]],
    }


def test_quality_fields_equal_the_saved_run(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path)
    (tmp_path / "fake.py").write_text(FAKE)
    fake = tmp_path / "fake.json"
    fake.write_text(json.dumps({
        "name": "fake", "spans": True, "tokens": True, "per_file": [1, 2, 3],
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end",
                  "text": "text"},
    }, indent=1))
    out = tmp_path / "out.json"
    engines = [REPO / "engines" / n for n in ("grep.json", "bm25.json", "bm25-persistent.json")]
    args = ["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "work"),
            "--json", str(out)]
    for e in [*engines, fake]:
        args += ["--engine", str(e)]
    assert main(args) == 0
    got = quality(json.loads(out.read_text()))
    got["engines"]["fake"]["spec_sha256"] = "(written by the test)"
    if os.environ.get("BENCH_WRITE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    expected = json.loads(GOLDEN.read_text())
    assert got == expected
