"""Rows -> the statistics part of a result: paired comparisons, tiers, the suite summary.

`statistics(rows, order)` is the one call compare and report make; the group
functions under it take any subset of queries (`queries`, labelled `group`),
so a split or a tag is compared, tiered and summarized by the same rules.
Every number uses `values.query_value`, the value the rows average.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from ..protocol import PAIRED_METRICS
from ..results.schema import QueryOutcome, Row
from ..results.statistics import (
    ComparisonOut,
    MacroMean,
    PairRecord,
    Summary,
    TierEntry,
    TierGroup,
    Twin,
)
from . import paired, summary, tiers, values


@dataclass(frozen=True)
class Statistics:
    """What a result file holds besides its rows."""

    comparisons: list[ComparisonOut]
    tiers: list[TierGroup]
    summary: Summary | None
    summaries: list[Summary]
    twins: list[Twin] = field(default_factory=list)

    def as_update(self) -> dict[str, object]:
        """For `ResultFile.model_copy(update=...)`."""
        return {"comparisons": self.comparisons, "tiers": self.tiers, "summary": self.summary,
                "summaries": self.summaries, "twins": self.twins}


def headline_groups(rows: list[Row], order: list[str] | None = None
                    ) -> dict[tuple[str, int], list[Row]]:
    """Headline rows by (corpus, per_file), engines in `order` (the order they were given).

    A row whose every query failed is a gap (its cell is a failed combination), not a
    participant: it has no metric to pair on, and the pairs take only the metrics all
    their group's rows carry, so it would leave the other engines with no pair at all.
    """
    rank = {name: i for i, name in enumerate(order or [])}
    groups: dict[tuple[str, int], list[Row]] = {}
    for row in rows:
        if row.headline and any(o.error is None for o in row.queries):
            groups.setdefault((row.corpus, row.per_file), []).append(row)
    return {key: sorted(group, key=lambda r: rank.get(r.engine, len(rank)))
            for key, group in groups.items()}


def _aligned(group: list[Row], queries: Collection[str] | None) -> list[list[QueryOutcome | None]]:
    """Each row's outcomes in the first row's query order (a query a row lacks is None)."""
    ids = [o.id for o in group[0].queries if queries is None or o.id in queries]
    out = []
    for row in group:
        by_id = {o.id: o for o in row.queries}
        out.append([by_id.get(i) for i in ids])
    return out


def _value(metric: str, outcome: QueryOutcome | None) -> float:
    return math.nan if outcome is None else values.query_value(metric, outcome)


def group_comparisons(group: list[Row], *, queries: Collection[str] | None = None,
                      group_label: str | None = None) -> list[ComparisonOut]:
    """Every engine pair of one headline group on every paired metric all its rows carry."""
    if len(group) < 2:
        return []
    kinds = {m: k for m, k in PAIRED_METRICS.items() if all(m in r.metrics for r in group)}
    aligned = _aligned(group, queries)
    scores = {r.engine: {m: [_value(m, o) for o in outs] for m in kinds}
              for r, outs in zip(group, aligned, strict=True)}
    failed = {r.engine: [o is not None and o.error is not None for o in outs]
              for r, outs in zip(group, aligned, strict=True)}
    corpus, per_file = group[0].corpus, group[0].per_file
    return [ComparisonOut(corpus=corpus, per_file=per_file, metric=c.metric, engine_a=c.engine_a,
                       engine_b=c.engine_b, n=c.n, delta=_finite(c.delta), lo=_finite(c.lo),
                       hi=_finite(c.hi), p=c.p, p_adjusted=c.p_adjusted, test=c.test,
                       failed_a=c.failed_a, failed_b=c.failed_b,
                       failed_either=c.failed_either, differing=c.differing, exact=c.exact,
                       mdd=c.mdd, mdd_alpha=c.mdd_alpha, group=group_label)
            for c in paired.compare_pairs(scores, kinds, failed=failed)]


def twin_pairs(groups: list[list[Row]]) -> dict[str, str]:
    """Engine -> the earlier engine it equals on every query of every corpus both ran, on
    every paired metric (failures alike): that engine again -- a persistent and a one-shot
    form of one ranking. Pairing it would only spend the Holm family's level on differences
    of zero. Equal on some corpora only (a track of one or two queries) is a coincidence,
    not a twin."""
    equal: dict[tuple[str, str], bool] = {}
    for group in groups:
        kinds = [m for m in PAIRED_METRICS if all(m in r.metrics for r in group)]
        if not kinds:
            continue
        marks = {row.engine: [(o is not None and o.error is not None,
                               *(_mark(_value(m, o)) for m in kinds)) for o in outs]
                 for row, outs in zip(group, _aligned(group, None), strict=True)}
        for i, row in enumerate(group):
            for before in group[:i]:
                key = (row.engine, before.engine)
                equal[key] = equal.get(key, True) and marks[row.engine] == marks[before.engine]
    out: dict[str, str] = {}
    for (engine, earlier), same in equal.items():
        if same and engine not in out and earlier not in out:
            out[engine] = earlier
    return out


def split_twins(group: list[Row], twins: dict[str, str]) -> tuple[list[Row], list[Twin]]:
    """The group without its twins, and the twins present in it."""
    present = {r.engine for r in group}
    kept = [r for r in group if not (r.engine in twins and twins[r.engine] in present)]
    return kept, [Twin(corpus=r.corpus, per_file=r.per_file, engine=r.engine,
                       twin_of=twins[r.engine]) for r in group if r not in kept]


def _with_twins(tier: TierGroup, twins: list[Twin]) -> TierGroup:
    """A twin stands where the engine it equals stands: same mean, same letters."""
    entries = list(tier.engines)
    for twin in twins:
        at = next((i for i, e in enumerate(entries) if e.engine == twin.twin_of), None)
        if at is not None:
            entries.insert(at + 1, entries[at].model_copy(update={"engine": twin.engine}))
    return tier.model_copy(update={"engines": entries})


def _mark(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 12)


def _finite(x: float) -> float | None:
    return None if math.isnan(x) else x


def group_means(group: list[Row], metric: str,
                queries: Collection[str] | None = None) -> dict[str, float]:
    """Each engine's mean of `metric` over the (kept) queries where it applies."""
    out = {}
    for row in group:
        vals = np.asarray(values.query_values(row.queries, metric, queries), dtype=np.float64)
        vals = vals[~np.isnan(vals)]
        if vals.size:
            out[row.engine] = float(vals.mean())
    return out


def group_tiers(group: list[Row], comparisons: list[ComparisonOut], *,
                queries: Collection[str] | None = None,
                group_label: str | None = None) -> list[TierGroup]:
    """Significance tiers of one headline group, one per metric compared."""
    out = []
    for metric in dict.fromkeys(c.metric for c in comparisons):
        means = group_means(group, metric, queries)
        better = {(c.engine_a, c.engine_b) if (c.delta or 0.0) > 0 else (c.engine_b, c.engine_a)
                  for c in comparisons if c.metric == metric and _significant(c)}
        ranked = tiers.tiers(means, better)
        out.append(TierGroup(corpus=group[0].corpus, per_file=group[0].per_file, metric=metric,
                             group=group_label, engines=[
                                 TierEntry(engine=t.engine, mean=t.mean, letters=t.letters,
                                           rank_lo=t.rank_lo, rank_hi=t.rank_hi)
                                 for t in ranked]))
    return out


def _significant(c: ComparisonOut) -> bool:
    return c.p_adjusted is not None and c.p_adjusted < paired.ALPHA and bool(c.delta)


def suite_summary(rows: list[Row], comparisons: list[ComparisonOut],
                  order: list[str] | None = None, *,
                  queries: Collection[str] | None = None) -> Summary | None:
    """Across corpora (two or more): macro means with stratified intervals, win/tie/loss."""
    corpora = list(dict.fromkeys(r.corpus for r in rows if r.headline))
    if len(corpora) < 2:
        return None
    rank = {name: i for i, name in enumerate(order or [])}
    engines = sorted(dict.fromkeys(r.engine for r in rows if r.headline),
                     key=lambda e: rank.get(e, len(rank)))
    head = {(r.engine, r.corpus): r for r in rows if r.headline}
    macro = []
    for metric in PAIRED_METRICS:
        for engine in engines:
            strata, used = [], []
            for corpus in corpora:
                row = head.get((engine, corpus))
                if row is None or metric not in row.metrics:
                    continue
                vals = [v for v in values.query_values(row.queries, metric, queries)
                        if not math.isnan(v)]
                if vals:
                    strata.append(vals)
                    used.append(corpus)
            if not strata:
                continue
            mean, lo, hi = summary.stratified_bootstrap(strata)
            macro.append(MacroMean(engine=engine, metric=metric, corpora=used, mean=mean,
                                   lo=lo, hi=hi))
    return Summary(corpora=corpora, macro=macro, pairs=_pairs(comparisons))


def _pairs(comparisons: list[ComparisonOut]) -> list[PairRecord]:
    tally: dict[tuple[str, str, str], dict[str, summary.Outcome]] = {}
    for c in comparisons:
        outcome = summary.outcome(c.delta, c.p_adjusted, paired.ALPHA)
        tally.setdefault((c.metric, c.engine_a, c.engine_b), {})[c.corpus] = outcome
    out = []
    for (metric, a, b), per_corpus in tally.items():
        counts = summary.count(per_corpus.values())
        out.append(PairRecord(metric=metric, engine_a=a, engine_b=b, wins=counts[0],
                              ties=counts[1], losses=counts[2], outcomes=per_corpus))
    return out


def statistics(rows: list[Row], order: list[str] | None = None, *,
               queries: Collection[str] | None = None,
               group_label: str | None = None) -> Statistics:
    """The comparisons, tiers and summary of these rows (all queries, or the kept ones)."""
    comparisons: list[ComparisonOut] = []
    tier_groups: list[TierGroup] = []
    twins: list[Twin] = []
    groups = list(headline_groups(rows, order).values())
    # Twins by their whole rows, on every corpus: on a split or a tag, engines that differ
    # overall are still two engines, however alike they are there.
    pairs = twin_pairs(groups)
    for whole in groups:
        group, alike = split_twins(whole, pairs)
        twins += alike
        found = group_comparisons(group, queries=queries, group_label=group_label)
        comparisons += found
        tier_groups += [_with_twins(t, alike)
                        for t in group_tiers(group, found, queries=queries,
                                             group_label=group_label)]
    # Tracks never pool: a needle and a question are different tasks.
    summaries = []
    for track in dict.fromkeys(r.track for r in rows):
        units = {r.corpus for r in rows if r.track == track}
        found_summary = suite_summary([r for r in rows if r.track == track],
                                      [c for c in comparisons if c.corpus in units], order,
                                      queries=queries)
        if found_summary is not None:
            summaries.append(found_summary.model_copy(update={"track": track}))
    main = next((s for s in summaries if s.track == "questions"), None) or \
        (summaries[0] if len(summaries) == 1 else None)
    return Statistics(comparisons, tier_groups, main, summaries, twins)
