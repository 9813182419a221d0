"""The whole comparison: every (corpus, engine) cell in order, journaled, resumable.

Specs are all validated and every corpus planned (set up, queries linted, gold
resolved) before the first engine starts (preflight.py). Then each cell runs in
turn -- engines one at a time so timings do not compete -- or, with `--jobs N`,
up to N cells at once in worker processes (jobs.py), never two on one corpus,
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .. import workdir
from ..corpus.fingerprint import Fingerprint
from ..engine import state
from ..engine.spec import LoadedSpec
from ..protocol import PROTOCOL_VERSION
from ..results import journal, spool, write
from ..results.held import HeldRows
from ..results.schema import Failure, Gap, ResultFile
from ..scoring.analysis import statistics
from . import environment, jobs
from .cell import Cell, Measured, measure
from .descriptions import corpus_out, engine_out
from .options import CompareOptions, Events
from .plan import Plan, cells, gaps, units, workload
from .preflight import load_specs, plan_corpora, stop_before_running
from .resume import kept_cells, load_previous
from .trees import Trees


@dataclass
class Outcome:
    """`result`'s rows lack their queries' per-slot detail (slots, gains, gold) past
    `CompareOptions.hold_outcomes` outcomes: the written file always has it."""

    result: ResultFile
    failures: list[Failure] = field(default_factory=list)
    interrupted: bool = False
    written: Path | None = None  # where the result file went, if anywhere


def execute(opts: CompareOptions, events: Events | None = None) -> Outcome:
    """The whole comparison; Ctrl-C stops it between queries with the finished cells kept."""
    events = events or Events()
    out_path = opts.json_out or default_result_path(opts.work)
    with workdir.locked(opts.work / ".lock", f"work dir {opts.work}", "--work"), \
            workdir.locked(out_path.with_name(out_path.name + ".lock"),
                           f"result file {out_path}", "--json"):
        return Comparison(opts, events, out_path).run()


def default_result_path(work: Path) -> Path:
    """Where a run without --json keeps its journal (and its partial result on Ctrl-C)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return work / "results" / f"compare-{stamp}.json"


def cell_for(plan: Plan, loaded: LoadedSpec, opts: CompareOptions) -> Cell:
    """The cell of this engine on this corpus track, as the options ask it to be run."""
    return Cell(
        loaded=loaded, corpus=plan.unit, corpus_pin=plan.identity,
        tree=plan.tree, track=plan.track,
        # Never resolved: an engine may have replaced its state dir with a link,
        # and state.py must see (and remove) the link, not its target.
        state=state.state_dir(opts.work, "state", loaded.name, plan.unit),
        lang=",".join(plan.corpus.spec.languages), queries=plan.queries,
        gold=plan.gold, cutoffs=tuple(opts.cutoffs), reindex=opts.reindex,
        tree_files=plan.manifest.files, split=opts.split,
        headline_only=opts.headline_only,
    )


class Comparison:
    """One run of `bench compare`, its inputs checked and its cells laid out.

    Made before any engine runs: the specs and corpora checked (a problem stops the
    run here), the cells a resumed run finished taken over, every tree checked.
    `run()` then measures the remaining cells, journals each as it finishes, and
    makes the result.
    """

    def __init__(self, opts: CompareOptions, events: Events, out_path: Path) -> None:
        self.opts, self.events, self.out_path = opts, events, out_path
        previous = load_previous(opts.resume) if opts.resume else None
        if previous is not None and previous.torn:
            events.stage(f"{previous.torn} unreadable or unfinished journal record(s) ignored "
                         "(a cell cut off)")
        #: what went wrong before any cell ran: specs, corpora, trees that could not be rebuilt
        self.failures: list[Failure] = []
        self.specs = load_specs(opts.engines or workdir.default_engines(), self.failures)
        self.plans = plan_corpora(opts, events, self.failures, self.specs)
        if self.failures and not opts.keep_going:
            stop_before_running(self.failures)
        self.kept = kept_cells(previous, self.plans, self.specs, opts.cutoffs, opts.split)
        # The given engines first, in the order given: rows and paired differences follow it.
        self.engines = {s.name: engine_out(s) for s in self.specs}
        self.engines.update({k: v for k, v in self.kept.engines.items() if k not in self.engines})
        self.corpora = {**self.kept.corpora, **{p.unit: corpus_out(p) for p in self.plans}}
        self.header = journal.Header(protocol_version=PROTOCOL_VERSION,
                                     cutoffs=list(opts.cutoffs), created=_now())
        self.journal_path = journal.path_for(out_path)
        self.host = str(environment.host()["fingerprint"])
        self.cells = cells(self.plans, self.specs, opts.shard)
        #: the cells to measure (all but those kept from the resumed run), by place in `cells`
        self.todo = [i for i, (plan, loaded) in enumerate(self.cells)
                     if (loaded.name, plan.unit) not in self.kept.done]
        self._turn = {i: n for n, i in enumerate(self.todo, 1)}  # cell i is the n-th to run
        self.trees = Trees(opts.corpora_root, events.stage)
        for plan in {self.cells[i][0].unit: self.cells[i][0] for i in self.todo}.values():
            self.trees.check(plan, self.failures)
        events.planned(workload([self.cells[i] for i in self.todo], opts.headline_only))
        # Each measured cell's rows and failures by its place in the plan: written in that order.
        self.held = HeldRows(self.journal_path, opts.hold_outcomes)
        self.cell_failures: dict[int, list[Failure]] = {}
        self._journal: journal.Journal | None = None  # open while the cells run

    def run(self) -> Outcome:
        """Measure the cells, then write the result (always when interrupted)."""
        opts = self.opts
        interrupted = False
        # A resumed run appends to the journal it resumes; any other run starts its own.
        fresh = opts.resume is None or opts.resume.resolve() != self.out_path.resolve()
        with journal.Journal(self.journal_path, self.header, fresh=fresh) as self._journal:
            try:
                if opts.jobs == 1:
                    for i in self._due():
                        if self._skipped(i):
                            continue
                        result = measure(*self._start(i), self.events.tick)
                        self._finish(i, result, 1)
                        if result.interrupted:
                            raise KeyboardInterrupt  # kept above: it finished before the signal
                else:
                    jobs.run(list(self._due()), opts.jobs,
                             # One cell per corpus at a time: its tracks share the checkout,
                             # and an engine that changed its tree has it rebuilt before the
                             # next one starts.
                             keys=lambda i: {self.cells[i][0].corpus.name},
                             skip=self._skipped, start=self._start, finish=self._finish,
                             tick=self.events.tick)
            except KeyboardInterrupt:
                interrupted = True
            finally:
                self._journal = None
                # A cell cut off, a worker killed -- or a run killed before this one: the
                # result file is locked, so every spool beside its journal is a leftover.
                log = self.journal_path
                for path in log.parent.glob(glob.escape(log.name) + ".cell*"):
                    path.unlink(missing_ok=True)
        return self._outcome(interrupted)

    def _due(self) -> Iterator[int]:
        """The cells to run, in the plan's order; each one the resumed run finished is said
        to be kept as the walk reaches it, and passed over."""
        for i, (plan, loaded) in enumerate(self.cells):
            if i in self._turn:
                yield i
            else:
                self.events.kept(loaded.name, plan.unit, str(self.opts.resume or ""))

    def _skipped(self, i: int) -> bool:
        """Cell i is not run: its corpus's tree could not be rebuilt (asked at its turn)."""
        return self.cells[i][0].unit in self.trees.broken

    def _start(self, i: int) -> tuple[Cell, Fingerprint]:
        """Cell i of the plan, about to run, and its tree as it must be found after."""
        plan, loaded = self.cells[i]
        outcomes = units(plan, loaded, self.opts.headline_only)
        self.events.cell_start(self._turn[i], len(self.todo), loaded.name, plan.unit, outcomes)
        cell = cell_for(plan, loaded, self.opts)
        if not self.held.room(i, outcomes):
            # Past the bound: the cell's outcomes go to disk as they are made.
            log = self.journal_path
            cell = dataclasses.replace(cell, spool=log.with_name(f"{log.name}.cell{i}"))
        return cell, self.trees.expected(plan)

    def _finish(self, i: int, result: Measured, beside: int) -> None:
        """Journal cell i at once; beside: the most cells running at once while it ran."""
        assert self._journal is not None
        plan, loaded = self.cells[i]
        rows = [r.model_copy(update={"host": self.host}) for r in result.rows]
        failures: list[Failure] = []
        if result.changes:
            rows = [r.model_copy(update={
                "flags": [*r.flags, f"!! tree_modified={len(result.changes)}"],
                "tree_changes": result.changes}) for r in rows]
            self.trees.rebuild(plan, failures)
        if beside > 1:
            # Timed while other cells competed for the CPU, the disk and the memory.
            rows = [r.model_copy(update={"flags": [*r.flags, f"concurrent={beside}"]})
                    for r in rows]
        offset = self._journal.append(journal.CellRecord(
            engine=loaded.name, corpus=plan.unit, rows=rows, failure=result.failure,
            engine_info=self.engines[loaded.name], corpus_info=self.corpora[plan.unit]),
            result.spooled)
        spool.discard(result.spooled)
        if result.failure is not None:
            failures.append(result.failure)
        self.held.add(i, rows, offset, spooled=result.spooled is not None)
        self.cell_failures[i] = failures
        self.events.cell_done(loaded.name, plan.unit, result.failure is None)

    def _outcome(self, interrupted: bool) -> Outcome:
        """The result of every cell, kept or measured, written where it is due."""
        opts = self.opts
        rows = [*self.kept.rows, *self.held.rows()]
        failures = [*self.kept.failures, *self.failures,
                    *(f for i in sorted(self.cell_failures) for f in self.cell_failures[i])]
        env = environment.describe()
        stats = statistics(rows, order=list(self.engines))
        out = ResultFile(
            protocol_version=PROTOCOL_VERSION,
            bench_version=str(env["bench_version"]),
            created=_now(),
            interrupted=interrupted,
            shard=f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else None,
            jobs=opts.jobs,
            environment=env,
            cutoffs=list(opts.cutoffs),
            corpora=self.corpora,
            engines=self.engines,
            rows=rows,
            comparisons=stats.comparisons,
            tiers=stats.tiers,
            summary=stats.summary,
            summaries=stats.summaries,
            twins=stats.twins,
            gaps=[Gap(engine=e, corpus=c, reason=why) for e, c, why in gaps(self.plans,
                                                                            self.specs)],
            failures=failures,
        )
        written = None
        if opts.json_out is not None or interrupted:
            # Rows held slim come back whole from the journal, a query at a time.
            write.dump(out, self.out_path, rows=itertools.chain(
                ((r, r.queries) for r in self.kept.rows), self.held.full_rows()))
            written = self.out_path
        if not interrupted:
            self.journal_path.unlink(missing_ok=True)  # everything it held is in the file now
        return Outcome(out, failures, interrupted, written)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
