"""A comparison's verdict in words: who is better, on what, by how much, where -- and, for
the rest, the smallest difference the run could have seen.

Read from the result's paired comparisons (headline rows, Holm-corrected per corpus and
metric family, PROTOCOL.md "Statistics"), per track, never pooled:

- a *finding* is an engine pair and a paired metric with a significant difference on at
  least one corpus: the engine ahead, the corpora where it is significantly ahead (and
  those where the other is), and the mean difference over those corpora;
- an *undetected* pair differs significantly on no corpus for a metric; it is reported
  with the range of its minimum detectable differences (MDD) over the corpora, the
  honest reading of "no difference": smaller ones may exist;
- twins (engines equal on every query) are said once and left out of both.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..protocol import PAIRED_METRICS
from ..results.schema import ResultFile
from ..results.statistics import ComparisonOut
from .paired import ALPHA


@dataclass(frozen=True)
class Finding:
    track: str
    metric: str
    ahead: str
    behind: str
    corpora: tuple[str, ...]  # where `ahead` is significantly ahead
    against: tuple[str, ...]  # where `behind` is significantly ahead
    delta: float  # mean of ahead - behind over `corpora`
    compared: int  # corpora this pair was compared on


@dataclass(frozen=True)
class Undetected:
    track: str
    metric: str
    engine_a: str
    engine_b: str
    compared: int
    mdd_lo: float | None
    mdd_hi: float | None


@dataclass(frozen=True)
class Verdict:
    findings: list[Finding]
    undetected: list[Undetected]
    twins: list[tuple[str, str, int]]  # engine, twin of, on how many corpora


def _significant(c: ComparisonOut) -> bool:
    return c.p_adjusted is not None and c.p_adjusted < ALPHA and bool(c.delta)


def verdict(result: ResultFile) -> Verdict:
    track_of = {name: info.track for name, info in result.corpora.items()}
    headline = {(r.corpus, r.per_file) for r in result.rows if r.headline}
    groups: dict[tuple[str, str, str, str], list[ComparisonOut]] = defaultdict(list)
    for c in result.comparisons:
        if c.group is None and (c.corpus, c.per_file) in headline:
            groups[(track_of.get(c.corpus, "questions"), c.metric, c.engine_a,
                    c.engine_b)].append(c)
    findings: list[Finding] = []
    undetected: list[Undetected] = []
    metric_rank = {m: i for i, m in enumerate(PAIRED_METRICS)}
    for (track, metric, a, b), pairs in sorted(
            groups.items(), key=lambda kv: (kv[0][0] != "questions", kv[0][0],
                                            metric_rank.get(kv[0][1], 99), kv[0][2:])):
        a_ahead = [c for c in pairs if _significant(c) and (c.delta or 0) > 0]
        b_ahead = [c for c in pairs if _significant(c) and (c.delta or 0) < 0]
        if not a_ahead and not b_ahead:
            mdds = [c.mdd for c in pairs if c.mdd is not None]
            undetected.append(Undetected(track, metric, a, b, len(pairs),
                                         min(mdds) if mdds else None,
                                         max(mdds) if mdds else None))
            continue
        if len(b_ahead) > len(a_ahead):
            a, b, a_ahead, b_ahead = b, a, b_ahead, a_ahead
            sign = -1.0
        else:
            sign = 1.0
        mean = sum(sign * (c.delta or 0.0) for c in a_ahead) / len(a_ahead)
        findings.append(Finding(track, metric, a, b, tuple(c.corpus for c in a_ahead),
                                tuple(c.corpus for c in b_ahead), mean, len(pairs)))
    counted: dict[tuple[str, str], int] = defaultdict(int)
    for t in result.twins:
        if (t.corpus, t.per_file) in headline:
            counted[(t.engine, t.twin_of)] += 1
    return Verdict(findings, undetected, [(e, of, n) for (e, of), n in counted.items()])


def sentences(found: Verdict) -> list[str]:
    """The verdict as lines of plain text, one finding or one quiet pair a line."""
    lines: list[str] = []
    for e, of, n in found.twins:
        lines.append(f"{e} answers exactly as {of} on {n} corpus(es): one engine for quality, "
                     "left out of the paired tests there.")
    by_pair: dict[tuple[str, str, str], list[Finding]] = defaultdict(list)
    for f in found.findings:
        by_pair[(f.track, f.ahead, f.behind)].append(f)
    for (track, ahead, behind), pair in by_pair.items():
        parts = []
        for f in pair:
            where = ", ".join(f.corpora[:3]) + (f" +{len(f.corpora) - 3}"
                                                if len(f.corpora) > 3 else "")
            other = f"; {behind} ahead on {len(f.against)}" if f.against else ""
            parts.append(f"{f.metric} by {f.delta:+.3f} on {len(f.corpora)} of {f.compared} "
                         f"corpora ({where}{other})")
        lines.append(f"{track}: {ahead} beats {behind} on " + "; ".join(parts) + ".")
    quiet: dict[tuple[str, str, str], list[Undetected]] = defaultdict(list)
    for u in found.undetected:
        quiet[(u.track, u.engine_a, u.engine_b)].append(u)
    for (track, a, b), found_pairs in quiet.items():
        parts = []
        for u in found_pairs:
            reach = ("MDD n/a" if u.mdd_lo is None or u.mdd_hi is None else
                     f"MDD {u.mdd_lo:.2f}" if round(u.mdd_lo, 2) == round(u.mdd_hi, 2) else
                     f"MDD {u.mdd_lo:.2f}-{u.mdd_hi:.2f}")
            parts.append(f"{u.metric} ({reach})")
        lines.append(f"{track}: {a} vs {b}: no significant difference on "
                     f"{', '.join(parts)} over {found_pairs[0].compared} corpora; smaller "
                     "differences than the MDD may exist.")
    return lines
