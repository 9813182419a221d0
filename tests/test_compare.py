"""`bench compare` end to end over a small local corpus with grep and fakes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from minicorpus import QUERIES, SOURCES

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent

# A fake engine answering from a fixed table: q1 right at rank 1, q2 right file wrong
# chunk, q3 wrong file first then right, anything else nothing.
FAKE = '''
import json, sys
answers = {
  "where are the settings parsed from a json file": [["pkg/config.py", 4, 7]],
  "how wide is a string when shown in terminal cells": [["pkg/cells.py", 6, 8]],
  "how long to wait before the next retry attempt": [["pkg/config.py", 10, 12],
                                                     ["pkg/retry.py", 4, 6]],
}
hits = [{"path": p, "start": s, "end": e} for p, s, e in answers.get(sys.argv[1], [])]
print(json.dumps({"hits": hits}))
'''


@pytest.fixture
def bench(tmp_path: Path) -> dict[str, Path]:
    proj = tmp_path / "proj"
    for rel, text in SOURCES.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.mini]\nsource = "path"\npath = "proj"\n'
                    'queries = "queries.jsonl"\nlanguages = ["python"]\ndefault = true\n')
    (tmp_path / "fake.py").write_text(FAKE)
    fake = tmp_path / "fake.json"
    fake.write_text(json.dumps({
        "name": "fake", "spans": True,
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"},
    }))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({
        "name": "broken", "spans": True,
        "index": {"command": [sys.executable, "-c",
                              "import sys; sys.stderr.write('index exploded\\n'); sys.exit(2)"]},
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"},
    }))
    return {"toml": toml, "fake": fake, "broken": broken, "work": tmp_path / "work",
            "out": tmp_path / "out.json"}


def compare(bench: dict[str, Path], *engines: Path, extra: tuple[str, ...] = ()) -> int:
    args = ["compare", "--corpora-file", str(bench["toml"]), "--work", str(bench["work"]),
            "--corpora-root", str(bench["work"] / "corpora"), "--json", str(bench["out"])]
    for e in engines:
        args += ["--engine", str(e)]
    return main([*args, *extra])


def test_compare_table_paired_section_and_schema(
    bench: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = compare(bench, REPO / "engines" / "grep.json", bench["fake"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "tree=" in out and "paired comparisons" in out
    data = json.loads(bench["out"].read_text())
    schema = json.loads((REPO / "protocol" / "result.schema.json").read_text())
    jsonschema.validate(data, schema)
    result = ResultFile.model_validate(data)
    fake = next(r for r in result.rows if r.engine == "fake")
    by_id = {q.id: q for q in fake.queries}
    assert by_id["q1"].first_file_slot == 1 and by_id["q1"].first_chunk_slot == 1
    assert by_id["q2"].first_file_slot == 1 and by_id["q2"].first_chunk_slot is None
    assert by_id["q3"].first_file_slot == 2 and by_id["q3"].first_chunk_slot == 2
    assert by_id["q4"].scores["zero_miss"] == 1.0 and not by_id["q4"].chunk_entered
    assert fake.metrics["file.recall@5"].mean == pytest.approx(3 / 4)
    assert fake.metrics["chunk.recall@5"].mean == pytest.approx(2 / 3)
    assert fake.metrics["chunk.recall@5"].n == 3  # file-level q4 is not entered
    assert fake.metrics["file.mrr"].mean == pytest.approx((1 + 1 + 0.5 + 0) / 4)
    assert {c.metric for c in result.comparisons} >= {"file.hit@10", "file.mrr"}
    assert result.corpora["mini"].tier == "small"
    grep = [r for r in result.rows if r.engine == "grep"]
    assert [r.per_file for r in grep] == [1, 2, 3] and grep[0].headline


def test_failed_index_leaves_a_gap_and_exit_1(
    bench: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code = compare(bench, bench["broken"], bench["fake"])
    out = capsys.readouterr().out
    assert code == 1
    assert "index exploded" in out and "failed combinations" in out
    result = ResultFile.model_validate_json(bench["out"].read_text())
    assert [r.engine for r in result.rows] == ["fake"]
    (failure,) = result.failures
    assert failure.engine == "broken" and failure.stage == "index"
    assert "index exploded" in (failure.stderr_tail or "")


def test_index_is_cached_then_reindexed(bench: dict[str, Path]) -> None:
    spec = bench["fake"].with_name("indexed.json")
    counter = bench["work"].parent / "count"
    data = json.loads(bench["fake"].read_text())
    data["name"] = "indexed"
    data["index"] = {"command": [sys.executable, "-c",
                                 f"open({str(counter)!r}, 'a').write('x')"]}
    spec.write_text(json.dumps(data))
    assert compare(bench, spec) == 0
    assert compare(bench, spec) == 0
    result = ResultFile.model_validate_json(bench["out"].read_text())
    assert result.rows[0].index.cached and counter.read_text() == "x"
    assert compare(bench, spec, extra=("--reindex",)) == 0
    assert counter.read_text() == "xx"


def test_quality_numbers_are_deterministic(bench: dict[str, Path]) -> None:
    def quality() -> list[object]:
        assert compare(bench, REPO / "engines" / "grep.json", bench["fake"]) == 0
        result = ResultFile.model_validate_json(bench["out"].read_text())
        rows = [(r.engine, r.per_file, {k: v.model_dump() for k, v in r.metrics.items()},
                 [(q.id, q.slots, q.scores, q.tokens) for q in r.queries]) for r in result.rows]
        return [rows, [c.model_dump() for c in result.comparisons]]

    assert quality() == quality()


def test_duplicate_engine_names_are_refused(
    bench: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    twin = bench["fake"].with_name("twin.json")
    twin.write_text(bench["fake"].read_text())
    assert compare(bench, bench["fake"], twin) == 2
    assert "share the name" in capsys.readouterr().err
    # One spec named twice (by itself and in a list, say) is no clash: it runs once.
    assert compare(bench, bench["fake"], bench["fake"]) == 0
    assert [r.engine for r in ResultFile.load(bench["out"]).rows] == ["fake"]


def test_result_files_follow_the_umask(bench: dict[str, Path]) -> None:
    """mkstemp makes 0600 files; a result is meant to be shared like any file written."""
    import os

    old = os.umask(0o022)
    try:
        assert compare(bench, bench["fake"]) == 0
    finally:
        os.umask(old)
    assert bench["out"].stat().st_mode & 0o777 == 0o644
