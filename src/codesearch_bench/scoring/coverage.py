"""Extensions an engine never returns although gold lies in them: the `!! coverage` flag.

A tool that picks files by extension can leave out a whole kind of file --
universal-ctags maps TypeScript to `.ts` only, so an engine built on it never
returns a `.tsx` file -- and its misses there read as poor ranking when they are
a gap in what it indexes. Per row: the extensions of the gold files over its
queries, and those of every file the engine returned, in any slot. An extension
is flagged when it holds gold for at least 5% of the row's queries (or 3 of
them) and the engine returned no file with it on any query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..results.schema import CoverageGap, QueryOutcome

MIN_PERCENT = 5  # of the row's queries whose gold lies in the extension
MIN_QUERIES = 3  # or this many, on a row of many queries


def extension(path: str) -> str:
    """`.tsx` for `src/App.tsx`; "" for `Makefile` or `.gitignore`, which name no kind."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[dot:] if dot > 0 else ""


@dataclass
class Extensions:
    """One pass's tally, a query at a time: how many queries have gold in each extension,
    and every extension the engine returned. Kept as the cell asks, because a spooled
    cell holds its outcomes without their slots and gold."""

    queries: int = 0
    gold: Counter[str] = field(default_factory=Counter)
    returned: set[str] = field(default_factory=set)

    def add(self, gold: Iterable[str], returned: Iterable[str]) -> None:
        self.queries += 1
        self.gold.update({ext for path in gold if (ext := extension(path))})
        self.returned.update(ext for path in returned if (ext := extension(path)))

    def gaps(self) -> list[CoverageGap]:
        """The flagged extensions, the most queries first."""
        if not self.returned:
            return []  # nothing returned at all: `!! empty` or errors=N says so
        flagged = [(ext, n) for ext, n in self.gold.items() if ext not in self.returned
                   and (n >= MIN_QUERIES or n * 100 >= MIN_PERCENT * self.queries)]
        return [CoverageGap(extension=ext, queries=n, share=n / self.queries)
                for ext, n in sorted(flagged, key=lambda item: (-item[1], item[0]))]


def tally(outcomes: Iterable[QueryOutcome]) -> Extensions:
    """The tally from whole outcomes: their stored slots (the top 20) and gold."""
    seen = Extensions()
    for o in outcomes:
        seen.add((g.path for g in o.gold), (s.path for s in o.slots))
    return seen

