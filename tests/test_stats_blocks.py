"""Resamples drawn in smaller blocks on large samples give exactly the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from codesearch_bench.scoring import stats


@pytest.mark.parametrize("n", [2, 37, 5000])
def test_block_size_never_changes_an_interval_or_a_p_value(
        n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    a = rng.random(n).round(2).tolist()
    b = rng.random(n).round(2).tolist()
    monkeypatch.setattr(stats, "_ELEMENTS", 10**12)  # blocks of 1,000, as before
    whole = (stats.bootstrap_ci(a), stats.paired_randomization(a, b))
    for elements in (1, 3 * n, 1 << 20):
        monkeypatch.setattr(stats, "_ELEMENTS", elements)
        assert len(stats._blocks(1000, n)) == (1000 if elements == 1 else -(-1000 // max(
            1, min(1000, elements // n))))
        assert (stats.bootstrap_ci(a), stats.paired_randomization(a, b)) == whole
