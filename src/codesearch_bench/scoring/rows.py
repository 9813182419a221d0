"""Turn a cell's passes into rows: aggregates with CIs, flags, paired comparisons.

A failed query scores as a complete miss (never a gap that would flatter the
engine); the row's flags say how many failed and why a number may mislead.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..engine.spec import LoadedSpec
from ..results.schema import (
    Comparison,
    Estimate,
    IndexOut,
    QueryOutcome,
    Row,
    SearchOut,
    TokenColumn,
)
from . import stats

PAIRED_METRICS = {"file.hit@10": "binary", "chunk.hit@10": "binary", "file.mrr": "continuous",
                  "chunk.mrr": "continuous"}


@dataclass
class Pass:
    """Every query of a cell at one per_file setting, in query-set order."""

    per_file: int
    outcomes: list[QueryOutcome] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)


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
        rows.append(Row(
            engine=loaded.name, corpus=corpus, per_file=run.per_file, headline=i == 0,
            tree=str(tree), k=list(cutoffs), n=max(cutoffs) * spec.candidates,
            spans=spec.spans, token_column=token_column, index=index,
            search=search if i == 0 else search.model_copy(
                update={"p50_s": quantile(run.latencies, 0.5),
                        "p95_s": quantile(run.latencies, 0.95)}),
            metrics=_aggregate(run, cutoffs, token_column != "none"),
            flags=_flags(loaded, run, token_column, search), errors=sum(o.error is not None
                                                                for o in run.outcomes),
            queries=run.outcomes,
        ))
    return rows


def failed_value(metric: str) -> float:
    """What a failed query scores: a complete miss, never a gap that flatters."""
    return 1.0 if metric == "zero_miss" else 0.0


def _applies(metric: str, outcome: QueryOutcome) -> bool:
    if outcome.error is None:
        return metric in outcome.scores
    return not metric.startswith("chunk.") or outcome.chunk_entered


def _aggregate(run: Pass, cutoffs: tuple[int, ...], tokens: bool) -> dict[str, Estimate]:
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


def _flags(loaded: LoadedSpec, run: Pass, token_column: str, search: SearchOut) -> list[str]:
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
    undecodable = sum(o.replaced_bytes for o in run.outcomes)
    if undecodable:
        flags.append(f"undecodable={undecodable}")
    leftovers = sum(o.leftovers for o in run.outcomes)
    if leftovers:
        flags.append(f"leftovers={leftovers}")
    return flags


def comparisons(rows: list[Row], order: list[str] | None = None) -> list[Comparison]:
    """Every pair of engines per corpus, A before B in `order` (the order they were given),
    so the paired difference reads the same way on every corpus."""
    out: list[Comparison] = []
    groups: dict[tuple[str, int], list[Row]] = {}
    for row in rows:
        if row.headline:
            groups.setdefault((row.corpus, row.per_file), []).append(row)
    rank = {name: i for i, name in enumerate(order or [])}
    for (corpus, per_file), group in groups.items():
        if len(group) < 2:
            continue
        group = sorted(group, key=lambda r: rank.get(r.engine, len(rank)))
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
