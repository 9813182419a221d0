"""An engine that cannot see per_file is asked once; every pass re-grades those answers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from minicorpus import make_corpus

from codesearch_bench.cli import main

# Several chunks of one file, so per_file 1, 2 and 3 score differently.
FAKE = '''
import json, sys
with open(sys.argv[1], "a") as log:
    log.write(sys.argv[2] + "\\n")
hits = [{"path": "pkg/config.py", "start": 9, "end": 11, "text": "a"},
        {"path": "pkg/config.py", "start": 4, "end": 7, "text": "b"},
        {"path": "pkg/cells.py", "start": 1, "end": 3, "text": "c"},
        {"path": "pkg/cells.py", "start": 6, "end": 8, "text": "d"},
        {"path": "pkg/retry.py", "start": 1, "end": 6, "text": "e"}]
print(json.dumps({"hits": hits}))
'''


def _spec(base: Path, name: str, log: Path, *, sees_per_file: bool) -> Path:
    argv = [sys.executable, "{{spec_dir}}/fake.py", str(log), "{{query}}"]
    if sees_per_file:
        argv.append("{{per_file}}")  # ignored by the script, but it makes each pass ask
    spec = base / f"{name}.json"
    spec.write_text(json.dumps({
        "name": name, "spans": True, "tokens": True, "per_file": [1, 2, 3],
        "search": {"command": argv},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end",
                  "text": "text"},
    }))
    return spec


def _run(tmp_path: Path, *extra: str) -> tuple[dict[str, Any], dict[str, int]]:
    toml = make_corpus(tmp_path)
    (tmp_path / "fake.py").write_text(FAKE)
    logs = {n: tmp_path / f"{n}.log" for n in ("once", "every")}
    once = _spec(tmp_path, "once", logs["once"], sees_per_file=False)
    every = _spec(tmp_path, "every", logs["every"], sees_per_file=True)
    out = tmp_path / "out.json"
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(once), "--engine", str(every), "--json", str(out),
                 *extra]) == 0
    asked = {n: len(p.read_text().splitlines()) for n, p in logs.items()}
    return json.loads(out.read_text()), asked


def test_a_per_file_blind_engine_is_asked_once_and_scores_as_if_asked_again(
        tmp_path: Path) -> None:
    data, asked = _run(tmp_path)
    queries = asked["every"] // 3
    assert queries > 0 and asked["once"] == queries  # once per query, not once per pass
    rows = {(r["engine"], r["per_file"]): r for r in data["rows"]}
    assert [rows[("once", p)].get("answers_of") for p in (1, 2, 3)] == [None, 1, 1]
    assert all(rows[("every", p)].get("answers_of") is None for p in (1, 2, 3))
    for p in (1, 2, 3):  # quality identical to re-running
        assert rows[("once", p)]["metrics"] == rows[("every", p)]["metrics"]
        assert [q["scores"] for q in rows[("once", p)]["queries"]] == \
            [q["scores"] for q in rows[("every", p)]["queries"]]
    assert rows[("once", 1)]["metrics"] != rows[("once", 3)]["metrics"]


def test_headline_only_asks_one_pass(tmp_path: Path) -> None:
    data, asked = _run(tmp_path, "--headline-only")
    assert asked["once"] == asked["every"] > 0
    assert sorted((r["engine"], r["per_file"]) for r in data["rows"]) == \
        [("every", 1), ("once", 1)]
