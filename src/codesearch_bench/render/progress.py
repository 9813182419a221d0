"""Progress while a command works: download bars for setup, a spinner line for compare.

Both are transient: they draw on stderr and leave only the lines they print
for finished work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

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
    """A spinner line naming the current step; one line per finished cell."""

    bar: Progress
    task: TaskID

    def stage(self, message: str) -> None:
        self.bar.update(self.task, description=escape(message))

    tick = stage

    def cell_done(self, engine: str, corpus: str, ok: bool) -> None:
        mark = "[green]done[/]" if ok else "[red]failed[/]"
        self.bar.console.print(f"{mark} {escape(engine)} × {escape(corpus)}")


@contextlib.contextmanager
def compare_progress(console: Console) -> Iterator[CompareProgress]:
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        yield CompareProgress(bar, bar.add_task("starting"))
