"""Hand-computed cases for metrics.py."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch_bench.scoring.metrics import (
    average_precision_at,
    hit_at,
    mean,
    metric_kinds,
    metric_names,
    ndcg_at,
    precision_at_1,
    query_scores,
    ranks,
    recall_at,
    reciprocal_rank,
    zero_miss,
)

LOG3 = math.log2(3)


def test_empty_result_scores_zero_everywhere_but_counts_as_a_zero_miss() -> None:
    scores = query_scores([], 2)
    assert scores.pop("zero_miss") == 1.0
    assert set(scores.values()) == {0.0}


def test_recall_is_fractional_hit_is_not() -> None:
    gains = [0, 1, 0, 0, 0, 0, 1]  # two of three gold items, at slots 2 and 7
    assert recall_at(gains, 3, 1) == 0.0
    assert recall_at(gains, 3, 5) == pytest.approx(1 / 3)
    assert recall_at(gains, 3, 10) == pytest.approx(2 / 3)
    assert hit_at(gains, 1) == 0.0
    assert hit_at(gains, 5) == 1.0
    assert hit_at(gains, 10) == 1.0


def test_single_gold_recall_equals_hit() -> None:
    for gains in ([], [0, 0, 1], [1], [0] * 7 + [1]):
        for k in (1, 5, 10, 20):
            assert recall_at(gains, 1, k) == hit_at(gains, k)


def test_an_item_credited_twice_is_refused_not_capped() -> None:
    # More credits than relevant items is a grading bug; capping it hid AP > 1.
    with pytest.raises(ValueError, match="credit more"):
        recall_at([3], 2, 5)
    with pytest.raises(ValueError, match="credit more"):
        average_precision_at([0, 2], 1, 10)
    with pytest.raises(ValueError, match="counts"):
        ndcg_at([1, -1], 2)


def test_reciprocal_rank_stops_at_depth_20() -> None:
    assert reciprocal_rank([1]) == 1.0
    assert reciprocal_rank([0, 0, 1, 1]) == pytest.approx(1 / 3)
    assert reciprocal_rank([0] * 19 + [1]) == pytest.approx(1 / 20)
    assert reciprocal_rank([0] * 20 + [1]) == 0.0
    assert reciprocal_rank([0] * 20 + [1], depth=25) == pytest.approx(1 / 21)
    assert reciprocal_rank([0, 0, 0]) == 0.0


def test_ndcg_single_and_multi_gold() -> None:
    assert ndcg_at([1], 1) == 1.0
    assert ndcg_at([0, 1], 1) == pytest.approx(1 / LOG3)
    # two gold at slots 1 and 3: DCG = 1 + 1/2, IDCG = 1 + 1/log2(3)
    assert ndcg_at([1, 0, 1], 2) == pytest.approx(1.5 / (1 + 1 / LOG3))
    # gold beyond k earns nothing
    assert ndcg_at([0] * 10 + [1], 1) == 0.0


def test_ranks_expand_a_slot_that_finds_several_items() -> None:
    assert ranks([0, 2, 0], 3) == [0, 1, 1, 0]
    assert ranks([0, 2, 0], 1) == [0]
    assert ranks([3], 5) == [1, 1, 1]
    assert ranks([], 5) == []


def test_ndcg_several_items_in_one_slot() -> None:
    # both spans found by slot 2: ranks N R R, so DCG = 1/log2(3) + 1/log2(4)
    assert ndcg_at([0, 2], 2) == pytest.approx((1 / LOG3 + 0.5) / (1 + 1 / LOG3))
    # both in slot 1 is the ideal ranking
    assert ndcg_at([2], 2) == 1.0
    # the file case: one gold file at slot 2 (two symbols in it) is one item
    assert ndcg_at([0, 1], 1) == pytest.approx(1 / LOG3)
    assert ndcg_at([0, 1], 1) == pytest.approx(0.6309, abs=1e-4)


def test_ndcg_expanded_ranks_stay_within_one() -> None:
    # slot 1 finds 3 of 12 items and slots 2-10 one each: 12 relevant ranks, the ideal
    assert ndcg_at([3] + [1] * 9, 12) == pytest.approx(1.0)
    # slot 1 finds 2 of 3, the third is at slot 11 (outside): ranks R R N..N, 11 of them
    assert ndcg_at([2] + [0] * 9 + [1], 3) == pytest.approx(
        (1 + 1 / LOG3) / (1 + 1 / LOG3 + 0.5))


def test_ndcg_ideal_ranking_is_truncated_at_k() -> None:
    assert ndcg_at([1] * 10, 12) == 1.0
    assert ndcg_at([1] * 5, 12, k=5) == 1.0


def test_average_precision() -> None:
    # gold at slots 1 and 3 of three: (1/3) * (1/1 + 2/3)
    assert average_precision_at([1, 0, 1], 3, 5) == pytest.approx(5 / 9)
    assert average_precision_at([1, 0, 1], 3, 2) == pytest.approx(1 / 3)
    # missing gold still counts in the denominator
    assert average_precision_at([0, 1], 2, 10) == pytest.approx(0.25)
    assert average_precision_at([], 1, 10) == 0.0


def test_average_precision_multi_gold_in_one_slot() -> None:
    # two items at slot 1: ranks R R, precision 1/1 and 2/2
    assert average_precision_at([2], 2, 5) == 1.0
    # two items at slot 2: ranks N R R, (1/2) * (1/2 + 2/3) -- not the 1.0 of protocol 2
    assert average_precision_at([0, 2], 2, 5) == pytest.approx((1 / 2 + 2 / 3) / 2)
    # the file case: two gold symbols in the only gold file, at slot 2: one item
    assert average_precision_at([0, 1], 1, 10) == 0.5
    # one at slot 2, two at slot 4: ranks N R N R R, (1/3) * (1/2 + 2/4 + 3/5)
    assert average_precision_at([0, 1, 0, 2], 3, 5) == pytest.approx((0.5 + 0.5 + 0.6) / 3)
    # the cutoff counts slots: slot 4's two ranks are inside k = 4
    assert average_precision_at([0, 1, 0, 2], 3, 4) == average_precision_at([0, 1, 0, 2], 3, 5)
    assert average_precision_at([0, 1, 0, 2], 3, 3) == pytest.approx(0.5 / 3)


def test_precision_at_1() -> None:
    assert precision_at_1([]) == 0.0
    assert precision_at_1([0, 1]) == 0.0
    assert precision_at_1([1]) == 1.0
    assert precision_at_1([2, 0]) == 1.0


def test_zero_miss() -> None:
    assert zero_miss([]) == 1.0
    assert zero_miss([0, 0, 1]) == 0.0
    assert zero_miss([0] * 19 + [1]) == 0.0
    assert zero_miss([0] * 20 + [1]) == 1.0
    assert zero_miss([0] * 20 + [1], depth=21) == 0.0


def test_zero_miss_uses_file_gains_when_scoring_chunks() -> None:
    # the gold file is at slot 2 but none of its chunks overlaps the gold span
    scores = query_scores([0, 0], 1, file_gains=[0, 1])
    assert scores["zero_miss"] == 0.0
    assert scores["hit@20"] == 0.0
    assert query_scores([0, 0], 1)["zero_miss"] == 1.0


def test_query_scores_names_are_stable() -> None:
    expected = [
        "recall@5",
        "recall@10",
        "recall@20",
        "hit@5",
        "hit@10",
        "hit@20",
        "map@5",
        "map@10",
        "map@20",
        "mrr",
        "ndcg@10",
        "p@1",
        "zero_miss",
    ]
    assert metric_names() == expected
    assert list(query_scores([0, 1], 1)) == expected
    kinds = metric_kinds()
    assert list(kinds) == expected
    assert {n for n, kind in kinds.items() if kind == "binary"} == {
        "hit@5",
        "hit@10",
        "hit@20",
        "p@1",
        "zero_miss",
    }


def test_query_scores_values() -> None:
    # three gold: one at slot 1, one at slot 7, one at slot 15
    gains = [1] + [0] * 5 + [1] + [0] * 7 + [1]
    s = query_scores(gains, 3)
    assert s["recall@5"] == pytest.approx(1 / 3)
    assert s["recall@10"] == pytest.approx(2 / 3)
    assert s["recall@20"] == 1.0
    assert s["hit@5"] == s["hit@10"] == s["hit@20"] == 1.0
    assert s["map@5"] == pytest.approx(1 / 3)
    assert s["map@10"] == pytest.approx((1 + 2 / 7) / 3)
    assert s["map@20"] == pytest.approx((1 + 2 / 7 + 3 / 15) / 3)
    assert s["mrr"] == 1.0
    idcg = 1 + 1 / LOG3 + 0.5
    assert s["ndcg@10"] == pytest.approx((1 + 1 / math.log2(8)) / idcg)
    assert s["p@1"] == 1.0
    assert s["zero_miss"] == 0.0


def test_custom_cutoffs() -> None:
    s = query_scores([0, 1], 1, cutoffs=(1, 3))
    assert s["recall@1"] == 0.0
    assert s["recall@3"] == 1.0
    assert s["mrr"] == 0.5
    assert list(s) == metric_names((1, 3))


def test_mean_counts_empty_queries_as_zero() -> None:
    per_query = [query_scores(g, 1)["hit@5"] for g in ([1], [], [0, 1], [])]
    assert mean(per_query) == 0.5
    assert math.isnan(mean([]))


@pytest.mark.parametrize(
    "call",
    [
        lambda: recall_at([1], 0, 5),
        lambda: recall_at([1], 1, 0),
        lambda: hit_at([1], 0),
        lambda: ndcg_at([1], 0),
        lambda: average_precision_at([1], 0, 5),
        lambda: reciprocal_rank([1], depth=0),
        lambda: query_scores([1], 1, cutoffs=()),
    ],
)
def test_invalid_arguments(call: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        call()


@st.composite
def _gains(draw: st.DrawFn) -> tuple[list[int], int]:
    gains = draw(st.lists(st.integers(0, 3), max_size=30))
    n_gold = draw(st.integers(max(1, sum(gains)), max(1, sum(gains)) + 3))
    return gains, n_gold


@settings(max_examples=300, deadline=None)
@given(_gains())
def test_ap_and_ndcg_stay_in_unit_interval_and_grow_with_k(case: tuple[list[int], int]) -> None:
    gains, n_gold = case
    previous = (0.0, 0.0)
    for k in range(1, 32):
        ap, recall = average_precision_at(gains, n_gold, k), recall_at(gains, n_gold, k)
        assert 0.0 <= ap <= 1.0 + 1e-12 and 0.0 <= recall <= 1.0
        assert ap >= previous[0] - 1e-12 and recall >= previous[1]
        assert 0.0 <= ndcg_at(gains, n_gold, k) <= 1.0 + 1e-12
        previous = (ap, recall)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.integers(1, 3))
def test_every_item_at_the_top_scores_one(n_gold: int, per_slot: int) -> None:
    # However the items are packed into the first slots, nothing ranks before them.
    gains = [per_slot] * (n_gold // per_slot) + ([n_gold % per_slot] if n_gold % per_slot else [])
    assert average_precision_at(gains, n_gold, 20) == pytest.approx(1.0)
    assert ndcg_at(gains, n_gold, 20) == pytest.approx(1.0)
    assert recall_at(gains, n_gold, 20) == pytest.approx(1.0)
