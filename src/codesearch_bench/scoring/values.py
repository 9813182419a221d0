"""One per-query value for every statistic: what a row averages is what a test pairs.

A failed query (crash, timeout, unreadable output) is a complete miss, never
a gap: a flaky engine must not look better for failing. A metric that does
not apply to a query (a chunk metric when the query has no gold span, or the
engine no spans) is NaN, and only those NaNs are left out -- of a row's mean
and, pair by pair, of a paired test. Splits and breakouts filter the same
lists by query id.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from ..results.schema import QueryOutcome
from . import content


def failed_value(metric: str) -> float:
    """What a failed query scores: a complete miss, never a gap that flatters."""
    return 1.0 if metric == "zero_miss" else 0.0


def applies(metric: str, outcome: QueryOutcome) -> bool:
    """The metric is defined for this query (failed queries included, as misses)."""
    if outcome.error is None:
        return metric in outcome.scores
    if outcome.answer != "ranked":
        return content.applies(metric, outcome.answer, outcome.content_entered)
    return not metric.startswith("chunk.") or outcome.chunk_entered


def query_value(metric: str, outcome: QueryOutcome) -> float:
    """The one value of `metric` for this query: its score, a miss if it failed, else NaN."""
    if not applies(metric, outcome):
        return math.nan
    return outcome.scores[metric] if outcome.error is None else failed_value(metric)


def query_values(outcomes: Sequence[QueryOutcome], metric: str,
                 queries: Collection[str] | None = None) -> list[float]:
    """`query_value` for each outcome, in order; `queries` keeps only those ids."""
    return [query_value(metric, o) for o in outcomes if queries is None or o.id in queries]


def failed(outcomes: Sequence[QueryOutcome],
           queries: Collection[str] | None = None) -> list[bool]:
    """Which of the (kept) outcomes failed, aligned with `query_values`."""
    return [o.error is not None for o in outcomes if queries is None or o.id in queries]


def metric_names(outcomes: Sequence[QueryOutcome]) -> list[str]:
    """Every metric any answered query scored, in first-seen order."""
    names: dict[str, None] = {}
    for o in outcomes:
        names.update(dict.fromkeys(o.scores))
    return list(names)
