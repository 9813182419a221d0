"""The core values every stage passes along: a hit, a span, a slot.

They are plain immutable values so any stage can build them cheaply and none
needs to know where another got them: the parser makes hits, gold resolution
and `--expect` make spans, collapsing makes slots, and grading reads all
three. Hits and slots are named tuples: a fast engine's query makes forty of
them, thousands of times a second, and a frozen dataclass costs several times
more to build (benchmarks/overhead.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Hit(NamedTuple):
    """One raw result, in the engine's own order (`rank` is 0-based)."""

    path: str
    start: int | None = None
    end: int | None = None
    text: str | None = None
    score: float | None = None
    rank: int = 0


@dataclass(frozen=True)
class Span:
    """A place in the candidate tree: a file, and its lines unless it is file-level.

    Gold items, `bench probe --expect` answers and resolved definitions are all
    spans. `symbol` and `kind` say what the lines were resolved from, if anything.
    `grade` is an imported dataset's graded relevance (None: relevant, ungraded).
    """

    path: str
    start: int | None = None
    end: int | None = None
    symbol: str | None = None
    kind: str | None = None
    grade: int | None = None

    @property
    def file_level(self) -> bool:
        return self.start is None or self.end is None

    @property
    def label(self) -> str:
        if self.symbol and not self.file_level:
            return f"{self.path}:{self.symbol} (lines {self.start}-{self.end})"
        if self.symbol:
            return f"{self.path}:{self.symbol}"
        if not self.file_level:
            return f"{self.path}:{self.start}-{self.end}"
        return self.path


class Slot(NamedTuple):
    """One file's place in the collapsed ranking (`rank` is 1-based)."""

    path: str
    rank: int
    chunks: tuple[Hit, ...] = ()


def overlaps(hit: Hit, span: Span) -> bool:
    """A hit's lines share at least one line with the span's (both must have lines)."""
    if span.start is None or span.end is None:
        return False
    return overlaps_lines(hit, span.start, span.end)


def overlaps_lines(hit: Hit, start: int, end: int) -> bool:
    """`overlaps` for a span given as its lines: grading asks it of every gold span."""
    return hit.start is not None and hit.end is not None and hit.start <= end and start <= hit.end
