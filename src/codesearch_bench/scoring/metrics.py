"""Per-query retrieval metrics over graded slots.

Grading (``grade.py``) reduces one query's collapsed ranking to a list of
*gains*: ``gains[j]`` is how many of the query's relevant items were first
found at slot ``j + 1`` (slot 1 is the engine's best file). The relevant items
are the query's distinct gold files at file granularity and its distinct gold
spans at chunk granularity; each is credited once, so ``sum(gains) <= G``,
the number of relevant items. A file-granularity gain is 0 or 1; a chunk one
can be larger when one file holds several gold spans.

Ranks are not slots when a slot finds several items: a slot that finds
``g >= 2`` items stands for ``g`` consecutive ranks (as if the engine had
listed those chunks one after another), any other slot for one rank, and a
cutoff k keeps the ranks of the first k slots. That is exactly the run
protocol/PROTOCOL.md ("Relevant items and trec_eval") hands trec_eval, so
every metric here equals trec_eval's on it, and AP and nDCG stay in [0, 1].
With 0/1 gains ranks and slots coincide and these are trec_eval's
``map_cut_k``, ``ndcg_cut_10``, ``recall_k``, ``success_k``, ``recip_rank``, ``P_1``.

Every function here is pure. A query whose engine returned nothing has
``gains == []`` and scores 0 on every metric; it still counts in the mean.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence

__all__ = [
    "CUTOFFS",
    "MRR_DEPTH",
    "NDCG_CUTOFF",
    "average_precision_at",
    "graded_ndcg_at",
    "hit_at",
    "mean",
    "metric_kinds",
    "metric_names",
    "ndcg_at",
    "precision_at_1",
    "query_scores",
    "ranks",
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


def _check(gains: Sequence[int], n_gold: int) -> None:
    if n_gold < 1:
        raise ValueError(f"a query needs at least one gold item, got n_gold={n_gold}")
    if any(g < 0 for g in gains):
        raise ValueError(f"gains are counts, got {list(gains)}")
    # A larger total means an item was credited twice: the bug that let AP exceed 1.
    if sum(gains) > n_gold:
        raise ValueError(f"gains {list(gains)} credit more than the {n_gold} relevant items")


def ranks(gains: Sequence[int], k: int) -> list[int]:
    """The 0/1 relevance of each rank within the first ``k`` slots.

    A slot with gain ``g >= 1`` is ``g`` relevant ranks; a slot with gain 0 is
    one non-relevant rank. ``ranks([0, 2, 0], 3) == [0, 1, 1, 0]``.
    """
    _check_k(k)
    out: list[int] = []
    for gain in gains[:k]:
        out.extend([1] * gain if gain > 0 else [0])
    return out


def recall_at(gains: Sequence[int], n_gold: int, k: int) -> float:
    """Fraction of the relevant items found in the top ``k`` slots.

    ``recall@k = (gains_1 + ... + gains_k) / G``.
    """
    _check(gains, n_gold)
    _check_k(k)
    return _recall(gains, n_gold, k)


def _recall(gains: Sequence[int], n_gold: int, k: int) -> float:
    return sum(gains[:k]) / n_gold


def hit_at(gains: Sequence[int], k: int) -> float:
    """1.0 when any relevant item is found in the top ``k`` slots, else 0.0.

    ``hit@k = 1 if gains_1 + ... + gains_k > 0 else 0``. For a query with a
    single relevant item this is exactly its codesearch-bench "recall@k"; with
    several, recall is fractional and hit is not.
    """
    _check_k(k)
    return 1.0 if sum(gains[:k]) > 0 else 0.0


def reciprocal_rank(gains: Sequence[int], depth: int = MRR_DEPTH) -> float:
    """Reciprocal of the first slot that finds a relevant item.

    ``RR = 1 / j`` for the smallest 1-based ``j <= depth`` with ``gains_j > 0``;
    0 when no slot within ``depth`` finds one. Every slot before it found
    nothing and is one rank, so slot j is rank j. The mean over queries is MRR.
    """
    _check_k(depth)
    for j, gain in enumerate(gains[:depth], start=1):
        if gain > 0:
            return 1.0 / j
    return 0.0


def ndcg_at(gains: Sequence[int], n_gold: int, k: int = NDCG_CUTOFF) -> float:
    """Normalized discounted cumulative gain over the ranks of the top ``k`` slots.

    With ``rel_p`` the relevance of rank p (``ranks``) and ``L`` the ranks
    the first k slots take (a missing slot counts as one rank, so ``L = k`` at
    file granularity): ``DCG = sum_{p<=L} rel_p / log2(p + 1)`` and
    ``IDCG = sum_{p<=min(G, L)} 1 / log2(p + 1)``: trec_eval's ``ndcg_cut.L``.
    """
    _check(gains, n_gold)
    return _ndcg(gains, n_gold, k, ranks(gains, k))


def _ndcg(gains: Sequence[int], n_gold: int, k: int, rel: list[int]) -> float:
    depth = len(rel) + max(0, k - len(gains))
    # Plain sums, in rank order: the bits stay those of earlier versions for 0/1 gains.
    dcg = sum(r / math.log2(p + 1) for p, r in enumerate(rel, start=1))
    idcg = sum(1.0 / math.log2(p + 1) for p in range(1, min(n_gold, depth) + 1))
    return dcg / idcg


def graded_ndcg_at(grades: Sequence[int], ideal: Sequence[int],
                   k: int = NDCG_CUTOFF) -> float:
    """nDCG with graded relevance over one slot per rank (file granularity).

    ``grades[j]`` is the grade of the relevant item at slot j + 1 (0: none) and
    ``ideal`` every relevant item's grade: ``DCG = sum_{p<=k} g_p / log2(p + 1)``
    over the ranking, IDCG the same over ``ideal`` sorted best first. That is
    trec_eval's ``ndcg_cut.k`` with graded qrels (gain = grade), the nDCG@10 that
    BEIR's tables report; with 0/1 grades it equals ``ndcg_at``.
    """
    _check_k(k)
    if any(g < 0 for g in grades) or any(g < 0 for g in ideal):
        raise ValueError("grades are >= 0")
    dcg = sum(g / math.log2(p + 1) for p, g in enumerate(grades[:k], start=1))
    best = sorted((g for g in ideal if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(p + 1) for p, g in enumerate(best, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def average_precision_at(gains: Sequence[int], n_gold: int, k: int) -> float:
    """Average precision over the ranks of the top ``k`` slots, over all G items.

    ``AP@k = (1 / G) * sum_{p: rel_p = 1} (rel_1 + ... + rel_p) / p``, p running
    over the ranks of the first k slots (``ranks``): trec_eval's ``map`` on
    the run cut after slot k, and its ``map_cut_k`` when gains are 0/1.
    """
    _check(gains, n_gold)
    return _ap(n_gold, ranks(gains, k))


def _ap(n_gold: int, rel_by_rank: list[int]) -> float:
    total = 0.0
    found = 0
    for p, rel in enumerate(rel_by_rank, start=1):
        if rel:
            found += 1
            total += found / p
    return total / n_gold


def precision_at_1(gains: Sequence[int]) -> float:
    """1.0 when the first slot finds a relevant item, else 0.0.

    ``P@1 = 1 if gains_1 > 0 else 0``: rank 1 lies in slot 1.
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
    files = None if file_gains is None else tuple(file_gains)
    return dict(_query_scores(tuple(gains), n_gold, files, tuple(cutoffs), depth))


# Pure, and queries repeat a few dozen gain patterns (a miss, a hit at slot 1, ...):
# computed once per pattern, the same floats every time. Bounded: ~1 KB an entry.
@functools.lru_cache(maxsize=4096)
def _query_scores(gains: tuple[int, ...], n_gold: int, file_gains: tuple[int, ...] | None,
                  cutoffs: tuple[int, ...], depth: int | None) -> tuple[tuple[str, float], ...]:
    depth = max(cutoffs) if depth is None else depth
    # Checked once here, then the same formulas as the public functions: checking the
    # gains again for every metric was a large part of a fast engine's query.
    _check(gains, n_gold)
    for k in (*cutoffs, depth):
        _check_k(k)
    by_rank = {k: ranks(gains, k) for k in {*cutoffs, NDCG_CUTOFF}}
    scores: dict[str, float] = {}
    for k in cutoffs:
        scores[f"recall@{k}"] = _recall(gains, n_gold, k)
    for k in cutoffs:
        scores[f"hit@{k}"] = hit_at(gains, k)
    for k in cutoffs:
        scores[f"map@{k}"] = _ap(n_gold, by_rank[k])
    scores["mrr"] = reciprocal_rank(gains, depth)
    scores[f"ndcg@{NDCG_CUTOFF}"] = _ndcg(gains, n_gold, NDCG_CUTOFF, by_rank[NDCG_CUTOFF])
    scores["p@1"] = precision_at_1(gains)
    scores["zero_miss"] = zero_miss(gains if file_gains is None else file_gains, depth)
    return tuple(scores.items())


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; NaN for no values.

    Queries with no results are zeros and must be passed in, and so are failed
    queries, as complete misses (``values.failed_value``).
    """
    items = list(values)
    if not items:
        return math.nan
    return math.fsum(items) / len(items)
