"""Significance tiers: which engines a family of paired tests could not tell apart.

Two readings of the same Holm-corrected pairwise results (protocol/PROTOCOL.md,
"Significance tiers"):

- a compact letter display: engines sharing a letter are not significantly
  different, and every pair that is not significantly different shares one
  (Piepho's insert-absorb construction, so non-transitive ties such as
  A = B, B = C, A > C show as ``a``, ``ab``, ``b``);
- rank intervals: an engine's rank is at best 1 + the number of engines
  significantly better than it, and at worst N minus the number significantly
  worse.

Both take means and the set of significant (winner, loser) pairs, so any group
of queries a caller has compared can be ranked.
"""

from __future__ import annotations

import string
from collections.abc import Collection, Mapping
from dataclasses import dataclass

_ALPHABET = string.ascii_lowercase + string.ascii_uppercase


@dataclass(frozen=True)
class Tier:
    """One engine's place: its mean, letters, and the ranks it could hold."""

    engine: str
    mean: float
    letters: str
    rank_lo: int
    rank_hi: int


def _label(i: int) -> str:
    # Past 52 groups (never reached with a handful of engines) letters stay unambiguous.
    return _ALPHABET[i] if i < len(_ALPHABET) else f"[{i + 1}]"


def order_by_mean(means: Mapping[str, float]) -> list[str]:
    """Engines best mean first; equal means keep the order given."""
    position = {e: i for i, e in enumerate(means)}
    return sorted(means, key=lambda e: (-means[e], position[e]))


def letter_display(ordered: list[str], differ: Collection[frozenset[str]]) -> dict[str, str]:
    """A compact letter display of `ordered` (best first) given the differing pairs.

    The first letter goes to the group holding the best engine, the next to the
    group whose best member comes next, and so on.
    """
    position = {e: i for i, e in enumerate(ordered)}
    columns: list[frozenset[str]] = [frozenset(ordered)] if ordered else []
    pairs = sorted((tuple(sorted(p, key=position.__getitem__)) for p in differ
                    if len(p) == 2 and p <= set(ordered)), key=lambda t: (
                        position[t[0]], position[t[1]]))
    for first, second in pairs:
        split: list[frozenset[str]] = []
        for col in columns:
            if first in col and second in col:
                split += [col - {second}, col - {first}]
            else:
                split.append(col)
        columns = _absorb(split)
    columns.sort(key=lambda col: sorted(position[e] for e in col))
    out = {e: "" for e in ordered}
    for i, col in enumerate(columns):  # in label order, so each engine's letters are too
        for engine in col:
            out[engine] += _label(i)
    return out


def _absorb(columns: list[frozenset[str]]) -> list[frozenset[str]]:
    """Drop every column contained in another (the first of equal ones is kept)."""
    kept: list[frozenset[str]] = []
    for i, col in enumerate(columns):
        inside = any(col < other or (col == other and j < i) for j, other in enumerate(columns)
                     if j != i)
        if col and not inside:
            kept.append(col)
    return kept


def rank_intervals(ordered: list[str],
                   better: Collection[tuple[str, str]]) -> dict[str, tuple[int, int]]:
    """Each engine's best and worst possible rank given the significant (winner, loser) pairs."""
    n = len(ordered)
    out = {}
    for engine in ordered:
        above = sum(1 for winner, loser in better if loser == engine and winner in ordered)
        below = sum(1 for winner, loser in better if winner == engine and loser in ordered)
        out[engine] = (1 + above, n - below)
    return out


def tiers(means: Mapping[str, float], better: Collection[tuple[str, str]]) -> list[Tier]:
    """Letters and rank intervals for engines with these means, best first.

    `better` holds (winner, loser) for every pair whose difference is
    significant; a higher mean is better (pass negated means otherwise).
    """
    ordered = order_by_mean(means)
    letters = letter_display(ordered, {frozenset(pair) for pair in better})
    ranks = rank_intervals(ordered, set(better))
    return [Tier(e, means[e], letters[e], *ranks[e]) for e in ordered]
