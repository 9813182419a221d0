"""Confidence intervals and paired significance tests between engines.

Every aggregate carries a percentile-bootstrap interval. Two engines run on the
same corpus answer the same queries, so they are compared query by query:
an exact McNemar test for 0/1 metrics, a sign-flip randomization test for
continuous ones, then a Holm correction across all engine pairs of a metric.
Everything is deterministic for a given seed.

A failed query is recorded as NaN: it is a gap, not a zero, so it is dropped
(together with its partner in a paired comparison) before any statistic.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "PairedComparison",
    "bootstrap_ci",
    "compare_pairs",
    "holm",
    "mcnemar_exact",
    "paired_delta_ci",
    "paired_randomization",
]

_BLOCK = 1000  # resamples drawn per batch, to bound memory on large query sets

Interval = tuple[float, float, float]


def _finite(values: Sequence[float]) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    return arr[~np.isnan(arr)]


def _paired(
    a: Sequence[float], b: Sequence[float]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    x = np.asarray(a, dtype=np.float64).reshape(-1)
    y = np.asarray(b, dtype=np.float64).reshape(-1)
    if x.shape != y.shape:
        raise ValueError(f"paired samples differ in length: {x.size} vs {y.size}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def _check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")


def bootstrap_ci(
    values: Sequence[float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Mean and percentile-bootstrap interval ``(mean, lo, hi)``.

    Draws ``resamples`` samples of size n with replacement (numpy
    ``default_rng(seed)``), takes each sample's mean, and returns the
    ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of those means
    (linear interpolation). NaN entries are dropped first. No values give
    ``(nan, nan, nan)``; one value ``v`` gives ``(v, v, v)``.
    """
    _check_level(level)
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    arr = _finite(values)
    n = arr.size
    if n == 0:
        return (math.nan, math.nan, math.nan)
    center = float(arr.mean())
    if n == 1:
        return (center, center, center)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, _BLOCK):
        stop = min(start + _BLOCK, resamples)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = arr[idx].mean(axis=1)
    alpha = 1.0 - level
    lo, hi = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0])
    return (center, float(lo), float(hi))


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Two-sided exact McNemar p-value for paired 0/1 outcomes.

    Only discordant pairs carry information: ``n01`` where ``a`` alone
    succeeds, ``n10`` where ``b`` alone does. Under the null each discordant
    pair goes either way with probability 1/2, so with ``m = n01 + n10``
    ``p = min(1, 2 * P[Binomial(m, 1/2) <= min(n01, n10)])``, computed in
    exact integer arithmetic. No discordant pairs give ``p = 1``.
    """
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    m = only_a + only_b
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(only_a, only_b) + 1))
    return min(1.0, 2 * tail / float(2**m))


def paired_randomization(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 10000,
    seed: int = 0,
) -> float:
    """Two-sided sign-flip randomization p-value for paired scores.

    With differences ``d_i = a_i - b_i`` (pairs holding a NaN dropped), each
    resample flips the sign of every ``d_i`` independently with probability
    1/2; the p-value is ``(1 + #{|mean(s * d)| >= |mean(d)|}) / (resamples + 1)``.
    No pairs, or all differences zero, give ``p = 1``.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    x, y = _paired(a, b)
    diff = x - y
    n = diff.size
    if n == 0 or not diff.any():
        return 1.0
    observed = abs(float(diff.mean()))
    # Tolerate rounding so a resample equal to the observed mean counts as extreme.
    threshold = observed - 1e-12 * max(1.0, observed)
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, resamples, _BLOCK):
        stop = min(start + _BLOCK, resamples)
        signs = np.where(rng.random((stop - start, n)) < 0.5, -1.0, 1.0)
        stats = np.abs((signs * diff).mean(axis=1))
        extreme += int(np.count_nonzero(stats >= threshold))
    return (1 + extreme) / (resamples + 1)


def paired_delta_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Mean paired difference ``a - b`` with its percentile-bootstrap interval.

    Pairs holding a NaN are dropped; the rest are resampled as pairs, i.e.
    ``bootstrap_ci`` over the differences ``a_i - b_i``.
    """
    x, y = _paired(a, b)
    return bootstrap_ci((x - y).tolist(), resamples=resamples, seed=seed, level=level)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given.

    Sorting the m p-values ascending, the i-th smallest (1-based) becomes
    ``max_{j<=i} min(1, (m - j + 1) * p_(j))``, so adjusted values never
    decrease along the sorted order and never exceed 1.
    """
    m = len(pvalues)
    for p in pvalues:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p}")
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class PairedComparison:
    """One metric compared between two engines over their shared queries.

    ``delta`` is the mean of ``engine_a - engine_b`` with bootstrap interval
    ``[lo, hi]``; ``n`` counts the queries both engines answered; ``p`` comes
    from ``test`` (``"mcnemar"`` or ``"randomization"``) and ``p_adjusted`` is
    Holm-corrected across every engine pair for this metric.
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


_TESTS = {"binary": "mcnemar", "continuous": "randomization"}


def _as_binary(values: NDArray[np.float64], metric: str, engine: str) -> list[bool]:
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError(f"metric {metric!r} is binary but engine {engine!r} has non-0/1 values")
    return [bool(v) for v in values]


def _scores_of(scores: dict[str, dict[str, list[float]]], engine: str, metric: str) -> list[float]:
    try:
        return scores[engine][metric]
    except KeyError:
        raise ValueError(f"engine {engine!r} has no scores for metric {metric!r}") from None


def compare_pairs(
    scores: dict[str, dict[str, list[float]]],
    metric_kinds: dict[str, str],
    *,
    resamples: int = 10000,
    ci_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> list[PairedComparison]:
    """Compare every pair of engines on every listed metric.

    ``scores[engine][metric]`` is one value per query, all engines over the
    same query order, NaN for a failed query. ``metric_kinds`` maps a metric to
    ``"binary"`` (exact McNemar) or ``"continuous"`` (sign-flip randomization).
    Pairs follow the engines' order in ``scores`` (a before b); results are
    grouped by metric in ``metric_kinds`` order, and Holm runs across the pairs
    of each metric.
    """
    engines = list(scores)
    results: list[PairedComparison] = []
    for metric, kind in metric_kinds.items():
        if kind not in _TESTS:
            raise ValueError(
                f"metric {metric!r}: kind must be 'binary' or 'continuous', not {kind!r}"
            )
        rows: list[tuple[str, str, int, Interval, float]] = []
        for engine_a, engine_b in combinations(engines, 2):
            x, y = _paired(
                _scores_of(scores, engine_a, metric), _scores_of(scores, engine_b, metric)
            )
            if kind == "binary":
                p = mcnemar_exact(_as_binary(x, metric, engine_a), _as_binary(y, metric, engine_b))
            else:
                p = paired_randomization(x.tolist(), y.tolist(), resamples=resamples, seed=seed)
            ci = paired_delta_ci(
                x.tolist(), y.tolist(), resamples=ci_resamples, seed=seed, level=level
            )
            rows.append((engine_a, engine_b, int(x.size), ci, p))
        adjusted = holm([row[4] for row in rows])
        for (engine_a, engine_b, n, (delta, lo, hi), p), p_adj in zip(rows, adjusted, strict=True):
            results.append(
                PairedComparison(
                    metric=metric,
                    engine_a=engine_a,
                    engine_b=engine_b,
                    n=n,
                    delta=delta,
                    lo=lo,
                    hi=hi,
                    p=p,
                    p_adjusted=p_adj,
                    test=_TESTS[kind],
                )
            )
    return results
