"""Progress while a command works: download bars for setup, compare's progress.

In a terminal both are transient: they draw on stderr and leave only the lines
they print for finished work. Where no one watches a live line -- stderr piped to
a file, a CI job's log -- compare prints a plain line now and then instead
(`PlainProgress`), so a log still says how far a long run is and when it ends.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)
from rich.spinner import Spinner
from rich.table import Column
from rich.text import Text

from .formats import mib


class _Amount(DownloadColumn):
    """Bytes for a download; a plain count for the line counting corpora."""

    def render(self, task: Task) -> Text:
        if task.fields.get("count"):
            return Text(f"{int(task.completed)}/{int(task.total or 0)}", style="progress.download")
        return super().render(task)


class _Spin(ProgressColumn):
    """rich's SpinnerColumn, less one cost: that column reads its empty text as markup,
    and markup loads rich's emoji table (0.9 MiB) to learn "" has none."""

    def __init__(self) -> None:
        super().__init__()
        self.spinner = Spinner("dots", text=Text(""))

    def render(self, task: Task) -> Text:
        if task.finished:
            return Text(" ")
        return self.spinner.render(task.get_time())  # type: ignore[return-value]


@dataclass
class SetupProgress:
    """A bar per download in bytes, under one line: corpora set up of all, bytes stored."""

    bar: Progress
    tasks: dict[str, TaskID] = field(default_factory=dict)
    overall: TaskID | None = None

    def __call__(self, label: str, done: int, total: int | None) -> None:
        if label not in self.tasks:
            self.tasks[label] = self.bar.add_task(label, total=total)
        self.bar.update(self.tasks[label], completed=done, total=total)

    def corpora(self, done: int, total: int, stored: int) -> None:
        text = f"corpora set up, {mib(stored, ' MiB')} stored"
        if self.overall is None:
            self.overall = self.bar.add_task(text, total=total, count=True)
        self.bar.update(self.overall, completed=done, total=total, description=text)


@contextlib.contextmanager
def download_progress(console: Console) -> Iterator[SetupProgress]:
    """A rich progress bar per download, in bytes, and one for the corpora done."""
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(), _Amount(),
                  TransferSpeedColumn(), console=console, transient=True) as bar:
        yield SetupProgress(bar)


Clock = Callable[[], float]


class Work(Protocol):
    """The work a comparison plans (`run/plan.Workload`), as progress reads it."""

    @property
    def cells(self) -> int: ...
    @property
    def searches(self) -> int: ...  # one query answered by one engine in one pass
    @property
    def tracks(self) -> int: ...
    @property
    def queries(self) -> int: ...  # each query of each corpus track once
    @property
    def engines(self) -> int: ...
    @property
    def passes(self) -> tuple[int, int]: ...  # the fewest and the most of a cell


def made_of(work: Work) -> str:
    """What the searches are, in words: `322 queries × 3 engines × 3 passes`, their product
    when every engine runs on every track with as many passes; else `up to` so many engines
    (one does not cover a corpus, a resumed run kept a cell) or a range of passes."""
    low, high = work.passes
    engines = f"{work.engines} {_plural(work.engines, 'engine', 'engines')}"
    if work.cells < work.tracks * work.engines:
        engines = f"up to {engines}"
    passes = f"{low} {_plural(low, 'pass', 'passes')}" if low == high else f"{low}-{high} passes"
    return " × ".join([f"{work.queries:,} {_plural(work.queries, 'query', 'queries')}",
                       engines, passes])


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _finished(console: Console, engine: str, corpus: str, ok: bool, took: float) -> None:
    mark = "[green]done[/]" if ok else "[red]failed[/]"
    console.print(f"{mark} {escape(engine)} × {escape(corpus)} ({took:.1f}s)")


def _kept(console: Console, engine: str, corpus: str, source: str) -> None:
    console.print(f"[cyan]kept[/] {escape(engine)} × {escape(corpus)} from {escape(source)}")


@dataclass
class CompareProgress:
    """One live line -- cell i/N, searches done of all and what they are, an ETA -- and a
    line per finished cell.

    A search is one query answered by one engine in one pass, the unit every tick counts;
    the line says how the total multiplies out from the queries people quote. The ETA is
    the time per search over the run so far times the searches left, so it settles once
    one cell has finished and follows slow engines as they come.
    """

    bar: Progress
    task: TaskID
    clock: Clock = time.monotonic
    cells: int = 0
    total: int = 0
    done: int = 0
    cell: str = ""
    of: int = 0  # the cells to run
    made_of: str = ""  # the total in words: queries × engines × passes
    started: float = 0.0
    cell_started: float = 0.0
    note: str = ""
    #: the cells running now (several with compare --jobs): (engine, corpus) -> (i, since)
    running: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.started = self.cell_started = self.clock()

    def planned(self, work: Work) -> None:
        self.cells, self.total = work.cells, work.searches
        self.made_of = made_of(work)
        self.started = self.clock()
        self.bar.update(self.task, total=max(work.searches, 1), completed=0)
        self._show()

    def cell_start(self, i: int, n: int, engine: str, corpus: str, queries: int) -> None:
        self.cell_started = self.clock()
        self.running[(engine, corpus)] = (i, self.cell_started)
        self.of = n
        self._label()
        self.note = ""
        self._show()

    def _label(self) -> None:
        """The running cell, or which cells run at once (compare --jobs)."""
        if len(self.running) == 1:
            (engine, corpus), (i, _) = next(iter(self.running.items()))
            self.cell = f"cell {i}/{self.of} {engine} × {corpus}"
        elif self.running:
            self.cell = f"cells {','.join(str(i) for i, _ in self.running.values())}/{self.of}"

    def stage(self, message: str) -> None:
        self.note = message
        self._show()

    def tick(self, message: str) -> None:
        self.done += 1
        self.bar.update(self.task, completed=self.done)
        self._show()

    def cell_done(self, engine: str, corpus: str, ok: bool) -> None:
        _, since = self.running.pop((engine, corpus), (0, self.cell_started))
        self._label()
        self._show()
        _finished(self.bar.console, engine, corpus, ok, self.clock() - since)

    def kept(self, engine: str, corpus: str, source: str) -> None:
        _kept(self.bar.console, engine, corpus, source)

    def eta(self) -> str:
        if not self.done or self.done >= self.total:
            return ""
        per_search = (self.clock() - self.started) / self.done
        left = per_search * (self.total - self.done)
        return f"ETA {int(left // 60)}m{int(left % 60):02d}s"

    def _show(self) -> None:
        # What the searches are made of comes last: a narrow terminal cuts it, not the ETA.
        count = f"searches {self.done:,}/{self.total:,}" if self.total else ""
        parts = [self.cell or "preparing", self.note, count, self.eta(),
                 f"({self.made_of})" if self.total else ""]
        self.bar.update(self.task, description="  ".join(p for p in parts if p))


@dataclass
class Cadence:
    """When a plain progress line is due: each tenth of the work or every ten seconds,
    whichever comes first, and never two lines within two seconds (a fast run crosses
    several tenths at once; a log needs a pulse, not a line per search)."""

    every: float = 10.0
    steps: int = 10
    floor: float = 2.0
    last: float = 0.0  # when the last line was printed, or the work started
    step: int = 0  # the tenths of the work the last line had reached
    printed: bool = False

    def start(self, now: float) -> None:
        self.last, self.step, self.printed = now, 0, False

    def due(self, now: float, done: int, total: int) -> bool:
        if total <= 0:
            return False
        since = now - self.last
        # The first line has no line before it to be too close to.
        if self.printed and since < self.floor:
            return False
        step = min(done, total) * self.steps // total
        if step > self.step or since >= self.every:
            self.last, self.step, self.printed = now, step, True
            return True
        return False


def progress_line(done: int, total: int, elapsed: float) -> str:
    """`progress: 1,200/2,898 searches (41%), 38/s, ETA 45 s`; the rate is over the run so far."""
    parts = [f"progress: {done:,}/{total:,} searches ({done * 100 // max(total, 1)}%)"]
    if done and elapsed > 0:
        rate = done / elapsed
        parts.append(f"{rate:,.0f}/s" if rate >= 10 else f"{rate:.1f}/s")
        if done < total:
            parts.append(f"ETA {duration((total - done) / rate)}")
    return ", ".join(parts)


def duration(seconds: float) -> str:
    """45 s, 3 min 5 s, 2 h 10 min: as precise as an estimate deserves."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60} s"
    return f"{whole // 3600} h {whole % 3600 // 60} min"


@dataclass
class PlainProgress:
    """Compare's progress as plain lines, for a log: what the run will do, a progress line
    when the `Cadence` says one is due, and a line per finished cell."""

    console: Console
    clock: Clock = time.monotonic
    cadence: Cadence = field(default_factory=Cadence)
    total: int = 0
    done: int = 0
    started: float = 0.0
    running: dict[tuple[str, str], float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.cadence.start(self.started)

    def planned(self, work: Work) -> None:
        self.total, self.done = work.searches, 0
        self.started = self.clock()
        self.cadence.start(self.started)
        if work.searches:
            cells = _plural(work.cells, "cell", "cells")
            self._say(f"{work.searches:,} searches in {work.cells} {cells}: {made_of(work)}")

    def cell_start(self, i: int, n: int, engine: str, corpus: str, queries: int) -> None:
        self.running[(engine, corpus)] = self.clock()

    def stage(self, message: str) -> None:
        """Nothing: `bench compare` prints every stage as a line of its own."""

    def tick(self, message: str) -> None:
        self.done += 1
        now = self.clock()
        if self.cadence.due(now, self.done, self.total):
            self._say(progress_line(self.done, self.total, now - self.started))

    def cell_done(self, engine: str, corpus: str, ok: bool) -> None:
        since = self.running.pop((engine, corpus), self.started)
        _finished(self.console, engine, corpus, ok, self.clock() - since)

    def kept(self, engine: str, corpus: str, source: str) -> None:
        _kept(self.console, engine, corpus, source)

    def _say(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False, soft_wrap=True)


def plain_wanted(console: Console, environ: Mapping[str, str] | None = None) -> bool:
    """No live line where no one watches it: a console that is no terminal, or a CI job
    (`CI` set, as every CI service sets it), whose log would keep every redraw."""
    env = os.environ if environ is None else environ
    ci = env.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return ci or not console.is_terminal


@contextlib.contextmanager
def compare_progress(console: Console, *, plain: bool | None = None,
                     clock: Clock = time.monotonic) -> Iterator[CompareProgress | PlainProgress]:
    """Compare's progress on `console`: plain lines when `plain` (by default, when
    `plain_wanted` says so), else a live line."""
    if plain if plain is not None else plain_wanted(console):
        yield PlainProgress(console, clock)
        return
    # The line fills the terminal and its text takes what the bar and the clock leave,
    # cut at its end: a long line never pushes the bar and the elapsed time out of sight.
    text = TextColumn("{task.description}", markup=False,
                      table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis"))
    with Progress(_Spin(), text, BarColumn(bar_width=10), TimeElapsedColumn(), console=console,
                  transient=True, expand=True) as bar:
        yield CompareProgress(bar, bar.add_task("preparing", total=None), clock)
