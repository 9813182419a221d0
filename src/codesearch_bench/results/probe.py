"""What `bench probe` found: one cell for one query, with every step kept for showing.

A report is data: `run/probe.py` builds it from the same index step and
the same `evaluate()` as compare, and `render/probe.py` only reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..engine.driver import Rendered, SearchResult
from ..engine.spec import LoadedSpec
from ..model import Hit, Span
from ..processes.command import Measurement
from .schema import QueryOutcome

RAW_EXCERPT_LINES = 20


@dataclass(frozen=True)
class ProbeHit:
    hit: Hit
    slot: int | None  # 1-based file slot after collapsing; None if a later chunk was dropped
    exists: bool
    span_text: str | None  # the tree's first lines at the span, if readable
    past_eof: bool
    expected_file: bool
    expected_chunk: bool
    # Where the tool's own text is in the tree near its lines (scoring/lineshift.py):
    # "stated", "below", "above", "elsewhere"; None when there is nothing to compare.
    text_place: str | None = None


@dataclass
class ProbeReport:
    loaded: LoadedSpec
    root: Path
    state: Path
    query: str
    query_id: str | None
    k: int
    n: int
    per_file: int
    expected: list[Span] = field(default_factory=list)
    index_command: Rendered | None = None
    index: Measurement | None = None
    index_cached: bool = False
    search: SearchResult | None = None
    outcome: QueryOutcome | None = None  # exactly what compare would store for this query
    hits: list[ProbeHit] = field(default_factory=list)
    slots: int = 0
    warnings: list[str] = field(default_factory=list)  # the `!!` lines
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def expected_file_rank(self) -> int | None:
        return self.outcome.first_file_slot if self.outcome is not None else None

    @property
    def expected_chunk_rank(self) -> int | None:
        return self.outcome.first_chunk_slot if self.outcome is not None else None

    @property
    def raw_excerpt(self) -> list[str]:
        if self.search is None:
            return []
        text = self.search.raw.decode("utf-8", errors="replace")
        lines = text.splitlines()
        out = [line if len(line) <= 240 else line[:240] + " …" for line in
               lines[:RAW_EXCERPT_LINES]]
        if len(lines) > RAW_EXCERPT_LINES:
            out.append(f"… {len(lines) - RAW_EXCERPT_LINES} more lines")
        return out
