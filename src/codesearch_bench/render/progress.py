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
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)

from ..corpus.sources import Progress as ProgressFn


@contextlib.contextmanager
def download_progress(console: Console) -> Iterator[ProgressFn]:
    """A rich progress bar per download, in bytes."""
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), console=console, transient=True) as bar:
        tasks: dict[str, TaskID] = {}

        def update(label: str, done: int, total: int | None) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done, total=total)

        yield update


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
    started: float = field(default_factory=time.monotonic)
    cell_started: float = field(default_factory=time.monotonic)
    note: str = ""

    def planned(self, cells: int, queries: int) -> None:
        self.cells, self.total = cells, queries
        self.started = time.monotonic()
        self.bar.update(self.task, total=max(queries, 1), completed=0)
        self._show()

    def cell_start(self, i: int, n: int, engine: str, corpus: str, queries: int) -> None:
        self.cell = f"cell {i}/{n} {engine} × {corpus}"
        self.cell_started = time.monotonic()
        self.note = ""
        self._show()

    def stage(self, message: str) -> None:
        self.note = message
        self._show()

    def tick(self, message: str) -> None:
        self.done += 1
        self.bar.update(self.task, completed=self.done)
        self._show()

    def cell_done(self, engine: str, corpus: str, ok: bool) -> None:
        mark = "[green]done[/]" if ok else "[red]failed[/]"
        took = time.monotonic() - self.cell_started
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
        self.bar.update(self.task, description=escape("  ".join(p for p in parts if p)))


@contextlib.contextmanager
def compare_progress(console: Console) -> Iterator[CompareProgress]:
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TimeElapsedColumn(), console=console, transient=True) as bar:
        yield CompareProgress(bar, bar.add_task("preparing", total=None))
