"""The statistics part of a result file: paired comparisons, significance tiers, summaries.

`scoring/analysis.py` computes them from the rows; every view reads them from here.
protocol/PROTOCOL.md ("Statistics") says how to recompute each from the rows' per-query
values.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ComparisonOut(_M):
    corpus: str
    per_file: int
    metric: str
    engine_a: str
    engine_b: str
    n: int = Field(description="queries both engines are scored on, failed ones included as "
                   "misses (the same values their rows average)")
    delta: float | None
    lo: float | None
    hi: float | None
    p: float | None
    p_adjusted: float | None
    test: str
    failed_a: int = Field(default=0, description="of the n queries, those engine_a failed "
                          "(each scored as a miss)")
    failed_b: int = Field(default=0, description="of the n queries, those engine_b failed")
    failed_either: int = Field(default=0, description="of the n queries, those either failed")
    differing: int | None = Field(
        default=None, description="queries whose two values differ: the discordant pairs "
        "(McNemar) or the non-zero differences (sign flip)")
    exact: bool | None = Field(
        default=None, description="p is exact (McNemar always; the sign flip when differing "
        "<= 20, by enumeration), else Monte Carlo")
    mdd: float | None = Field(
        default=None, description="minimum detectable difference: the smallest true |delta| "
        "this test finds significant with 80% power at level mdd_alpha, from the observed "
        "discordance (McNemar) or SD of the differences (sign flip); None when no |delta| "
        "<= 1 would, or the differences have no spread")
    mdd_alpha: float | None = Field(
        default=None, description="the level mdd is computed at: 0.05 / pairs in the Holm "
        "family")
    group: str | None = Field(
        default=None, description="None: every query of the corpus; else the subset the "
        "statistics were computed on (a split or a tag)")


class TierEntry(_M):
    engine: str
    mean: float = Field(description="the engine's mean of the metric over the group's queries")
    letters: str = Field(description="compact letter display: engines sharing a letter are "
                         "not significantly different (Holm-adjusted p >= 0.05)")
    rank_lo: int = Field(description="best rank: 1 + engines significantly better")
    rank_hi: int = Field(description="worst rank: engines minus those significantly worse")


class TierGroup(_M):
    corpus: str
    per_file: int
    metric: str
    group: str | None = Field(default=None, description="as in ComparisonOut.group")
    engines: list[TierEntry] = Field(description="best mean first")


class MacroMean(_M):
    engine: str
    metric: str
    corpora: list[str] = Field(description="the corpora averaged: those where the engine has "
                               "a headline row scored on this metric")
    mean: float | None = Field(description="mean over corpora of the per-corpus means")
    lo: float | None = Field(description="95% stratified bootstrap interval (queries resampled "
                             "within each corpus)")
    hi: float | None


class PairRecord(_M):
    metric: str
    engine_a: str
    engine_b: str
    wins: int = Field(description="corpora where engine_a is significantly better")
    ties: int = Field(description="corpora where the difference is not significant")
    losses: int = Field(description="corpora where engine_b is significantly better")
    outcomes: dict[str, Literal["win", "tie", "loss"]] = Field(
        description="corpus -> engine_a's outcome there")


class Summary(_M):
    corpora: list[str]
    macro: list[MacroMean]
    pairs: list[PairRecord]
    track: str = Field(default="questions", description="the track these corpora's rows are of")


class Twin(_M):
    corpus: str
    per_file: int
    engine: str = Field(description="the engine left out of the paired tests and tiers")
    twin_of: str = Field(description="the engine it equals on every query and paired metric, "
                         "compared in its place")
