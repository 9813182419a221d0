"""report/plots.py: the token-budget curve, the Pareto front, and the PNGs themselves."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
from pathlib import Path

import pytest
from minicorpus import QUERIES, SOURCES

from codesearch_bench.cli import main
from codesearch_bench.errors import UsageError
from codesearch_bench.render.plots import BUDGETS, budget_curve, pareto_front, render_plots
from codesearch_bench.results.schema import (
    CorpusOut,
    EngineOut,
    Estimate,
    Failure,
    IndexOut,
    QueryOutcome,
    ResultFile,
    Row,
    SearchOut,
)

REPO = Path(__file__).resolve().parent.parent
HAS_MPL = importlib.util.find_spec("matplotlib") is not None
needs_mpl = pytest.mark.skipif(not HAS_MPL, reason="matplotlib (the `plots` extra) not installed")
KINDS = ("scores", "timing", "pareto", "budget")


def outcome(qid: str, ttfg: int | None, *, entered: bool = True,
            error: str | None = None) -> QueryOutcome:
    return QueryOutcome(id=qid, tokens_to_first_gold=ttfg, chunk_entered=entered, error=error,
                        latency_s=0.01)


def est(mean: float | None, spread: float = 0.1) -> Estimate:
    if mean is None:
        return Estimate(mean=None, lo=None, hi=None, n=0)
    return Estimate(mean=mean, lo=max(0.0, mean - spread), hi=min(1.0, mean + spread), n=4)


def row(engine: str, queries: list[QueryOutcome], *, corpus: str = "mini", per_file: int = 1,
        headline: bool = True, token_column: str = "text", chunk: bool = True,
        mode: str = "oneshot", cached: bool = False, p50: float | None = 0.05,
        recall: float = 0.6) -> Row:
    metrics = {}
    for k in (5, 10, 20):
        metrics[f"file.recall@{k}"] = est(min(1.0, recall + k / 100))
        if chunk:
            metrics[f"chunk.recall@{k}"] = est(recall / 2 + per_file / 20)
    metrics["file.mrr"] = est(recall / 1.5)
    if chunk:
        metrics["chunk.mrr"] = est(recall / 3)
    return Row(
        engine=engine, corpus=corpus, per_file=per_file, headline=headline, tree="/t",
        k=[5, 10, 20], n=60, spans=chunk, token_column=token_column,  # type: ignore[arg-type]
        index=IndexOut(cached=cached, wall_s=None if cached else 1.5,
                       peak_rss_bytes=None if cached else 80 * 2**20, command=["idx"]),
        search=SearchOut(mode=mode, p50_s=p50, p95_s=None if p50 is None else p50 * 1.6,  # type: ignore[arg-type]
                         peak_rss_bytes=40 * 2**20 if mode == "persistent" else None),
        metrics=metrics, flags=[] if chunk else ["chunk_not_entered"],
        errors=sum(q.error is not None for q in queries), queries=queries)


# --- budget_curve and pareto_front (pure, no matplotlib) -------------------------------


def test_budget_curve_counts_first_gold_within_each_budget() -> None:
    queries = [
        outcome("a", 100),                       # within every budget
        outcome("b", 600),                       # from 1k on
        outcome("c", None),                      # gold chunk never shown: not found
        outcome("d", None, error="timeout"),     # failed: not found, still counted
        outcome("e", 50, entered=False),         # file-level gold: left out entirely
        outcome("f", 16000),                     # exactly on the last budget: counts
        outcome("g", 300, error="crashed"),      # a failed query never counts as found
    ]
    curve = budget_curve(row("x", queries))
    assert curve == pytest.approx([1 / 6, 1 / 6, 2 / 6, 2 / 6, 2 / 6, 2 / 6, 3 / 6])
    assert len(curve) == len(BUDGETS)
    assert budget_curve(row("x", queries), [99, 100, 20000]) == pytest.approx([0, 1 / 6, 3 / 6])


def test_budget_curve_is_monotone_and_empty_when_nothing_applies() -> None:
    queries = [outcome(str(i), t) for i, t in enumerate([10, 900, 3000, None, 70000])]
    curve = budget_curve(row("x", queries))
    assert curve == sorted(curve) and curve[-1] == pytest.approx(3 / 5)
    assert budget_curve(row("x", queries, token_column="none")) == []
    assert budget_curve(row("x", [outcome("a", None, entered=False)])) == []
    assert budget_curve(row("x", [])) == []


def test_pareto_front_keeps_the_undominated_points() -> None:
    pts = [(0.1, 0.5), (0.05, 0.4), (0.2, 0.9), (0.3, 0.8), (0.05, 0.3), (0.2, 0.9)]
    assert pareto_front(pts) == [(0.05, 0.4), (0.1, 0.5), (0.2, 0.9)]
    assert pareto_front([]) == []


def test_missing_matplotlib_is_a_usage_error_with_the_install_hint(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(UsageError) as info:
        render_plots(_result(), tmp_path)
    assert "pip install 'codesearch-bench[plots]'" in str(info.value)
    assert info.value.exit_code == 2
    assert not list(tmp_path.iterdir())


# --- rendering -------------------------------------------------------------------------


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _result() -> ResultFile:
    qs = [outcome(f"q{i}", t) for i, t in enumerate([120, 800, 2500, None, 9000])]
    rows = [
        row("grep", qs, p50=0.06, recall=0.7),
        row("grep", qs, per_file=2, headline=False, p50=0.065, recall=0.7),
        row("bm25-persistent", qs, mode="persistent", p50=0.002, recall=0.8, cached=True),
        row("symbols", [outcome(q.id, None, entered=False) for q in qs], chunk=False,
            token_column="none", p50=0.2, recall=0.4),
    ]
    return ResultFile(
        protocol_version="1", bench_version="0", created="2025-01-01T00:00:00Z",
        environment={}, cutoffs=[5, 10, 20],
        corpora={name: CorpusOut(name=name, pin="p", identity="i", tree="/t", files=3,
                                 tier="small", languages={"python": 3}, queries=5,
                                 query_set="q", query_set_sha256="0" * 64)
                 for name in ("mini", "broken corpus")},
        engines={e: EngineOut(name=e, spec_file=f"{e}.json", spec_sha256="0" * 64,
                              version=None, mode="oneshot", requires=None)
                 for e in ("grep", "bm25-persistent", "symbols", "dead")},
        rows=rows, comparisons=[],
        failures=[Failure(engine="dead", corpus="mini", stage="index", message="exploded"),
                  Failure(engine="grep", corpus="broken corpus", stage="setup",
                          message="corpus download failed")],
    )


@needs_mpl
def test_render_plots_writes_one_png_per_plot_per_corpus(tmp_path: Path) -> None:
    out = tmp_path / "png"
    paths = render_plots(_result(), out)
    expected = [out / f"{c}-{k}.png" for c in ("mini", "broken_corpus") for k in KINDS]
    assert paths == expected
    for path in paths:
        width, height = png_size(path)
        assert width == 900, path  # README width
        assert 300 <= height <= 1300, (path, height)


@needs_mpl
def test_render_plots_from_a_real_compare(tmp_path: Path) -> None:
    """A tiny `bench compare` through the CLI (grep, a span-less fake, a broken engine)."""
    proj = tmp_path / "proj"
    for rel, text in SOURCES.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.mini]\nsource = "path"\npath = "proj"\n'
                    'queries = "queries.jsonl"\nlanguages = ["python"]\ndefault = true\n')
    (tmp_path / "fake.py").write_text(
        "import json\nprint(json.dumps({'hits': [{'path': 'pkg/config.py'}]}))\n")
    fake = tmp_path / "files.json"
    fake.write_text(json.dumps({
        "name": "files-only", "spans": False,
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits"}}))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({
        "name": "broken", "spans": True,
        "index": {"command": [sys.executable, "-c", "import sys; sys.exit(2)"]},
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    out_json = tmp_path / "out.json"
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "work"),
                 "--corpora-root", str(tmp_path / "work" / "corpora"), "--json", str(out_json),
                 "--engine", str(REPO / "engines" / "grep.json"), "--engine", str(fake),
                 "--engine", str(broken)])
    assert code == 1  # the broken engine is a failed combination
    result = ResultFile.model_validate_json(out_json.read_text())
    assert {f.engine for f in result.failures} == {"broken"}
    grep = next(r for r in result.rows if r.engine == "grep" and r.headline)
    curve = budget_curve(grep)
    assert len(curve) == len(BUDGETS) and curve == sorted(curve)
    assert budget_curve(next(r for r in result.rows if r.engine == "files-only")) == []
    paths = render_plots(result, tmp_path / "png")
    assert [p.name for p in paths] == [f"mini-{k}.png" for k in KINDS]
    assert all(png_size(p)[0] == 900 for p in paths)
