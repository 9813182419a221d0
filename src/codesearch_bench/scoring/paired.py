"""Every pair of engines compared on every metric of one family: tests, Holm, power.

Two engines run on the same corpus answer the same queries, so they are
compared query by query on exactly the per-query values their rows average
(`values.query_value`: a failed query is a miss). A family is one group of
queries (a corpus x per_file, or a split or tag of it) and one metric; Holm
runs across its pairs, and each pair's minimum detectable difference is taken
at the level Holm's first step demands, 0.05 / (pairs in the family).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

from . import power, stats

__all__ = ["ALPHA", "PairedComparison", "compare_pairs"]

ALPHA = 0.05
"""The family-wise level a comparison is called significant at (Holm-adjusted p < ALPHA)."""

_TESTS = {"binary": "mcnemar", "continuous": "randomization"}


@dataclass(frozen=True)
class PairedComparison:
    """One metric compared between two engines over their shared queries.

    ``delta`` is the mean of ``engine_a - engine_b`` with bootstrap interval
    ``[lo, hi]``; ``n`` counts the queries both engines are scored on (failed
    ones included, as misses; ``failed_a``/``failed_b``/``failed_either`` count
    those); ``differing`` the queries whose two values differ. ``p`` comes from
    ``test`` (``"mcnemar"`` or ``"randomization"``), exact when ``exact``;
    ``p_adjusted`` is Holm-corrected across every engine pair for this metric;
    ``mdd`` is the minimum detectable difference at level ``mdd_alpha`` and 80% power.
    """

    metric: str
    engine_a: str
    engine_b: str
    n: int
    delta: float
    lo: float
    hi: float
    p: float
    p_adjusted: float
    test: str
    failed_a: int = 0
    failed_b: int = 0
    failed_either: int = 0
    differing: int = 0
    exact: bool = True
    mdd: float | None = None
    mdd_alpha: float = ALPHA


def _as_binary(values: NDArray[np.float64], metric: str, engine: str) -> list[bool]:
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError(f"metric {metric!r} is binary but engine {engine!r} has non-0/1 values")
    return [bool(v) for v in values]


def _scores_of(scores: dict[str, dict[str, list[float]]], engine: str, metric: str) -> list[float]:
    try:
        return scores[engine][metric]
    except KeyError:
        raise ValueError(f"engine {engine!r} has no scores for metric {metric!r}") from None


def _failures(failed: Mapping[str, Sequence[bool]] | None, engine: str,
              size: int) -> NDArray[np.bool_]:
    if failed is None or engine not in failed:
        return np.zeros(size, dtype=bool)
    mask = np.asarray(failed[engine], dtype=bool).reshape(-1)
    if mask.size != size:
        raise ValueError(f"engine {engine!r}: {mask.size} failure flags for {size} queries")
    return mask


@dataclass(frozen=True)
class _Pair:
    engine_a: str
    engine_b: str
    x: list[float]
    y: list[float]
    failed_a: int
    failed_b: int
    failed_either: int


def _pair(scores: dict[str, dict[str, list[float]]], failed: Mapping[str, Sequence[bool]] | None,
          metric: str, engine_a: str, engine_b: str) -> _Pair:
    a = np.asarray(_scores_of(scores, engine_a, metric), dtype=np.float64)
    b = np.asarray(_scores_of(scores, engine_b, metric), dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.size} vs {b.size}")
    keep = ~(np.isnan(a) | np.isnan(b))
    fa = _failures(failed, engine_a, a.size)[keep]
    fb = _failures(failed, engine_b, b.size)[keep]
    return _Pair(engine_a, engine_b, a[keep].tolist(), b[keep].tolist(), int(fa.sum()),
                 int(fb.sum()), int((fa | fb).sum()))


def compare_pairs(
    scores: dict[str, dict[str, list[float]]],
    metric_kinds: dict[str, str],
    *,
    failed: Mapping[str, Sequence[bool]] | None = None,
    resamples: int = 10000,
    ci_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    alpha: float = ALPHA,
) -> list[PairedComparison]:
    """Compare every pair of engines on every listed metric.

    ``scores[engine][metric]`` is one value per query, all engines over the
    same query order: a failed query already scored as a miss, NaN only where
    the metric does not apply. ``failed[engine]`` (aligned) says which queries
    failed, for the counts. ``metric_kinds`` maps a metric to ``"binary"``
    (exact McNemar) or ``"continuous"`` (sign flip). Pairs follow the engines'
    order in ``scores`` (a before b); results are grouped by metric in
    ``metric_kinds`` order, and Holm runs across the pairs of each metric.
    """
    engines = list(scores)
    results: list[PairedComparison] = []
    for metric, kind in metric_kinds.items():
        if kind not in _TESTS:
            raise ValueError(
                f"metric {metric!r}: kind must be 'binary' or 'continuous', not {kind!r}"
            )
        pairs = [_pair(scores, failed, metric, a, b) for a, b in combinations(engines, 2)]
        level_mdd = alpha / len(pairs) if pairs else alpha
        found: list[tuple[_Pair, stats.Interval, float, int, bool, float | None]] = []
        for pair in pairs:
            n = len(pair.x)
            diffs = [u - v for u, v in zip(pair.x, pair.y, strict=True)]
            changed = stats.differing(pair.x, pair.y)
            if kind == "binary":
                p = stats.mcnemar_exact(_as_binary(np.asarray(pair.x), metric, pair.engine_a),
                                        _as_binary(np.asarray(pair.y), metric, pair.engine_b))
                exact, mdd = True, power.mcnemar_mdd(n, changed, level_mdd)
            else:
                p = stats.paired_randomization(pair.x, pair.y, resamples=resamples, seed=seed)
                exact = changed <= stats.EXACT_MAX
                mdd = power.sign_flip_mdd(diffs, level_mdd)
            ci = stats.paired_delta_ci(pair.x, pair.y, resamples=ci_resamples, seed=seed,
                                       level=level)
            found.append((pair, ci, p, changed, exact, mdd))
        adjusted = stats.holm([row[2] for row in found])
        for (pair, (delta, lo, hi), p, changed, exact, mdd), p_adj in zip(found, adjusted,
                                                                          strict=True):
            results.append(PairedComparison(
                metric=metric, engine_a=pair.engine_a, engine_b=pair.engine_b, n=len(pair.x),
                delta=delta, lo=lo, hi=hi, p=p, p_adjusted=p_adj, test=_TESTS[kind],
                failed_a=pair.failed_a, failed_b=pair.failed_b,
                failed_either=pair.failed_either, differing=changed, exact=exact, mdd=mdd,
                mdd_alpha=level_mdd))
    return results
