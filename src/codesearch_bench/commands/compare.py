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

from .. import corpora, environment, goldset, queries, runner, stats, workdir
from ..errors import BenchError, UsageError
from ..protocol import PROTOCOL_VERSION
from ..results import (
    Comparison,
    CorpusOut,
    EngineOut,
    Estimate,
    Failure,
    QueryOutcome,
    ResultFile,
    Row,
)
from ..spec import LoadedSpec, load_spec
from ..tree import Manifest

DEFAULT_CUTOFFS = (5, 10, 20)
DEFAULT_ENGINES_FILE = "default-engines.txt"
PAIRED_METRICS = {"file.hit@10": "binary", "chunk.hit@10": "binary", "file.mrr": "continuous",
                  "chunk.mrr": "continuous"}


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


def load_specs(paths: list[Path]) -> list[LoadedSpec]:
    specs = [load_spec(p) for p in paths]
    seen: dict[str, Path] = {}
    for s in specs:
        if s.name in seen:
            raise UsageError(f"engines {seen[s.name]} and {s.file} share the name {s.name!r}; "
                             "the name keys the state directory, so each must be unique")
        seen[s.name] = s.file
    return specs


def interleave(specs: list[LoadedSpec], corpus_index: int) -> list[LoadedSpec]:
    """Rotate the engine order by corpus so no engine always runs first."""
    if not specs:
        return specs
    shift = corpus_index % len(specs)
    return specs[shift:] + specs[:shift]


def _plan(opts: Options, events: Events, failures: list[Failure],
          specs: list[LoadedSpec]) -> list[Plan]:
    table = corpora.load_corpora(opts.corpora_file)
    plans = []
    for corpus in corpora.select(table, opts.corpus):
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
            for s in specs:
                failures.append(Failure(engine=s.name, corpus=corpus.name, stage="setup",
                                        message=str(exc)))
            continue
        chosen = qs.queries[: opts.limit] if opts.limit else qs.queries
        plans.append(Plan(corpus, setup.manifest, setup.tree, qs, chosen, report.spans))
    return plans


def run(opts: Options, events: Events | None = None) -> Outcome:
    events = events or Events()
    if any(k < 1 for k in opts.cutoffs):
        raise UsageError("--cutoffs are whole numbers >= 1")
    specs = load_specs(opts.engines or default_engines())
    failures: list[Failure] = []
    plans = _plan(opts, events, failures, specs)
    rows: list[Row] = []
    engines_out = {s.name: _engine_out(s) for s in specs}
    interrupted = False
    try:
        for i, plan in enumerate(plans):
            for loaded in interleave(specs, i):
                events.stage(f"{loaded.name} on {plan.corpus.name}")
                cell = runner.Cell(
                    loaded=loaded, corpus=plan.corpus.name, corpus_pin=plan.corpus.identity,
                    tree=plan.tree,
                    state=workdir.state_dir(opts.work, "state", loaded.name,
                                            plan.corpus.name).resolve(),
                    lang=",".join(plan.corpus.spec.languages), queries=plan.queries,
                    gold=plan.gold, cutoffs=tuple(opts.cutoffs), reindex=opts.reindex,
                )
                result = runner.run_cell(cell, events.tick)
                if result.failure is not None:
                    failures.append(result.failure)
                rows.extend(_rows(cell, result))
                events.cell_done(loaded.name, plan.corpus.name, result.failure is None)
    except KeyboardInterrupt:
        interrupted = True
    out = ResultFile(
        protocol_version=PROTOCOL_VERSION,
        bench_version=str(environment.describe()["bench_version"]),
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        interrupted=interrupted,
        environment=environment.describe(),
        cutoffs=list(opts.cutoffs),
        corpora={p.corpus.name: _corpus_out(p) for p in plans},
        engines=engines_out,
        rows=rows,
        comparisons=_comparisons(rows),
        failures=failures,
    )
    if opts.json_out is not None:
        write_json(out, opts.json_out)
    if interrupted:
        raise KeyboardInterrupt
    return Outcome(out, failures)


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


def _rows(cell: runner.Cell, result: runner.CellResult) -> list[Row]:
    if result.index is None or result.search is None:
        return []
    spec = cell.loaded.spec
    token_column = "corpus" if spec.text_from_corpus else "text" if spec.tokens else "none"
    rows = []
    for i, run in enumerate(result.passes):
        rows.append(Row(
            engine=cell.loaded.name, corpus=cell.corpus, per_file=run.per_file, headline=i == 0,
            tree=str(cell.tree), k=list(cell.cutoffs), n=max(cell.cutoffs) * spec.candidates,
            spans=spec.spans, token_column=token_column, index=result.index,
            search=result.search if i == 0 else result.search.model_copy(
                update={"p50_s": _p(run, 0.5), "p95_s": _p(run, 0.95)}),
            metrics=_aggregate(run, cell.cutoffs, token_column != "none"),
            flags=_flags(cell, run, token_column), errors=sum(o.error is not None
                                                              for o in run.outcomes),
            queries=run.outcomes,
        ))
    return rows


def _p(run: runner.Pass, q: float) -> float | None:
    return runner._quantile(run.latencies, q)


def failed_value(metric: str) -> float:
    """What a failed query scores: a complete miss, never a gap that flatters."""
    return 1.0 if metric == "zero_miss" else 0.0


def _applies(metric: str, outcome: QueryOutcome) -> bool:
    if outcome.error is None:
        return metric in outcome.scores
    return not metric.startswith("chunk.") or outcome.chunk_entered


def _aggregate(run: runner.Pass, cutoffs: tuple[int, ...], tokens: bool) -> dict[str, Estimate]:
    names: list[str] = []
    for o in run.outcomes:
        for name in o.scores:
            if name not in names:
                names.append(name)
    out: dict[str, Estimate] = {}
    for name in names:
        out[name] = estimate([o.scores[name] if o.error is None else failed_value(name)
                              for o in run.outcomes if _applies(name, o)])
    if tokens:
        for k in cutoffs:
            out[f"tokens@{k}"] = estimate([float(o.tokens[f"tokens@{k}"])
                                           for o in run.outcomes if o.tokens])
        out["tokens_to_first_gold"] = estimate([float(o.tokens_to_first_gold) for o in
                                                run.outcomes if o.tokens_to_first_gold is not None])
    return out


def estimate(values: list[float]) -> Estimate:
    if not values:
        return Estimate(mean=None, lo=None, hi=None, n=0)
    mean, lo, hi = stats.bootstrap_ci(values)
    return Estimate(mean=float(mean), lo=float(lo), hi=float(hi), n=len(values))


def _flags(cell: runner.Cell, run: runner.Pass, token_column: str) -> list[str]:
    spec = cell.loaded.spec
    flags = []
    answered = [o for o in run.outcomes if o.error is None]
    if spec.spans and answered and all(o.no_spans or o.raw_hits == 0 for o in answered) and any(
            o.raw_hits for o in answered):
        flags.append("!! no_spans")
    depth = sum(o.depth_limited for o in answered)
    if depth:
        flags.append(f"!! depth={depth}")
    if token_column == "corpus":
        flags.append("*")
    if not spec.spans or all(o.chunk_gains is None for o in answered):
        flags.append("chunk_not_entered")
    errors = len(run.outcomes) - len(answered)
    if errors:
        flags.append(f"errors={errors}")
    outside = sum(o.outside for o in run.outcomes)
    if outside:
        flags.append(f"outside={outside}")
    return flags


def _comparisons(rows: list[Row]) -> list[Comparison]:
    out: list[Comparison] = []
    groups: dict[tuple[str, int], list[Row]] = {}
    for row in rows:
        if row.headline:
            groups.setdefault((row.corpus, row.per_file), []).append(row)
    for (corpus, per_file), group in groups.items():
        if len(group) < 2:
            continue
        scores: dict[str, dict[str, list[float]]] = {}
        kinds = {}
        for metric, kind in PAIRED_METRICS.items():
            if not all(metric in r.metrics for r in group):
                continue
            kinds[metric] = kind
        for r in group:
            scores[r.engine] = {
                m: [float("nan") if o.error else o.scores.get(m, float("nan"))
                    for o in r.queries] for m in kinds
            }
        for c in stats.compare_pairs(scores, kinds):
            out.append(Comparison(corpus=corpus, per_file=per_file, metric=c.metric,
                                  engine_a=c.engine_a, engine_b=c.engine_b, n=c.n,
                                  delta=c.delta, lo=c.lo, hi=c.hi, p=c.p,
                                  p_adjusted=c.p_adjusted, test=c.test))
    return out
