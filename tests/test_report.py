"""`bench report`: Markdown/JSON views, side-by-side refusal, shards and merging."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
FAULTY = Path(__file__).resolve().parent / "fakes" / "faulty.py"


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    toml = make_corpus(tmp_path, "mini")
    make_corpus(tmp_path, "other")
    fake = tmp_path / "fake.json"
    fake.write_text(json.dumps({
        "name": "fake", "spans": True,
        "search": {"command": [sys.executable, str(FAULTY), "ok", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"},
    }))
    return {"toml": toml, "fake": fake, "grep": REPO / "engines" / "grep.json",
            "work": tmp_path / "work", "tmp": tmp_path}


def compare(s: dict[str, Path], out: Path, *extra: str) -> int:
    return main(["compare", "--corpora-file", str(s["toml"]), "--work", str(s["work"]),
                 "--corpus", "mini,other", "--engine", str(s["grep"]), "--engine",
                 str(s["fake"]), "--json", str(out), *extra])


def quality(path: Path) -> dict[tuple[str, str, int], dict[str, float | None]]:
    result = ResultFile.model_validate_json(path.read_text())
    return {(r.engine, r.corpus, r.per_file): {k: v.mean for k, v in r.metrics.items()}
            for r in result.rows}


def test_two_shards_merged_equal_the_unsharded_run(setup: dict[str, Path]) -> None:
    tmp = setup["tmp"]
    assert compare(setup, tmp / "all.json") == 0
    assert compare(setup, tmp / "s1.json", "--shard", "1/2") == 0
    assert compare(setup, tmp / "s2.json", "--shard", "2/2") == 0
    s1, s2 = quality(tmp / "s1.json"), quality(tmp / "s2.json")
    assert s1 and s2 and not set(s1) & set(s2)  # disjoint, both non-empty
    code = main(["report", "--merge", str(tmp / "s1.json"), str(tmp / "s2.json"),
                 "-o", str(tmp / "merged.json")])
    assert code == 0
    assert quality(tmp / "merged.json") == quality(tmp / "all.json")
    merged = ResultFile.model_validate_json((tmp / "merged.json").read_text())
    unsharded = ResultFile.model_validate_json((tmp / "all.json").read_text())
    key = [(c.corpus, c.metric, c.engine_a, c.engine_b, c.delta, c.p_adjusted)
           for c in merged.comparisons]
    assert key == [(c.corpus, c.metric, c.engine_a, c.engine_b, c.delta, c.p_adjusted)
                   for c in unsharded.comparisons]
    assert len(merged.environment["merged_from"]) == 2


def test_merge_reports_missing_and_duplicated_cells(
    setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp = setup["tmp"]
    assert compare(setup, tmp / "s1.json", "--shard", "1/2") == 0
    code = main(["report", "--merge", str(tmp / "s1.json"), "-o", str(tmp / "m.json")])
    assert code == 1
    assert "missing cell" in capsys.readouterr().err
    code = main(["report", "--merge", str(tmp / "s1.json"), str(tmp / "s1.json"),
                 "-o", str(tmp / "m.json")])
    assert code == 2
    assert "duplicated cells" in capsys.readouterr().err


def test_refuses_different_query_sets_and_protocols(
    setup: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    tmp = setup["tmp"]
    assert compare(setup, tmp / "a.json") == 0
    data = json.loads((tmp / "a.json").read_text())
    data["corpora"]["mini"]["query_set_sha256"] = "0" * 64
    (tmp / "b.json").write_text(json.dumps(data))
    assert main(["report", str(tmp / "a.json"), str(tmp / "b.json")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "different query sets" in err and "a.json" in err and "b.json" in err
    data = json.loads((tmp / "a.json").read_text())
    data["protocol_version"] = "0"
    (tmp / "c.json").write_text(json.dumps(data))
    assert main(["report", str(tmp / "a.json"), str(tmp / "c.json")]) == 2
    assert "different protocol versions" in capsys.readouterr().err
    data = json.loads((tmp / "a.json").read_text())
    data["engines"]["fake"]["spec_sha256"] = "f" * 64
    (tmp / "d.json").write_text(json.dumps(data))
    assert main(["report", "--merge", str(tmp / "a.json"), str(tmp / "d.json"),
                 "-o", str(tmp / "x.json")]) == 2
    assert "means different specs" in capsys.readouterr().err


def test_markdown_and_json_views(setup: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                 ) -> None:
    tmp = setup["tmp"]
    assert compare(setup, tmp / "a.json") == 0
    capsys.readouterr()
    assert main(["report", str(tmp / "a.json"), "--format", "md", "--out",
                 str(tmp / "a.md")]) == 0
    md = (tmp / "a.md").read_text()
    assert "### mini: 3 files (small), 4 queries" in md
    assert "| **grep** | a | 1 | oneshot |" in md
    assert "Paired comparisons" in md and "<sub>codesearch-bench" in md
    capsys.readouterr()
    assert main(["report", str(tmp / "a.json"), "--format", "json"]) == 0
    again = ResultFile.model_validate_json(capsys.readouterr().out)
    assert quality(tmp / "a.json") == {(r.engine, r.corpus, r.per_file): {
        k: v.mean for k, v in r.metrics.items()} for r in again.rows}


def test_json_is_a_summary_unless_all_queries_are_asked_for(
        setup: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    tmp = setup["tmp"]
    assert compare(setup, tmp / "a.json") == 0
    whole = json.loads((tmp / "a.json").read_text())
    capsys.readouterr()
    assert main(["report", str(tmp / "a.json"), "--format", "json"]) == 0
    short = json.loads(capsys.readouterr().out)
    assert all(r["queries"] for r in whole["rows"])
    assert [r["queries"] for r in short["rows"]] == [[] for _ in whole["rows"]]
    # Everything but the per-query outcomes, as the file has it.
    strip = [{k: v for k, v in r.items() if k != "queries"} for r in whole["rows"]]
    assert [{k: v for k, v in r.items() if k != "queries"} for r in short["rows"]] == strip
    for key in ("comparisons", "corpora", "engines", "tiers", "summaries", "failures"):
        assert short[key] == whole[key], key
    assert main(["report", str(tmp / "a.json"), "--format", "json", "--all-queries",
                 "--out", str(tmp / "all.json")]) == 0
    assert json.loads((tmp / "all.json").read_text()) == whole
    assert "--all-queries" in " ".join(_help(["report", "--help"], capsys).split())


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 0
    return capsys.readouterr().out


def test_not_a_result_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    assert main(["report", str(bad)]) == 2
    assert "not a codesearch-bench result file" in capsys.readouterr().err


def test_png_report_writes_the_four_plots(setup: dict[str, Path]) -> None:
    pytest.importorskip("matplotlib", reason="plots are the optional `plots` extra")
    tmp = setup["tmp"]
    assert compare(setup, tmp / "a.json") == 0
    assert main(["report", str(tmp / "a.json"), "--format", "png", "--out",
                 str(tmp / "png")]) == 0
    names = sorted(p.name for p in (tmp / "png").glob("*.png"))
    assert names == sorted(f"{c}-{k}.png" for c in ("mini", "other")
                           for k in ("budget", "pareto", "scores", "timing"))
