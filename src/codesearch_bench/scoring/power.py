"""Minimum detectable differences: what a paired comparison could have found.

A non-significant result on 30-50 queries means little until it says how big
a difference the comparison would have caught. The MDD of a comparison is the
smallest true difference of means that its own test would declare significant
with probability POWER (80%) at level ``alpha`` (`paired.compare_pairs` passes
0.05 / m, the strictest level Holm uses in a family of m pairs), given the
spread the comparison observed. protocol/PROTOCOL.md ("Power") states both
models; a test checks them by simulation.

- McNemar (0/1 metrics): exact. The observed discordant proportion ``p_d``
  is kept, or raised to ``delta`` when a larger difference is asked about;
  each discordant pair favours the better engine with probability
  ``(p_d + delta) / (2 p_d)``, and the power is the exact probability that
  McNemar's exact p falls below ``alpha``.
- Sign flip (continuous metrics): the paired t-test it approximates (both
  standardize the mean difference by the spread of the differences). With
  ``s`` the differences' sample SD, the power of the two-sided one-sample
  t-test at noncentrality ``delta * sqrt(n) / s``, by the normal
  approximations of Abramowitz & Stegun 26.7.5 (the t quantile) and 26.7.10
  (noncentral t); zero when 2 / 2^n >= alpha, below the sign flip's reach.

Every function takes per-query counts or differences, so a split or a tag is
measured the same way.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from statistics import NormalDist

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

POWER = 0.8
"""The power every MDD is stated at."""

LARGEST = 1.0
"""The widest difference a metric in [0, 1] allows: an MDD beyond it is None."""

NO_SPREAD = 1e-12
"""A standard deviation at most this is rounding of equal differences: no spread."""

_STEPS = 60  # bisection halvings: far below any printed digit


def _log_factorials(n: int) -> NDArray[np.float64]:
    return np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))))


def _log_terms(k: NDArray[np.float64], rest: NDArray[np.float64], p: float) -> NDArray[np.float64]:
    """k log p + rest log(1 - p), with 0 log 0 = 0 (p of 0 or 1 is a certainty)."""
    if 0.0 < p < 1.0:
        # Both logs finite: where k or rest is 0 the product is a zero (signed, which
        # exp cannot tell), and rest < 0 only where C(m, k) is 0 anyway (k > m).
        direct: NDArray[np.float64] = k * np.log(p) + rest * np.log1p(-p)
        return direct
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(k > 0, k * np.log(p), 0.0) if p > 0 else np.where(k > 0, -np.inf, 0.0)
        second = (np.where(rest > 0, rest * np.log1p(-p), 0.0) if p < 1
                  else np.where(rest > 0, -np.inf, 0.0))
    out: NDArray[np.float64] = first + second
    return out


@functools.cache
def mcnemar_critical(m: int, alpha: float) -> int:
    """The largest c with exact McNemar p = 2 P[Bin(m, 1/2) <= c] < alpha; -1 if none.

    With m discordant pairs the test rejects iff the smaller side has at most c.
    Exact integers throughout; cached, because every pair of a Holm family asks
    for the same m and level, up to m = 1,500 on a needle track.
    """
    num, den = Fraction(alpha).as_integer_ratio()  # a float is an exact fraction
    bound = num << m  # p < alpha  <=>  2 * tail * den < num * 2^m
    tail, c, term = 0, -1, 1  # term = C(m, i), updated in place
    for i in range(m // 2 + 1):
        tail += term
        if 2 * tail * den >= bound:
            break
        c = i
        term = term * (m - i) // (i + 1)
    return c


# Rows of the (n+1) x (n+1) tables computed at once: every array a power evaluation
# makes is then about 2 MB, not 8 (n+1)^2 bytes (n = 10,000 queries: 800 MB each).
_CELLS = 1 << 18


@dataclass(frozen=True)
class _McNemarTable:
    """What does not depend on delta: log C(m, k) and which (m, k) reject, for m, k <= n.

    Kept as log factorials and each m's critical count, and expanded a block of
    rows m at a time: the same elementwise arithmetic and the same row sums as the
    whole (n+1)^2 table, so the same floats, in memory that does not grow with n^2.
    """

    n: int
    log_fact: NDArray[np.float64]
    crit: NDArray[np.int64]  # [m]: McNemar's critical count for m discordant pairs
    # A small table (at most _CELLS cells) is expanded once and kept, as it always was.
    whole: tuple[NDArray[np.float64], NDArray[np.bool_]] | None = None

    @classmethod
    def build(cls, n: int, alpha: float) -> _McNemarTable:
        crit = np.array([mcnemar_critical(i, alpha) for i in range(n + 1)], dtype=np.int64)
        table = cls(n, _log_factorials(n), crit)
        if (n + 1) ** 2 <= _CELLS:
            table = dataclasses.replace(table, whole=table._rows(0, n + 1))
        return table

    def _rows(self, lo: int, hi: int) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """log C(m, k) (-inf where k > m) and the rejections, for rows m in [lo, hi)."""
        if self.whole is not None:
            return self.whole[0][lo:hi], self.whole[1][lo:hi]
        n, log_fact = self.n, self.log_fact
        m = np.arange(lo, hi)[:, None]
        k = np.arange(n + 1)[None, :]
        inside = k <= m
        # log_fact[max(m - k, 0)] for each row m: a window of the reversed factorials
        # (padded with log 0!), not a gather -- the same elements at half the cost.
        padded = np.concatenate([log_fact[::-1], np.full(n, log_fact[0])])
        rest = sliding_window_view(padded, n + 1)[n - hi + 1:n - lo + 1][::-1]
        log_comb = np.where(inside, log_fact[lo:hi, None] - log_fact[None, :] - rest, -np.inf)
        crit = self.crit[lo:hi][:, None]
        return log_comb, inside & (crit >= 0) & ((k <= crit) | (k >= m - crit))

    def power(self, discordant: float, delta: float) -> float:
        spread = max(discordant, delta)
        if spread <= 0.0:
            return 0.0
        better = min(1.0, (spread + delta) / (2.0 * spread))
        grid = np.arange(self.n + 1, dtype=np.float64)
        last, _ = self._rows(self.n, self.n + 1)
        counts = np.exp(last[0] + _log_terms(grid, self.n - grid, spread))
        # Only rows m whose probability is not 0.0 can add to the power: the others
        # are skipped (their product was an exact 0.0 and stays one: the same floats).
        # The binomial's mass is one run of rows, ~40 standard deviations wide.
        live = np.flatnonzero(counts)
        sums = np.zeros(self.n + 1, dtype=np.float64)
        if not len(live):
            return float(counts @ sums)
        k = grid[None, :]
        step = max(1, _CELLS // (self.n + 1))
        first, end = int(live[0]), int(live[-1]) + 1
        for lo in range(first, end, step):
            hi = min(lo + step, end)
            log_comb, rejects = self._rows(lo, hi)
            m = grid[lo:hi, None]
            # exp only where the test rejects: the same row, zeros elsewhere, at half the cost.
            with np.errstate(invalid="ignore"):
                split = np.exp(log_comb + _log_terms(k, m - k, better),
                               out=np.zeros(log_comb.shape), where=rejects)
            sums[lo:hi] = split.sum(axis=1)
        return float(counts @ sums)


def mcnemar_power(n: int, discordant: float, delta: float, alpha: float) -> float:
    """Exact power of McNemar's exact test at level alpha.

    ``n`` paired queries, ``discordant`` the proportion on which the engines
    disagree (kept, or raised to ``delta``), ``delta`` the true difference of
    the two hit rates.
    """
    return _table(n, alpha).power(discordant, delta)


@functools.lru_cache(maxsize=4)  # O(n) each: log factorials and critical counts
def _table(n: int, alpha: float) -> _McNemarTable:
    """One table per (n, level): every pair of a Holm family on a corpus shares it."""
    return _McNemarTable.build(n, alpha)


def _smallest(power_at: Callable[[float], float], target: float) -> float | None:
    """The smallest delta in (0, LARGEST] with power_at(delta) >= target (power rises)."""
    if power_at(LARGEST) < target:
        return None
    lo, hi = 0.0, LARGEST
    for _ in range(_STEPS):
        mid = (lo + hi) / 2.0
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


# Pure, and asked again for the same counts: a Holm family's pairs share their level,
# and metrics share discordant counts (file zero-miss is file hit@20 turned over).
@functools.lru_cache(maxsize=4096)
def mcnemar_mdd(n: int, discordant_pairs: int, alpha: float,
                power: float = POWER) -> float | None:
    """The MDD of McNemar's exact test: `n` paired queries, `discordant_pairs` of them
    discordant. None when even delta = 1 would not reach the power (too few queries)."""
    if n < 1:
        return None
    table = _table(n, alpha)
    observed = discordant_pairs / n
    return _smallest(lambda d: table.power(observed, d), power)


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile by the Cornish-Fisher expansion (Abramowitz & Stegun 26.7.5)."""
    z = NormalDist().inv_cdf(p)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _noncentral_t_cdf(t: float, df: int, noncentrality: float) -> float:
    """P[T' <= t] for noncentral t (Abramowitz & Stegun 26.7.10)."""
    return NormalDist().cdf((t * (1 - 1 / (4 * df)) - noncentrality)
                            / math.sqrt(1 + t * t / (2 * df)))


def sign_flip_power(n: int, sd: float, delta: float, alpha: float) -> float:
    """The power of the paired t-test the sign flip approximates (module docstring).

    Zero when even n differences all of one sign could not reach alpha: the
    exact sign flip's smallest p is 2 / 2^n.
    """
    if n < 2 or sd <= 0.0 or 2.0 * 0.5**n >= alpha:  # 2.0**n overflows past n = 1023
        return 0.0
    df = n - 1
    t = t_quantile(1.0 - alpha / 2.0, df)
    shift = delta * math.sqrt(n) / sd
    return 1.0 - _noncentral_t_cdf(t, df, shift) + _noncentral_t_cdf(-t, df, shift)


def sign_flip_mdd(differences: Sequence[float], alpha: float,
                  power: float = POWER) -> float | None:
    """The MDD of the sign-flip test from the n paired differences (zeros included).

    None for fewer than two differences, no spread (``s = 0``: the engines tie
    on every query, or differ by one constant), too few queries for any sign
    flip to reach alpha, or when no delta up to 1 reaches the power.
    """
    arr = np.asarray(differences, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    n = int(arr.size)
    if n < 2:
        return None
    sd = float(arr.std(ddof=1))
    if sd <= NO_SPREAD:
        return None
    return _smallest(lambda d: sign_flip_power(n, sd, d, alpha), power)
