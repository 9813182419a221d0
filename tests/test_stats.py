"""stats.py and paired.py: bootstrap, paired tests, Holm, and the pairwise engine comparison."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from codesearch_bench.scoring import power
from codesearch_bench.scoring.paired import PairedComparison, compare_pairs
from codesearch_bench.scoring.stats import (
    EXACT_MAX,
    bootstrap_ci,
    differing,
    holm,
    mcnemar_exact,
    paired_delta_ci,
    paired_randomization,
)

NAN = float("nan")


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolation quantile, written out by hand."""
    pos = q * (len(sorted_values) - 1)
    low = math.floor(pos)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (pos - low) * (sorted_values[high] - sorted_values[low])


def _bootstrap_loop(
    values: list[float], resamples: int, seed: int, level: float
) -> tuple[float, float, float]:
    rng = np.random.default_rng(seed)
    n = len(values)
    means = []
    for _ in range(resamples):
        idx = rng.integers(0, n, size=n)
        means.append(sum(values[i] for i in idx) / n)
    means.sort()
    alpha = 1 - level
    return (
        sum(values) / n,
        _quantile(means, alpha / 2),
        _quantile(means, 1 - alpha / 2),
    )


# --- bootstrap_ci -----------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("level", [0.95, 0.9])
def test_bootstrap_matches_direct_loop(seed: int, level: float) -> None:
    rng = random.Random(seed)
    values = [rng.random() for _ in range(23)]
    got = bootstrap_ci(values, resamples=1500, seed=seed, level=level)
    want = _bootstrap_loop(values, 1500, seed, level)
    assert got == pytest.approx(want, abs=1e-12)


def test_bootstrap_binary_values_interval_brackets_the_mean() -> None:
    values = [1.0] * 30 + [0.0] * 70
    mean, lo, hi = bootstrap_ci(values)
    assert mean == pytest.approx(0.3)
    assert lo < mean < hi
    assert 0.18 < lo < 0.25 and 0.35 < hi < 0.42


def test_bootstrap_edge_cases() -> None:
    assert all(math.isnan(x) for x in bootstrap_ci([]))
    assert all(math.isnan(x) for x in bootstrap_ci([NAN]))
    assert bootstrap_ci([0.25]) == (0.25, 0.25, 0.25)
    assert bootstrap_ci([0.25, NAN]) == (0.25, 0.25, 0.25)
    assert bootstrap_ci([0.5, 0.5, 0.5]) == (0.5, 0.5, 0.5)


def test_bootstrap_drops_nan() -> None:
    assert bootstrap_ci([0.1, NAN, 0.9, 0.4]) == bootstrap_ci([0.1, 0.9, 0.4])


def test_bootstrap_is_deterministic() -> None:
    rng = random.Random(3)
    values = [rng.random() for _ in range(50)]
    assert bootstrap_ci(values, seed=5) == bootstrap_ci(values, seed=5)
    assert bootstrap_ci(values, seed=5) != bootstrap_ci(values, seed=6)


def test_bootstrap_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], level=1.0)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], resamples=0)


# --- mcnemar_exact ----------------------------------------------------------


def test_mcnemar_matches_scipy_binomtest() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(11)
    for _ in range(200):
        n = rng.randint(0, 60)
        pa, pb = rng.random(), rng.random()
        a = [rng.random() < pa for _ in range(n)]
        b = [rng.random() < pb for _ in range(n)]
        only_a = sum(x and not y for x, y in zip(a, b, strict=True))
        only_b = sum(y and not x for x, y in zip(a, b, strict=True))
        if only_a + only_b == 0:
            assert mcnemar_exact(a, b) == 1.0
            continue
        want = stats.binomtest(only_a, only_a + only_b, 0.5).pvalue
        assert mcnemar_exact(a, b) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_mcnemar_hand_values() -> None:
    # 5 discordant pairs all one way: 2 * (1/2)^5
    a = [True] * 5 + [True, False] * 3
    b = [False] * 5 + [True, False] * 3
    assert mcnemar_exact(a, b) == pytest.approx(2 / 32)
    assert mcnemar_exact(b, a) == pytest.approx(2 / 32)
    # 1 vs 3 discordant: 2 * (1 + 4) / 16
    assert mcnemar_exact([1, 0, 0, 0], [0, 1, 1, 1]) == pytest.approx(10 / 16)
    # balanced discordance and no discordance
    assert mcnemar_exact([1, 0], [0, 1]) == 1.0
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]) == 1.0
    assert mcnemar_exact([], []) == 1.0


def test_mcnemar_rejects_unpaired() -> None:
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


# --- paired_randomization ---------------------------------------------------


def _flips_extreme(diff: list[float], signs: list[list[float]]) -> int:
    observed = abs(sum(diff))
    threshold = observed - 1e-12 * max(1.0, observed)
    return sum(abs(sum(s * d for s, d in zip(row, diff, strict=True))) >= threshold
               for row in signs)


def _exact_loop(a: list[float], b: list[float]) -> float:
    diff = [x - y for x, y in zip(a, b, strict=True) if x != y]
    signs = [list(row) for row in itertools.product((1.0, -1.0), repeat=len(diff))]
    return _flips_extreme(diff, signs) / len(signs)


def _monte_carlo_loop(a: list[float], b: list[float], resamples: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    diff = [x - y for x, y in zip(a, b, strict=True) if x != y]
    signs: list[list[float]] = []
    for start in range(0, resamples, 1000):
        block = rng.random((min(1000, resamples - start), len(diff)))
        signs += [[-1.0 if u < 0.5 else 1.0 for u in row] for row in block]
    return (1 + _flips_extreme(diff, signs)) / (resamples + 1)


def test_randomization_is_exact_up_to_twenty_differing_queries() -> None:
    rng = random.Random(5)
    for size in (1, 2, 7, 12):
        a = [rng.random() for _ in range(size + 3)]
        b = [x - 0.1 + 0.3 * rng.random() - 0.15 for x in a[:size]] + a[size:]
        assert differing(a, b) == size
        assert paired_randomization(a, b, resamples=50, seed=3) == _exact_loop(a, b)
    # The seed plays no part in an exact p.
    assert paired_randomization(a, b, seed=1) == paired_randomization(a, b, seed=2)


def test_randomization_exact_counts_ties_as_extreme() -> None:
    # MRR-like values: many flips reach exactly the observed |sum|.
    a = [1.0, 0.5, 1.0, 0.25, 0.0, 1 / 3]
    b = [0.5, 1.0, 0.0, 0.0, 0.5, 0.0]
    got = paired_randomization(a, b)
    assert got == _exact_loop(a, b)
    assert paired_randomization([1.0, 0.0], [0.0, 1.0]) == 1.0  # observed sum 0


def test_randomization_monte_carlo_beyond_twenty_matches_direct_loop() -> None:
    rng = random.Random(8)
    a = [rng.random() for _ in range(EXACT_MAX + 6)]
    b = [x - 0.05 + 0.3 * rng.random() - 0.15 for x in a]
    assert differing(a, b) == EXACT_MAX + 6
    got = paired_randomization(a, b, resamples=2500, seed=3)
    assert got == _monte_carlo_loop(a, b, 2500, 3)
    assert got != paired_randomization(a, b, resamples=2500, seed=4)


def test_randomization_monte_carlo_approaches_the_exact_p() -> None:
    # Same differences: 20 exact, then one more tiny one tips it into Monte Carlo.
    rng = random.Random(12)
    diff = [rng.uniform(-0.3, 0.6) for _ in range(EXACT_MAX)]
    exact = paired_randomization(diff, [0.0] * len(diff))
    mc = paired_randomization([*diff, 1e-9], [0.0] * (len(diff) + 1), resamples=20000)
    assert mc == pytest.approx(exact, abs=0.01)


def test_randomization_edge_cases() -> None:
    assert paired_randomization([0.5, 0.2], [0.5, 0.2]) == 1.0
    assert paired_randomization([], []) == 1.0
    assert paired_randomization([NAN, 1.0], [0.0, NAN]) == 1.0
    # every difference +1: only the two all-same-sign flips are as extreme
    assert paired_randomization([1.0] * 20, [0.0] * 20) == 2 / 2**20
    # zeros change nothing
    assert paired_randomization([1.0] * 5 + [0.3] * 9, [0.0] * 5 + [0.3] * 9) == 2 / 32
    p = paired_randomization([1.0] * 30, [0.0] * 30, resamples=999)
    assert p == pytest.approx(1 / 1000)
    with pytest.raises(ValueError):
        paired_randomization([1.0], [1.0, 2.0])


def test_randomization_is_deterministic() -> None:
    rng = random.Random(9)
    a = [rng.random() for _ in range(30)]
    b = [rng.random() for _ in range(30)]
    assert paired_randomization(a, b, seed=1) == paired_randomization(a, b, seed=1)


# --- paired_delta_ci --------------------------------------------------------


def test_paired_delta_is_the_bootstrap_of_differences() -> None:
    a = [0.5, 1.0, NAN, 0.0, 0.25, 1.0]
    b = [0.0, 1.0, 0.5, NAN, 0.5, 0.0]
    diffs = [0.5, 0.0, -0.25, 1.0]
    got = paired_delta_ci(a, b, seed=4)
    assert got == bootstrap_ci(diffs, seed=4)
    assert got[0] == pytest.approx(0.3125)
    assert paired_delta_ci(a, b, seed=4) == got


# --- holm ---------------------------------------------------------------------


def test_holm_textbook_example() -> None:
    # Four hypotheses (the Holm-Bonferroni example on Wikipedia): sorted
    # 0.005, 0.01, 0.03, 0.04 -> 4*0.005, 3*0.01, 2*0.03, max(1*0.04, 0.06)
    got = holm([0.01, 0.04, 0.03, 0.005])
    assert got == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_is_monotone_capped_and_order_preserving() -> None:
    assert holm([0.5, 0.6]) == [1.0, 1.0]
    assert holm([]) == []
    assert holm([0.02]) == [0.02]
    assert holm([0.04, 0.01, 0.04]) == pytest.approx([0.08, 0.03, 0.08])
    rng = random.Random(2)
    ps = [rng.random() ** 3 for _ in range(12)]
    adj = holm(ps)
    order = sorted(range(len(ps)), key=ps.__getitem__)
    assert all(adj[i] <= adj[j] for i, j in itertools.pairwise(order))
    assert all(p <= q <= 1.0 for p, q in zip(ps, adj, strict=True))
    with pytest.raises(ValueError):
        holm([NAN])


# --- compare_pairs ------------------------------------------------------------


def _scores() -> dict[str, dict[str, list[float]]]:
    rng = random.Random(21)
    engines: dict[str, dict[str, list[float]]] = {}
    for name, skill in (("grep", 0.3), ("bm25", 0.5), ("dense", 0.8)):
        hits = [1.0 if rng.random() < skill else 0.0 for _ in range(40)]
        mrr = [h / rng.randint(1, 4) for h in hits]
        engines[name] = {"hit@5": hits, "mrr": mrr}
    engines["bm25"]["hit@5"][3] = NAN  # a failed query on bm25
    engines["bm25"]["mrr"][3] = NAN
    return engines


def test_compare_pairs_structure_and_values() -> None:
    scores = _scores()
    kinds = {"hit@5": "binary", "mrr": "continuous"}
    results = compare_pairs(scores, kinds, resamples=2000)
    assert [(r.metric, r.engine_a, r.engine_b) for r in results] == [
        ("hit@5", "grep", "bm25"),
        ("hit@5", "grep", "dense"),
        ("hit@5", "bm25", "dense"),
        ("mrr", "grep", "bm25"),
        ("mrr", "grep", "dense"),
        ("mrr", "bm25", "dense"),
    ]
    assert [r.n for r in results] == [39, 40, 39] * 2
    assert [r.test for r in results] == ["mcnemar"] * 3 + ["randomization"] * 3

    for metric in kinds:
        rows = [r for r in results if r.metric == metric]
        assert [r.p_adjusted for r in rows] == holm([r.p for r in rows])

    first = results[0]
    keep = [i for i in range(40) if i != 3]
    a = [scores["grep"]["hit@5"][i] for i in keep]
    b = [scores["bm25"]["hit@5"][i] for i in keep]
    assert first.p == mcnemar_exact([x == 1.0 for x in a], [y == 1.0 for y in b])
    assert (first.delta, first.lo, first.hi) == paired_delta_ci(a, b)
    assert first.delta == pytest.approx(sum(a) / 39 - sum(b) / 39)

    mrr_row = results[4]
    assert mrr_row.p == paired_randomization(
        scores["grep"]["mrr"], scores["dense"]["mrr"], resamples=2000
    )
    assert mrr_row.delta < 0 and mrr_row.hi < 0  # dense clearly beats grep
    assert mrr_row.p_adjusted < 0.05


def test_compare_pairs_is_deterministic() -> None:
    kinds = {"hit@5": "binary", "mrr": "continuous"}
    first = compare_pairs(_scores(), kinds, resamples=500)
    second = compare_pairs(_scores(), kinds, resamples=500)
    assert first == second
    assert all(isinstance(r, PairedComparison) for r in first)
    with pytest.raises(AttributeError):
        first[0].p = 0.0  # type: ignore[misc]


def test_compare_pairs_rejects_bad_input() -> None:
    scores = _scores()
    with pytest.raises(ValueError, match="kind"):
        compare_pairs(scores, {"hit@5": "ordinal"})
    with pytest.raises(ValueError, match="binary"):
        compare_pairs(scores, {"mrr": "binary"})
    with pytest.raises(ValueError, match="ndcg@10"):
        compare_pairs(scores, {"ndcg@10": "continuous"})
    scores["dense"]["mrr"] = scores["dense"]["mrr"][:-1]
    with pytest.raises(ValueError, match="length"):
        compare_pairs(scores, {"mrr": "continuous"})


def test_compare_pairs_single_engine_gives_nothing() -> None:
    assert compare_pairs({"grep": {"mrr": [0.5]}}, {"mrr": "continuous"}) == []


def test_compare_pairs_counts_failures_among_the_paired_queries() -> None:
    scores = {"a": {"mrr": [1.0, 0.5, 0.0, NAN]}, "b": {"mrr": [0.0, 0.0, 0.5, 1.0]}}
    failed = {"a": [False, False, True, False], "b": [True, True, False, False]}
    (row,) = compare_pairs(scores, {"mrr": "continuous"}, failed=failed)
    # The fourth query does not apply to a (NaN): it and its failure flag drop out.
    assert (row.n, row.failed_a, row.failed_b, row.failed_either) == (3, 1, 2, 3)
    assert row.differing == 3 and row.exact and row.mdd_alpha == 0.05
    assert row.p == paired_randomization(scores["a"]["mrr"], scores["b"]["mrr"])
    with pytest.raises(ValueError, match="failure flags"):
        compare_pairs(scores, {"mrr": "continuous"}, failed={"a": [False]})


def test_compare_pairs_mdd_uses_the_family_level() -> None:
    results = compare_pairs(_scores(), {"hit@5": "binary", "mrr": "continuous"})
    assert {r.mdd_alpha for r in results} == {0.05 / 3}
    for r in results:
        n, changed = r.n, r.differing
        if r.test == "mcnemar":
            assert r.mdd == power.mcnemar_mdd(n, changed, 0.05 / 3)
        assert r.mdd is not None and 0 < r.mdd < 1
