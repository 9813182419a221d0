"""Confidence intervals and paired significance tests: the primitives.

Every aggregate carries a percentile-bootstrap interval. Two engines run on the
same corpus answer the same queries, so they are compared query by query:
an exact McNemar test for 0/1 metrics, a sign-flip test for continuous ones
(exact up to EXACT_MAX differing queries), then a Holm correction
(`paired.compare_pairs` puts them together). Everything is deterministic for a
given seed; protocol/PROTOCOL.md ("Statistics") states each rule so a reader
can recompute any number from the result JSON.

NaN means "does not apply to this query" (`values.query_value`; a failed query
is a miss, not a NaN): it is dropped, with its partner in a paired test.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "EXACT_MAX",
    "bootstrap_ci",
    "differing",
    "holm",
    "mcnemar_exact",
    "paired_delta_ci",
    "paired_randomization",
]

_BLOCK = 1000  # resamples drawn per batch, to bound memory on large query sets
# A block's draws are a (block, n) array: on a large query set, fewer resamples a block
# (numpy's Generator draws the same sequence however it is cut, so the numbers are equal).
_ELEMENTS = 1 << 20


def _blocks(resamples: int, n: int) -> list[tuple[int, int]]:
    """(start, stop) of each block of resamples over n values: about a million draws each."""
    size = max(1, min(_BLOCK, _ELEMENTS // max(n, 1)))
    return [(start, min(start + size, resamples)) for start in range(0, resamples, size)]

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
    for start, stop in _blocks(resamples, n):
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
    p: float = min(1.0, 2 * tail / 2**m)  # int / int: exact rounding, no float overflow
    return p


EXACT_MAX = 20
"""Up to this many non-zero paired differences the sign-flip p is enumerated exactly."""

TIE_TOLERANCE = 1e-12
"""A sign flip whose statistic is within this (relative) of the observed one is as extreme."""


def _nonzero_differences(a: Sequence[float], b: Sequence[float]) -> NDArray[np.float64]:
    x, y = _paired(a, b)
    diff = x - y
    nonzero: NDArray[np.float64] = diff[diff != 0.0]
    return nonzero


def _threshold(diff: NDArray[np.float64]) -> float:
    observed = abs(float(diff.sum()))
    # Rounding must not make the observed signs, or an equal statistic, look less extreme.
    return observed - TIE_TOLERANCE * max(1.0, observed)


def _subset_sums(values: NDArray[np.float64]) -> NDArray[np.float64]:
    sums = np.zeros(1, dtype=np.float64)
    for v in values:
        sums = np.concatenate((sums + v, sums - v))
    return sums


def _exact_extreme(diff: NDArray[np.float64], threshold: float) -> int:
    """How many of the 2^m sign vectors reach the threshold, meeting in the middle."""
    half = diff.size // 2
    left = _subset_sums(diff[:half])
    right = np.sort(_subset_sums(diff[half:]))
    high = right.size - np.searchsorted(right, threshold - left, side="left")
    low = np.searchsorted(right, -threshold - left, side="right")
    return int(high.sum() + low.sum())


def paired_randomization(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 10000,
    seed: int = 0,
) -> float:
    """Two-sided sign-flip p-value for paired scores.

    With ``d_1..d_m`` the non-zero differences ``a_i - b_i`` in query order
    (pairs holding a NaN dropped; a zero difference is the same under every
    flip), the statistic of signs ``s`` is ``T(s) = |sum s_i d_i|`` and a flip is
    extreme when ``T(s) >= T(1) - 1e-12 * max(1, T(1))``.

    - ``m == 0`` or ``T(1)`` within the tolerance of 0: ``p = 1``.
    - ``m <= EXACT_MAX``: exact, ``p = #extreme / 2^m`` over every sign vector.
    - otherwise Monte Carlo: ``rng = numpy.random.default_rng(seed)``; in blocks of
      1000 resamples (the last one shorter), ``u = rng.random((block, m))``, sign
      -1 where ``u < 0.5`` else +1; ``p = (1 + #extreme) / (resamples + 1)``.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    diff = _nonzero_differences(a, b)
    m = diff.size
    threshold = _threshold(diff)
    if m == 0 or threshold <= 0.0:
        return 1.0
    if m <= EXACT_MAX:
        return _exact_extreme(diff, threshold) / float(2**m)
    rng = np.random.default_rng(seed)
    extreme = 0
    for start, stop in _blocks(resamples, m):
        signs = np.where(rng.random((stop - start, m)) < 0.5, -1.0, 1.0)
        stats = np.abs((signs * diff).sum(axis=1))
        extreme += int(np.count_nonzero(stats >= threshold))
    return (1 + extreme) / (resamples + 1)


def differing(a: Sequence[float], b: Sequence[float]) -> int:
    """Pairs whose two values differ (NaN pairs dropped): what a paired test sees."""
    return int(_nonzero_differences(a, b).size)


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
