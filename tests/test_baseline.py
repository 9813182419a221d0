"""The regression gate: a result file against a baseline, row by row, query by query."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.errors import BenchError, UsageError
from codesearch_bench.results.schema import Estimate, Failure, QueryOutcome, ResultFile, Row
from codesearch_bench.scoring import stats
from codesearch_bench.scoring.baseline import (
    DEFAULT_METRICS,
    RegressionFound,
    compare_to_baseline,
    gate,
    verdict,
)
from codesearch_bench.scoring.baseline_markdown import to_markdown

GOLDEN = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"
WATCH = list(DEFAULT_METRICS)


@pytest.fixture(scope="module")
def golden() -> ResultFile:
    return ResultFile.load(GOLDEN)


def outcome(qid: str, rank: int | None, *, error: str | None = None) -> QueryOutcome:
    """A query whose first gold file sits at `rank` (None: missed)."""
    if error is not None:
        return QueryOutcome(id=qid, error=error, chunk_entered=True)
    hit = float(rank is not None and rank <= 10)
    rr = 1.0 / rank if rank else 0.0
    return QueryOutcome(id=qid, chunk_entered=True, scores={
        "file.hit@10": hit, "chunk.hit@10": hit, "file.mrr": rr, "chunk.mrr": rr,
        "zero_miss": 1.0 - hit})


def make_row(template: Row, engine: str, outcomes: list[QueryOutcome], *,
             corpus: str = "mini", per_file: int = 1, drop: tuple[str, ...] = ()) -> Row:
    answered = next(o for o in outcomes if o.error is None)
    names = [m for m in answered.scores if m not in drop]
    metrics = {}
    for name in names:
        values = [o.scores[name] if o.error is None else float(name == "zero_miss")
                  for o in outcomes]
        mean = sum(values) / len(values)
        metrics[name] = Estimate(mean=mean, lo=mean, hi=mean, n=len(values))
    if drop:
        outcomes = [o.model_copy(update={"scores": {k: v for k, v in o.scores.items()
                                                    if k not in drop}}) for o in outcomes]
    return template.model_copy(update={
        "engine": engine, "corpus": corpus, "per_file": per_file, "metrics": metrics,
        "queries": outcomes, "errors": sum(o.error is not None for o in outcomes)})


def make_result(golden: ResultFile, rows: list[Row], **update: object) -> ResultFile:
    return golden.model_copy(update={"rows": rows, "comparisons": [], "failures": [], **update})


def ranks(n: int, rank: int | None = 1) -> list[QueryOutcome]:
    return [outcome(f"q{i}", rank) for i in range(n)]


def test_a_file_against_itself_matches_every_row_and_passes(golden: ResultFile) -> None:
    report = compare_to_baseline(golden, golden, metrics=WATCH)
    assert len(report.rows) == len(golden.rows)
    assert not report.only_new and not report.only_old
    deltas = [d for r in report.rows for d in r.metrics]
    assert len(deltas) == 3 * len(golden.rows) and report.tests == len(deltas)
    for row, got in zip(golden.rows, report.rows, strict=True):
        assert row.errors == 0
        # A chunk metric applies only to queries whose gold is a span.
        assert [d.n for d in got.metrics] == [sum(m in q.scores for q in row.queries)
                                              for m in WATCH]
    assert all(d.delta == 0.0 and d.p_holm == 1.0 for d in deltas)
    assert verdict(report, True, 0.0) == []
    # A handful of queries: even all of them lost gives p = 2/2^n before Holm multiplies it
    # by every test of every row.
    assert max(len(r.queries) for r in golden.rows) <= 6
    assert len(report.notes) == 1 and report.notes[0].endswith(
        f"shared queries and {report.tests} tests, a regression in one row and metric alone "
        "cannot be significant, however large: run more queries, watch fewer metrics, or gate "
        "with --max-drop")


def test_unmatched_rows_are_listed_both_ways_and_a_recorded_failure_fails(
        golden: ResultFile) -> None:
    old = golden.model_copy(update={"rows": [r for r in golden.rows if r.engine != "grep"]})
    new = golden.model_copy(update={"rows": [r for r in golden.rows if r.engine != "bm25"]})
    report = compare_to_baseline(new, old, metrics=WATCH)
    assert {u.key[0] for u in report.only_new} == {"grep"}
    assert {u.key[0] for u in report.only_old} == {"bm25"}
    assert len(report.only_old) == sum(r.engine == "bm25" for r in golden.rows)
    assert {r.key[0] for r in report.rows} == {"bm25-persistent", "fixed-table-fake"}
    # Not measured is not worse; recorded as failed is.
    assert verdict(report, True, None) == []
    crashed = new.model_copy(update={"failures": [Failure(
        engine="bm25", corpus="mini", stage="index", message="index exited 3\nmore")]})
    reasons = verdict(compare_to_baseline(crashed, old, metrics=WATCH), True, None)
    assert len(reasons) == sum(r.engine == "bm25" and r.corpus == "mini" for r in golden.rows)
    assert all("failed in new (index: index exited 3)" in r for r in reasons)
    assert verdict(compare_to_baseline(crashed, old, metrics=WATCH), False, None) == []


def test_a_tiny_difference_passes_the_significance_gate_not_max_drop_zero(
        golden: ResultFile) -> None:
    template = golden.rows[0]
    worse = ranks(30)
    worse[7] = outcome("q7", None)
    report = compare_to_baseline(make_result(golden, [make_row(template, "grep", worse)]),
                                 make_result(golden, [make_row(template, "grep", ranks(30))]),
                                 metrics=WATCH)
    hit = next(d for d in report.rows[0].metrics if d.metric == "file.hit@10")
    assert hit.delta == pytest.approx(-1 / 30) and hit.worse and not hit.regression
    assert verdict(report, True, None) == []
    assert report.notes == ()  # 30 queries and 3 tests could show a real regression
    dropped = verdict(report, False, 0.0)
    assert len(dropped) == 3 and all("more than --max-drop 0" in r for r in dropped)
    assert verdict(report, False, 0.05) == []
    assert verdict(report, False, None) == []
    with pytest.raises(UsageError, match="--max-drop must be a number >= 0"):
        verdict(report, True, -0.1)


def test_failed_queries_count_as_misses_and_zero_miss_rising_is_worse(
        golden: ResultFile) -> None:
    template = golden.rows[0]
    new = ranks(20)
    for i in range(12):
        new[i] = outcome(f"q{i}", None, error="timed out after 10s")
    report = compare_to_baseline(make_result(golden, [make_row(template, "grep", new)]),
                                 make_result(golden, [make_row(template, "grep", ranks(20))]),
                                 metrics=[*WATCH, "zero_miss"])
    by_metric = {d.metric: d for d in report.rows[0].metrics}
    assert by_metric["file.hit@10"].new == pytest.approx(8 / 20)
    assert by_metric["zero_miss"].delta == pytest.approx(12 / 20)
    assert all(d.regression for d in by_metric.values())
    assert by_metric["file.hit@10"].test == "mcnemar"
    assert by_metric["file.mrr"].test == "randomization"
    with pytest.raises(RegressionFound) as caught:
        gate(report, fail_on_regression=True, max_drop=None)
    assert caught.value.exit_code == 5 and isinstance(caught.value, BenchError)
    assert str(caught.value).startswith("the regression gate failed against baseline "
                                        "(4 reasons):\n  - grep × mini (per_file=1): ")
    assert "zero_miss 0.000 → 0.600" in str(caught.value)


def test_holm_runs_across_every_metric_of_every_matched_row(golden: ResultFile) -> None:
    template = golden.rows[0]
    slightly = ranks(20)
    for i in range(5):
        slightly[i] = outcome(f"q{i}", None)
    rows_old = [make_row(template, e, ranks(20)) for e in ("grep", "bm25")]
    rows_new = [make_row(template, "grep", slightly), make_row(template, "bm25", ranks(20, 2))]
    report = compare_to_baseline(make_result(golden, rows_new), make_result(golden, rows_old),
                                 metrics=WATCH)
    deltas = [d for r in report.rows for d in r.metrics]
    raw = [d.p for d in deltas if d.p is not None]
    assert report.tests == len(raw) == 6
    assert [d.p_holm for d in deltas] == stats.holm(raw)
    # 5 lost hits of 20 give McNemar p = 2/2^5; Holm multiplies the smallest by 6.
    assert any(d.p_holm is not None and d.p is not None and d.p_holm > d.p for d in deltas)
    mrr = next(d for d in report.rows[1].metrics if d.metric == "file.mrr")
    assert mrr.delta == pytest.approx(-0.5) and mrr.regression  # every query 1/1 -> 1/2


def test_only_queries_both_files_ran_are_paired(golden: ResultFile) -> None:
    template = golden.rows[0]
    report = compare_to_baseline(make_result(golden, [make_row(template, "grep", ranks(12))]),
                                 make_result(golden, [make_row(template, "grep", ranks(30))]),
                                 metrics=WATCH)
    assert {d.n for d in report.rows[0].metrics} == {12}
    assert report.rows[0].shared == 12
    assert report.notes == ("grep × mini (per_file=1): 12 queries in both files (baseline ran "
                            "30, new 12)",)
    two = compare_to_baseline(
        make_result(golden, [make_row(template, e, ranks(12)) for e in ("grep", "bm25")]),
        make_result(golden, [make_row(template, e, ranks(30)) for e in ("grep", "bm25")]),
        metrics=WATCH)
    assert two.notes == ("2 rows: 12 queries in both files (baseline ran 30, new 12)",)


def test_a_metric_the_baseline_had_and_new_lacks_fails_the_gate(golden: ResultFile) -> None:
    template = golden.rows[0]
    old = make_result(golden, [make_row(template, "grep", ranks(10))])
    new = make_result(golden, [make_row(template, "grep", ranks(10),
                                        drop=("chunk.hit@10", "chunk.mrr"))])
    report = compare_to_baseline(new, old, metrics=WATCH)
    chunk = next(d for d in report.rows[0].metrics if d.metric == "chunk.hit@10")
    assert chunk.lost and chunk.p is None and chunk.note == "not measured in the new file"
    assert verdict(report, True, None) == [
        "grep × mini (per_file=1): chunk.hit@10 is in baseline but not in new"]
    # The other way round is news, not a loss.
    assert verdict(compare_to_baseline(old, new, metrics=WATCH), True, 0.0) == []


def test_files_measured_differently_are_refused(golden: ResultFile, tmp_path: Path) -> None:
    other = golden.model_copy(update={"protocol_version": "0"})
    with pytest.raises(UsageError, match=re.escape(
            f"old.json: protocol_version '0' differs from new.json's "
            f"'{golden.protocol_version}'; a protocol change can move numbers")):
        compare_to_baseline(golden, other, metrics=WATCH, new_label="new.json",
                            old_label="old.json")
    corpora = dict(golden.corpora)
    corpora["tiny"] = corpora["tiny"].model_copy(update={"query_set_sha256": "f" * 64})
    was = golden.corpora["tiny"].query_set_sha256[:12]
    with pytest.raises(UsageError, match=re.escape(
            f"corpora.tiny.query_set_sha256: baseline {was}, new ffffffffffff")):
        compare_to_baseline(golden.model_copy(update={"corpora": corpora}), golden,
                            metrics=WATCH)
    renamed = golden.model_copy(update={"rows": [r.model_copy(update={"engine": "x" + r.engine})
                                                 for r in golden.rows]})
    with pytest.raises(UsageError, match="no row of new matches one of baseline") as caught:
        compare_to_baseline(renamed, golden, metrics=WATCH)
    first = golden.rows[0]
    assert f"x{first.engine} × {first.corpus} (per_file={first.per_file})" in str(caught.value)
    truncated = tmp_path / "old.json"
    truncated.write_bytes(GOLDEN.read_bytes()[:5000])
    with pytest.raises(UsageError, match=re.escape(f"{truncated}: not a codesearch-bench "
                                                   "result file")):
        ResultFile.load(truncated)


def test_malformed_files_and_metrics_are_refused_by_name(golden: ResultFile) -> None:
    twice = golden.model_copy(update={"rows": [*golden.rows, golden.rows[0]]})
    first = golden.rows[0]
    with pytest.raises(UsageError, match=re.escape(
            f"new: rows[{len(golden.rows)}] repeats rows[0] ({first.engine} × {first.corpus} "
            f"(per_file={first.per_file}))")):
        compare_to_baseline(twice, golden, metrics=WATCH)
    row = golden.rows[1]
    doubled = row.model_copy(update={"queries": [*row.queries, row.queries[0]]})
    rows = [golden.rows[0], doubled, *golden.rows[2:]]
    with pytest.raises(UsageError, match=re.escape(
            f"baseline: rows[1].queries[{len(row.queries)}].id {row.queries[0].id!r} repeats")):
        compare_to_baseline(golden, golden.model_copy(update={"rows": rows}), metrics=WATCH)
    with pytest.raises(UsageError, match=r"'file\.hit10' is not a metric"):
        compare_to_baseline(golden, golden, metrics=["file.hit10"])
    with pytest.raises(UsageError, match="'tokens@10' has no per-query score"):
        compare_to_baseline(golden, golden, metrics=["tokens@10"])
    with pytest.raises(UsageError, match="no metric to watch"):
        compare_to_baseline(golden, golden, metrics=[])
    with pytest.raises(UsageError, match="alpha must be between 0 and 1"):
        compare_to_baseline(golden, golden, metrics=WATCH, alpha=1.0)
    report = compare_to_baseline(golden, golden, metrics=["file.hit@50"])
    assert report.notes == ("watched `file.hit@50` is in no row of either file",)
    assert all(not r.metrics for r in report.rows)


def test_markdown_is_a_pr_comment_table(golden: ResultFile) -> None:
    template = golden.rows[0]
    worse = ranks(20, None)
    worse[0] = outcome("q0", 1)
    old = make_result(golden, [make_row(template, "a|b", ranks(20)),
                               make_row(template, "gone", ranks(20))])
    new = make_result(golden, [make_row(template, "a|b", worse)])
    report = compare_to_baseline(new, old, metrics=WATCH, new_label="pr.json",
                                 old_label="main.json")
    reasons = verdict(report, True, None)
    text = to_markdown(report, reasons)
    lines = text.splitlines()
    assert lines[0] == "### codesearch-bench: `pr.json` against `main.json`"
    header = lines.index("| engine | corpus | per_file | metric | n | old | new | Δ | p (Holm) "
                         "|  |")
    assert lines[header + 1] == "|---|---|--:|---|--:|--:|--:|--:|--:|:-:|"
    table = lines[header + 2:header + 5]
    assert table[0] == ("| a\\|b | mini | 1 | `file.hit@10` | 20 | 1.000 | 0.050 | -0.950 | "
                        "<0.001 | ❌ worse |")
    assert [line.split(" | ")[3] for line in table] == [f"`{m}`" for m in WATCH]
    assert lines[header + 5] == ""
    assert "**Only in `main.json`:** gone × mini (per_file=1)" in lines
    assert "**Gate: failed**" in lines and len(reasons) == 3
    assert sum(line.startswith("- a\\|b × mini") for line in lines) == 3
    same = to_markdown(compare_to_baseline(old, old, metrics=WATCH), []).splitlines()
    assert "**Gate: passed**" in same and "No watched metric moved." in same
    folded = same.index("<details><summary>6 unchanged</summary>")
    assert same[folded + 2].startswith("| engine |") and same[folded + 11] == "</details>"
    assert "Gate" not in to_markdown(report)


# --- the gate end to end: the same engine answering worse on a corpus -------------------

ENGINE = '''
import json, re, sys
mode, query = sys.argv[1], sys.argv[2]
i = int(re.search(r"\\d+", query).group())
if mode == "worse" and i < 10:
    i = (i + 1) % 12
print(json.dumps({"hits": [{"path": f"pkg/m{i}.py", "start": 1, "end": 2}]}))
'''


def _corpus(tmp: Path) -> Path:
    proj = tmp / "steps-proj"
    (proj / "pkg").mkdir(parents=True)
    queries = []
    for i in range(12):
        (proj / "pkg" / f"m{i}.py").write_text(f"def step_{i}():\n    return {i} * 7\n")
        queries.append({"id": f"s{i}", "query": f"what happens at stage {i}",
                        "gold": [{"path": f"pkg/m{i}.py", "symbol": f"step_{i}"}]})
    (tmp / "steps.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    toml = tmp / "corpora.toml"
    toml.write_text('[corpus.steps]\nsource = "path"\npath = "steps-proj"\n'
                    'queries = "steps.jsonl"\nlanguages = ["python"]\n')
    return toml


def _spec(tmp: Path, mode: str) -> Path:
    script = tmp / "step_engine.py"
    script.write_text(ENGINE)
    spec = tmp / f"step-{mode}.json"
    spec.write_text(json.dumps({
        "name": "step", "spans": True,
        "search": {"command": [sys.executable, str(script), mode, "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    return spec


def test_an_engine_answering_worse_fails_the_gate_with_its_own_code(tmp_path: Path) -> None:
    toml = _corpus(tmp_path)
    for mode in ("good", "worse"):
        code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "work"),
                     "--corpus", "steps", "--engine", str(_spec(tmp_path, mode)),
                     "--json", str(tmp_path / f"{mode}.json")])
        assert code == 0
    old, new = (ResultFile.load(tmp_path / f"{m}.json") for m in ("good", "worse"))
    report = compare_to_baseline(new, old, metrics=WATCH, new_label="worse.json",
                                 old_label="good.json")
    hit = next(d for d in report.rows[0].metrics if d.metric == "file.hit@10")
    assert (hit.n, hit.old, hit.new) == (12, 1.0, pytest.approx(2 / 12))
    assert hit.test == "mcnemar" and hit.regression
    assert any(n.startswith("engine step: spec changed") for n in report.notes)
    with pytest.raises(RegressionFound) as caught:
        gate(report, fail_on_regression=True, max_drop=None)
    assert caught.value.exit_code == 5
    assert "step × steps (per_file=1): file.hit@10 1.000 → 0.167" in str(caught.value)
    # The good engine against itself, re-run: nothing to report.
    assert verdict(compare_to_baseline(old, old, metrics=WATCH), True, 0.0) == []
