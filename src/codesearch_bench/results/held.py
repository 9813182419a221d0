"""A comparison's measured rows while it runs: in full up to a bound, slim past it.

A row holds every query's outcome, and most of an outcome is its per-slot detail
(the top slots with their chunk spans, the gains, the gold items): ~8 KB a query
in memory against ~1 KB more for its slim copy (the scores are shared). Every
finished cell is in the journal already, so once the rows held in full reach
`limit` outcomes, the next cells' rows are kept slim -- every value the
statistics, the table and the loggers read (id, split, tags, error, scores,
tokens, latency), none of the per-slot detail -- and the result file is written
from the journal instead, a query at a time (journal.rows_at, results/write.py).
Memory then grows by a slim outcome a query, whatever the suite's size, and the
file is byte for byte what it would have been (tests/test_held_rows.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from . import journal
from .outcome import slim
from .schema import QueryOutcome, Row

#: Outcomes held in full before later cells are held slim: about 40 MB.
LIMIT = 5_000

class HeldRows:
    """Each measured cell's rows by its place in the plan, and where its journal line is."""

    def __init__(self, journal_path: Path, limit: int = LIMIT) -> None:
        self.journal_path, self.limit = journal_path, limit
        self._cells: dict[int, list[Row]] = {}
        self._journaled: dict[int, int] = {}  # cells held slim: their line's offset
        self._full = 0
        self._booked: dict[int, int] = {}  # running cells that will be held in full

    def room(self, i: int, outcomes: int) -> bool:
        """Whether cell i's outcomes, about to be made, fit in full beside those held
        and those of the cells running (then they are booked); if not, the cell is to
        be spooled (results/spool.py) and its rows added slim."""
        if self._full + sum(self._booked.values()) + outcomes <= self.limit:
            self._booked[i] = outcomes
            return True
        return False

    def add(self, i: int, rows: list[Row], offset: int, *, spooled: bool = False) -> None:
        """Cell i's rows, just journaled at `offset`; `spooled`: their outcomes are slim
        already, the whole ones were spooled."""
        self._booked.pop(i, None)
        if spooled:
            self._cells[i] = rows
            self._journaled[i] = offset
            return
        count = len({id(o) for r in rows for o in r.queries})
        if self._full + count <= self.limit:
            self._full += count
            self._cells[i] = rows
            return
        made: dict[int, QueryOutcome] = {}  # rows of one cell share outcomes (its splits)
        self._cells[i] = [r.model_copy(update={"queries": [
            made.setdefault(id(o), slim(o)) for o in r.queries]}) for r in rows]
        self._journaled[i] = offset

    @property
    def slimmed(self) -> bool:
        """Some rows lack their per-slot detail in memory (the file has it)."""
        return bool(self._journaled)

    def rows(self) -> list[Row]:
        """Every cell's rows in plan order, as held: what the statistics read."""
        return [r for i in sorted(self._cells) for r in self._cells[i]]

    def full_rows(self) -> Iterator[tuple[Row, Iterator[QueryOutcome]]]:
        """Every cell's rows in plan order, each with all its queries' detail: a held
        slim cell's read back from the journal a query at a time."""
        for i in sorted(self._cells):
            if i in self._journaled:
                yield from journal.rows_at(self.journal_path, self._journaled[i])
            else:
                for row in self._cells[i]:
                    yield row, iter(row.queries)
