"""Turn a cell's passes into rows: aggregates with CIs, flags, paired comparisons.

A failed query scores as a complete miss (never a gap that would flatter the
engine); the row's flags say how many failed and why a number may mislead.
The per-query values come from `values`, the same ones every paired test uses.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.spec import LoadedSpec
from ..results.schema import (
    CoverageGap,
    Estimate,
    IndexOut,
    QueryOutcome,
    Row,
    SearchOut,
    TokenColumn,
)
from ..results.statistics import ComparisonOut
from . import analysis, coverage, stats, values
from .coverage import Extensions


@dataclass
class Pass:
    """Every query of a cell at one per_file setting, in query-set order.

    `command` is the search command rendered for this pass's per_file (the
    first query's); None when it was not recorded, and then a row other than
    the headline records none rather than another pass's. `answers_of` is the
    pass whose answers this one re-graded at its own per_file, because the
    engine's command did not depend on per_file. `extensions` is what its answers
    and gold held by file extension, tallied as the cell asked (its outcomes may be
    held slim); None: tallied from `outcomes`, which are whole.
    """

    per_file: int
    outcomes: list[QueryOutcome] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    command: list[str] | None = None
    answers_of: int | None = None
    extensions: Extensions | None = None


def quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def build_rows(loaded: LoadedSpec, corpus: str, tree: Path, cutoffs: tuple[int, ...],
               index: IndexOut, search: SearchOut, passes: list[Pass]) -> list[Row]:
    """One row per per_file pass; the first is the headline."""
    spec = loaded.spec
    token_column: TokenColumn = ("corpus" if spec.text_from_corpus else
                                 "text" if spec.tokens else "none")
    rows = []
    for i, run in enumerate(passes):
        gaps = _coverage(loaded, run)
        rows.append(Row(
            engine=loaded.name, corpus=corpus, per_file=run.per_file, headline=i == 0,
            tree=str(tree), k=list(cutoffs), n=max(cutoffs) * spec.candidates,
            spans=spec.spans, token_column=token_column, index=index,
            search=_search_of(search, run, headline=i == 0),
            metrics=_aggregate(run, cutoffs, token_column != "none"),
            flags=_flags(loaded, run, token_column, search, gaps),
            errors=sum(o.error is not None for o in run.outcomes), coverage=gaps,
            queries=run.outcomes,
            content_threshold=spec.content_threshold if spec.answer != "ranked" else None,
            answers_of=run.answers_of,
        ))
    return rows


def _coverage(loaded: LoadedSpec, run: Pass) -> list[CoverageGap]:
    if loaded.spec.answer != "ranked":
        return []  # a text answer names no files
    seen = run.extensions if run.extensions is not None else coverage.tally(run.outcomes)
    return seen.gaps()


def _search_of(search: SearchOut, run: Pass, *, headline: bool) -> SearchOut:
    """The headline's search record, with this pass's latencies and command."""
    command: list[str] | None
    if run.command is not None:
        command = run.command
    elif headline or search.mode == "persistent":
        # One persistent session (one start command) serves every pass.
        command = search.command
    else:
        command = None
    if headline:
        return search if command == search.command else search.model_copy(
            update={"command": command})
    return search.model_copy(update={"p50_s": quantile(run.latencies, 0.5),
                                     "p95_s": quantile(run.latencies, 0.95),
                                     "command": command})


def _aggregate(run: Pass, cutoffs: tuple[int, ...], tokens: bool) -> dict[str, Estimate]:
    return aggregate(run.outcomes, cutoffs, tokens)


def aggregate(outcomes: list[QueryOutcome], cutoffs: Sequence[int],
              tokens: bool) -> dict[str, Estimate]:
    """Every metric's mean and interval over these queries (a failed one is a miss)."""
    out: dict[str, Estimate] = {}
    for name in values.metric_names(outcomes):
        out[name] = estimate([v for v in values.query_values(outcomes, name)
                               if not math.isnan(v)])
    if tokens:
        for k in cutoffs:
            out[f"tokens@{k}"] = estimate([float(o.tokens[f"tokens@{k}"])
                                           for o in outcomes if o.tokens])
        out["tokens_to_first_gold"] = estimate([float(o.tokens_to_first_gold) for o in
                                                outcomes if o.tokens_to_first_gold is not None])
    return out


def estimate(sample: list[float]) -> Estimate:
    if not sample:
        return Estimate(mean=None, lo=None, hi=None, n=0)
    mean, lo, hi = stats.bootstrap_ci(sample)
    return Estimate(mean=float(mean), lo=float(lo), hi=float(hi), n=len(sample))


def _flags(loaded: LoadedSpec, run: Pass, token_column: str, search: SearchOut,
           gaps: list[CoverageGap]) -> list[str]:
    spec = loaded.spec
    flags = []
    if search.unsolicited:
        # One session serves every pass, and without echoed ids no line can be pinned on
        # one query: the whole cell carries the count.
        flags.append(f"!! unsolicited={search.unsolicited}")
    answered = [o for o in run.outcomes if o.error is None]
    if spec.spans and answered and all(o.no_spans or o.raw_hits == 0 for o in answered) and any(
            o.raw_hits for o in answered):
        flags.append("!! no_spans")
    depth = sum(o.depth_limited for o in answered)
    if depth:
        flags.append(f"!! depth={depth}")
    line_zero = sum(o.line_zero for o in answered)
    if line_zero:
        flags.append(f"!! line_base={line_zero}")
    if gaps:
        flags.append("!! coverage")
    if token_column == "corpus":
        flags.append("*")
    if spec.answer != "ranked":
        # Graded by what the text contains: file and chunk metrics are not entered.
        flags.append("content_graded")
        if answered and not any(o.content_entered for o in answered):
            flags.append("content_not_entered")
    elif not spec.spans or all(o.chunk_gains is None for o in answered):
        flags.append("chunk_not_entered")
    errors = len(run.outcomes) - len(answered)
    if errors:
        flags.append(f"errors={errors}")
    outside = sum(o.outside for o in run.outcomes)
    if outside:
        flags.append(f"outside={outside}")
    # Every record dropped, whether others of its answer survived (the query scored on
    # what was left) or none did (the query is one of the errors above as well).
    dropped = sum(o.dropped_records for o in run.outcomes)
    if dropped:
        flags.append(f"!! records={dropped}")
    undecodable = sum(o.replaced_bytes for o in run.outcomes)
    if undecodable:
        flags.append(f"undecodable={undecodable}")
    leftovers = sum(o.leftovers for o in run.outcomes)
    if leftovers:
        flags.append(f"leftovers={leftovers}")
    return flags


def comparisons(rows: list[Row], order: list[str] | None = None) -> list[ComparisonOut]:
    """Every pair of engines per corpus, A before B in `order` (the order they were given),
    so the paired difference reads the same way on every corpus. `analysis.statistics`
    gives these with the tiers and the summary."""
    return analysis.statistics(rows, order).comparisons
