"""`bench compare`: every engine on every corpus, one protocol, one scoring.

Specs are all validated before anything runs. Corpora are set up if missing
and their gold resolved. Then each (corpus, engine) cell runs in turn --
engines one at a time so timings do not compete. A failing cell leaves a gap
and a Failure record; the run goes on, the JSON is still written
(atomically), and the exit code is the largest of the failures' classes'.
"""

from __future__ import annotations

import argparse
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import environment, plan, runner, workdir
from ..corpus.config import load_corpora, select
from ..engine import state
from ..engine.driver import engine_version
from ..engine.spec import LoadedSpec, load_spec
from ..errors import BenchError, Interrupted, SpecError, UsageError, exit_code_of
from ..protocol import PROTOCOL_VERSION
from ..render import progress, table
from ..render.ui import UI
from ..results.schema import CorpusOut, EngineOut, Failure, ResultFile, Row
from ..scoring.rows import comparisons

DEFAULT_CUTOFFS = (5, 10, 20)


@dataclass
class Options:
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


@dataclass
class Events:
    """Callbacks for progress; the CLI fills them with rich output."""

    stage: Callable[[str], None] = lambda msg: None
    tick: Callable[[str], None] = lambda msg: None
    cell_done: Callable[[str, str, bool], None] = lambda engine, corpus, ok: None


@dataclass
class Outcome:
    result: ResultFile
    failures: list[Failure] = field(default_factory=list)
    interrupted: bool = False


def run(args: argparse.Namespace, ui: UI) -> int:
    where = workdir.Where.of(args)
    opts = Options(
        engines=list(args.engine), corpora_file=where.corpora_file,
        corpora_root=where.corpora_root, work=where.work, corpus=args.corpus,
        reindex=args.reindex, cutoffs=parse_cutoffs(args.cutoffs), limit=args.limit,
        json_out=args.json or args.resume, resume=args.resume, shard=parse_shard(args.shard),
    )
    with progress.compare_progress(ui.err) as bar:
        outcome = execute(opts, Events(stage=bar.stage, tick=bar.tick, cell_done=bar.cell_done))
    table.render_compare(ui.out, outcome.result)
    if opts.json_out:
        ui.out.print(f"wrote {opts.json_out}", markup=False)
    if outcome.interrupted:
        raise Interrupted("interrupted: engines stopped and reaped"
                          + (f"; finished cells written to {opts.json_out}"
                             if opts.json_out else ""))
    return exit_code_of([f.stage for f in outcome.failures])


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


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise UsageError(f"--shard {text!r}: write I/N, e.g. 2/4") from None
    if not 1 <= i <= n:
        raise UsageError("--shard I/N needs 1 <= I <= N")
    return i, n


def load_specs(paths: list[Path], failures: list[Failure]) -> list[LoadedSpec]:
    """Validate every spec up front; a broken one becomes a failure, not a crash."""
    specs: list[LoadedSpec] = []
    seen: dict[str, Path] = {}
    for path in paths:
        try:
            loaded = load_spec(path)
        except SpecError as exc:
            failures.append(Failure(engine=Path(path).stem, corpus="*", stage="spec",
                                    message=str(exc)))
            continue
        if loaded.name in seen:
            raise UsageError(f"engines {seen[loaded.name]} and {loaded.file} share the name "
                             f"{loaded.name!r}; the name keys the state directory, so each "
                             "must be unique")
        seen[loaded.name] = loaded.file
        specs.append(loaded)
    return specs


def _plans(opts: Options, events: Events, failures: list[Failure],
           specs: list[LoadedSpec]) -> list[plan.Plan]:
    try:
        selected = select(load_corpora(opts.corpora_file), opts.corpus)
    except BenchError as exc:
        failures.append(Failure(engine="*", corpus="*", stage="setup", message=str(exc)))
        return []
    plans = []
    for corpus in selected:
        try:
            plans.append(plan.prepare(corpus, opts.corpora_root, limit=opts.limit,
                                      stage=events.stage))
        except BenchError as exc:
            for name in [s.name for s in specs] or ["*"]:
                failures.append(Failure(engine=name, corpus=corpus.name, stage="setup",
                                        message=str(exc)))
    return plans


def _resumable(previous: ResultFile | None, plans: list[plan.Plan],
               specs: list[LoadedSpec], opts: Options) -> tuple[set[tuple[str, str]], list[Row]]:
    """Cells a previous run finished with the same spec, corpus, queries and cutoffs."""
    if previous is None:
        return set(), []
    if previous.protocol_version != PROTOCOL_VERSION or previous.cutoffs != list(opts.cutoffs):
        raise UsageError("--resume: that result was made with another protocol version or "
                         "other cutoffs; start a new run")
    by_corpus = {p.corpus.name: p for p in plans}
    by_engine = {s.name: s for s in specs}
    done: set[tuple[str, str]] = set()
    for row in previous.rows:
        ready, loaded = by_corpus.get(row.corpus), by_engine.get(row.engine)
        old_corpus = previous.corpora.get(row.corpus)
        old_engine = previous.engines.get(row.engine)
        if ready is None or loaded is None or old_corpus is None or old_engine is None:
            continue
        if (old_engine.spec_sha256 == loaded.sha256
                and old_corpus.identity == ready.corpus.identity
                and old_corpus.query_set_sha256 == ready.query_set.sha256
                and old_corpus.queries == len(ready.queries)):
            done.add((row.engine, row.corpus))
    kept = [r for r in previous.rows if (r.engine, r.corpus) in done]
    return done, kept


def execute(opts: Options, events: Events | None = None) -> Outcome:
    """The whole comparison; Ctrl-C stops it between queries with the finished cells kept."""
    events = events or Events()
    previous = ResultFile.load(opts.resume) if opts.resume else None
    failures: list[Failure] = []
    specs = load_specs(opts.engines or workdir.default_engines(), failures)
    plans = _plans(opts, events, failures, specs)
    done, rows = _resumable(previous, plans, specs, opts)
    engines_out = {s.name: _engine_out(s) for s in specs}
    interrupted = False
    try:
        for ready, loaded in plan.cells(plans, specs, opts.shard):
            if (loaded.name, ready.corpus.name) in done:
                events.cell_done(loaded.name, ready.corpus.name, True)
                continue
            events.stage(f"{loaded.name} on {ready.corpus.name}")
            cell = runner.Cell(
                loaded=loaded, corpus=ready.corpus.name, corpus_pin=ready.corpus.identity,
                tree=ready.tree,
                state=state.state_dir(opts.work, "state", loaded.name,
                                      ready.corpus.name).resolve(),
                lang=",".join(ready.corpus.spec.languages), queries=ready.queries,
                gold=ready.gold, cutoffs=tuple(opts.cutoffs), reindex=opts.reindex,
                tree_files=ready.manifest.files,
            )
            result = runner.run_cell(cell, events.tick)
            if result.failure is not None:
                failures.append(result.failure)
            rows.extend(result.rows(cell))
            events.cell_done(loaded.name, ready.corpus.name, result.failure is None)
    except KeyboardInterrupt:
        interrupted = True
    env = environment.describe()
    out = ResultFile(
        protocol_version=PROTOCOL_VERSION,
        bench_version=str(env["bench_version"]),
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        interrupted=interrupted,
        shard=f"{opts.shard[0]}/{opts.shard[1]}" if opts.shard else None,
        environment=env,
        cutoffs=list(opts.cutoffs),
        corpora={p.corpus.name: _corpus_out(p) for p in plans},
        engines=engines_out,
        rows=rows,
        comparisons=comparisons(rows),
        failures=failures,
    )
    if opts.json_out is not None:
        out.dump(opts.json_out)
    return Outcome(out, failures, interrupted)


def _engine_out(s: LoadedSpec) -> EngineOut:
    return EngineOut(name=s.name, spec_file=str(s.file), spec_sha256=s.sha256,
                     version=engine_version(s), mode=s.spec.mode, requires=s.spec.requires)


def _corpus_out(p: plan.Plan) -> CorpusOut:
    return CorpusOut(name=p.corpus.name, pin=p.corpus.pin, identity=p.corpus.identity,
                     tree=str(p.tree), files=p.manifest.files, tier=p.manifest.tier,
                     languages=p.manifest.languages, queries=len(p.queries),
                     query_set=str(p.query_set.path), query_set_sha256=p.query_set.sha256)
