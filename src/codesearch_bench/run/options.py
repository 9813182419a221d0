"""What a comparison is asked to do (`CompareOptions`) and whom it tells how it goes (`Events`).

Both are read by every module of the comparison -- the checks made up front, the
comparison itself -- and filled by `commands/compare` from the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..results.held import LIMIT as HOLD_LIMIT
from .plan import QUESTIONS, Workload

DEFAULT_CUTOFFS = (5, 10, 20)


@dataclass
class CompareOptions:
    engines: list[Path]
    corpora_file: Path
    corpora_root: Path
    work: Path
    corpus: str | None = None
    reindex: bool = False
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    limit: int | None = None
    json_out: Path | None = None
    resume: Path | None = None
    shard: tuple[int, int] | None = None
    keep_going: bool = False  # run what is valid despite broken specs or corpora
    split: str = "all"  # all queries, or only the dev or the test split
    queries: list[str] | None = None  # only these query ids (a quick look)
    tracks: tuple[str, ...] = (QUESTIONS,)  # hand-written questions, generated needles
    headline_only: bool = False  # only each engine's headline per_file pass
    jobs: int = 1  # cells run at once (each in a worker process when more than one)
    # Outcomes held in memory with their per-slot detail; past it, in the journal only.
    hold_outcomes: int = HOLD_LIMIT
    #: the flags that chose the corpora and the folders (--suite DIR, --work ...), which a
    #: hint naming another command (`bench validate --corpus X`) repeats
    selection: tuple[str, ...] = ()


@dataclass
class Events:
    """Callbacks for progress; the CLI fills them with rich output."""

    stage: Callable[[str], None] = lambda msg: None
    tick: Callable[[str], None] = lambda msg: None  # one query of one pass answered
    cell_done: Callable[[str, str, bool], None] = lambda engine, corpus, ok: None
    #: the work ahead: the cells to run and the searches they make, with what those are
    #: made of (queries, engines, passes)
    planned: Callable[[Workload], None] = lambda work: None
    #: cell i of n starts, with its searches (queries x passes)
    cell_start: Callable[[int, int, str, str, int], None] = \
        lambda i, n, engine, corpus, queries: None
    #: a finished cell taken over from an earlier run instead of run again
    kept: Callable[[str, str, str], None] = lambda engine, corpus, source: None
