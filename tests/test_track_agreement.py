"""The needle tracks in every view: validity counts from the generation record, and
Kendall's tau-b between the tracks' engine orders, equal to scipy's, ties included.

The result is two corpora, each with a questions and a needles track, over four
and three engines, its rows built by the harness from generated outcomes
(tests/synthetic_result.py).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from scipy.stats import kendalltau
from synthetic_result import rows_of, spec

from codesearch_bench.protocol import CHUNK_RECALL, FILE_MRR
from codesearch_bench.render.html.pages import render_page
from codesearch_bench.render.markdown import render_markdown
from codesearch_bench.render.table import render_compare
from codesearch_bench.results.schema import CorpusOut, EngineOut, ResultFile, Row
from codesearch_bench.scoring.agreement import (
    Pairs,
    kendall_tau_b,
    pairs,
    pooled,
    track_agreement,
)

ENGINES = ("alpha", "beta", "gamma", "delta")

# Per unit and engine, the slot each query's gold lands in (None: not in the top 24).
# Ranks past 10 miss chunk recall@10 but still count for MRR; beta and gamma tie on
# c1's needles, and on c2's needles every engine but one ties on chunk recall.
RANKS: dict[str, dict[str, list[int | None]]] = {
    "c1": {"alpha": [1, 1, 2, 1, None, 3], "beta": [2, 3, 1, None, 4, 2],
           "gamma": [5, None, 6, 2, 1, 9], "delta": [12, None, None, 15, 3, None]},
    "c1:needles": {"alpha": [2, 1, 1, 4, 1, 3], "beta": [1, 5, None, 2, 3, 1],
                   "gamma": [1, 5, None, 2, 3, 1], "delta": [1, 11, None, 3, 12, 2]},
    "c2": {"alpha": [1, 2, None, 1, 3], "beta": [3, 1, 1, 2, 1], "gamma": [None, 7, 2, 9, 4]},
    "c2:needles": {"alpha": [4, 1, 2, 3, 12], "beta": [1, 2, 3, 4, 11],
                   "gamma": [11, 12, 13, 2, 1]},
}

RECORDS: dict[str, dict[str, Any]] = {
    "c1:needles": {"key": "k1", "candidates": 40, "kept": 25,
                   # not in alphabetical order: the record's own order is shown
                   "dropped": {"summary too short": 9, "boilerplate summary": 6}},
    "c2:needles": {"key": "k2", "candidates": 31, "kept": 17, "named": 3,
                   "dropped": {"a rule bench does not know yet": 7,
                               "summary names the definition": 4}},
}


def _corpus(unit: str) -> CorpusOut:
    base, _, track = unit.partition(":")
    return CorpusOut(name=unit, pin="p", identity="i", tree=f"/nowhere/{unit}", files=3,
                     tier="small", languages={"python": 3}, queries=len(RANKS[unit]["alpha"]),
                     query_set="q", query_set_sha256="0" * 64, track=track or "questions",
                     corpus=base, track_info=RECORDS.get(unit))


def _result(tmp_path: Path, drop: frozenset[tuple[str, str]] = frozenset()) -> ResultFile:
    specs = {e: spec(tmp_path, e) for e in ENGINES}
    rows: list[Row] = []
    for unit, by_engine in RANKS.items():
        track = "needles" if unit.endswith(":needles") else "questions"
        for engine, ranks in by_engine.items():
            if (unit, engine) in drop:
                continue
            made = [r.model_copy(update={"track": track})
                    for r in rows_of(specs[engine], unit, ranks)]
            # The extra per_file pass is never read: give it numbers that would move tau.
            other = "delta" if engine == "alpha" else "alpha"
            if other in by_engine:
                donor = rows_of(specs[other], unit, by_engine[other])[1]
                made[1] = made[1].model_copy(update={"metrics": donor.metrics})
            rows += made
    return ResultFile(
        protocol_version="4", bench_version="0", created="now", environment={},
        cutoffs=[5, 10, 20], corpora={u: _corpus(u) for u in RANKS},
        engines={e: EngineOut(name=e, spec_file=f"{e}.json", spec_sha256="0" * 64,
                              version=None, mode="oneshot", requires=None) for e in ENGINES},
        rows=rows, comparisons=[], failures=[])


def _means(result: ResultFile, unit: str, metric: str) -> list[float]:
    by = {r.engine: r.metrics[metric].mean for r in result.rows
          if r.corpus == unit and r.headline}
    return [m for e in ENGINES if (m := by.get(e)) is not None]


def _scipy(result: ResultFile, base: str, metric: str) -> float:
    found = kendalltau(_means(result, base, metric), _means(result, f"{base}:needles", metric))
    return float(found.statistic)


@pytest.fixture
def no_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Figures take seconds to draw and have their own tests (test_plots.py)."""
    monkeypatch.setattr("codesearch_bench.render.html.pages.figures",
                        lambda result: ({}, "figures left out by this test"))


# -- tau-b itself


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=12))
def test_tau_b_equals_scipy_with_ties(points: list[tuple[int, int]]) -> None:
    x, y = [float(a) for a, _ in points], [float(b) for _, b in points]
    ours = kendall_tau_b(x, y)
    theirs = float(kendalltau(x, y).statistic)
    if ours is None:
        assert theirs != theirs  # scipy: nan when either side is constant
    else:
        assert ours == pytest.approx(theirs, abs=1e-12)


def test_tau_b_of_tied_sequences_by_hand() -> None:
    # pairs: (1,2) tied in x; (1,3),(2,3) concordant; n0 - n1 = 2, n0 - n2 = 3
    assert kendall_tau_b([1, 1, 2], [1, 2, 3]) == pytest.approx(2 / 6 ** 0.5)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == -1
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None
    with pytest.raises(ValueError, match="different lengths"):
        pairs([1, 2], [1])


def test_pooled_counts_pairs_within_each_corpus_only() -> None:
    same, reversed_ = pairs([1, 2, 3], [1, 2, 3]), pairs([1, 2, 3], [3, 2, 1])
    assert (same + reversed_).tau == 0
    assert (same + same).tau == 1
    assert Pairs().tau is None


# -- agreement from a result


def test_tau_per_corpus_equals_scipy_on_the_headline_rows(tmp_path: Path) -> None:
    result = _result(tmp_path)
    found = {a.corpus: a for a in track_agreement(result)}
    assert list(found) == ["c1", "c2"]
    assert found["c1"].of(FILE_MRR).engines == ENGINES
    assert found["c2"].of(FILE_MRR).engines == ENGINES[:3]
    # the fixture's ties are real: one track orders some pair as equal
    needles = _means(result, "c1:needles", FILE_MRR)
    assert len(set(needles)) < len(needles)
    for corpus in ("c1", "c2"):
        for metric in (FILE_MRR, CHUNK_RECALL):
            tau = found[corpus].of(metric).tau
            assert tau is not None
            assert tau == pytest.approx(_scipy(result, corpus, metric), abs=1e-12)
    assert found["c1"].of(FILE_MRR).tau != found["c2"].of(FILE_MRR).tau


def test_pooled_over_corpora(tmp_path: Path) -> None:
    found = track_agreement(_result(tmp_path))
    pool = pooled(found, FILE_MRR)
    assert pool is not None and pool.corpora == 2
    summed = found[0].of(FILE_MRR).pairs + found[1].of(FILE_MRR).pairs
    assert pool.tau == summed.tau
    assert pooled(found[:1], FILE_MRR) is None  # one corpus: its own line says it


@pytest.mark.usefixtures("no_figures")
def test_fewer_than_three_engines_in_common_give_no_tau(tmp_path: Path) -> None:
    result = _result(tmp_path, drop=frozenset({("c2:needles", "gamma")}))
    c2 = next(a for a in track_agreement(result) if a.corpus == "c2")
    assert c2.of(FILE_MRR).engines == ("alpha", "beta")
    assert c2.of(FILE_MRR).tau is None
    assert "n/a (2 engines)" in render_markdown(result)
    assert "n/a (2 engines)" in _terminal(result, terminal=True)
    assert "n/a (2 engines)" in render_page(result)
    # and the pooled line then rests on c1 alone, so it is not given
    assert pooled(track_agreement(result), FILE_MRR) is None


# -- the three views


def _terminal(result: ResultFile, *, terminal: bool, width: int = 200) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=terminal, color_system=None,
                      legacy_windows=False)
    render_compare(console, result)
    return buf.getvalue()


def _taus(result: ResultFile) -> list[str]:
    return [f"{a.of(m).tau:+.2f} ({len(a.of(m).engines)} engines)"
            for a in track_agreement(result) for m in (FILE_MRR, CHUNK_RECALL)]


@pytest.mark.parametrize("terminal", [True, False])
def test_terminal_shows_validity_and_tau_within_80_columns(tmp_path: Path,
                                                           terminal: bool) -> None:
    result = _result(tmp_path)
    text = _terminal(result, terminal=terminal)
    block = text[text.index("needle validity"):]
    assert "c1:needles: 40 generated, 15 dropped, 25 kept" in block
    assert "summary too short: 9; boilerplate summary: 6" in block
    assert "c2:needles: 31 generated, 11 dropped, 3 named, 17 kept" in block
    assert "a rule bench does not know yet: 7" in block
    for cell in _taus(result):
        assert cell in block
    assert "pooled" in block and "(2 corpora)" in block
    part = block.split("file@10 / chunk@10:")[0]  # the legend after it is the tables'
    assert max(len(line) for line in part.splitlines()) <= 80, part


def test_markdown_has_both_tables(tmp_path: Path) -> None:
    result = _result(tmp_path)
    md = render_markdown(result)
    section = md[md.index("### Needle tracks"):]
    assert "| track | generated | dropped | by rule | named | kept |" in section
    assert ("| c1:needles | 40 | 15 | summary too short: 9; boilerplate summary: 6 | ? | 25 |"
            in section)
    assert "| c2:needles | 31 | 11 | a rule bench does not know yet: 7; summary names the " \
        "definition: 4 | 3 | 17 |" in section
    assert "| corpus | τ file MRR | τ chunk@10 |" in section
    for cell in _taus(result):
        assert cell in section


@pytest.mark.usefixtures("no_figures")
def test_html_has_both_tables(tmp_path: Path) -> None:
    result = _result(tmp_path)
    page = render_page(result)
    section = page[page.index('<section id="needle-tracks"'):]
    section = section[:section.index("</section>")]
    assert 'href="#needle-tracks"' in page
    for text in ("<b>c1:needles</b>", ">40<", ">15<", ">25<", "<li>summary too short: 9</li>",
                 "<li>a rule bench does not know yet: 7</li>", ">3<", ">17<"):
        assert text in section, text
    assert section.index("summary too short") < section.index("boilerplate summary")
    for cell in _taus(result):
        assert cell in section


def test_a_record_that_cannot_be_read_is_named_not_guessed(tmp_path: Path) -> None:
    result = _result(tmp_path)
    bad = result.corpora["c1:needles"].model_copy(update={"track_info": {
        "candidates": "many", "dropped": {"summary too short": -1}}})
    result = result.model_copy(update={"corpora": {**result.corpora, "c1:needles": bad}})
    text = _terminal(result, terminal=False)
    assert "c1:needles: ? generated, ? dropped, ? kept" in text
    assert "!! track_info.candidates is 'many', not a count" in text
    assert "!! track_info.kept is missing" in text
    assert "track_info.dropped['summary too short'] is -1, not a count" in render_markdown(
        result)


def test_no_generated_track_no_section(tmp_path: Path) -> None:
    result = _result(tmp_path)
    result = result.model_copy(update={
        "corpora": {u: c for u, c in result.corpora.items() if c.track == "questions"},
        "rows": [r for r in result.rows if r.track == "questions"]})
    assert "needle validity" not in _terminal(result, terminal=True)
    assert "Needle tracks" not in render_markdown(result)
