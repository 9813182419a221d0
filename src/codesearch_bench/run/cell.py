"""Run one engine on one corpus: index, then every query once per per_file pass.

Returns rows and failures as data; nothing here raises for an engine's
misbehaviour (a crash, a hang, garbage output are query errors or a failed
cell). Only a spec that cannot be rendered or an executable that cannot be
found stop the cell, and those become a Failure too. `ensure_index` is the
one index step: compare's cells and `bench probe` (run/probe.py) both go through it.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus.fingerprint import Fingerprint, verify
from ..corpus.tree import TreeText
from ..engine import driver, state
from ..engine.driver import Context, Rendered, Searcher, SearchResult
from ..engine.output.unmatched import Tally, problems
from ..engine.spec import LoadedSpec
from ..errors import BenchError, EngineUnavailable, Stage
from ..gold.queries import Query
from ..model import Span
from ..processes.command import Measurement
from ..results.schema import Failure, IndexOut, Row, SearchOut
from ..results.spool import Spool, Spooled
from ..scoring import lineshift
from ..scoring.coverage import Extensions
from ..scoring.evaluate import evaluate, gold_models
from ..scoring.rows import Pass, build_rows, quantile

MAX_CONSECUTIVE_TIMEOUTS = 3
Tick = Callable[[str], None]


@dataclass(frozen=True)
class Cell:
    loaded: LoadedSpec
    corpus: str
    corpus_pin: str
    tree: Path
    state: Path
    lang: str
    queries: list[Query]
    gold: dict[str, list[Span]]
    cutoffs: tuple[int, ...]
    reindex: bool = False
    tree_files: int = 0
    split: str = "all"  # the queries given are all of the set, or its dev or test split
    track: str = "questions"  # hand-written questions, or the generated needles
    headline_only: bool = False  # only the headline per_file pass
    # Where to write each outcome whole as it is made, holding it slim (results/spool.py).
    spool: Path | None = None

    @property
    def context(self) -> Context:
        return Context(root=self.tree, state=self.state, corpus=self.corpus, lang=self.lang)


@dataclass
class CellResult:
    index: IndexOut | None = None
    passes: list[Pass] = field(default_factory=list)
    search: SearchOut | None = None
    failure: Failure | None = None
    rejected: list[str] = field(default_factory=list)  # "query id: why the OS refused it"
    parse_problems: list[str] = field(default_factory=list)  # paths that matched nothing
    answered: bool = False  # every query was asked (an interrupt may still come at close)
    interrupted: bool = False  # Ctrl-C while the engine was closed, after every query
    spooled: Spooled | None = None  # the outcomes' whole lines, when the cell had a spool

    def rows(self, cell: Cell) -> list[Row]:
        if self.index is None or self.search is None:
            return []
        rows = [r.model_copy(update={"split": cell.split, "track": cell.track}) for r in build_rows(
            cell.loaded, cell.corpus, cell.tree, cell.cutoffs, self.index, self.search,
            self.passes)]
        flags = (["!! parse"] if self.parse_problems else []) + (
            ["!! empty"] if self._empty() else [])
        if not flags:
            return rows
        return [r.model_copy(update={"flags": [*r.flags, *flags],
                                     "parse_problems": self.parse_problems}) for r in rows]

    def _empty(self) -> bool:
        """Every query was answered and every answer was empty: a wrong path or a dead
        index, never a real result -- say so instead of showing a row of zeros."""
        head = self.passes[0].outcomes if self.passes else []
        return bool(head) and all(o.error is None and o.raw_hits == 0 for o in head)


@dataclass
class IndexStep:
    """What ensure_index did: the record for the row, and what probe shows."""

    out: IndexOut | None
    command: Rendered | None
    measurement: Measurement | None = None  # None: no index command, or a cached index
    error: str | None = None
    stderr_tail: str | None = None


def per_file_passes(spec_per_file: list[int]) -> list[int]:
    """The headline pass (per_file 1 when served, else the smallest) first, then the rest."""
    ordered = sorted(set(spec_per_file))
    head = 1 if 1 in ordered else ordered[0]
    return [head] + [p for p in ordered if p != head]


def _same_answers(searcher: Searcher, cell: Cell, k: int, head: int, per_file: int) -> bool:
    """A one-shot engine whose every rendered command (argv, env, stdin) ignores per_file."""
    if searcher.session is not None:
        return False  # each request carries per_file: the engine may use it
    return all(searcher.command(q.query, k, head) == searcher.command(q.query, k, per_file)
               for q in cell.queries)


def ensure_index(loaded: LoadedSpec, ctx: Context, corpus_pin: str, *,
                 reindex: bool) -> IndexStep:
    """Reuse a finished index for this spec and pin, or build one from a clean state dir."""
    if reindex:
        state.clear(ctx.state)
    rendered = driver.render_index(loaded, ctx)
    if rendered is None:
        state.prepare(ctx.state)  # a real folder: a link an engine left there is removed
        return IndexStep(IndexOut(cached=False, state_bytes=None), None)
    if state.index_finished(ctx.state, loaded.sha256, corpus_pin):
        files, chunks = state.index_counts(ctx.state)
        return IndexStep(IndexOut(cached=True, state_bytes=state.dir_bytes(ctx.state),
                                  files=files, chunks=chunks, command=rendered.argv), rendered)
    state.clear(ctx.state)  # a partial or stale index is never built upon
    _, m = driver.run_index(loaded, ctx)
    assert m is not None
    if not m.ok:
        return IndexStep(None, rendered, m, error=f"index {m.describe_failure()}",
                         stderr_tail=m.stderr_tail() or None)
    files, chunks = _reported_counts(m)
    state.mark_finished(ctx.state, loaded.sha256, corpus_pin, files, chunks)
    out = IndexOut(cached=False, wall_s=m.wall_s, peak_rss_bytes=m.peak_rss_bytes,
                   rss_method=m.rss_method, state_bytes=state.dir_bytes(ctx.state),
                   files=files, chunks=chunks, command=rendered.argv,
                   leftovers=m.leftovers_killed)
    return IndexStep(out, rendered, m)


@dataclass
class Measured:
    """A finished cell as the comparison keeps it: its rows, its failure, and what the
    engine changed in its tree (checked against the fingerprint from setup)."""

    rows: list[Row]
    failure: Failure | None
    changes: list[str]
    interrupted: bool = False  # Ctrl-C while the engine was closed, after every query
    spooled: Spooled | None = None  # its rows' outcomes are slim: the whole ones are here


def measure(cell: Cell, expected: Fingerprint, tick: Tick | None = None) -> Measured:
    """Run the cell, then check its tree: what compare does per cell, in bench itself or
    in a worker process of `compare --jobs` (one cell per process at a time, either way)."""
    result = run_cell(cell, tick)
    rows = result.rows(cell)
    return Measured(rows, result.failure, verify(cell.tree, expected), result.interrupted,
                    result.spooled)


def run_cell(cell: Cell, tick: Tick | None = None) -> CellResult:
    tick = tick or (lambda _: None)
    result = CellResult()
    loaded = cell.loaded
    ctx = cell.context
    try:
        step = ensure_index(loaded, ctx, cell.corpus_pin, reindex=cell.reindex)
    except BenchError as exc:
        result.failure = Failure(engine=loaded.name, corpus=cell.corpus, stage="index",
                                 message=str(exc))
        return result
    if step.out is None:
        result.failure = Failure(engine=loaded.name, corpus=cell.corpus, stage="index",
                                 message=step.error or "index failed",
                                 stderr_tail=step.stderr_tail)
        return result
    result.index = step.out
    searcher = Searcher(loaded, ctx)
    try:
        with searcher, _rarer_young_collections(), _spooling(cell, result) as spool:
            _ask_every_query(cell, searcher, result, tick, spool)
            result.answered = True
    except KeyboardInterrupt:
        if not result.answered:
            raise
        # Every query was answered and only closing the engine was interrupted: the cell
        # is finished; the caller keeps it, then stops.
        result.interrupted = True
    except BenchError as exc:
        stage: Stage = "program" if isinstance(exc, EngineUnavailable) else (
            "start" if loaded.spec.mode == "persistent" else "search")
        result.failure = Failure(engine=loaded.name, corpus=cell.corpus, stage=stage,
                                 message=str(exc))
        return result
    if result.failure is not None:
        return result  # stopped before scoring: its lines are one off (_lines_off)
    if result.search is not None and searcher.session is not None:
        # Complete only after close: lines a sloppy engine printed after its last answer.
        result.search.unsolicited = searcher.session.unsolicited_lines
    if result.failure is None and result.passes:
        result.failure = _failed(cell, result, searcher)
    return result


# Queries allocate a few hundred short-lived containers each, all freed by reference
# counting; CPython's default (a young collection every 700 allocations) spent about a
# third of a fast engine's per-query time scanning them (benchmarks/overhead.py). Cycles
# are still collected, only less often, and the old thresholds come back after the loop.
YOUNG_THRESHOLD = 20_000


@contextmanager
def _rarer_young_collections() -> Iterator[None]:
    old = gc.get_threshold()
    gc.set_threshold(max(old[0], YOUNG_THRESHOLD), *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


@contextmanager
def _spooling(cell: Cell, result: CellResult) -> Iterator[Spool | None]:
    """The cell's spool while it asks, if it has one; closed into `result.spooled`."""
    if cell.spool is None:
        yield None
        return
    spool = Spool(cell.spool)
    try:
        yield spool
    finally:
        result.spooled = spool.close()


def _ask_every_query(cell: Cell, searcher: Searcher, result: CellResult, tick: Tick,
                     spool: Spool | None) -> None:
    loaded = cell.loaded
    k_max = max(cell.cutoffs)
    text = TreeText(cell.tree)
    timeouts = 0
    seen = Tally()
    passes = per_file_passes(loaded.spec.per_file)[:1 if cell.headline_only else None]
    # Decided before asking: only then are the headline pass's answers worth keeping.
    blind = {p: _same_answers(searcher, cell, k_max, passes[0], p) for p in passes[1:]}
    keep = any(blind.values())
    asked: list[SearchResult] = []
    # Each query's gold as its outcomes store it, shared by its passes.
    gold_out = [gold_models(cell.gold.get(q.id, [])) for q in cell.queries]
    watch = lineshift.Watch(text) if lineshift.applies(loaded.spec) else None
    for per_file in passes:
        extensions = Extensions()
        run = Pass(per_file, extensions=extensions)
        reuse = blind.get(per_file, False)
        if reuse:
            # The engine cannot see per_file: asking again would return the same answers.
            run.answers_of = passes[0]
        for i, q in enumerate(cell.queries):
            if reuse:
                answer = asked[i]
            elif timeouts >= MAX_CONSECUTIVE_TIMEOUTS:
                # A one-shot engine that hangs every time would otherwise cost its full
                # timeout on every remaining query.
                answer = SearchResult(error=f"skipped: the engine timed out on {timeouts} "
                                     "queries in a row")
            else:
                answer = searcher.search(q.query, k_max, per_file)
                timeouts = timeouts + 1 if answer.timed_out else 0
                seen.add(answer.parsed)
            if keep and per_file == passes[0]:
                asked.append(answer)
            graded = evaluate(q.id, answer, cell.gold.get(q.id, []), loaded.spec, text=text,
                              per_file=per_file, cutoffs=cell.cutoffs,
                              tree_files=cell.tree_files, gold_out=gold_out[i],
                              split=q.split, tags=q.tags)
            extensions.add((g.path for g in gold_out[i]), (s.path for s in graded.slots))
            run.outcomes.append(graded.outcome if spool is None else spool.put(graded.outcome))
            tick(f"{loaded.name} {cell.corpus} per_file={per_file} {q.id}")
            if watch is not None and graded.normalized is not None:
                watch.add(graded.normalized.hits)
                if watch.done and _lines_off(cell, watch, result):
                    return
                watch = None if watch.done else watch
            if answer.error is None:
                run.latencies.append(answer.latency_s)
            elif answer.rejected and not reuse:
                result.rejected.append(f"{q.id}: {answer.error}")
        if watch is not None and _lines_off(cell, watch, result):
            return  # fewer answers with text than watched, and most of them one line off
        watch = None  # the headline pass decides
        if cell.queries:
            # Each pass records its own command line: per_file is in it.
            run.command = searcher.command(cell.queries[0].query, k_max, per_file).argv
        result.passes.append(run)
    asked.clear()
    result.parse_problems = problems(loaded.spec.parse, seen)
    head = result.passes[0] if result.passes else Pass(1)
    first = None
    if cell.queries:
        first = searcher.command(cell.queries[0].query, k_max,
                                 per_file_passes(loaded.spec.per_file)[0]).argv
    result.search = SearchOut(
        mode=loaded.spec.mode, p50_s=quantile(head.latencies, 0.5),
        p95_s=quantile(head.latencies, 0.95), peak_rss_bytes=searcher.peak_rss_bytes,
        restarts=searcher.session.restarts if searcher.session else 0, command=first)


def _lines_off(cell: Cell, watch: lineshift.Watch, result: CellResult) -> bool:
    """Stop the cell (a failure at stage "spec", exit 2) when its first answers' own text is
    one line off their lines on most spans: every chunk metric would be scored one line off,
    so the spec's fix is said now instead of after a run of wrong spans."""
    verdict = watch.verdict(cell.loaded.spec.line_base)
    if verdict is None:
        return False
    result.failure = Failure(
        engine=cell.loaded.name, corpus=cell.corpus, stage="spec",
        message=f"{cell.loaded.file}: stopped before scoring, its lines are one off its own "
        f"text: {verdict} (its first {watch.seen} answers with text: "
        f"{watch.shifts.summary()})")
    return True


def _failed(cell: Cell, result: CellResult, searcher: Searcher) -> Failure | None:
    """The cell failed when nothing was answered, or when the OS refused some commands."""
    name, head = cell.loaded.name, result.passes[0]
    errors = [o.error for o in head.outcomes if o.error is not None]
    if head.outcomes and len(errors) == len(head.outcomes):
        # An engine that answered nothing failed, whatever its exit codes said.
        return Failure(engine=name, corpus=cell.corpus, stage="search",
                       message=f"all {len(errors)} queries failed; the first: {errors[0]}",
                       stderr_tail=(searcher.session.stderr_tail() or None)
                       if searcher.session else None)
    refused = sorted({r.split(":", 1)[0] for r in result.rejected})
    if refused:
        # Not the tool's answer but its command line: the spec must change (stdin or
        # persistent mode), so the run says so in its exit code, with the rows kept.
        return Failure(engine=name, corpus=cell.corpus, stage="search",
                       message=f"{len(refused)} of {len(head.outcomes)} queries could not be "
                       f"run and score as misses; the first: {result.rejected[0]}")
    return None


def _reported_counts(m: Measurement) -> tuple[int | None, int | None]:
    """An index command may end its stdout with {"files": N, "chunks": M}."""
    lines = m.stdout.decode("utf-8", errors="replace").strip().splitlines()
    if not lines:
        return None, None
    try:
        data = json.loads(lines[-1])
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None

    def num(key: str) -> int | None:
        value = data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    return num("files"), num("chunks")
