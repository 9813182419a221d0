"""Compare's progress: in a terminal a live line counting searches in words; piped or
under CI a plain line each tenth of the work or every ten seconds, never two within two."""

from __future__ import annotations

import io
import itertools
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from minicorpus import make_corpus
from rich.console import Console

from codesearch_bench.cli import main
from codesearch_bench.render import progress
from codesearch_bench.run.plan import Workload, workload

REPO = Path(__file__).resolve().parent.parent
LINE = re.compile(r"progress: ([\d,]+)/([\d,]+) searches \((\d+)%\)(?:, ([\d.,]+)/s)?"
                  r"(?:, ETA (.+))?$")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0  # a monotonic clock starts anywhere

    def __call__(self) -> float:
        return self.now


def plain(searches: int) -> tuple[progress.PlainProgress, Clock, io.StringIO]:
    clock, out = Clock(), io.StringIO()
    bar = progress.PlainProgress(Console(file=out, width=200, emoji=False), clock)
    bar.planned(Workload(cells=1, searches=searches, tracks=1, queries=searches, engines=1,
                         passes=(1, 1)))
    return bar, clock, out


def run(searches: int, every: float) -> list[tuple[float, str]]:
    """Each search taking `every` seconds: (when, line) for each progress line printed."""
    bar, clock, out = plain(searches)
    start = clock.now
    lines: list[tuple[float, str]] = []
    for _ in range(searches):
        clock.now += every
        before = out.getvalue()
        bar.tick("q")
        new = out.getvalue()[len(before):].strip()
        if new:
            lines.append((round(clock.now - start, 6), new))
    return lines


def parsed(line: str) -> tuple[int, int, int, str | None, str | None]:
    m = LINE.match(line)
    assert m, line
    done, total, pct, rate, eta = m.groups()
    return int(done.replace(",", "")), int(total.replace(",", "")), int(pct), rate, eta


def test_a_line_at_each_tenth_when_tenths_come_faster_than_ten_seconds() -> None:
    lines = run(100, 0.4)  # a tenth every 4 s
    assert [when for when, _ in lines] == pytest.approx([4.0 * k for k in range(1, 11)])
    assert [parsed(line)[:3] for _, line in lines] == [(10 * k, 100, 10 * k)
                                                       for k in range(1, 11)]
    assert lines[0][1] == "progress: 10/100 searches (10%), 2.5/s, ETA 36 s"
    assert lines[-1][1] == "progress: 100/100 searches (100%), 2.5/s"  # nothing left: no ETA


def test_a_line_every_ten_seconds_when_tenths_are_slower() -> None:
    lines = run(1000, 1.0)  # a tenth every 100 s
    whens = [when for when, _ in lines]
    assert whens[:5] == [10.0, 20.0, 30.0, 40.0, 50.0]
    assert all(b - a <= 10.0 for a, b in itertools.pairwise([0.0, *whens]))
    assert lines[0][1] == "progress: 10/1,000 searches (1%), 1.0/s, ETA 16 min 30 s"
    done, total, _, rate, eta = parsed(lines[2][1])
    assert (done, total, rate, eta) == (30, 1000, "1.0", "16 min 10 s")


def test_never_two_lines_within_the_floor_however_fast_the_work() -> None:
    lines = run(10_000, 0.0005)  # 2,000 searches a second: the whole run in 5 s
    whens = [when for when, _ in lines]
    assert len(lines) >= 2
    assert all(b - a >= 2.0 for a, b in itertools.pairwise(whens))
    for when, line in lines:
        done, total, pct, rate, eta = parsed(line)
        assert done == round(when / 0.0005) and total == 10_000 and pct == done * 100 // total
        assert rate == "2,000"
        if eta is not None:
            assert eta.endswith(" s") and abs(int(eta[:-2]) - (total - done) / 2000) <= 0.5


def test_a_tenth_crossed_within_the_floor_is_said_when_the_floor_has_passed() -> None:
    bar, clock, out = plain(10)
    clock.now += 0.5
    bar.tick("q")  # 10% at 0.5 s: the first line
    clock.now += 0.5
    bar.tick("q")  # 20% at 1 s: too soon after the first
    assert out.getvalue().count("progress:") == 1
    clock.now += 1.5
    bar.tick("q")  # 30% at 2.5 s
    assert out.getvalue().splitlines()[-1] == "progress: 3/10 searches (30%), 1.2/s, ETA 6 s"


def test_the_plain_log_says_what_the_searches_are_and_keeps_the_cell_lines() -> None:
    clock, out = Clock(), io.StringIO()
    bar = progress.PlainProgress(Console(file=out, width=200, emoji=False), clock)
    bar.planned(Workload(cells=24, searches=2898, tracks=8, queries=322, engines=3,
                         passes=(3, 3)))
    bar.cell_start(1, 24, "grep", "rich", 120)
    clock.now += 10.9
    bar.cell_done("grep", "rich", True)
    assert out.getvalue().splitlines() == [
        "2,898 searches in 24 cells: 322 queries × 3 engines × 3 passes",
        "done grep × rich (10.9s)"]


def test_the_line_format() -> None:
    assert progress.progress_line(1200, 2898, 1200 / 38) == \
        "progress: 1,200/2,898 searches (41%), 38/s, ETA 45 s"
    assert progress.duration(7300) == "2 h 1 min"


def test_what_the_searches_are_made_of_says_when_it_is_no_product() -> None:
    def work(cells: int, searches: int, passes: tuple[int, int]) -> Workload:
        return Workload(cells=cells, searches=searches, tracks=8, queries=322, engines=3,
                        passes=passes)

    assert progress.made_of(work(24, 2898, (3, 3))) == "322 queries × 3 engines × 3 passes"
    assert progress.made_of(work(24, 2254, (1, 3))) == "322 queries × 3 engines × 1-3 passes"
    assert progress.made_of(work(20, 2500, (3, 3))) == \
        "322 queries × up to 3 engines × 3 passes"


def test_the_workload_counts_each_query_of_each_track_once() -> None:
    rich = SimpleNamespace(unit="rich", queries=[object()] * 40)
    click = SimpleNamespace(unit="click", queries=[object()] * 32)
    grep = SimpleNamespace(name="grep", spec=SimpleNamespace(per_file=[1, 2, 3]))
    fake = SimpleNamespace(name="fake", spec=SimpleNamespace(per_file=[1]))
    todo = [(rich, grep), (rich, fake), (click, fake), (click, grep)]
    work = workload(todo, headline_only=False)  # type: ignore[arg-type]
    assert work == Workload(cells=4, searches=(40 + 32) * 4, tracks=2, queries=72, engines=2,
                            passes=(1, 3))
    assert workload(todo, headline_only=True).searches == 72 * 2  # type: ignore[arg-type]


def test_the_terminal_line_counts_searches_in_the_readmes_units() -> None:
    clock = Clock()
    console = Console(file=io.StringIO(), force_terminal=True, width=200, emoji=False)
    with progress.compare_progress(console, plain=False, clock=clock) as bar:
        assert isinstance(bar, progress.CompareProgress)
        bar.planned(Workload(cells=24, searches=2898, tracks=8, queries=322, engines=3,
                             passes=(3, 3)))
        bar.cell_start(3, 24, "grep", "rich", 120)
        for _ in range(900):
            clock.now += 0.1
            bar.tick("q")
        line = bar.bar.columns[1].render(bar.bar.tasks[0]).plain
    assert line == ("cell 3/24 grep × rich  searches 900/2,898  ETA 3m19s  "
                    "(322 queries × 3 engines × 3 passes)")


def test_plain_where_no_one_watches_a_live_line() -> None:
    tty = Console(file=io.StringIO(), force_terminal=True)
    pipe = Console(file=io.StringIO())
    assert not progress.plain_wanted(tty, {})
    assert not progress.plain_wanted(tty, {"CI": "false"})
    assert progress.plain_wanted(tty, {"CI": "true"})
    assert progress.plain_wanted(pipe, {})
    with progress.compare_progress(pipe) as bar:
        assert isinstance(bar, progress.PlainProgress)


FAKE = '''
import json, sys
print(json.dumps({"hits": [{"path": "pkg/config.py", "start": 4, "end": 7}]}))
'''


def test_a_piped_compare_prints_progress_lines(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    toml = make_corpus(tmp_path)
    (tmp_path / "fake.py").write_text(FAKE)
    fake = tmp_path / "fake.json"
    fake.write_text(json.dumps({
        "name": "fake", "spans": True,
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"},
    }))
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--corpora-root", str(tmp_path / "w" / "corpora"), "--query-set", "questions",
                 "--engine", str(REPO / "engines" / "grep.json"), "--engine", str(fake)])
    err = capsys.readouterr().err
    assert code == 0, err
    lines = err.splitlines()
    # grep makes three passes over the four questions, the fake one.
    assert "16 searches in 2 cells: 4 queries × 2 engines × 1-3 passes" in lines
    said = [parsed(line) for line in lines if line.startswith("progress: ")]
    assert said, err
    assert all(total == 16 and 0 < done <= 16 for done, total, *_ in said)
    assert [done for done, *_ in said] == sorted(done for done, *_ in said)
    assert any(line.startswith("done grep × mini (") for line in lines)
