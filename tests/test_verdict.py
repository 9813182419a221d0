"""Twins are one engine; the verdict says who is better, by how much, where -- and the rest."""

from __future__ import annotations

from pathlib import Path

from synthetic_result import CUTOFFS, rows_of, spec

from codesearch_bench.results.schema import ResultFile, Row
from codesearch_bench.scoring import analysis
from codesearch_bench.scoring.verdict import sentences, verdict


def _result(rows: list[Row], engines: list[str]) -> ResultFile:
    stats = analysis.statistics(rows, engines)
    return ResultFile(protocol_version="5", bench_version="0", created="now", environment={},
                      cutoffs=list(CUTOFFS), corpora={}, engines={}, rows=rows, comparisons=[],
                      failures=[]).model_copy(update=stats.as_update())


def test_twins_on_every_corpus_are_one_engine_and_leave_the_holm_family(tmp_path: Path) -> None:
    good, twin, poor = spec(tmp_path, "good"), spec(tmp_path, "twin"), spec(tmp_path, "poor")
    rows: list[Row] = []
    for corpus in ("c1", "c2"):
        ranks: list[int | None] = [1] * 30 + [None] * 10
        rows += rows_of(good, corpus, ranks) + rows_of(twin, corpus, ranks)
        rows += rows_of(poor, corpus, [None] * 30 + [1] * 10)
    result = _result(rows, ["good", "twin", "poor"])
    assert {(t.engine, t.twin_of) for t in result.twins} == {("twin", "good")}
    assert all("twin" not in (c.engine_a, c.engine_b) for c in result.comparisons)
    # Three engines would make three pairs per metric; without the twin, one: Holm's level
    # is the plain one, so the adjusted p is the raw p.
    hit = next(c for c in result.comparisons if c.metric == "file.hit@10" and c.corpus == "c1")
    assert hit.p_adjusted == hit.p
    tier = next(t for t in result.tiers if t.corpus == "c1" and t.metric == "file.hit@10")
    letters = {e.engine: e.letters for e in tier.engines}
    assert letters["twin"] == letters["good"] != letters["poor"]
    said = sentences(verdict(result))
    assert said[0].startswith("twin answers exactly as good on 2 corpus(es)")
    assert any(line.startswith("questions: good beats poor on file.hit@10 by +0.500 on 2 of 2 "
                               "corpora (c1, c2)") for line in said), said


def test_equal_on_one_corpus_only_is_a_coincidence_not_a_twin(tmp_path: Path) -> None:
    a, b = spec(tmp_path, "a"), spec(tmp_path, "b")
    rows = rows_of(a, "tiny", [1, 1]) + rows_of(b, "tiny", [1, 1])
    rows += rows_of(a, "big", [1] * 20 + [None] * 20) + rows_of(b, "big", [None] * 20 + [1] * 20)
    result = _result(rows, ["a", "b"])
    assert result.twins == []
    assert {c.corpus for c in result.comparisons} == {"tiny", "big"}


def test_pairs_that_differ_nowhere_are_said_with_what_the_run_could_detect(
        tmp_path: Path) -> None:
    a, b = spec(tmp_path, "a"), spec(tmp_path, "b")
    ranks: list[int | None] = [1, 2, None, 1, 3] * 8
    rows = rows_of(a, "c1", ranks) + rows_of(b, "c1", ranks[1:] + ranks[:1])
    result = _result(rows, ["a", "b"])
    found = verdict(result)
    assert not found.findings and found.undetected
    mdds = [c.mdd for c in result.comparisons if c.mdd is not None]
    quiet = next(u for u in found.undetected if u.metric == "file.mrr")
    assert quiet.compared == 1 and quiet.mdd_lo in mdds
    (line,) = sentences(found)
    assert line.startswith("questions: a vs b: no significant difference on file.hit@10 (MDD")
    assert "smaller differences than the MDD may exist" in line
