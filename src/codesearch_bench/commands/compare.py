"""`bench compare`: every engine on every corpus, one protocol, one scoring.

This module turns the command line into `run/options.CompareOptions`, shows progress
and the tables, and says what was written; `run/comparison.execute` does the work.
The exit code is the largest of the recorded failures' classes' codes.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from .. import workdir
from ..errors import Interrupted, LoggingFailed, UsageError, exit_code_of
from ..render import progress, table
from ..render.loggers import logger_for
from ..render.ui import UI
from ..run import shards
from ..run.comparison import execute
from ..run.options import CompareOptions, Events
from ..run.plan import HEADLINE_TRACKS
from .suites import selection, suite


def run(args: argparse.Namespace, ui: UI) -> int:
    where = workdir.Where.of(args)
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit {args.limit}: give the number of queries per corpus, >= 1")
    chosen_suite, corpora_file = suite(args.suite, where.corpora_file)
    query_set = args.query_set or chosen_suite.query_set
    opts = CompareOptions(
        engines=list(args.engine), corpora_file=corpora_file,
        corpora_root=where.corpora_root, work=where.work,
        corpus=args.corpus if args.corpus is not None else chosen_suite.corpus,
        tracks=HEADLINE_TRACKS if query_set == "all" else (query_set,),
        reindex=args.reindex, cutoffs=parse_cutoffs(args.cutoffs), limit=args.limit,
        json_out=args.json or args.resume, resume=args.resume, shard=parse_shard(args.shard),
        keep_going=args.keep_going, split=args.split, headline_only=args.headline_only,
        jobs=parse_jobs(args.jobs),
        queries=[q.strip() for q in args.query.split(",") if q.strip()] if args.query else None,
        selection=selection(args),
    )
    # A bad --log-to value, a missing extra or a target that cannot be logged to (a file
    # not writable, a server down) fails now, not after hours of engines.
    logger = logger_for(args.log_to) if args.log_to else None
    if logger is not None:
        logger.check()
    with progress.compare_progress(ui.err) as bar:
        def stage(message: str) -> None:
            # A stage says something the user must still read after the run (journal
            # records a resume ignored, a tree rebuilt): the bar's note is gone at the
            # next cell, and a plain log (no TTY, CI) shows no bar at all, so it is a line too.
            bar.stage(message)
            ui.err.print(message, markup=False, highlight=False, soft_wrap=True)

        outcome = execute(opts, Events(stage=stage, tick=bar.tick, cell_done=bar.cell_done,
                                       planned=bar.planned, cell_start=bar.cell_start,
                                       kept=bar.kept))
    table.render_compare(ui.out, outcome.result, wide=args.wide)
    if outcome.written is not None and not outcome.interrupted:
        ui.out.print(f"wrote {outcome.written}", markup=False, highlight=False)
    code = exit_code_of([f.stage for f in outcome.failures])
    if logger is not None and not outcome.interrupted:
        try:
            ui.out.print(logger.log(outcome.result, outcome.written, []), markup=False,
                         highlight=False)
        except LoggingFailed as exc:
            ui.error(exc.message, exc.hint)
            code = max(code, exc.exit_code)
    if outcome.interrupted:
        where_to = (f"; finished cells written to {outcome.written}; continue with: "
                    f"{resume_command(getattr(args, 'argv', None), outcome.written)}"
                    if outcome.written else "")
        raise Interrupted("interrupted: engines stopped and reaped" + where_to)
    return code


def resume_command(argv: list[str] | None, written: Path) -> str:
    """The command line that continues this run: the same words, plus --resume."""
    words = list(argv or ["compare"])
    cleaned: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in ("--resume", "-resume"):
            skip = True
            continue
        if word.startswith(("--resume=", "-resume=")):
            continue
        cleaned.append(word)
    return shlex.join(["bench", *cleaned, "--resume", str(written)])


def parse_cutoffs(text: str) -> tuple[int, ...]:
    try:
        cutoffs = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"--cutoffs {text!r}: write whole numbers like 5,10,20") from None
    if not cutoffs:
        raise UsageError("--cutoffs needs at least one cutoff")
    if any(k < 1 for k in cutoffs):
        raise UsageError("--cutoffs are whole numbers >= 1")
    return cutoffs


def parse_jobs(text: str) -> int:
    """`--jobs N` (a whole number >= 1), or `auto`: one cell per CPU bench may use."""
    if text.strip().lower() == "auto":
        from ..run.jobs import cpus

        return cpus()
    try:
        jobs = int(text)
    except ValueError:
        raise UsageError(f"--jobs {text!r}: give a whole number >= 1, or auto") from None
    if jobs < 1:
        raise UsageError(f"--jobs {jobs}: give a whole number >= 1, or auto")
    return jobs


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """`I/N`, or `auto` from the scheduler running this task (see run/shards.py)."""
    return shards.parse(text)

