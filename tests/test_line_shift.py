"""The tool's own text against the tree's lines: probe names the line_base fix, compare stops.

An engine that counts lines from 0 while its spec says 1 scores every chunk one line
off; its text (parse.text) shows it. Tiny fake engines (fakes/shown_lines.py) answer the
mini corpus right, counted from 0, or with text found nowhere in the tree.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
from minicorpus import QUERIES, SOURCES, make_corpus
from rich.console import Console

from codesearch_bench.cli import main
from codesearch_bench.corpus.tree import TreeText
from codesearch_bench.model import Hit
from codesearch_bench.render.probe import render_probe
from codesearch_bench.results.probe import ProbeReport
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run.probe import ProbeOptions, probe
from codesearch_bench.scoring.lineshift import Shifts, Watch, place
from codesearch_bench.workdir import Where

SHOWN = Path(__file__).resolve().parent / "fakes" / "shown_lines.py"
PARSE = {"format": "json", "results": "hits", "start": "start", "end": "end", "text": "text"}


def engine(tmp: Path, mode: str, *, text: bool = True, **extra: object) -> Path:
    parse = dict(PARSE) if text else {k: v for k, v in PARSE.items() if k != "text"}
    data: dict[str, object] = {
        "name": mode, "spans": True, "per_file": [1, 2], "parse": parse,
        # per_file in the command: each pass is asked anew, not answered from the first.
        "search": {"command": [sys.executable, str(SHOWN), mode, "{{root}}", "{{query}}",
                               "{{per_file}}"], "timeout": "20s"}}
    data.update(extra)
    path = tmp / f"{mode}{'' if text else '-notext'}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def mini(tmp_path: Path) -> tuple[Path, Where]:
    toml = make_corpus(tmp_path)
    work = tmp_path / "work"
    return toml, Where(work=work, corpora_file=toml, corpora_root=work / "corpora")


def probed(tmp: Path, where: Where, spec: Path) -> ProbeReport:
    return probe(ProbeOptions(spec, where, root=tmp / "mini-proj", text=QUERIES[0]["query"]))


def shown(report: ProbeReport, width: int) -> str:
    out = io.StringIO()
    render_probe(Console(file=out, width=width, color_system=None), report)
    return out.getvalue()


def lines_warnings(report: ProbeReport) -> list[str]:
    return [w for w in report.warnings if w.startswith("lines:")]


# --- where one span's text is --------------------------------------------------------

@pytest.fixture
def tree(tmp_path: Path) -> TreeText:
    for rel, text in SOURCES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return TreeText(tmp_path)


def at(tree: TreeText, path: str, start: int, end: int) -> str:
    return "\n".join(tree.at(path, start, end) or [])


@pytest.mark.parametrize(("path", "start", "end"), [
    ("pkg/config.py", 4, 7), ("pkg/cells.py", 1, 3), ("pkg/cells.py", 6, 8),
    ("pkg/config.py", 11, 11)])
def test_a_span_text_is_placed_where_it_is(tree: TreeText, path: str, start: int,
                                           end: int) -> None:
    text = at(tree, path, start, end)
    assert place(Hit(path, start, end, text), tree) == "stated"
    assert place(Hit(path, start - 1, end - 1, text), tree) == "below"
    assert place(Hit(path, start + 1, end + 1, text), tree) == "above"
    assert place(Hit(path, start, end, "lorem ipsum dolor sit amet, consectetur"),
                 tree) == "elsewhere"


def test_a_snippet_that_fits_either_place_is_where_it_says(tree: TreeText) -> None:
    """A line from the middle of a span is inside it one line off as well: a tie is
    never held against the engine."""
    middle = at(tree, "pkg/config.py", 5, 5)
    assert place(Hit("pkg/config.py", 4, 7, middle), tree) == "stated"
    assert place(Hit("pkg/config.py", 3, 6, middle), tree) == "stated"


def test_what_cannot_be_compared_is_not(tree: TreeText) -> None:
    assert place(Hit("pkg/config.py", 4, 7, None), tree) is None
    assert place(Hit("pkg/config.py", None, None, "def load_settings(path):"), tree) is None
    assert place(Hit("pkg/nope.py", 1, 2, "def load_settings(path):"), tree) is None
    # A name on a span of several lines: equal to some few lines by chance, never a place.
    assert place(Hit("pkg/cells.py", 5, 7, "class Segment:"), tree) is None


def test_most_spans_one_off_name_the_fix() -> None:
    shifts = Shifts(stated=1, below=3)
    verdict = shifts.verdict(1)
    assert verdict is not None
    assert "one line below its stated lines on 3 of 4 spans" in verdict
    assert 'set "line_base": 0' in verdict
    assert 'set "line_base": 1' in (Shifts(above=2).verdict(0) or "")
    assert "no line_base value" in (Shifts(above=2).verdict(1) or "")
    assert Shifts(stated=2, below=2).verdict(1) is None  # half is not most
    assert Shifts(below=2, elsewhere=3).verdict(1) is None
    assert Shifts(below=2).verdict(1, at_least=3) is None


def test_a_watch_stops_counting_after_its_answers(tree: TreeText) -> None:
    text = at(tree, "pkg/config.py", 4, 7)
    watch = Watch(tree, answers=2)
    watch.add([Hit("pkg/config.py", 4, 7, None)])  # nothing to compare: not an answer seen
    assert watch.seen == 0
    for _ in range(4):
        watch.add([Hit("pkg/config.py", 3, 6, text), Hit("pkg/config.py", 3, 6, text)])
    assert watch.done and watch.seen == 2 and watch.shifts.below == 4


# --- bench probe ---------------------------------------------------------------------

def test_probe_of_a_right_engine_says_nothing_of_lines(
        tmp_path: Path, mini: tuple[Path, Where]) -> None:
    report = probed(tmp_path, mini[1], engine(tmp_path, "right"))
    assert [h.text_place for h in report.hits] == ["stated", "stated"]
    assert not lines_warnings(report)
    assert "ok" in shown(report, 80)


@pytest.mark.parametrize("width", [80, 200])
def test_probe_of_a_zero_based_engine_names_line_base_0(
        tmp_path: Path, mini: tuple[Path, Where], width: int) -> None:
    report = probed(tmp_path, mini[1], engine(tmp_path, "zero"))
    assert [h.text_place for h in report.hits] == ["below", "below"]
    (warning,) = lines_warnings(report)
    assert "below its stated lines on 2 of 2 spans" in warning and 'set "line_base": 0' in warning
    text = shown(report, width)
    assert 'set "line_base": 0' in " ".join(text.split())
    table = text[text.index("parsed hits"):text.index("lines: the tool")]
    assert max(len(line) for line in table.splitlines()) <= width


def test_probe_of_a_one_based_engine_claiming_zero_names_line_base_1(
        tmp_path: Path, mini: tuple[Path, Where]) -> None:
    report = probed(tmp_path, mini[1], engine(tmp_path, "right", line_base=0))
    (warning,) = lines_warnings(report)
    assert "one line above" in warning and 'set "line_base": 1' in warning


def test_probe_of_unrelated_text_claims_no_line_base(
        tmp_path: Path, mini: tuple[Path, Where]) -> None:
    report = probed(tmp_path, mini[1], engine(tmp_path, "unrelated"))
    assert [h.text_place for h in report.hits] == ["elsewhere", "elsewhere"]
    assert not lines_warnings(report)
    assert not any("line_base" in n for n in report.notes)
    assert any("nothing to say about its line numbers" in n for n in report.notes)


def test_probe_of_an_engine_without_text_says_nothing(
        tmp_path: Path, mini: tuple[Path, Where]) -> None:
    report = probed(tmp_path, mini[1], engine(tmp_path, "zero", text=False))
    assert all(h.text_place is None for h in report.hits)
    assert not lines_warnings(report)
    assert not any("line numbers" in n for n in report.notes)
    assert "lines: the tool" not in shown(report, 80)


# --- bench compare -------------------------------------------------------------------

def compare(toml: Path, tmp: Path, *engines: Path) -> tuple[int, ResultFile]:
    out = tmp / "out.json"
    args = ["compare", "--corpora-file", str(toml), "--work", str(tmp / "work"),
            "--json", str(out)]
    for e in engines:
        args += ["--engine", str(e)]
    code = main(args)
    return code, ResultFile.model_validate_json(out.read_text())


def test_compare_stops_a_zero_based_cell_with_the_fix(
        tmp_path: Path, mini: tuple[Path, Where], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    calls = tmp_path / "calls"
    monkeypatch.setenv("SHOWN_LINES_CALLS", str(calls))
    zero = engine(tmp_path, "zero")
    code, result = compare(mini[0], tmp_path, engine(tmp_path, "right"), zero)
    out = capsys.readouterr().out
    assert code == 2, out
    (failure,) = result.failures
    assert (failure.engine, failure.corpus, failure.stage) == ("zero", "mini", "spec")
    assert str(zero) in failure.message and 'set "line_base": 0' in failure.message
    assert 'set "line_base": 0' in " ".join(out.split())
    # No row of one-off spans; the right engine's rows stand.
    assert {r.engine for r in result.rows} == {"right"}
    assert all(not any("line" in f for f in r.flags) for r in result.rows)
    # Stopped after its headline pass: its per_file 2 pass was never asked.
    asked = calls.read_text().splitlines()
    assert len(asked) == 2 * len(QUERIES) + len(QUERIES)


@pytest.mark.parametrize("mode", ["unrelated", "right"])
def test_compare_goes_on_when_text_is_not_one_off(
        tmp_path: Path, mini: tuple[Path, Where], mode: str) -> None:
    code, result = compare(mini[0], tmp_path, engine(tmp_path, mode))
    assert code == 0 and not result.failures
    assert [r.per_file for r in result.rows] == [1, 2]


def test_compare_of_an_engine_without_text_keeps_the_line_zero_flag(
        tmp_path: Path, mini: tuple[Path, Where]) -> None:
    code, result = compare(mini[0], tmp_path, engine(tmp_path, "zero", text=False))
    assert code == 0 and not result.failures
    assert any(f.startswith("!! line_base=") for f in result.rows[0].flags)
