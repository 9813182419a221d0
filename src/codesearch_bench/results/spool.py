"""A running cell's outcomes, written to disk as they are made and held slim.

A cell of 10,000 queries and two per_file passes would hold ~155 MB of outcomes
(slots, gains, gold) until it ends. When the comparison's bound on outcomes held
in full (results/held.py) would be passed, the cell gets a spool: each outcome
is written there whole, in the journal's own outcome-line format, and only its
slim copy stays in memory. When the cell is journaled, the spool is copied into
the journal as it stands (journal.Journal.append), its lines named by offset,
and deleted. The spool is written by whoever runs the cell -- bench, or a worker
process of `compare --jobs` -- and read only by bench.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..errors import StorageError
from .outcome import slim
from .schema import QueryOutcome

OUTCOME_PREFIX = b'{"kind":"outcome","outcome":'


def line(outcome: QueryOutcome) -> bytes:
    """An outcome as its journal line: `{"kind":"outcome","outcome":{...}}`."""
    return OUTCOME_PREFIX + outcome.model_dump_json().encode() + b"}\n"


@dataclass
class Spooled:
    """Where a cell's outcomes are: each slim outcome held, with its line's offset."""

    path: Path
    at: list[tuple[QueryOutcome, int]] = field(default_factory=list)


class Spool:
    """Write each outcome whole, hand back its slim copy."""

    def __init__(self, path: Path) -> None:
        self.spooled = Spooled(path)
        self._failed = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: IO[bytes] | None = open(path, "wb")  # noqa: SIM115 -- see close()
        except OSError as exc:
            raise _unwritable(path, exc) from None

    def put(self, outcome: QueryOutcome) -> QueryOutcome:
        assert self._fh is not None
        offset = self._fh.tell()
        try:
            self._fh.write(line(outcome))
        except OSError as exc:  # a full disk: the cell fails with this, the run goes on
            self._failed = True
            raise _unwritable(self.spooled.path, exc) from None
        held = slim(outcome)
        self.spooled.at.append((held, offset))
        return held

    def close(self) -> Spooled:
        """The spool, its last lines flushed; a flush that fails fails the cell (its
        journal copy would miss those lines), unless a write has said why already."""
        if self._fh is not None:
            fh, self._fh = self._fh, None
            try:
                fh.close()
            except OSError as exc:
                if not self._failed:
                    raise _unwritable(self.spooled.path, exc) from None
        return self.spooled


def _unwritable(path: Path, exc: OSError) -> StorageError:
    return StorageError(f"cannot write this cell's outcomes to {path}: {exc.strerror or exc}",
                        hint="past 5,000 outcomes held in memory a running cell writes them "
                             "beside the journal: free space there, or pick another --json path")


def discard(spooled: Spooled | None) -> None:
    if spooled is not None:
        with contextlib.suppress(OSError):
            spooled.path.unlink()
