"""power.py: at the minimum detectable difference the test rejects ~80% of the time.

Checked three ways: McNemar's power against scipy's binomial distribution
(written from PROTOCOL.md, not from power.py), and both MDDs by simulating the
harness's own tests on synthetic data shifted by the MDD.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from codesearch_bench.scoring import power
from codesearch_bench.scoring.stats import mcnemar_exact, paired_randomization

ALPHA = 0.05 / 6  # four engines: six pairs in a Holm family


def _scipy_mcnemar_power(n: int, discordant: float, delta: float, alpha: float) -> float:
    spread = max(discordant, delta)
    q = (spread + delta) / (2 * spread)
    total = 0.0
    for m in range(n + 1):
        c = -1
        for i in range(m // 2 + 1):
            if 2 * sps.binom.cdf(i, m, 0.5) < alpha:
                c = i
        if c < 0:
            continue
        reject = sps.binom.cdf(c, m, q) + sps.binom.sf(m - c - 1, m, q)
        total += sps.binom.pmf(m, n, spread) * reject
    return float(total)


@pytest.mark.parametrize(("n", "discordant"), [(40, 8), (50, 3), (30, 0), (40, 22)])
def test_mcnemar_power_at_the_mdd_is_eighty_percent(n: int, discordant: int) -> None:
    mdd = power.mcnemar_mdd(n, discordant, ALPHA)
    assert mdd is not None and 0 < mdd <= 1
    assert _scipy_mcnemar_power(n, discordant / n, mdd, ALPHA) == pytest.approx(0.8, abs=1e-6)
    assert _scipy_mcnemar_power(n, discordant / n, mdd * 0.97, ALPHA) < 0.8


def test_mcnemar_mdd_by_simulation() -> None:
    rng = np.random.default_rng(4)
    n, discordant = 40, 9
    mdd = power.mcnemar_mdd(n, discordant, ALPHA)
    assert mdd is not None
    spread = max(discordant / n, mdd)
    a_only, b_only = (spread + mdd) / 2, (spread - mdd) / 2
    rejected = 0
    trials = 3000
    for _ in range(trials):
        u = rng.random(n)
        a = u < a_only
        b = (u >= a_only) & (u < a_only + b_only)
        rejected += mcnemar_exact(list(a), list(b)) < ALPHA
    assert rejected / trials == pytest.approx(0.8, abs=0.025)


def test_mcnemar_mdd_edges() -> None:
    # Four queries can never reach p < 0.0083: the smallest McNemar p is 2/16.
    assert power.mcnemar_mdd(4, 2, ALPHA) is None
    assert power.mcnemar_mdd(0, 0, ALPHA) is None
    # More discordance to explain, or fewer queries, means a larger MDD.
    few, many = power.mcnemar_mdd(40, 4, ALPHA), power.mcnemar_mdd(40, 20, ALPHA)
    assert few is not None and many is not None and few < many
    small, large = power.mcnemar_mdd(30, 6, ALPHA), power.mcnemar_mdd(120, 24, ALPHA)
    assert small is not None and large is not None and large < small
    assert power.mcnemar_critical(5, 0.0625 + 1e-9) == 0
    assert power.mcnemar_critical(5, 0.0625) == -1


def _rejection_rate(draw: np.ndarray, alpha: float, seed: int) -> float:  # type: ignore[type-arg]
    return float(np.mean([paired_randomization(list(row), [0.0] * row.size, resamples=2000,
                                               seed=seed + i) < alpha
                          for i, row in enumerate(draw)]))


@pytest.mark.parametrize(("n", "sd"), [(40, 0.4), (25, 0.3), (12, 0.3)])
def test_sign_flip_mdd_by_simulation_normal(n: int, sd: float) -> None:
    rng = np.random.default_rng(n)
    observed = rng.normal(0.0, sd, n)
    mdd = power.sign_flip_mdd(list(observed), ALPHA)
    assert mdd is not None
    spread = float(observed.std(ddof=1))
    at = _rejection_rate(rng.normal(mdd, spread, (800, n)), ALPHA, 0)
    half = _rejection_rate(rng.normal(mdd / 2, spread, (400, n)), ALPHA, 10_000)
    assert at == pytest.approx(0.8, abs=0.05)
    assert half < 0.5


def test_sign_flip_mdd_by_simulation_mrr_like() -> None:
    """Discrete, mostly-zero differences like real MRR pairs, shifted by the MDD."""
    rng = np.random.default_rng(7)
    support = np.array([0, 0, 0, 0, 0, 0.5, -0.5, 1, -1, 0.25, -0.25, 1 / 3, -1 / 3, 0.75])
    observed = rng.choice(support, 40)
    mdd = power.sign_flip_mdd(list(observed), ALPHA)
    assert mdd is not None
    centred = observed - observed.mean()
    at = _rejection_rate(rng.choice(centred, (800, 40)) + mdd, ALPHA, 0)
    assert at == pytest.approx(0.8, abs=0.06)


def test_t_quantile_matches_scipy() -> None:
    for df in (5, 9, 29, 49, 200):
        for p in (0.975, 1 - ALPHA / 2, 1 - 0.05 / 56):
            # The expansion is an approximation: worst at few degrees and far tails.
            assert power.t_quantile(p, df) == pytest.approx(sps.t.ppf(p, df), rel=7e-3)
            if df >= 29:
                assert power.t_quantile(p, df) == pytest.approx(sps.t.ppf(p, df), rel=1e-5)


def test_sign_flip_mdd_edges() -> None:
    assert power.sign_flip_mdd([0.0] * 30, ALPHA) is None  # tie on every query
    assert power.sign_flip_mdd([0.2] * 30, ALPHA) is None  # one constant difference
    assert power.sign_flip_mdd([0.5], ALPHA) is None
    # Six differences: the smallest sign-flip p is 2/64 > 0.0083 whatever their size.
    assert power.sign_flip_mdd([0.5, -0.5, 1.0, 0.0, 0.25, 1.0], ALPHA) is None
    assert power.sign_flip_mdd([0.5, -0.5, 1.0, 0.0, 0.25, 1.0], 0.05) is not None
    assert power.sign_flip_mdd([float("nan"), *[0.1, -0.1] * 20], ALPHA) == (
        power.sign_flip_mdd([0.1, -0.1] * 20, ALPHA))


def test_the_mdd_of_a_large_query_set() -> None:
    """A needle track has 1,500 queries: 2.0**1500 overflows a float, the power must not."""
    from codesearch_bench.scoring.power import sign_flip_mdd, sign_flip_power

    rng = np.random.default_rng(3)
    diffs = rng.normal(0.05, 0.4, size=1500)
    mdd = sign_flip_mdd(diffs, 0.05 / 3)
    assert mdd is not None and 0.02 < mdd < 0.05
    assert sign_flip_power(5000, 0.4, 0.05, 0.01) > 0.99


@pytest.mark.parametrize("n", [1, 9, 120, 700])
def test_power_in_row_blocks_equals_the_whole_table(n: int, monkeypatch: pytest.MonkeyPatch
                                                    ) -> None:
    """Large tables are expanded a block of rows at a time: the same floats, exactly."""
    cases = [(d / n, delta) for d in sorted({0, 1, n // 3, n}) for delta in (0.01, 0.1, 0.6)]
    power._table.cache_clear()
    monkeypatch.setattr(power, "_CELLS", 10**12)  # one whole table, kept
    assert power._table(n, 0.05).whole is not None
    whole = [power.mcnemar_power(n, d, delta, 0.05) for d, delta in cases]
    for cells in (1, 3 * (n + 1), 50_000):
        power._table.cache_clear()
        monkeypatch.setattr(power, "_CELLS", cells)
        assert (power._table(n, 0.05).whole is None) == ((n + 1) ** 2 > cells)
        assert [power.mcnemar_power(n, d, delta, 0.05) for d, delta in cases] == whole
    power._table.cache_clear()


def _terms(k: np.ndarray, rest: np.ndarray, p: float) -> np.ndarray:
    """k log p + rest log(1 - p), each product taken only where its count is positive:
    the formula as `power._log_terms` first wrote it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(k > 0, k * np.log(p), 0.0) if p > 0 else np.where(k > 0, -np.inf, 0.0)
        second = (np.where(rest > 0, rest * np.log1p(-p), 0.0) if p < 1
                  else np.where(rest > 0, -np.inf, 0.0))
    return first + second


def _every_row(n: int, discordant: float, delta: float, alpha: float) -> float:
    """McNemar's power summed over every row and every cell of the table, the
    probability of each row however small, exp taken everywhere: what
    `mcnemar_power` computed before it skipped rows of probability 0.0 and took
    exp only where the test rejects."""
    table = power._McNemarTable.build(n, alpha)
    spread = max(discordant, delta)
    if spread <= 0.0:
        return 0.0
    better = min(1.0, (spread + delta) / (2.0 * spread))
    grid = np.arange(n + 1, dtype=np.float64)
    last, _ = table._rows(n, n + 1)
    counts = np.exp(last[0] + _terms(grid, n - grid, spread))
    sums = np.empty(n + 1, dtype=np.float64)
    for m in range(n + 1):
        log_comb, rejects = table._rows(m, m + 1)
        with np.errstate(invalid="ignore"):
            split = np.exp(log_comb + _terms(grid[None, :], m - grid[None, :], better))
        sums[m] = np.where(rejects, split, 0.0).sum(axis=1)[0]
    return float(counts @ sums)


@pytest.mark.parametrize("n", [5, 300, 1500])
def test_rows_of_probability_zero_are_skipped_without_changing_a_bit(n: int) -> None:
    # At n = 1,500 and 5% discordant, most rows' probabilities underflow to 0.0.
    power._table.cache_clear()
    for discordant in (0.0, 0.05, 0.5):
        for delta in (0.003, 0.05, 0.4, 1.0):
            assert power.mcnemar_power(n, discordant, delta, 0.01) == _every_row(
                n, discordant, delta, 0.01), (discordant, delta)
    power._table.cache_clear()


@pytest.mark.parametrize("n", [1, 7, 300, 1500])
def test_the_table_rows_are_the_factorial_formula_to_the_bit(n: int) -> None:
    table = power._McNemarTable.build(n, 0.01)
    lf = table.log_fact
    m, k = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    expected = np.where(k <= m, lf[m] - lf[k] - lf[np.maximum(m - k, 0)], -np.inf)
    for lo, hi in ((0, n + 1), (n // 2, n + 1), (n, n + 1), (0, 1)):
        got, _ = table._rows(lo, hi)
        assert got.tobytes() == expected[lo:hi].tobytes(), (lo, hi)
