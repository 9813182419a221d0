"""Progress while a command works: download bars for setup, a spinner line for compare.

Both are transient: they draw on stderr and leave only the lines they print
for finished work.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

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


@dataclass
class CompareProgress:
    """One live line -- cell i/N, queries done of all, an ETA -- and a line per finished cell.

    The ETA is the time per query over the cells so far times the queries left, so it
    settles once one cell has finished and follows slow engines as they come.
    """

    bar: Progress
    task: TaskID
    cells: int = 0
    total: int = 0
    done: int = 0
    cell: str = ""
    of: int = 0  # the cells to run
    started: float = field(default_factory=time.monotonic)
    cell_started: float = field(default_factory=time.monotonic)
    note: str = ""
    #: the cells running now (several with compare --jobs): (engine, corpus) -> (i, since)
    running: dict[tuple[str, str], tuple[int, float]] = field(default_factory=dict)

    def planned(self, cells: int, queries: int) -> None:
        self.cells, self.total = cells, queries
        self.started = time.monotonic()
        self.bar.update(self.task, total=max(queries, 1), completed=0)
        self._show()

    def cell_start(self, i: int, n: int, engine: str, corpus: str, queries: int) -> None:
        self.cell_started = time.monotonic()
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
        mark = "[green]done[/]" if ok else "[red]failed[/]"
        _, since = self.running.pop((engine, corpus), (0, self.cell_started))
        took = time.monotonic() - since
        self._label()
        self._show()
        self.bar.console.print(f"{mark} {escape(engine)} × {escape(corpus)} ({took:.1f}s)")

    def kept(self, engine: str, corpus: str, source: str) -> None:
        self.bar.console.print(f"[cyan]kept[/] {escape(engine)} × {escape(corpus)} from "
                               f"{escape(source)}")

    def eta(self) -> str:
        if not self.done or self.done >= self.total:
            return ""
        per_query = (time.monotonic() - self.started) / self.done
        left = per_query * (self.total - self.done)
        return f"ETA {int(left // 60)}m{int(left % 60):02d}s"

    def _show(self) -> None:
        parts = [self.cell or "preparing", self.note,
                 f"{self.done}/{self.total} queries" if self.total else "", self.eta()]
        self.bar.update(self.task, description="  ".join(p for p in parts if p))


@contextlib.contextmanager
def compare_progress(console: Console) -> Iterator[CompareProgress]:
    with Progress(_Spin(), TextColumn("{task.description}", markup=False), BarColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        yield CompareProgress(bar, bar.add_task("preparing", total=None))
