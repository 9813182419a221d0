"""results/upgrade.py: a result file of every earlier schema version loads into the current
shape; a file newer than this bench is refused before it is validated."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from codesearch_bench.errors import UsageError
from codesearch_bench.results import upgrade
from codesearch_bench.results.schema import SCHEMA_VERSION, ResultFile
from codesearch_bench.results.statistics import ComparisonOut

GOLDEN = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"


def _estimate(mean: float) -> dict[str, Any]:
    return {"mean": mean, "lo": mean, "hi": mean, "n": 1}


def version_1() -> dict[str, Any]:
    """The smallest file the first bench wrote (schema version 1, before any field it
    later gained): one corpus, two engines, a row each, one comparison."""
    def row(engine: str, hit: float) -> dict[str, Any]:
        return {"engine": engine, "corpus": "mini", "per_file": 1, "headline": True,
                "tree": "/t", "k": [10], "n": 20, "spans": True, "token_column": "text",
                "index": {"cached": False, "wall_s": 0.5},
                "search": {"mode": "oneshot", "p50_s": 0.01, "p95_s": 0.02},
                "metrics": {"file.hit@10": _estimate(hit)}, "flags": [], "errors": 0,
                "queries": [{"id": "q1", "latency_s": 0.01, "raw_hits": 1, "n_slots": 1,
                             "file_gains": [int(hit)], "first_file_slot": 1 if hit else None,
                             "chunk_entered": False, "scores": {"file.hit@10": hit}}]}
    return {
        "schema_version": 1, "protocol_version": "1", "bench_version": "0.1.0",
        "created": "2026-11-01T00:00:00+00:00", "interrupted": False,
        "environment": {"python": "3.11.7"}, "cutoffs": [10],
        "corpora": {"mini": {"name": "mini", "pin": "p", "identity": "i", "tree": "/t",
                             "files": 3, "tier": "small", "languages": {"python": 3},
                             "queries": 1, "query_set": "/q.jsonl",
                             "query_set_sha256": "0" * 64}},
        "engines": {e: {"name": e, "spec_file": f"{e}.json", "spec_sha256": "1" * 64,
                        "version": None, "mode": "oneshot", "requires": None}
                    for e in ("grep", "bm25")},
        "rows": [row("grep", 1.0), row("bm25", 0.0)],
        "comparisons": [{"corpus": "mini", "per_file": 1, "metric": "file.hit@10",
                         "engine_a": "grep", "engine_b": "bm25", "n": 1, "delta": 1.0,
                         "lo": 1.0, "hi": 1.0, "p": 1.0, "p_adjusted": 1.0,
                         "test": "mcnemar"}],
        "failures": [],
    }


def version_2_before_tracks() -> dict[str, Any]:
    """A version 2 file written before summaries per track: its one `summary` only."""
    data = version_1()
    data["schema_version"] = 2
    data["summary"] = {"corpora": ["mini", "tiny"], "macro": [], "pairs": []}
    return data


def write(path: Path, data: dict[str, Any]) -> Path:
    path.write_text(json.dumps(data, indent=1))
    return path


def test_every_older_version_has_one_step_that_says_what_changed() -> None:
    assert sorted(upgrade.STEPS) == list(range(1, SCHEMA_VERSION))
    for version, step in upgrade.STEPS.items():
        assert step.__doc__ and len(step.__doc__.split()) > 5, version
        assert step(copy.deepcopy(version_1()) | {"schema_version": version})[
            "schema_version"] == version + 1


def test_a_version_1_file_loads_in_the_current_shape(tmp_path: Path) -> None:
    raw = version_1()
    loaded = ResultFile.load(write(tmp_path / "v1.json", raw))
    assert loaded.schema_version == SCHEMA_VERSION and loaded.written_version == 1
    # every field the current schema has is set, the added ones to "not recorded"
    dumped = json.loads(loaded.dumps())
    assert set(dumped) == set(ResultFile.model_fields)
    assert set(dumped["comparisons"][0]) == set(ComparisonOut.model_fields)
    (c,) = loaded.comparisons
    assert (c.failed_a, c.failed_b, c.differing, c.exact, c.mdd, c.group) == (
        0, 0, None, None, None, None)
    assert (loaded.tiers, loaded.summary, loaded.summaries, loaded.gaps, loaded.jobs) == (
        [], None, [], [], 1)
    row = loaded.rows[0]
    assert (row.split, row.track, row.parse_problems, row.host) == ("all", "questions", [], None)
    assert (row.queries[0].gold, row.queries[0].split, row.queries[0].tags) == ([], None, [])
    assert loaded.corpora["mini"].splits == {} and loaded.corpora["mini"].track == "questions"
    # what the file held is unchanged
    assert [r.metrics["file.hit@10"].mean for r in loaded.rows] == [1.0, 0.0]
    assert c.delta == 1.0 and c.test == "mcnemar" and loaded.protocol_version == "1"


def test_an_upgraded_file_written_back_is_a_current_one(tmp_path: Path) -> None:
    loaded = ResultFile.load(write(tmp_path / "v1.json", version_1()))
    loaded.dump(tmp_path / "again.json.gz")
    data = gzip.decompress((tmp_path / "again.json.gz").read_bytes())
    assert upgrade.current(data)  # read back directly, without the upgrade
    again = ResultFile.load(tmp_path / "again.json.gz")
    assert again.model_dump() == loaded.model_dump()
    assert again.written_version == SCHEMA_VERSION  # provenance: what the file now is


def test_a_version_2_file_before_tracks_lists_its_summary_among_the_summaries(
        tmp_path: Path) -> None:
    loaded = ResultFile.load(write(tmp_path / "v2.json", version_2_before_tracks()))
    assert loaded.summary is not None and loaded.summaries == [loaded.summary]
    assert loaded.written_version == 2 == loaded.schema_version


def test_the_shipped_golden_is_version_1_and_loads_as_the_current_version() -> None:
    assert json.loads(GOLDEN.read_text())["schema_version"] == 1
    loaded = ResultFile.load(GOLDEN)
    assert loaded.written_version == 1 and loaded.schema_version == SCHEMA_VERSION
    assert not upgrade.current(GOLDEN.read_bytes())


def test_a_current_file_is_validated_as_it_is(tmp_path: Path) -> None:
    result = ResultFile.load(GOLDEN)
    result.model_copy(update={"schema_version": SCHEMA_VERSION}).dump(tmp_path / "now.json")
    data = (tmp_path / "now.json").read_bytes()
    assert upgrade.current(data)
    assert ResultFile.load(tmp_path / "now.json") == ResultFile.model_validate_json(data)
    # the same bytes without `summaries` (the last field added) take the upgrade
    assert not upgrade.current(data.replace(b'\n "summaries": ', b'\n "other": '))


def test_a_newer_file_is_refused_naming_the_file_and_the_fix(tmp_path: Path) -> None:
    data = version_1() | {"schema_version": SCHEMA_VERSION + 1,
                          "a_field_from_the_future": {"x": 1}}
    path = write(tmp_path / "newer.json", data)
    with pytest.raises(UsageError) as caught:
        ResultFile.load(path)
    # refused for its version, before validation could call it not a result file
    assert caught.value.message == (f"{path}: result schema version {SCHEMA_VERSION + 1}; this "
                                 f"bench reads versions up to {SCHEMA_VERSION}")
    assert "the bench that wrote it" in (caught.value.hint or "")
    assert "upgrade" in (caught.value.hint or "")


def test_what_is_not_a_result_file_is_still_said_so(tmp_path: Path) -> None:
    for name, text in [("list.json", "[1, 2]"), ("broken.json", '{"schema_version": 1,'),
                       ("missing.json", json.dumps({"schema_version": 1}))]:
        with pytest.raises(UsageError, match="not a codesearch-bench result file"):
            (tmp_path / name).write_text(text)
            ResultFile.load(tmp_path / name)
