"""What the regression gate found: the report `scoring/baseline.py` builds and every view of
it reads (the Markdown, the verdict), row keys and how a row is named."""

from __future__ import annotations

from dataclasses import dataclass

from ..results.schema import Row

# Means of the same values can differ in the last bits when summed in another
# order; --max-drop 0.0 must not fail on that.
EPS = 1e-12

RowKey = tuple[str, str, int, str]


def split_of(row: Row) -> str:
    """The row's split (`all` for rows measured on every query)."""
    return row.split


def key_of(row: Row) -> RowKey:
    return (row.engine, row.corpus, row.per_file, split_of(row))


def describe(key: RowKey) -> str:
    engine, corpus, per_file, split = key
    return f"{engine} × {corpus} (per_file={per_file}" + (
        ")" if split == "all" else f", split={split})")


@dataclass(frozen=True)
class MetricDelta:
    """One watched metric of one matched row, over the queries both files ran.

    `old`, `new` are means over those `n` pairs and `delta = new - old` with a
    bootstrap interval `[lo, hi]`; `p` is two-sided, `p_holm` Holm-adjusted across
    the whole report. `drop` is how much worse new is, in the metric's units
    (0 when it is not worse). `note` says why a metric was not tested.
    """

    metric: str
    n: int
    old: float | None
    new: float | None
    delta: float | None
    lo: float | None
    hi: float | None
    test: str | None
    p: float | None
    p_holm: float | None
    drop: float
    significant: bool
    note: str | None = None
    #: shared queries whose score is NaN in the baseline or the new file: left out of the
    #: pairs, so the test saw less than it should (the gate fails on them)
    nan_old: int = 0
    nan_new: int = 0

    @property
    def worse(self) -> bool:
        return self.drop > EPS

    @property
    def regression(self) -> bool:
        return self.worse and self.significant

    @property
    def lost(self) -> bool:
        """Measured in the baseline and not in the new file (e.g. spans gone)."""
        return self.old is not None and self.new is None


@dataclass(frozen=True)
class RowDelta:
    key: RowKey
    old_queries: int
    new_queries: int
    shared: int
    old_spec: str | None
    new_spec: str | None
    metrics: tuple[MetricDelta, ...]


@dataclass(frozen=True)
class Unmatched:
    """A row in one file only; `failure` is the new file's recorded failure of that cell."""

    key: RowKey
    failure: str | None = None


@dataclass(frozen=True)
class BaselineReport:
    new_label: str
    old_label: str
    protocol_version: str
    metrics: tuple[str, ...]
    alpha: float
    tests: int
    rows: tuple[RowDelta, ...]
    only_new: tuple[Unmatched, ...]
    only_old: tuple[Unmatched, ...]
    notes: tuple[str, ...]
    new_interrupted: bool = False


def format_p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"
