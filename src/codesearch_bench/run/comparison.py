"""The whole comparison: every (corpus, engine) cell in order, journaled, resumable.

Specs are all validated and every corpus planned (set up, queries linted, gold
resolved) before the first engine starts. Then each cell runs in turn --
engines one at a time so timings do not compete -- or, with `--jobs N`, up to
N cells at once in worker processes (jobs.py), never two on one corpus,
and the rows measured beside another cell are flagged `concurrent=N`. A
failing cell leaves a gap and a Failure record and the run goes on. Each
finished cell is appended to the result journal at once, so a crash, a kill or
Ctrl-C loses at most the cells that were running; `--resume` keeps every
finished cell (its rows and its failure record), reruns the rest, and carries
the rows of engines and corpora not named this time. Rows and failures are
written in the plan's order, whatever order the cells finished in.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import glob
import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import workdir
from ..corpus import setup
from ..corpus.config import load_corpora, select
from ..corpus.fingerprint import Fingerprint, verify
from ..corpus.layout import CorpusDir
from ..corpus.tree import recorded_fingerprint
from ..engine import state
from ..engine.driver import engine_version, missing_executable
from ..engine.spec import LoadedSpec, load_spec
from ..errors import STAGE_ERRORS, BenchError, CorpusError, QueryError, SpecError, UsageError
from ..gold.queries import lint
from ..protocol import PROTOCOL_VERSION
from ..results import journal, spool, write
from ..results.held import LIMIT as HOLD_LIMIT
from ..results.held import HeldRows
from ..results.schema import CorpusOut, EngineOut, Failure, Gap, ResultFile
from ..scoring.analysis import statistics
from . import environment, jobs, plan
from .cell import Cell, Measured, measure
from .resume import kept_cells, load_previous

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
    tracks: tuple[str, ...] = (plan.QUESTIONS,)  # hand-written questions, generated needles
    headline_only: bool = False  # only each engine's headline per_file pass
    jobs: int = 1  # cells run at once (each in a worker process when more than one)
    # Outcomes held in memory with their per-slot detail; past it, in the journal only.
    hold_outcomes: int = HOLD_LIMIT


@dataclass
class Events:
    """Callbacks for progress; the CLI fills them with rich output."""

    stage: Callable[[str], None] = lambda msg: None
    tick: Callable[[str], None] = lambda msg: None  # one query of one pass answered
    cell_done: Callable[[str, str, bool], None] = lambda engine, corpus, ok: None
    #: the work ahead: cells to run and queries x passes over all of them
    planned: Callable[[int, int], None] = lambda cells, queries: None
    #: cell i of n starts, with its queries x passes
    cell_start: Callable[[int, int, str, str, int], None] = \
        lambda i, n, engine, corpus, queries: None
    #: a finished cell taken over from an earlier run instead of run again
    kept: Callable[[str, str, str], None] = lambda engine, corpus, source: None


@dataclass
class Outcome:
    """`result`'s rows lack their queries' per-slot detail (slots, gains, gold) past
    `CompareOptions.hold_outcomes` outcomes: the written file always has it."""

    result: ResultFile
    failures: list[Failure] = field(default_factory=list)
    interrupted: bool = False
    written: Path | None = None  # where the result file went, if anywhere


def load_specs(paths: list[Path], failures: list[Failure]) -> list[LoadedSpec]:
    """Validate every spec up front; a broken one becomes a failure, not a crash."""
    specs: list[LoadedSpec] = []
    seen: dict[str, Path] = {}
    for path in paths:
        try:
            loaded = load_spec(workdir.find_spec(Path(path)))
        except SpecError as exc:
            failures.append(Failure(engine=Path(path).stem, corpus="*", stage="spec",
                                    message=str(exc)))
            continue
        if loaded.name in seen:
            raise UsageError(f"engines {seen[loaded.name]} and {loaded.file} share the name "
                             f"{loaded.name!r}; the name keys the state directory, so each "
                             "must be unique")
        seen[loaded.name] = loaded.file
        if (missing := missing_executable(loaded)) is not None:
            # Said now, not when the engine's turn comes after the others have run.
            failures.append(Failure(engine=loaded.name, corpus="*", stage="program",
                                    message=missing))
            continue
        specs.append(loaded)
    return specs


def _plans(opts: CompareOptions, events: Events, failures: list[Failure],
           specs: list[LoadedSpec]) -> list[plan.Plan]:
    # A corpora file or a --corpus list that cannot be read stops the run: nothing to run on.
    selected = select(load_corpora(opts.corpora_file), opts.corpus)
    plans = []
    for corpus in selected:
        for track in opts.tracks:
            unit = corpus.name if track == plan.QUESTIONS else f"{corpus.name}:{track}"
            try:
                plans.append(plan.prepare(corpus, opts.corpora_root, limit=opts.limit,
                                          split=opts.split, ids=opts.queries, track=track,
                                          stage=events.stage))
            except BenchError as exc:
                for name in [s.name for s in specs] or ["*"]:
                    failures.append(Failure(engine=name, corpus=unit, stage="setup",
                                            message=str(exc)))
    problems = [f"{p.unit}: {problem}" for p in plans for problem in lint(p.query_set)]
    if problems:
        # A duplicate id would let one gold overwrite another: no engine runs on such a set.
        raise QueryError("query sets with problems, so nothing was run:\n  "
                         + "\n  ".join(problems[:20])
                         + (f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""),
                         hint="run `bench validate` and fix the query set")
    return plans


def _stop_before_running(failures: list[Failure]) -> None:
    """Every broken spec and corpus at once, before any engine has run for minutes."""
    seen: list[str] = []
    for f in failures:
        line = f"{f.corpus if f.stage == 'setup' else f.engine}: {f.message}"
        if line not in seen:
            seen.append(line)
    # The gravest problem names the exit code: a missing program (4), a corpus (3), a spec (2).
    error = max((STAGE_ERRORS.get(f.stage, CorpusError) for f in failures),
                key=lambda c: c.exit_code)
    # One problem a line; a problem's own further lines (the spec's other fields, its
    # hint) indented under it, not level with the next problem.
    raise error(f"{len(seen)} problem(s) found before any engine ran:\n  "
                + "\n  ".join(line.replace("\n", "\n    ") for line in seen[:20]),
                hint="fix them, or pass --keep-going to run what is valid")


def execute(opts: CompareOptions, events: Events | None = None) -> Outcome:
    """The whole comparison; Ctrl-C stops it between queries with the finished cells kept."""
    events = events or Events()
    out_path = opts.json_out or default_result_path(opts.work)
    with workdir.locked(opts.work / ".lock", f"work dir {opts.work}", "--work"), \
            workdir.locked(out_path.with_name(out_path.name + ".lock"),
                           f"result file {out_path}", "--json"):
        return _execute(opts, events, out_path)


def default_result_path(work: Path) -> Path:
    """Where a run without --json keeps its journal (and its partial result on Ctrl-C)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return work / "results" / f"compare-{stamp}.json"


def _execute(opts: CompareOptions, events: Events, out_path: Path) -> Outcome:
    previous = load_previous(opts.resume) if opts.resume else None
    if previous is not None and previous.torn:
        events.stage(f"{previous.torn} unreadable or unfinished journal record(s) ignored "
                     "(a cell cut off)")
    failures: list[Failure] = []
    specs = load_specs(opts.engines or workdir.default_engines(), failures)
    plans = _plans(opts, events, failures, specs)
    if failures and not opts.keep_going:
        _stop_before_running(failures)
    kept = kept_cells(previous, plans, specs, opts.cutoffs, opts.split)
    # The given engines first, in the order given: rows and paired differences follow it.
    engines_out = {s.name: _engine_out(s) for s in specs}
    engines_out.update({k: v for k, v in kept.engines.items() if k not in engines_out})
    corpora_out = {**kept.corpora, **{p.unit: _corpus_out(p) for p in plans}}
    header = journal.Header(protocol_version=PROTOCOL_VERSION, cutoffs=list(opts.cutoffs),
                            created=_now())
    interrupted = False
    log = journal.path_for(out_path)
    # A resumed run appends to the journal it resumes; any other run starts its own.
    fresh = opts.resume is None or opts.resume.resolve() != out_path.resolve()
    fingerprints: dict[str, Fingerprint] = {}  # each corpus's tree as set up
    host = str(environment.host()["fingerprint"])
    broken: set[str] = set()  # corpora whose tree could not be rebuilt after a change
    order = plan.cells(plans, specs, opts.shard)
    todo = [(r, s) for r, s in order if (s.name, r.unit) not in kept.done]
    for ready in {r.unit: r for r, _ in todo}.values():
        if not _as_set_up(ready, opts, failures, fingerprints, events):
            broken.add(ready.unit)
    events.planned(len(todo), sum(plan.units(r, s, opts.headline_only) for r, s in todo))
    source = str(opts.resume) if opts.resume else ""
    # Each measured cell's rows and failures by its place in the plan: written in that order.
    held = HeldRows(log, opts.hold_outcomes)
    measured_failures: dict[int, list[Failure]] = {}

    def start(i: int) -> tuple[Cell, Fingerprint]:
        """Cell i of the plan, about to run, and its tree as it must be found after."""
        ready, loaded = order[i]
        units = plan.units(ready, loaded, opts.headline_only)
        events.cell_start(todo.index((ready, loaded)) + 1, len(todo), loaded.name,
                          ready.unit, units)
        cell = _cell(ready, loaded, opts)
        if not held.room(i, units):
            # Past the bound: the cell's outcomes go to disk as they are made.
            cell = dataclasses.replace(cell, spool=log.with_name(f"{log.name}.cell{i}"))
        return cell, fingerprints[ready.unit]

    def finish(i: int, result: Measured, beside: int) -> None:
        """Journal cell i at once; beside: the most cells running at once while it ran."""
        ready, loaded = order[i]
        cell_rows = [r.model_copy(update={"host": host}) for r in result.rows]
        cell_failures: list[Failure] = []
        if result.changes:
            cell_rows = [r.model_copy(update={
                "flags": [*r.flags, f"!! tree_modified={len(result.changes)}"],
                "tree_changes": result.changes}) for r in cell_rows]
            if not _rebuild(ready, opts, cell_failures, fingerprints, events):
                broken.add(ready.unit)
        if beside > 1:
            # Timed while other cells competed for the CPU, the disk and the memory.
            cell_rows = [r.model_copy(update={"flags": [*r.flags, f"concurrent={beside}"]})
                         for r in cell_rows]
        offset = book.append(journal.CellRecord(
            engine=loaded.name, corpus=ready.unit, rows=cell_rows,
            failure=result.failure, engine_info=engines_out[loaded.name],
            corpus_info=corpora_out[ready.unit]), result.spooled)
        spool.discard(result.spooled)
        if result.failure is not None:
            cell_failures.append(result.failure)
        held.add(i, cell_rows, offset, spooled=result.spooled is not None)
        measured_failures[i] = cell_failures
        events.cell_done(loaded.name, ready.unit, result.failure is None)

    with journal.Journal(log, header, fresh=fresh) as book:
        try:
            if opts.jobs == 1:
                for i, (ready, loaded) in enumerate(order):
                    if (loaded.name, ready.unit) in kept.done:
                        events.kept(loaded.name, ready.unit, source)
                        continue
                    if ready.unit in broken:
                        continue
                    cell, expected = start(i)
                    result = measure(cell, expected, events.tick)
                    finish(i, result, 1)
                    if result.interrupted:
                        raise KeyboardInterrupt  # kept above: it finished before the signal
            else:
                for ready, loaded in order:
                    if (loaded.name, ready.unit) in kept.done:
                        events.kept(loaded.name, ready.unit, source)
                jobs.run(
                    [i for i, (r, s) in enumerate(order) if (s.name, r.unit) not in kept.done],
                    opts.jobs,
                    # One cell per corpus at a time: its tracks share the checkout, and an
                    # engine that changed its tree has it rebuilt before the next one starts.
                    keys=lambda i: {order[i][0].corpus.name},
                    skip=lambda i: order[i][0].unit in broken,
                    start=start, finish=finish, tick=events.tick)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            # A cell cut off, a worker killed -- or a run killed before this one: the
            # result file is locked, so every spool beside its journal is a leftover.
            for path in log.parent.glob(glob.escape(log.name) + ".cell*"):
                path.unlink(missing_ok=True)
    rows = [*kept.rows, *held.rows()]
    failures = [*kept.failures, *failures,
                *(f for i in sorted(measured_failures) for f in measured_failures[i])]
    env = environment.describe()
    stats = statistics(rows, order=list(engines_out))
    out = ResultFile(
        protocol_version=PROTOCOL_VERSION,
        bench_version=str(env["bench_version"]),
        created=_now(),
        interrupted=interrupted,
        shard=f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else None,
        jobs=opts.jobs,
        environment=env,
        cutoffs=list(opts.cutoffs),
        corpora=corpora_out,
        engines=engines_out,
        rows=rows,
        comparisons=stats.comparisons,
        tiers=stats.tiers,
        summary=stats.summary,
        summaries=stats.summaries,
        gaps=[Gap(engine=e, corpus=c, reason=why) for e, c, why in plan.gaps(plans, specs)],
        failures=failures,
    )
    written = None
    if opts.json_out is not None or interrupted:
        # Rows held slim come back whole from the journal, a query at a time.
        write.dump(out, out_path, rows=itertools.chain(
            ((r, r.queries) for r in kept.rows), held.full_rows()))
        written = out_path
    if not interrupted:
        log.unlink(missing_ok=True)  # everything it held is in the result file now
    return Outcome(out, failures, interrupted, written)


def _cell(ready: plan.Plan, loaded: LoadedSpec, opts: CompareOptions) -> Cell:
    return Cell(
        loaded=loaded, corpus=ready.unit, corpus_pin=ready.identity,
        tree=ready.tree, track=ready.track,
        # Never resolved: an engine may have replaced its state dir with a link,
        # and state.py must see (and remove) the link, not its target.
        state=state.state_dir(opts.work, "state", loaded.name, ready.unit),
        lang=",".join(ready.corpus.spec.languages), queries=ready.queries,
        gold=ready.gold, cutoffs=tuple(opts.cutoffs), reindex=opts.reindex,
        tree_files=ready.manifest.files, split=opts.split,
        headline_only=opts.headline_only,
    )


def _dirs(ready: plan.Plan, opts: CompareOptions) -> CorpusDir:
    return ready.dirs or setup.dirs(opts.corpora_root.resolve(), ready.corpus)


def _as_set_up(ready: plan.Plan, opts: CompareOptions, failures: list[Failure],
              fingerprints: dict[str, Fingerprint], events: Events) -> bool:
    """The tree checked against its setup fingerprint before any engine runs on it.

    A difference found now -- a work dir copied without its mtimes, a file edited
    by hand -- is no engine's doing: the tree is rebuilt, never blamed on whichever
    engine happens to run first (every cell is checked against this fingerprint).
    """
    recorded = recorded_fingerprint(_dirs(ready, opts))
    drift = verify(ready.tree, recorded, limit=1)
    if not drift:
        fingerprints[ready.unit] = recorded
        return True
    why = f"its tree differs from its setup before any engine ran ({drift[0]})"
    return _rebuild(ready, opts, failures, fingerprints, events, why)


def _rebuild(ready: plan.Plan, opts: CompareOptions, failures: list[Failure],
             fingerprints: dict[str, Fingerprint], events: Events,
             why: str = "an engine changed its tree") -> bool:
    """Set the tree up afresh so the next engine gets the pin.

    The tree may share inodes with bench's checkout, so both are rebuilt from the source.
    """
    events.stage(f"rebuilding {ready.unit}: {why}")
    try:
        plan.rebuild(ready, opts.corpora_root)
    except BenchError as exc:
        failures.append(Failure(engine="*", corpus=ready.unit, stage="setup",
                                message=f"rebuilding the tree ({why}): {exc}"))
        return False
    fingerprints[ready.unit] = recorded_fingerprint(_dirs(ready, opts))
    return True


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _engine_out(s: LoadedSpec) -> EngineOut:
    return EngineOut(name=s.name, spec_file=str(s.file), spec_sha256=s.sha256,
                     version=engine_version(s), mode=s.spec.mode, requires=s.spec.requires)


def _corpus_out(p: plan.Plan) -> CorpusOut:
    return CorpusOut(name=p.unit, pin=p.manifest.pin, identity=p.identity,
                     track=p.track, corpus=p.corpus.name, track_info=p.track_info,
                     provenance=p.corpus.spec.provenance,
                     tree=str(p.tree), files=p.manifest.files, tier=p.manifest.tier,
                     languages=p.manifest.languages, queries=len(p.queries),
                     query_set=str(p.query_set.path), query_set_sha256=p.query_set.sha256,
                     splits=dict(Counter(q.split or "none" for q in p.queries)))
