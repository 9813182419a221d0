"""Significance tiers for the headline tables: the result file's own when it states them,
else derived here from its paired comparisons, never invented where nothing was tested.

A result states no tiers for a table when it was written before results had them
(results/upgrade.py leaves `tiers` empty: they cannot be recovered without the
per-query values' tests, which the derived tiers stand in for).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...protocol import TIER_METRICS
from ...results.schema import ResultFile
from ..formats import significant


@dataclass(frozen=True)
class Tier:
    label: str  # what the cell shows: "T1", or compact letters such as "ab"
    order: int  # what the column sorts by: the tier, or the best rank
    title: str  # the hover text: what the label means for this engine


def recorded(result: ResultFile, corpus: str, per_file: int,
             track: str) -> dict[str, Tier] | None:
    """The result's tiers for this table (every query, the track's paired metric); None
    when it states none."""
    metric = TIER_METRICS[track]
    for group in result.tiers:
        if (group.corpus, group.per_file, group.metric, group.group) != (
                corpus, per_file, metric, None):
            continue
        out: dict[str, Tier] = {}
        for entry in group.engines:
            lo, hi = entry.rank_lo, entry.rank_hi
            ranks = (f"rank {lo}" if lo == hi else f"ranks {lo}–{hi}") if lo else ""
            out[entry.engine] = Tier(entry.letters, lo,
                                     f"{ranks}; engines sharing a letter are not significantly "
                                     f"different on {metric}".lstrip("; "))
        if out:
            return out
    return None


def derived(result: ResultFile, corpus: str, per_file: int, track: str) -> dict[str, Tier]:
    """T1 is the best engine on the track's paired metric and every engine the
    Holm-corrected paired test does not separate from it; the first engine it does
    separate starts the next tier, and so on down. An engine never compared with its
    tier's leader gets no tier: untested is not "not separated"."""
    metric = TIER_METRICS[track]
    rows = [r for r in result.rows if r.corpus == corpus and r.per_file == per_file
            and r.headline and (e := r.metrics.get(metric)) is not None and e.mean is not None]
    rows.sort(key=lambda r: -(r.metrics[metric].mean or 0.0))
    tested = {frozenset((c.engine_a, c.engine_b)): significant(c) for c in result.comparisons
              if c.corpus == corpus and c.per_file == per_file and c.metric == metric
              and c.group is None}
    # A twin was compared through the engine it equals: it stands where that one stands.
    twin_of = {t.engine: t.twin_of for t in result.twins
               if (t.corpus, t.per_file) == (corpus, per_file)}
    tiers: dict[str, Tier] = {}
    tier, leader = 0, ""
    for r in rows:
        if r.engine in twin_of:
            continue
        pair = frozenset((leader, r.engine))
        if not leader or tested.get(pair) is True:
            tier, leader = tier + 1, r.engine
        elif pair not in tested:
            continue
        tiers[r.engine] = Tier(f"T{tier}", tier, f"tier {tier} on {metric}, led by {leader}")
    for twin, of in twin_of.items():
        if of in tiers:
            tiers[twin] = tiers[of]
    return tiers if len(tiers) > 1 else {}


def grouped(result: ResultFile, corpus: str) -> list[tuple[str, str, int, list[str]]]:
    """The result's tiers on a subset of the queries (a split or a tag), as
    (group, metric, per_file, ["engine letters", ...]) for the comparisons section."""
    out = [(group.group, group.metric, group.per_file,
            [f"{e.engine} {e.letters}" for e in group.engines])
           for group in result.tiers if group.corpus == corpus and group.group is not None]
    return sorted(out)
