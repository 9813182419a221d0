"""Every interval, p-value and MDD recomputed from the result JSON alone.

The code here is written from protocol/PROTOCOL.md ("Statistics" and what
follows it), with numpy and scipy, and never calls the harness's statistics:
it reads the JSON as plain data. Two files: the golden two-corpus result
(small, so every sign flip is exact) and one written here from generated rows
(failed queries, chunk metrics that do not apply everywhere, more than 20
differing queries so the Monte Carlo branch runs, a summary across corpora).

`BENCH_WRITE_GOLDEN=1` rewrites the golden file's statistics from its rows.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

GOLDEN = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"
TOL = 1e-12
PAIRED = {"file.hit@10": "binary", "chunk.hit@10": "binary", "file.mrr": "continuous",
          "chunk.mrr": "continuous"}

Json = dict[str, Any]


# --- PROTOCOL.md, "One value per query" -----------------------------------------


def value(q: Json, metric: str) -> float:
    if q["error"] is None:
        return float(q["scores"].get(metric, math.nan))
    if metric.startswith("chunk.") and not q["chunk_entered"]:
        return math.nan
    return 1.0 if metric == "zero_miss" else 0.0


# --- "Random numbers" and "Row intervals" ---------------------------------------


def bootstrap(x: np.ndarray, resamples: int = 1000) -> tuple[float, float, float]:  # type: ignore[type-arg]
    n = x.size
    if n == 1:
        return float(x[0]), float(x[0]), float(x[0])
    rng = np.random.Generator(np.random.PCG64(0))
    means = []
    for start in range(0, resamples, 1000):
        idx = rng.integers(0, n, size=(min(1000, resamples - start), n))
        means.append(x[idx].mean(axis=1))
    lo, hi = np.quantile(np.concatenate(means), [0.025, 0.975], method="linear")
    return float(np.mean(x)), float(lo), float(hi)


# --- "Paired comparisons" -------------------------------------------------------


def mcnemar(a: np.ndarray, b: np.ndarray) -> float:  # type: ignore[type-arg]
    n_a = int(np.sum((a == 1) & (b == 0)))
    m = n_a + int(np.sum((a == 0) & (b == 1)))
    return 1.0 if m == 0 else float(sps.binomtest(n_a, m, 0.5).pvalue)


def sign_flip(d: np.ndarray, resamples: int = 10000) -> tuple[float, bool]:  # type: ignore[type-arg]
    d = d[d != 0.0]
    m = d.size
    observed = abs(float(d.sum()))
    threshold = observed - 1e-12 * max(1.0, observed)
    if m == 0 or observed <= 1e-12:
        return 1.0, m <= 20
    if m <= 20:
        extreme = 0
        codes = np.arange(2**m)
        for start in range(0, codes.size, 2**14):
            bits = (codes[start:start + 2**14, None] >> np.arange(m)) & 1
            extreme += int(np.sum(np.abs((1 - 2 * bits) @ d) >= threshold))
        return extreme / 2**m, True
    rng = np.random.Generator(np.random.PCG64(0))
    extreme = 0
    for start in range(0, resamples, 1000):
        u = rng.random((min(1000, resamples - start), m))
        extreme += int(np.sum(np.abs(np.where(u < 0.5, -1.0, 1.0) @ d) >= threshold))
    return (1 + extreme) / (resamples + 1), False


def holm(ps: list[float]) -> list[float]:
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    out, running = [0.0] * len(ps), 0.0
    for j, i in enumerate(order):
        running = max(running, min(1.0, (len(ps) - j) * ps[i]))
        out[i] = running
    return out


# --- "Power" ----------------------------------------------------------------------


def bisect(power: Any) -> float | None:
    if power(1.0) < 0.8:
        return None
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if power(mid) >= 0.8 else (mid, hi)
    return hi


def mcnemar_mdd(n: int, m_obs: int, alpha: float) -> float | None:
    crit = []
    for m in range(n + 1):
        c = -1
        for i in range(m // 2 + 1):
            if 2 * sps.binom.cdf(i, m, 0.5) < alpha:
                c = i
        crit.append(c)

    def power(delta: float) -> float:
        spread = max(m_obs / n, delta)
        q = (spread + delta) / (2 * spread)
        return sum(sps.binom.pmf(m, n, spread) * (sps.binom.cdf(crit[m], m, q)
                                                  + sps.binom.sf(m - crit[m] - 1, m, q))
                   for m in range(n + 1) if crit[m] >= 0)

    return bisect(power)


def sign_flip_mdd(d: np.ndarray, alpha: float) -> float | None:  # type: ignore[type-arg]
    n = d.size
    if n < 2 or d.std(ddof=1) <= 1e-12 or 2 / 2**n >= alpha:
        return None
    s, f, phi = float(d.std(ddof=1)), n - 1, NormalDist()
    z = phi.inv_cdf(1 - alpha / 2)
    t = (z + (z**3 + z) / 4 / f + (5 * z**5 + 16 * z**3 + 3 * z) / 96 / f**2
         + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384 / f**3
         + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160 / f**4)

    def power(delta: float) -> float:
        lam = delta * math.sqrt(n) / s

        def cdf(x: float) -> float:
            return phi.cdf((x * (1 - 1 / (4 * f)) - lam) / math.sqrt(1 + x * x / (2 * f)))

        return 1 - cdf(t) + cdf(-t)

    return bisect(power)


# --- the checks ------------------------------------------------------------------


def check_rows(data: Json) -> int:
    checked = 0
    for row in data["rows"]:
        for metric, est in row["metrics"].items():
            if metric.startswith("tokens@"):
                x = [q["tokens"][metric] for q in row["queries"] if q["tokens"]]
            elif metric == "tokens_to_first_gold":
                x = [q[metric] for q in row["queries"] if q[metric] is not None]
            else:
                x = [v for q in row["queries"] if not math.isnan(v := value(q, metric))]
            assert est["n"] == len(x), (row["engine"], metric)
            if not x:
                continue
            want = bootstrap(np.asarray(x, dtype=np.float64))
            assert (est["mean"], est["lo"], est["hi"]) == pytest.approx(want, abs=TOL), (
                row["engine"], row["corpus"], row["per_file"], metric)
            checked += 1
    return checked


def _values(row: Json, metric: str) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[type-arg]
    return (np.array([value(q, metric) for q in row["queries"]]),
            np.array([q["error"] is not None for q in row["queries"]]))


def check_comparisons(data: Json) -> dict[str, int]:
    head = {(r["engine"], r["corpus"]): r for r in data["rows"] if r["headline"]}
    families: dict[tuple[str, int, str], list[Json]] = {}
    for c in data["comparisons"]:
        families.setdefault((c["corpus"], c["per_file"], c["metric"]), []).append(c)
    seen = {"exact": 0, "monte_carlo": 0, "mdd": 0}
    for (corpus, _, metric), family in families.items():
        alpha = 0.05 / len(family)
        ps = []
        for c in family:
            (a, fa), (b, fb) = (_values(head[(c[e], corpus)], metric)
                                for e in ("engine_a", "engine_b"))
            keep = ~(np.isnan(a) | np.isnan(b))
            a, b, fa, fb = a[keep], b[keep], fa[keep], fb[keep]
            d = a - b
            assert (c["n"], c["failed_a"], c["failed_b"], c["failed_either"]) == (
                d.size, fa.sum(), fb.sum(), (fa | fb).sum())
            assert c["differing"] == int(np.sum(d != 0))
            delta, lo, hi = bootstrap(d)
            assert (c["delta"], c["lo"], c["hi"]) == pytest.approx((delta, lo, hi), abs=TOL)
            if PAIRED[metric] == "binary":
                p, exact = mcnemar(a, b), True
                mdd = mcnemar_mdd(d.size, int(np.sum(d != 0)), alpha)
            else:
                p, exact = sign_flip(d)
                mdd = sign_flip_mdd(d, alpha)
            assert c["p"] == pytest.approx(p, abs=TOL) and c["exact"] == exact, c
            assert c["mdd_alpha"] == pytest.approx(alpha, abs=TOL)
            if mdd is None:
                assert c["mdd"] is None, c
            else:
                assert c["mdd"] == pytest.approx(mdd, abs=1e-9), c
                seen["mdd"] += 1
            seen["exact" if exact else "monte_carlo"] += 1
            ps.append(p)
        assert [c["p_adjusted"] for c in family] == pytest.approx(holm(ps), abs=TOL)
    return seen


def check_tiers_and_summary(data: Json) -> None:
    for tier in data["tiers"]:
        family = {frozenset((c["engine_a"], c["engine_b"])): c for c in data["comparisons"]
                  if (c["corpus"], c["per_file"], c["metric"]) == (
                      tier["corpus"], tier["per_file"], tier["metric"])}
        # A twin stands for the engine it equals: compared in its place, lettered alike.
        twin_of = {t["engine"]: t["twin_of"] for t in data.get("twins", [])
                   if (t["corpus"], t["per_file"]) == (tier["corpus"], tier["per_file"])}
        for x, y in itertools.combinations(tier["engines"], 2):
            a, b = twin_of.get(x["engine"], x["engine"]), twin_of.get(y["engine"], y["engine"])
            if a == b:
                assert x["letters"] == y["letters"] and x["mean"] == y["mean"]
                continue
            c = family[frozenset((a, b))]
            differ = c["p_adjusted"] < 0.05 and c["delta"] != 0
            assert bool(set(x["letters"]) & set(y["letters"])) == (not differ)
    summary = data["summary"]
    if summary is None:
        return
    head = {(r["engine"], r["corpus"]): r for r in data["rows"] if r["headline"]}
    for macro in summary["macro"]:
        strata = []
        for corpus in macro["corpora"]:
            x, _ = _values(head[(macro["engine"], corpus)], macro["metric"])
            strata.append(x[~np.isnan(x)])
        rng = np.random.Generator(np.random.PCG64(0))
        means = np.empty((1000, len(strata)))
        for s, x in enumerate(strata):
            means[:, s] = x[rng.integers(0, x.size, size=(1000, x.size))].mean(axis=1)
        lo, hi = np.quantile(means.mean(axis=1), [0.025, 0.975], method="linear")
        want = (float(np.mean([x.mean() for x in strata])), float(lo), float(hi))
        assert (macro["mean"], macro["lo"], macro["hi"]) == pytest.approx(want, abs=TOL)
    for pair in summary["pairs"]:
        for corpus, outcome in pair["outcomes"].items():
            c = next(c for c in data["comparisons"] if (c["corpus"], c["metric"], c["engine_a"],
                     c["engine_b"]) == (corpus, pair["metric"], pair["engine_a"],
                                        pair["engine_b"]))
            sig = c["p_adjusted"] < 0.05
            assert outcome == ("win" if sig and c["delta"] > 0 else
                               "loss" if sig and c["delta"] < 0 else "tie")
        assert [pair["wins"], pair["ties"], pair["losses"]] == [
            list(pair["outcomes"].values()).count(o) for o in ("win", "tie", "loss")]


def test_golden_result_statistics_are_what_the_harness_computes_now() -> None:
    from codesearch_bench.protocol import PROTOCOL_VERSION
    from codesearch_bench.results.schema import ResultFile
    from codesearch_bench.scoring.analysis import statistics

    data = json.loads(GOLDEN.read_text())
    result = ResultFile.model_validate(data)
    fresh = statistics(result.rows, list(result.engines))
    part = {k: json.loads(json.dumps(v, default=lambda m: m.model_dump(mode="json")))
            for k, v in fresh.as_update().items()}
    if os.environ.get("BENCH_WRITE_GOLDEN"):
        # The rows' numbers are the same under this protocol (test_trec_equivalence
        # re-scores every stored outcome), so only the statistics part is rewritten.
        data.update(part, protocol_version=PROTOCOL_VERSION)
        GOLDEN.write_text(json.dumps(data, indent=1) + "\n")
    assert {k: data[k] for k in part} == part
    assert data["protocol_version"] == PROTOCOL_VERSION


def test_golden_result_reproduces_from_json() -> None:
    data = json.loads(GOLDEN.read_text())
    assert check_rows(data) >= 24 * 20
    seen = check_comparisons(data)
    assert seen["exact"] == len(data["comparisons"]) > 0
    check_tiers_and_summary(data)
    assert data["summary"] is not None and data["tiers"]


def test_generated_result_reproduces_from_json(tmp_path: Path) -> None:
    from synthetic_result import write_result

    data = json.loads(write_result(tmp_path).read_text())
    assert check_rows(data) > 50
    seen = check_comparisons(data)
    assert seen["exact"] and seen["monte_carlo"] and seen["mdd"]
    assert any(c["failed_either"] for c in data["comparisons"])
    check_tiers_and_summary(data)
    assert data["summary"]["macro"] and data["tiers"]
