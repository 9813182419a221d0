"""tiers.py: letters that say exactly which engines the tests could not tell apart."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from codesearch_bench.scoring.tiers import letter_display, order_by_mean, rank_intervals, tiers


def _shares(a: str, b: str) -> bool:
    return bool(set(a) & set(b))


def test_nobody_differs_is_one_tier() -> None:
    got = tiers({"grep": 0.4, "bm25": 0.6, "dense": 0.5}, set())
    assert [(t.engine, t.letters, t.rank_lo, t.rank_hi) for t in got] == [
        ("bm25", "a", 1, 3), ("dense", "a", 1, 3), ("grep", "a", 1, 3)]


def test_everyone_differs_is_a_ladder() -> None:
    better = {("dense", "bm25"), ("dense", "grep"), ("bm25", "grep")}
    got = tiers({"grep": 0.3, "bm25": 0.5, "dense": 0.8}, better)
    assert [(t.engine, t.letters, t.rank_lo, t.rank_hi) for t in got] == [
        ("dense", "a", 1, 1), ("bm25", "b", 2, 2), ("grep", "c", 3, 3)]


def test_a_non_transitive_tie_overlaps() -> None:
    # A beats C, but neither is distinguishable from B.
    got = tiers({"A": 0.8, "B": 0.6, "C": 0.4}, {("A", "C")})
    assert [(t.engine, t.letters, t.rank_lo, t.rank_hi) for t in got] == [
        ("A", "a", 1, 2), ("B", "ab", 1, 3), ("C", "b", 2, 3)]


def test_equal_means_keep_the_given_order() -> None:
    assert order_by_mean({"x": 0.5, "y": 0.7, "z": 0.5}) == ["y", "x", "z"]
    assert tiers({}, set()) == []


@st.composite
def _significance(draw: st.DrawFn) -> tuple[list[str], set[frozenset[str]]]:
    engines = [f"e{i}" for i in range(draw(st.integers(1, 7)))]
    pairs = [frozenset(p) for p in combinations(engines, 2)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True)) if pairs else []
    return engines, set(chosen)


@settings(max_examples=300, deadline=None)
@given(_significance())
def test_letters_share_exactly_when_not_different(case: tuple[list[str], set[frozenset[str]]]
                                                  ) -> None:
    engines, differ = case
    letters = letter_display(engines, differ)
    assert set(letters) == set(engines) and all(letters.values())
    for a, b in combinations(engines, 2):
        assert _shares(letters[a], letters[b]) == (frozenset((a, b)) not in differ), (a, b)
    # The best engine carries the first letter.
    assert letters[engines[0]].startswith("a")


@settings(max_examples=200, deadline=None)
@given(_significance())
def test_rank_intervals_count_the_engines_above_and_below(
        case: tuple[list[str], set[frozenset[str]]]) -> None:
    engines, differ = case
    position = {e: i for i, e in enumerate(engines)}
    # Orient each difference by position: the earlier engine is the better one.
    better = {tuple(sorted(p, key=position.__getitem__)) for p in differ}
    intervals = rank_intervals(engines, better)  # type: ignore[arg-type]
    for engine, (lo, hi) in intervals.items():
        above = sum(1 for w, loser in better if loser == engine)
        below = sum(1 for w, loser in better if w == engine)
        assert (lo, hi) == (1 + above, len(engines) - below)
        assert 1 <= lo <= position[engine] + 1 <= hi <= len(engines)
