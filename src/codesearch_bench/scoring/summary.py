"""Across corpora: a macro mean with a stratified bootstrap interval, and win/tie/loss.

A suite mean weighs every corpus alike (a 50-query corpus does not outvote a
30-query one), so its interval resamples queries within each corpus, never
across them: the corpora are fixed, the queries are the sample.
protocol/PROTOCOL.md ("Across corpora") states the drawing order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np

from .stats import Interval

Outcome = Literal["win", "tie", "loss"]

_BLOCK = 1000  # resamples per batch, as in stats.bootstrap_ci


def stratified_bootstrap(strata: Sequence[Sequence[float]], *, resamples: int = 1000,
                         seed: int = 0, level: float = 0.95) -> Interval:
    """Mean of the strata's means, and its percentile interval ``(mean, lo, hi)``.

    ``rng = numpy.random.default_rng(seed)``; for each block of up to 1000
    resamples, for each stratum in order, ``idx = rng.integers(0, n_s, size=(b, n_s))``
    and that stratum's resampled means ``values[idx].mean(axis=1)``; a resample's
    macro mean is the mean over strata. The bounds are ``numpy.quantile`` (linear)
    at ``(1 - level) / 2`` and ``(1 + level) / 2``. NaN values are not allowed.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    arrays = [np.asarray(s, dtype=np.float64).reshape(-1) for s in strata]
    if not arrays or any(a.size == 0 for a in arrays):
        raise ValueError("every stratum needs at least one value")
    if any(np.isnan(a).any() for a in arrays):
        raise ValueError("strata hold NaN: drop the queries a metric does not apply to first")
    center = float(np.mean([a.mean() for a in arrays]))
    rng = np.random.default_rng(seed)
    macro = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, _BLOCK):
        stop = min(start + _BLOCK, resamples)
        means = np.empty((stop - start, len(arrays)), dtype=np.float64)
        for s, arr in enumerate(arrays):
            idx = rng.integers(0, arr.size, size=(stop - start, arr.size))
            means[:, s] = arr[idx].mean(axis=1)
        macro[start:stop] = means.mean(axis=1)
    alpha = 1.0 - level
    lo, hi = np.quantile(macro, [alpha / 2.0, 1.0 - alpha / 2.0])
    return (center, float(lo), float(hi))


def outcome(delta: float | None, p_adjusted: float | None, alpha: float) -> Outcome:
    """Engine a's result in one comparison: a significant difference is a win or a loss."""
    if delta is None or p_adjusted is None or math.isnan(p_adjusted) or p_adjusted >= alpha:
        return "tie"
    if delta > 0:
        return "win"
    return "loss" if delta < 0 else "tie"


def count(outcomes: Iterable[Outcome]) -> tuple[int, int, int]:
    """(wins, ties, losses)."""
    items = list(outcomes)
    return items.count("win"), items.count("tie"), items.count("loss")
