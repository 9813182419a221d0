"""`!! coverage`: an engine that never returns a file of an extension holding gold.

A ctags-based engine never returns `.tsx` files (universal-ctags maps TypeScript
to `.ts` only); its misses there are a gap in what it indexes, and the row says so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.render.html import render_html
from codesearch_bench.render.markdown import render_markdown
from codesearch_bench.results.schema import CoverageGap, ResultFile
from codesearch_bench.run import comparison
from codesearch_bench.run.options import CompareOptions
from codesearch_bench.scoring.coverage import Extensions, extension

SOURCES = {
    "web/App.tsx": "export function App() {\n  return <main><Button /></main>;\n}\n",
    "web/Button.tsx": "export const Button = () => <button>press</button>;\n",
    "web/util.ts": "export function clamp(x: number) {\n  return Math.max(0, x);\n}\n",
    "web/api.ts": "export async function fetchUser(id: string) {\n  return id;\n}\n",
}

QUERIES = [
    {"id": "q1", "query": "where is the top level page component",
     "gold": [{"path": "web/App.tsx"}]},
    {"id": "q2", "query": "which component draws the press control",
     "gold": [{"path": "web/Button.tsx"}]},
    {"id": "q3", "query": "how is a number kept from going negative",
     "gold": [{"path": "web/util.ts"}]},
    {"id": "q4", "query": "how is a user loaded from the server", "gold": [{"path": "web/api.ts"}]},
]

# Answers every query with the files of the extensions named on its command line.
FAKE = '''
import json, sys
files = {"ts": ["web/util.ts", "web/api.ts"], "tsx": ["web/App.tsx", "web/Button.tsx"]}
hits = [{"path": p} for ext in sys.argv[1].split(",") for p in files[ext]]
print(json.dumps({"hits": hits}))
'''


@pytest.fixture
def web(tmp_path: Path) -> dict[str, Path]:
    for rel, text in SOURCES.items():
        (tmp_path / "proj" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "proj" / rel).write_text(text)
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.web]\nsource = "path"\npath = "proj"\nqueries = "q.jsonl"\n'
                    'languages = ["typescript"]\ndefault = true\n')
    (tmp_path / "fake.py").write_text(FAKE)
    specs = {}
    for name, exts in (("ts-only", "ts"), ("both", "ts,tsx")):
        specs[name] = tmp_path / f"{name}.json"
        specs[name].write_text(json.dumps({
            "name": name, "spans": False,
            "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", exts, "{{query}}"]},
            "parse": {"format": "json", "results": "hits"}}))
    return {"toml": toml, **specs}


def test_the_engine_that_never_returns_tsx_is_flagged_and_named(
    tmp_path: Path, web: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.json"
    assert main(["compare", "--corpora-file", str(web["toml"]), "--work", str(tmp_path / "w"),
                 "--engine", str(web["ts-only"]), "--engine", str(web["both"]),
                 "--json", str(out)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    result = ResultFile.load(out)
    rows = {r.engine: r for r in result.rows}
    assert "!! coverage" in rows["ts-only"].flags
    assert rows["ts-only"].coverage == [CoverageGap(extension=".tsx", queries=2, share=0.5)]
    assert "!! coverage" not in rows["both"].flags and rows["both"].coverage == []
    said = "never returned a .tsx file, where 2 queries (50%) have gold"
    assert f"!! coverage: ts-only × web: {said}" in shown
    assert "!! coverage: the engine never returned a file of an extension" in shown  # legend
    markdown = " ".join(render_markdown(result).split())
    assert f"`!! coverage` ts-only (per_file 1): {said}" in markdown
    assert "`!! coverage`: the engine never returned" in markdown
    (page,) = render_html(result, tmp_path / "html")
    html = " ".join(page.read_text().split())
    assert f"ts-only per_file=1: !! coverage: {said}" in html


def test_the_tally_is_made_as_the_cell_asks_so_a_spooled_cell_is_flagged_too(
    tmp_path: Path, web: dict[str, Path]
) -> None:
    # hold_outcomes=0: every cell's outcomes are held without slots and gold.
    outcome = comparison.execute(CompareOptions(
        engines=[web["ts-only"]], corpora_file=web["toml"], corpora_root=tmp_path / "corpora",
        work=tmp_path / "w", json_out=tmp_path / "slim.json", hold_outcomes=0))
    (row,) = outcome.result.rows
    assert all(not o.slots and not o.gold for o in row.queries)
    assert row.coverage == [CoverageGap(extension=".tsx", queries=2, share=0.5)]


def _tally(queries: int, gold_in_tsx: int, returned: list[str]) -> Extensions:
    seen = Extensions()
    for i in range(queries):
        seen.add(["web/a.tsx" if i < gold_in_tsx else "web/b.ts"], returned)
    return seen


@pytest.mark.parametrize(("queries", "gold_in_tsx", "flagged"), [
    (100, 3, True),  # 3 queries, though only 3%
    (100, 2, False),  # 2 queries and 2%: too few to say
    (30, 2, True),  # 2 queries, but 6.7% of them
    (40, 2, True),  # exactly 5%
    (41, 2, False),  # just under
])
def test_the_rule_five_percent_or_three_queries(queries: int, gold_in_tsx: int,
                                               flagged: bool) -> None:
    gaps = _tally(queries, gold_in_tsx, ["web/b.ts"]).gaps()
    assert [g.extension for g in gaps] == ([".tsx"] if flagged else [])


def test_one_returned_file_of_the_extension_anywhere_clears_it() -> None:
    seen = _tally(10, 5, ["web/b.ts"])
    seen.add(["web/b.ts"], ["web/b.ts", "web/deep/c.tsx"])  # once, on one query
    assert seen.gaps() == []


def test_nothing_returned_at_all_is_not_a_coverage_gap() -> None:
    assert _tally(10, 5, []).gaps() == []  # `!! empty` or errors=N says that


def test_gaps_are_ordered_by_queries_and_extensionless_files_name_no_kind() -> None:
    seen = Extensions()
    for gold in (["a.tsx"], ["b.tsx"], ["c.tsx"], ["d.mts"], ["e.mts"], ["Makefile"]):
        seen.add(gold, ["x.ts"])
    assert [(g.extension, g.queries) for g in seen.gaps()] == [(".tsx", 3), (".mts", 2)]
    assert [extension(p) for p in ("src/App.tsx", "Makefile", ".gitignore", "a/b.d.ts")] == [
        ".tsx", "", "", ".ts"]


def test_a_result_written_before_the_field_loads_without_it() -> None:
    golden = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"
    assert "coverage" not in golden.read_text()
    result = ResultFile.load(golden)
    assert result.rows and all(r.coverage == [] for r in result.rows)
