"""Run one engine on one corpus: index, then every query once per per_file pass.

Returns rows and failures as data; nothing here raises for an engine's
misbehaviour (a crash, a hang, garbage output are query errors or a failed
cell). Only a spec that cannot be rendered or an executable that cannot be
found stop the cell, and those become a Failure too.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import driver, metrics, scoring, tokens, workdir
from .errors import BenchError
from .goldset import GoldSpan
from .process import Measurement
from .queries import Query
from .results import Failure, IndexOut, QueryOutcome, SearchOut, SlotOut
from .spec import LoadedSpec
from .tree import read_lines

KEEP_SLOTS = 20
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
    gold: dict[str, list[GoldSpan]]
    cutoffs: tuple[int, ...]
    reindex: bool = False
    tree_files: int = 0


@dataclass
class Pass:
    per_file: int
    outcomes: list[QueryOutcome] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


@dataclass
class CellResult:
    index: IndexOut | None = None
    passes: list[Pass] = field(default_factory=list)
    search: SearchOut | None = None
    failure: Failure | None = None


def per_file_passes(spec_per_file: list[int]) -> list[int]:
    """The headline pass (per_file 1 when served, else the smallest) first, then the rest."""
    ordered = sorted(set(spec_per_file))
    head = 1 if 1 in ordered else ordered[0]
    return [head] + [p for p in ordered if p != head]


def run_cell(cell: Cell, tick: Tick | None = None) -> CellResult:
    tick = tick or (lambda _: None)
    result = CellResult()
    loaded = cell.loaded
    ctx = driver.Context(root=cell.tree, state=cell.state, corpus=cell.corpus, lang=cell.lang)
    try:
        result.index = _index(cell, ctx)
    except _CellFailed as exc:
        result.failure = exc.failure
        return result
    except BenchError as exc:
        result.failure = Failure(engine=loaded.name, corpus=cell.corpus, stage="index",
                                 message=str(exc))
        return result
    k_max = max(cell.cutoffs)
    try:
        with driver.Searcher(loaded, ctx) as searcher:
            timeouts = 0
            for per_file in per_file_passes(loaded.spec.per_file):
                run = Pass(per_file)
                for q in cell.queries:
                    tick(f"{loaded.name} {cell.corpus} per_file={per_file} {q.id}")
                    if timeouts >= MAX_CONSECUTIVE_TIMEOUTS:
                        # A one-shot engine that hangs every time would otherwise cost
                        # its full timeout on every remaining query.
                        found = driver.SearchResult(error=f"skipped: the engine timed out on "
                                                    f"{timeouts} queries in a row")
                    else:
                        found = searcher.search(q.query, k_max, per_file)
                        timeouts = timeouts + 1 if found.timed_out else 0
                    outcome = _outcome(cell, q, found, per_file)
                    run.outcomes.append(outcome)
                    if found.error is None:
                        run.latencies.append(found.latency_s)
                result.passes.append(run)
            head = result.passes[0] if result.passes else Pass(1)
            first = _first_command(loaded, ctx, searcher, cell)
            result.search = SearchOut(
                mode=loaded.spec.mode, p50_s=_quantile(head.latencies, 0.5),
                p95_s=_quantile(head.latencies, 0.95), peak_rss_bytes=searcher.peak_rss_bytes,
                restarts=searcher.session.restarts if searcher.session else 0, command=first,
            )
            errors = [o.error for o in head.outcomes if o.error is not None]
            if head.outcomes and len(errors) == len(head.outcomes):
                # An engine that answered nothing failed, whatever its exit codes said.
                result.failure = Failure(
                    engine=loaded.name, corpus=cell.corpus, stage="search",
                    message=f"all {len(errors)} queries failed; the first: {errors[0]}",
                    stderr_tail=searcher.session.stderr_tail() or None
                    if searcher.session else None)
    except BenchError as exc:
        stage = "start" if loaded.spec.mode == "persistent" else "search"
        result.failure = Failure(engine=loaded.name, corpus=cell.corpus, stage=stage,
                                 message=str(exc))
    return result


class _CellFailed(Exception):
    def __init__(self, failure: Failure) -> None:
        self.failure = failure


def _index(cell: Cell, ctx: driver.Context) -> IndexOut:
    loaded = cell.loaded
    if cell.reindex:
        workdir.clear(cell.state)
    rendered = driver.render_index(loaded, ctx)
    if rendered is None:
        cell.state.mkdir(parents=True, exist_ok=True)
        return IndexOut(cached=False, state_bytes=None)
    if workdir.index_finished(cell.state, loaded.sha256, cell.corpus_pin):
        files, chunks = workdir.index_counts(cell.state)
        return IndexOut(cached=True, state_bytes=driver.dir_bytes(cell.state),
                        files=files, chunks=chunks, command=rendered.argv)
    workdir.clear(cell.state)  # a partial or stale index is never built upon
    _, m = driver.run_index(loaded, ctx)
    assert m is not None
    if not m.ok:
        raise _CellFailed(Failure(
            engine=loaded.name, corpus=cell.corpus, stage="index",
            message=f"index {m.describe_failure()}", stderr_tail=m.stderr_tail() or None))
    files, chunks = _reported_counts(m)
    workdir.mark_finished(cell.state, loaded.sha256, cell.corpus_pin, files, chunks)
    return IndexOut(cached=False, wall_s=m.wall_s, peak_rss_bytes=m.peak_rss_bytes,
                    rss_method=m.rss_method, state_bytes=driver.dir_bytes(cell.state),
                    files=files, chunks=chunks, command=rendered.argv,
                    leftovers=m.leftovers_killed)


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


def _first_command(loaded: LoadedSpec, ctx: driver.Context, searcher: driver.Searcher,
                   cell: Cell) -> list[str] | None:
    if searcher.start_command is not None:
        return searcher.start_command.argv
    if not cell.queries:
        return None
    q = cell.queries[0]
    return driver.render_search(loaded, ctx, q.query, max(cell.cutoffs),
                                per_file_passes(loaded.spec.per_file)[0]).argv


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def _outcome(cell: Cell, q: Query, found: driver.SearchResult, per_file: int) -> QueryOutcome:
    spec = cell.loaded.spec
    gold_spans = cell.gold.get(q.id, [])
    out = QueryOutcome(id=q.id, latency_s=found.latency_s, error=found.error,
                       raw_hits=len(found.hits), leftovers=found.leftovers,
                       replaced_bytes=found.parsed.replaced_bytes if found.parsed else 0,
                       chunk_entered=spec.spans and any(g.start is not None for g in gold_spans))
    if found.error is not None:
        return out
    out.line_zero = spec.line_base == 1 and any(h.start == 0 for h in found.hits)
    norm = scoring.normalize(found.hits, cell.tree, strip_prefix=spec.strip_prefix,
                             line_base=spec.line_base)
    out.outside = norm.outside
    slots = scoring.collapse(norm.hits, per_file)
    gold = [scoring.GoldItem(g.path, g.start, g.end) for g in gold_spans]
    if not gold:
        out.error = "no resolved gold for this query"
        return out
    graded = scoring.grade(slots, gold, spans=spec.spans)
    k_max = max(cell.cutoffs)
    out.n_slots = len(slots)
    # Built from values the harness made itself: skip re-validating 20 models a query.
    out.slots = [SlotOut.model_construct(path=s.path, chunks=[(h.start, h.end) for h in s.chunks])
                 for s in slots[:KEEP_SLOTS]]
    out.file_gains = list(graded.file_gains[:KEEP_SLOTS])
    out.chunk_gains = list(graded.chunk_gains[:KEEP_SLOTS]) if graded.chunk_gains else (
        [] if graded.chunk_gains is not None else None)
    out.first_file_slot = graded.first_file_slot
    out.first_chunk_slot = graded.first_chunk[0] if graded.first_chunk else None
    out.depth_limited = scoring.depth_limited(len(found.hits), k_max * spec.candidates,
                                              len(slots), k_max, cell.tree_files)
    out.no_spans = scoring.lacks_spans(found.hits, spec.spans)
    out.scores = _scores(graded, cell.cutoffs)
    if spec.has_token_column:
        out.tokens, out.tokens_to_first_gold = _tokens(cell, slots, graded)
    return out


def _scores(graded: scoring.Grade, cutoffs: tuple[int, ...]) -> dict[str, float]:
    """file.* and chunk.* metrics; MRR and zero-miss look 20 slots deep whatever the cutoffs."""
    file = metrics.query_scores(graded.file_gains, graded.n_gold, cutoffs=cutoffs,
                                depth=metrics.MRR_DEPTH)
    zero_miss = file.pop("zero_miss")
    scores = {f"file.{name}": value for name, value in file.items()}
    if graded.chunk_gains is not None:
        chunk = metrics.query_scores(graded.chunk_gains, graded.n_gold_chunks,
                                     cutoffs=cutoffs, depth=metrics.MRR_DEPTH)
        del chunk["zero_miss"]  # zero-miss is about files, entered once
        scores.update({f"chunk.{name}": value for name, value in chunk.items()})
    scores["zero_miss"] = zero_miss
    return scores


def _tokens(cell: Cell, slots: list[scoring.Slot], graded: scoring.Grade,
            ) -> tuple[dict[str, int], int | None]:
    spec = cell.loaded.spec
    cache: dict[str, list[str] | None] = {}
    per_chunk: list[list[int]] = []
    for slot in slots[:max(cell.cutoffs)]:
        counts = []
        for hit in slot.chunks:
            text = _shown_text(cell.tree, slot.path, hit, cache) if spec.text_from_corpus \
                else hit.text or ""
            counts.append(tokens.count(text))
        per_chunk.append(counts)
    shown = {f"tokens@{k}": sum(sum(c) for c in per_chunk[:k]) for k in cell.cutoffs}
    before = None
    if graded.first_chunk is not None and graded.first_chunk[0] <= len(per_chunk):
        slot_rank, chunk_index = graded.first_chunk
        before = sum(sum(c) for c in per_chunk[:slot_rank - 1])
        before += sum(per_chunk[slot_rank - 1][:chunk_index + 1])
    return shown, before


def _shown_text(tree: Path, path: str, hit: object, cache: dict[str, list[str] | None]) -> str:
    """The tree's lines at a span; read_lines refuses anything outside the tree."""
    if path not in cache:
        cache[path] = read_lines(tree, path)
    lines = cache[path]
    start, end = getattr(hit, "start", None), getattr(hit, "end", None)
    if lines is None or start is None or end is None:
        return ""
    return "\n".join(lines[max(start, 1) - 1:end])
