"""Per-query retrieval metrics over graded slots.

Grading (``scoring.py``) reduces one query's collapsed ranking to a list of
*gains*: ``gains[j]`` is how many of the query's gold items were first found
at slot ``j + 1`` (slot 1 is the engine's best file). Every gold item is
credited at most once, so ``sum(gains) <= n_gold``. A file-granularity gold
item is found by its file's slot; a chunk-granularity one by a slot holding a
chunk that overlaps its span.

Every function here is pure and takes those gains (and ``n_gold``, the number
of gold items ``G >= 1``). A query whose engine returned nothing has
``gains == []`` and scores 0 on every metric; it still counts in the mean.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "CUTOFFS",
    "MRR_DEPTH",
    "NDCG_CUTOFF",
    "average_precision_at",
    "hit_at",
    "mean",
    "metric_kinds",
    "metric_names",
    "ndcg_at",
    "precision_at_1",
    "query_scores",
    "recall_at",
    "reciprocal_rank",
    "zero_miss",
]

CUTOFFS: tuple[int, ...] = (5, 10, 20)
"""The cutoffs k every row is reported at."""

MRR_DEPTH = 20
"""Deepest slot that still earns a reciprocal rank (the largest cutoff)."""

NDCG_CUTOFF = 10
"""nDCG is reported at this one cutoff."""


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"cutoff must be >= 1, got {k}")


def _check_gold(n_gold: int) -> None:
    if n_gold < 1:
        raise ValueError(f"a query needs at least one gold item, got n_gold={n_gold}")


def recall_at(gains: Sequence[int], n_gold: int, k: int) -> float:
    """Fraction of the gold items found in the top ``k`` slots.

    ``recall@k = min(1, (gains_1 + ... + gains_k) / G)``.
    """
    _check_gold(n_gold)
    _check_k(k)
    return min(1.0, sum(gains[:k]) / n_gold)


def hit_at(gains: Sequence[int], k: int) -> float:
    """1.0 when any gold item is found in the top ``k`` slots, else 0.0.

    ``hit@k = 1 if gains_1 + ... + gains_k > 0 else 0``. For a query with a
    single gold item this is exactly its codesearch-bench "recall@k"; with
    several gold items, recall is fractional and hit is not.
    """
    _check_k(k)
    return 1.0 if sum(gains[:k]) > 0 else 0.0


def reciprocal_rank(gains: Sequence[int], depth: int = MRR_DEPTH) -> float:
    """Reciprocal of the first slot that finds a gold item.

    ``RR = 1 / j`` for the smallest 1-based ``j <= depth`` with ``gains_j > 0``;
    0 when no slot within ``depth`` finds one. The mean over queries is MRR.
    """
    _check_k(depth)
    for j, gain in enumerate(gains[:depth], start=1):
        if gain > 0:
            return 1.0 / j
    return 0.0


def ndcg_at(gains: Sequence[int], n_gold: int, k: int = NDCG_CUTOFF) -> float:
    """Normalized discounted cumulative gain over the top ``k`` slots.

    ``DCG = sum_{j<=k} gains_j / log2(j + 1)``, and the ideal ranking puts one
    gold item in each of the first ``min(G, k)`` slots:
    ``IDCG = sum_{j<=min(G,k)} 1 / log2(j + 1)``. ``nDCG = min(1, DCG / IDCG)``;
    the cap only matters when several gold items share one slot.
    """
    _check_gold(n_gold)
    _check_k(k)
    dcg = sum(gain / math.log2(j + 1) for j, gain in enumerate(gains[:k], start=1))
    idcg = sum(1.0 / math.log2(j + 1) for j in range(1, min(n_gold, k) + 1))
    return min(1.0, dcg / idcg)


def average_precision_at(gains: Sequence[int], n_gold: int, k: int) -> float:
    """Average precision over the top ``k`` slots, normalized by all gold items.

    With ``C_j = gains_1 + ... + gains_j``:
    ``AP@k = (1 / G) * sum_{j<=k} gains_j * min(1, C_j / j)``.
    For 0/1 gains this is trec_eval's ``map_cut_k`` for one query; the
    ``min(1, .)`` keeps precision at most 1 when a slot finds several gold items.
    """
    _check_gold(n_gold)
    _check_k(k)
    total = 0.0
    cumulative = 0
    for j, gain in enumerate(gains[:k], start=1):
        cumulative += gain
        if gain > 0:
            total += gain * min(1.0, cumulative / j)
    return total / n_gold


def precision_at_1(gains: Sequence[int]) -> float:
    """1.0 when the first slot finds a gold item, else 0.0.

    ``P@1 = 1 if gains_1 > 0 else 0``.
    """
    return 1.0 if gains and gains[0] > 0 else 0.0


def zero_miss(file_gains: Sequence[int], depth: int = MRR_DEPTH) -> float:
    """1.0 when no gold FILE appears in the top ``depth`` slots, else 0.0.

    ``zero_miss = 1 if file_gains_1 + ... + file_gains_depth == 0 else 0``.
    Pass file-granularity gains even when scoring chunks: the question is
    whether the engine surfaced a gold file at all. Lower is better.
    """
    _check_k(depth)
    return 1.0 if sum(file_gains[:depth]) == 0 else 0.0


def metric_names(cutoffs: Sequence[int] = CUTOFFS) -> list[str]:
    """The keys ``query_scores`` returns, in report order."""
    names = [f"{family}@{k}" for family in ("recall", "hit", "map") for k in cutoffs]
    return [*names, "mrr", f"ndcg@{NDCG_CUTOFF}", "p@1", "zero_miss"]


def metric_kinds(cutoffs: Sequence[int] = CUTOFFS) -> dict[str, str]:
    """Each metric name mapped to ``"binary"`` (per query 0/1) or ``"continuous"``.

    ``stats.compare_pairs`` uses the kind to pick the paired test.
    """
    binary = {"p@1", "zero_miss", *(f"hit@{k}" for k in cutoffs)}
    return {name: "binary" if name in binary else "continuous" for name in metric_names(cutoffs)}


def query_scores(
    gains: Sequence[int],
    n_gold: int,
    *,
    file_gains: Sequence[int] | None = None,
    cutoffs: Sequence[int] = CUTOFFS,
    depth: int | None = None,
) -> dict[str, float]:
    """Every metric of one query as a flat dict keyed by ``metric_names(cutoffs)``.

    ``recall@k``, ``hit@k`` and ``map@k`` for each cutoff; ``mrr`` (reciprocal
    rank down to the largest cutoff), ``ndcg@10``, ``p@1`` and ``zero_miss``
    (over ``depth``, by default the largest cutoff). ``file_gains`` feeds
    zero-miss; it defaults to ``gains``, which is right at file granularity only.
    """
    if not cutoffs:
        raise ValueError("need at least one cutoff")
    depth = max(cutoffs) if depth is None else depth
    scores: dict[str, float] = {}
    for k in cutoffs:
        scores[f"recall@{k}"] = recall_at(gains, n_gold, k)
    for k in cutoffs:
        scores[f"hit@{k}"] = hit_at(gains, k)
    for k in cutoffs:
        scores[f"map@{k}"] = average_precision_at(gains, n_gold, k)
    scores["mrr"] = reciprocal_rank(gains, depth)
    scores[f"ndcg@{NDCG_CUTOFF}"] = ndcg_at(gains, n_gold, NDCG_CUTOFF)
    scores["p@1"] = precision_at_1(gains)
    scores["zero_miss"] = zero_miss(gains if file_gains is None else file_gains, depth)
    return scores


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; NaN for no values.

    Queries with no results are zeros and must be passed in; a failed query
    (NaN) is the caller's to drop, because it is a gap, not a score.
    """
    items = list(values)
    if not items:
        return math.nan
    return math.fsum(items) / len(items)
