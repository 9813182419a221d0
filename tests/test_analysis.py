"""analysis.py and rows.py: one per-query value everywhere, tiers, the suite summary.

Rows are built by `build_rows` from outcomes graded by the harness itself, so
what a row averages and what a paired test pairs come from the same place.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from synthetic_result import CUTOFFS, outcome, rows_of, spec

from codesearch_bench.protocol import PAIRED_METRICS
from codesearch_bench.results.schema import IndexOut, QueryOutcome, ResultFile, Row, SearchOut
from codesearch_bench.scoring import analysis, values
from codesearch_bench.scoring.rows import Pass, build_rows, comparisons
from codesearch_bench.scoring.summary import stratified_bootstrap


def test_a_flaky_engine_loses_in_the_paired_test_as_in_its_row(tmp_path: Path) -> None:
    steady, flaky = spec(tmp_path, "steady"), spec(tmp_path, "flaky")
    ranks: list[int | None] = [1] * 30
    rows = rows_of(steady, "c", ranks) + rows_of(flaky, "c", ranks,
                                                 failed=frozenset(range(0, 30, 2)))
    head = {r.engine: r for r in rows if r.headline}
    assert head["steady"].metrics["file.hit@10"].mean == 1.0
    assert head["flaky"].metrics["file.hit@10"].mean == 0.5
    found = {c.metric: c for c in comparisons(rows, ["steady", "flaky"])}
    hit = found["file.hit@10"]
    # Protocol 2 paired only the 15 answered queries and said p = 1.0.
    assert hit.n == 30 and hit.failed_a == 0 and hit.failed_b == 15 and hit.failed_either == 15
    assert hit.delta == pytest.approx(0.5) and hit.differing == 15
    assert hit.p == pytest.approx(2 / 2**15) and hit.p_adjusted is not None
    assert hit.p_adjusted < 0.05
    mrr = found["file.mrr"]
    assert mrr.n == 30 and mrr.p == pytest.approx(2 / 2**15) and mrr.exact
    for c in found.values():  # the pair reads the rows' own numbers
        a, b = head["steady"].metrics[c.metric], head["flaky"].metrics[c.metric]
        assert c.n == a.n == b.n
        assert c.delta == pytest.approx(a.mean - b.mean)  # type: ignore[operator]


def test_an_engine_that_answered_nothing_is_a_gap_not_the_end_of_the_pairs(
        tmp_path: Path) -> None:
    """A wholly failed cell has no metrics; it once took every pair and tier of its
    corpus with it. It is a gap there (failed combinations), the others still pair."""
    a, b, dead = spec(tmp_path, "a"), spec(tmp_path, "b"), spec(tmp_path, "dead")
    ranks: list[int | None] = [1, 2, None, 1, 3] * 6
    rows = (rows_of(a, "c", ranks) + rows_of(dead, "c", ranks, failed=frozenset(range(30)))
            + rows_of(b, "c", ranks[::-1]))
    found = comparisons(rows, ["a", "dead", "b"])
    assert found and {(c.engine_a, c.engine_b) for c in found} == {("a", "b")}
    stats = analysis.statistics(rows, order=["a", "dead", "b"])
    assert stats.tiers and all(e.engine != "dead" for t in stats.tiers for e in t.engines)


def test_comparisons_carry_power_and_exactness(tmp_path: Path) -> None:
    a, b = spec(tmp_path, "a"), spec(tmp_path, "b")
    rng = np.random.default_rng(2)
    ranks_a = [int(r) if r < 15 else None for r in rng.integers(1, 20, 45)]
    ranks_b = [int(r) if r < 12 else None for r in rng.integers(1, 20, 45)]
    rows = rows_of(a, "c", ranks_a) + rows_of(b, "c", ranks_b)
    found = {c.metric: c for c in comparisons(rows, ["a", "b"])}
    mrr, hit = found["file.mrr"], found["file.hit@10"]
    assert mrr.differing is not None and mrr.differing > 20 and mrr.exact is False
    assert hit.exact is True and hit.mdd_alpha == 0.05
    assert mrr.mdd is not None and 0 < mrr.mdd < 1 and hit.mdd is not None


def test_row_values_and_paired_values_are_the_same_list() -> None:
    outs = [outcome("q1", 2), outcome("q2", None, failed=True), outcome("q3", None)]
    outs.append(QueryOutcome(id="q4", error="no resolved gold for this query"))
    assert values.query_values(outs, "file.mrr") == [0.5, 0.0, 0.0, 0.0]
    assert values.query_values(outs, "zero_miss") == [0.0, 1.0, 1.0, 1.0]
    chunk = values.query_values(outs, "chunk.mrr")
    assert chunk[:3] == [0.5, 0.0, 0.0] and math.isnan(chunk[3])
    assert values.query_values(outs, "file.mrr", {"q1", "q4"}) == [0.5, 0.0]
    assert values.failed(outs) == [False, True, False, True]


def test_each_pass_records_its_own_command(tmp_path: Path) -> None:
    loaded = spec(tmp_path, "oneshot")
    outs = [outcome("q", 1)]
    search = SearchOut(mode="oneshot", command=["true", "q", "1"])
    passes = [Pass(1, outs, [0.1], command=["true", "q", "1"]),
              Pass(2, outs, [0.2], command=["true", "q", "2"]), Pass(3, outs, [0.3])]
    rows = build_rows(loaded, "c", Path("/t"), CUTOFFS, IndexOut(cached=False), search, passes)
    assert [r.search.command for r in rows] == [["true", "q", "1"], ["true", "q", "2"], None]
    assert [r.search.p50_s for r in rows] == [None, 0.2, 0.3]  # the headline's is the runner's
    persistent = spec(tmp_path, "server", mode="persistent")
    start = SearchOut(mode="persistent", command=["serve"])
    rows = build_rows(persistent, "c", Path("/t"), CUTOFFS, IndexOut(cached=False), start,
                      [Pass(1, outs, [0.1]), Pass(2, outs, [0.1])])
    assert [r.search.command for r in rows] == [["serve"], ["serve"]]  # one session serves both


def test_tiers_and_summary_from_rows(tmp_path: Path) -> None:
    good, fair, poor = spec(tmp_path, "good"), spec(tmp_path, "fair"), spec(tmp_path, "poor")
    rows: list[Row] = []
    for corpus, size in (("c1", 40), ("c2", 30)):
        rows += rows_of(good, corpus, [1] * size)
        rows += rows_of(fair, corpus, [1] * (size - 3) + [None] * 3)
        rows += rows_of(poor, corpus, [None] * (size - 5) + [1] * 5)
    stats = analysis.statistics(rows, ["good", "fair", "poor"])
    assert {(t.corpus, t.metric) for t in stats.tiers} == {
        (c, m) for c in ("c1", "c2") for m in PAIRED_METRICS}
    tier = next(t for t in stats.tiers if t.corpus == "c1" and t.metric == "file.hit@10")
    assert [(e.engine, e.letters, e.rank_lo, e.rank_hi) for e in tier.engines] == [
        ("good", "a", 1, 2), ("fair", "a", 1, 2), ("poor", "b", 3, 3)]
    assert tier.engines[1].mean == pytest.approx(37 / 40)

    summary = stats.summary
    assert summary is not None and summary.corpora == ["c1", "c2"]
    macro = {(m.engine, m.metric): m for m in summary.macro}
    fair_hit = macro[("fair", "file.hit@10")]
    assert fair_hit.corpora == ["c1", "c2"]
    assert fair_hit.mean == pytest.approx((37 / 40 + 27 / 30) / 2)
    strata = [values.query_values(r.queries, "file.hit@10") for r in rows
              if r.engine == "fair" and r.headline]
    assert (fair_hit.mean, fair_hit.lo, fair_hit.hi) == stratified_bootstrap(strata)
    pairs = {(p.metric, p.engine_a, p.engine_b): p for p in summary.pairs}
    assert (pairs[("file.hit@10", "good", "poor")].wins,
            pairs[("file.hit@10", "good", "poor")].losses) == (2, 0)
    good_fair = pairs[("file.hit@10", "good", "fair")]
    assert (good_fair.wins, good_fair.ties, good_fair.losses) == (0, 2, 0)
    assert good_fair.outcomes == {"c1": "tie", "c2": "tie"}
    # The result file carries them, and they survive a round trip.
    result = ResultFile(protocol_version="3", bench_version="0", created="now", environment={},
                        cutoffs=list(CUTOFFS), corpora={}, engines={}, rows=rows,
                        comparisons=[], failures=[]).model_copy(update=stats.as_update())
    again = ResultFile.model_validate_json(result.dumps())
    assert again.tiers == stats.tiers and again.summary == stats.summary


def test_statistics_on_a_subset_of_queries(tmp_path: Path) -> None:
    a, b = spec(tmp_path, "a"), spec(tmp_path, "b")
    rows = rows_of(a, "c", [1] * 20) + rows_of(b, "c", [1] * 10 + [None] * 10)
    keep = {f"c-{i:02d}" for i in range(10)}
    part = analysis.statistics(rows, ["a", "b"], queries=keep, group_label="split=dev")
    hit = next(c for c in part.comparisons if c.metric == "file.hit@10")
    assert hit.n == 10 and hit.delta == 0.0 and hit.p == 1.0 and hit.group == "split=dev"
    assert all(t.group == "split=dev" for t in part.tiers) and part.summary is None
    whole = next(c for c in analysis.statistics(rows, ["a", "b"]).comparisons
                 if c.metric == "file.hit@10")
    assert whole.n == 20 and whole.delta == 0.5
