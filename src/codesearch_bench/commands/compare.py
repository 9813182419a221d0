"""`bench compare`: every engine on every corpus, one protocol, one scoring.

Specs are all validated before anything runs. Corpora are set up if missing
and their gold resolved. Then each (corpus, engine) cell runs in turn --
engines one at a time so timings do not compete, the engine order rotated
per corpus so no engine always goes first. A failing cell leaves a gap and a
Failure record; the run goes on, the JSON is still written (atomically), and
the caller exits non-zero.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import corpora, environment, goldset, queries, runner, workdir
from ..errors import BenchError, SpecError, UsageError
from ..protocol import PROTOCOL_VERSION
from ..results import (
    CorpusOut,
    EngineOut,
    Failure,
    ResultFile,
    Row,
)
from ..rows import build_rows, comparisons
from ..spec import LoadedSpec, load_spec
from ..tree import Manifest

DEFAULT_CUTOFFS = (5, 10, 20)
DEFAULT_ENGINES_FILE = "default-engines.txt"


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
class Plan:
    corpus: corpora.Corpus
    manifest: Manifest
    tree: Path
    query_set: queries.QuerySet
    queries: list[queries.Query]
    gold: dict[str, list[goldset.GoldSpan]]


@dataclass
class Outcome:
    result: ResultFile
    failures: list[Failure] = field(default_factory=list)


def default_engines() -> list[Path]:
    listing = workdir.project_root() / "engines" / DEFAULT_ENGINES_FILE
    base = listing.parent
    lines = [ln.split("#", 1)[0].strip() for ln in listing.read_text().splitlines()]
    return [base / ln for ln in lines if ln]


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


def interleave(specs: list[LoadedSpec], corpus_index: int) -> list[LoadedSpec]:
    """Rotate the engine order by corpus so no engine always runs first."""
    if not specs:
        return specs
    shift = corpus_index % len(specs)
    return specs[shift:] + specs[:shift]


def _plan(opts: Options, events: Events, failures: list[Failure],
          specs: list[LoadedSpec]) -> list[Plan]:
    try:
        table = corpora.load_corpora(opts.corpora_file)
        selected = corpora.select(table, opts.corpus)
    except BenchError as exc:
        failures.append(Failure(engine="*", corpus="*", stage="setup", message=str(exc)))
        return []
    plans = []
    for corpus in selected:
        try:
            if not corpora.is_set_up(opts.corpora_root, corpus):
                events.stage(f"setting up corpus {corpus.name}")
            setup = corpora.setup(corpus, opts.corpora_root)
            if corpus.queries_path is None:
                raise UsageError(f"corpus {corpus.name!r} has no query set in corpora.toml")
            qs = queries.load_queries(corpus.queries_path)
            base = corpora.corpus_dir(opts.corpora_root, corpus)
            report = goldset.resolve_set(corpus, setup.tree, qs, base / "gold")
            if report.failures:
                raise UsageError(f"corpus {corpus.name!r}: {len(report.failures)} gold item(s) "
                                 f"do not resolve (first: {report.failures[0]})",
                                 hint=f"run `bench validate --corpus {corpus.name}`")
        except BenchError as exc:
            for s in specs or [None]:
                failures.append(Failure(engine=s.name if s else "*", corpus=corpus.name,
                                        stage="setup", message=str(exc)))
            continue
        chosen = qs.queries[: opts.limit] if opts.limit else qs.queries
        plans.append(Plan(corpus, setup.manifest, setup.tree, qs, chosen, report.spans))
    return plans


def cells(plans: list[Plan], specs: list[LoadedSpec],
          shard: tuple[int, int] | None) -> list[tuple[Plan, LoadedSpec]]:
    """Every (corpus, engine) cell in run order, or this shard's share of them.

    The order is fixed by the arguments alone, so shard I of N picks the same
    cells on every machine: cell j belongs to shard (j mod N) + 1.
    """
    order = [(plan, loaded) for i, plan in enumerate(plans) for loaded in interleave(specs, i)]
    if shard is None:
        return order
    index, count = shard
    return [cell for j, cell in enumerate(order) if j % count == index - 1]


def _resumable(previous: ResultFile | None, plans: list[Plan],
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
        plan, loaded = by_corpus.get(row.corpus), by_engine.get(row.engine)
        old_corpus = previous.corpora.get(row.corpus)
        old_engine = previous.engines.get(row.engine)
        if plan is None or loaded is None or old_corpus is None or old_engine is None:
            continue
        if (old_engine.spec_sha256 == loaded.sha256
                and old_corpus.identity == plan.corpus.identity
                and old_corpus.query_set_sha256 == plan.query_set.sha256
                and old_corpus.queries == len(plan.queries)):
            done.add((row.engine, row.corpus))
    kept = [r for r in previous.rows if (r.engine, r.corpus) in done]
    return done, kept


def run(opts: Options, events: Events | None = None) -> Outcome:
    events = events or Events()
    if any(k < 1 for k in opts.cutoffs):
        raise UsageError("--cutoffs are whole numbers >= 1")
    if opts.shard is not None and not 1 <= opts.shard[0] <= opts.shard[1]:
        raise UsageError("--shard I/N needs 1 <= I <= N")
    previous = read_result(opts.resume) if opts.resume else None
    failures: list[Failure] = []
    specs = load_specs(opts.engines or default_engines(), failures)
    plans = _plan(opts, events, failures, specs)
    done, rows = _resumable(previous, plans, specs, opts)
    engines_out = {s.name: _engine_out(s) for s in specs}
    interrupted = False
    try:
        for plan, loaded in cells(plans, specs, opts.shard):
            if (loaded.name, plan.corpus.name) in done:
                events.cell_done(loaded.name, plan.corpus.name, True)
                continue
            events.stage(f"{loaded.name} on {plan.corpus.name}")
            cell = runner.Cell(
                loaded=loaded, corpus=plan.corpus.name, corpus_pin=plan.corpus.identity,
                tree=plan.tree,
                state=workdir.state_dir(opts.work, "state", loaded.name,
                                        plan.corpus.name).resolve(),
                lang=",".join(plan.corpus.spec.languages), queries=plan.queries,
                gold=plan.gold, cutoffs=tuple(opts.cutoffs), reindex=opts.reindex,
                tree_files=plan.manifest.files,
            )
            result = runner.run_cell(cell, events.tick)
            if result.failure is not None:
                failures.append(result.failure)
            rows.extend(build_rows(cell, result))
            events.cell_done(loaded.name, plan.corpus.name, result.failure is None)
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
        write_json(out, opts.json_out)
    if interrupted:
        raise KeyboardInterrupt
    return Outcome(out, failures)


def exit_code(failures: list[Failure]) -> int:
    """2 when a spec was broken, 3 for a corpus problem, 1 for an engine failure."""
    codes = {"spec": 2, "setup": 3, "gold": 3}
    return max((codes.get(f.stage, 1) for f in failures), default=0)


def read_result(path: Path) -> ResultFile:
    try:
        return ResultFile.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise UsageError(f"{path}: no such result file") from None
    except ValueError as exc:
        first = str(exc).splitlines()[:3]
        raise UsageError(f"{path}: not a codesearch-bench result file ({' '.join(first)})",
                         hint="result files are written by `bench compare --json`") from None


def write_json(result: ResultFile, path: Path) -> None:
    """Atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(result.model_dump(mode="json"), fh, indent=1)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _engine_out(s: LoadedSpec) -> EngineOut:
    from ..driver import engine_version

    return EngineOut(name=s.name, spec_file=str(s.file), spec_sha256=s.sha256,
                     version=engine_version(s), mode=s.spec.mode, requires=s.spec.requires)


def _corpus_out(p: Plan) -> CorpusOut:
    return CorpusOut(name=p.corpus.name, pin=p.corpus.pin, identity=p.corpus.identity,
                     tree=str(p.tree), files=p.manifest.files, tier=p.manifest.tier,
                     languages=p.manifest.languages, queries=len(p.queries),
                     query_set=str(p.query_set.path), query_set_sha256=p.query_set.sha256)


