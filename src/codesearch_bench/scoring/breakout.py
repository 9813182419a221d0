"""A saved result seen through part of its queries: one split, or groups by tag, language,
tier or corpus.

`restrict` recomputes every row over one split's queries (and the statistics with
them), so `bench report --split test` reads like a run on the test split. `by`
pools each engine's headline queries per group -- across corpora, so a tag's mean
is over every query that carries it -- and gives each group's mean with its
bootstrap interval. A failed query is a miss, as in the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import UsageError
from ..protocol import HEADLINE_METRICS
from ..results.schema import Estimate, QueryOutcome, ResultFile, Row
from . import values
from .analysis import statistics
from .rows import aggregate, estimate

KEYS = ("tag", "language", "tier", "corpus")
METRICS = HEADLINE_METRICS


def restrict(result: ResultFile, split: str) -> ResultFile:
    """The result as if only `split`'s queries had been run."""
    if split == "all":
        return result
    measured = {r.split for r in result.rows}
    if measured - {"all", split}:
        raise UsageError(f"these rows were measured on split {', '.join(sorted(measured))}; "
                         f"they hold no {split} queries to report")
    present = {o.split for r in result.rows for o in r.queries}
    if split not in present:
        named = sorted(s for s in present if s) or ["none recorded"]
        raise UsageError(f"no query of this result is in the {split} split; splits present: "
                         f"{', '.join(named)}",
                         hint="results written before splits were recorded have none")
    rows = [_only(r, split) for r in result.rows]
    part = statistics(rows, order=list(result.engines))
    return result.model_copy(update={"rows": rows, **part.as_update()})


def _only(row: Row, split: str) -> Row:
    kept = [o for o in row.queries if o.split == split]
    return row.model_copy(update={
        "queries": kept, "split": split, "errors": sum(o.error is not None for o in kept),
        "metrics": aggregate(kept, row.k, row.token_column != "none")})


@dataclass(frozen=True)
class GroupMean:
    key: str  # what the groups are: tag, language, tier or corpus
    group: str
    engine: str
    metric: str
    estimate: Estimate


def by(result: ResultFile, key: str) -> list[GroupMean]:
    """Each engine's mean per group on METRICS, over its headline rows' queries."""
    if key not in KEYS:
        raise UsageError(f"--by {key!r}: group by one of {', '.join(KEYS)}")
    pooled: dict[tuple[str, str], list[QueryOutcome]] = {}
    for row in result.rows:
        if not row.headline:
            continue
        for outcome in row.queries:
            for group in _groups(result, row, outcome, key):
                pooled.setdefault((group, row.engine), []).append(outcome)
    if not pooled:
        raise UsageError(f"no query of this result has a {key}" + (
            "; tags come from the query sets' `tags` (results written before they were "
            "recorded have none)" if key == "tag" else ""))
    order = {name: i for i, name in enumerate(result.engines)}
    out = []
    for (group, engine), outcomes in sorted(pooled.items(),
                                            key=lambda kv: (kv[0][0], order.get(kv[0][1], 0))):
        for metric in METRICS:
            sample = [v for v in values.query_values(outcomes, metric) if not math.isnan(v)]
            out.append(GroupMean(key, group, engine, metric, estimate(sample)))
    return out


def _groups(result: ResultFile, row: Row, outcome: QueryOutcome, key: str) -> list[str]:
    if key == "tag":
        return list(outcome.tags)
    if key == "corpus":
        return [row.corpus]
    info = result.corpora.get(row.corpus)
    if info is None:
        return []
    if key == "tier":
        return [info.tier]
    counts = {lang: n for lang, n in info.languages.items() if lang != "other"}
    return [max(counts, key=lambda lang: (counts[lang], lang))] if counts else []
