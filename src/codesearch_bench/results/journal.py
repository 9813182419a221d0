"""The result journal: each cell appended the moment it finishes, so nothing finished is lost.

One JSON object per line: a header, then each finished cell -- one line per query
outcome it measured, then the cell's own line: its rows (their queries named by
the outcome lines' offsets, not repeated), its failure, and the engine and corpus
records it was measured with. A cell's lines are flushed and fsynced before the
next cell starts, so a crash, a SIGKILL or a power cut loses at most the cell that
was running; outcome lines that no cell line follows are that cell, and are
ignored (counted) on reading, as is a last line cut off mid-write. Outcomes have
lines of their own so that a cell can be read back a query at a time
(`rows_at`): the result file is written from the journal without holding a whole
cell. `bench compare` builds its result file from what it measured and
journaled; `--resume` reads the journal beside the result file, so a run killed
before it wrote any JSON still resumes. A cell line with its queries inline (an
earlier bench's) reads as before.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import StorageError, UsageError
from . import spool
from .schema import CorpusOut, EngineOut, Failure, QueryOutcome, Row

SUFFIX = ".journal"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Header(_Record):
    kind: Literal["header"] = "header"
    protocol_version: str
    cutoffs: list[int]
    created: str


class CellRecord(_Record):
    kind: Literal["cell"] = "cell"
    engine: str
    corpus: str
    rows: list[Row]
    failure: Failure | None = None
    engine_info: EngineOut
    corpus_info: CorpusOut
    # On disk only: the byte offset of each of the cell's outcome lines (`at`), and each
    # row's queries as indexes into `at` (the rows of one cell share outcomes: its splits).
    at: list[int] | None = None
    refs: list[list[int]] | None = None


def _ends_a_line(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def path_for(result: Path) -> Path:
    """The journal of a result file: `out.json` -> `out.json.journal`."""
    return result.with_name(result.name + SUFFIX)


class Journal:
    """Append-only, one fsynced line per finished cell."""

    def __init__(self, path: Path, header: Header, *, fresh: bool) -> None:
        self.path = path
        self._fh: IO[bytes] | None = None
        with self._writing():
            path.parent.mkdir(parents=True, exist_ok=True)
            # Kept open for the whole run and closed in close(): one line per cell. Binary,
            # so a line's offset is a plain byte count (read_at finds the cell again).
            self._fh = open(path, "wb" if fresh else "ab")  # noqa: SIM115
            if fresh or path.stat().st_size == 0:
                self._write(header.model_dump_json())
            elif not _ends_a_line(path):
                # A crash cut the last line short: end it, or the next line would join it.
                self._write("")

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A write that fails (a full disk, an I/O error) is a StorageError naming the
        journal; the lines of the cell being written are taken back, so the journal
        ends with the last cell that finished whole."""
        start = self._fh.tell() if self._fh is not None else None
        try:
            yield
        except OSError as exc:
            if self._fh is not None and start is not None:
                self._take_back(start)
            result = self.path.with_name(self.path.name.removesuffix(SUFFIX))
            raise StorageError.of(
                self.path, exc, "the journal",
                hint="every cell journaled before this one is kept: free space, then run "
                     f"the same command with --resume {result}") from None

    def _take_back(self, start: int) -> None:
        """Cut the journal back to `start` and end this handle without writing more.

        What is still in the handle's buffer is the failed cell's, and would be written
        (past the cut) when it is flushed -- and a flush on a full disk only fails again:
        the descriptor is pointed at /dev/null first, so it goes nowhere.
        """
        fh, self._fh = self._fh, None
        assert fh is not None
        with contextlib.suppress(OSError, ValueError):
            fd = fh.fileno()
            os.ftruncate(fd, start)
            os.fsync(fd)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)
        with contextlib.suppress(OSError, ValueError):
            fh.close()

    def _write(self, line: str) -> int:
        assert self._fh is not None
        offset = self._fh.tell()
        self._fh.write(line.encode() + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return offset

    def append(self, record: CellRecord, spooled: spool.Spooled | None = None) -> int:
        """Journal one finished cell, its outcomes a line each and then its own line,
        fsynced once; the byte offset of the cell's own line (for `rows_at`). A spooled
        cell's rows hold slim outcomes: their whole lines are copied from its spool."""
        with self._writing():
            return self._append(record, spooled)

    def _append(self, record: CellRecord, spooled: spool.Spooled | None) -> int:
        assert self._fh is not None
        written: dict[int, int] = {}  # id(outcome) -> the offset of its line
        if spooled is not None and any(row.queries for row in record.rows):
            base = self._fh.tell()
            with open(spooled.path, "rb") as fh:
                shutil.copyfileobj(fh, self._fh, 1 << 20)
            written = {id(o): base + offset for o, offset in spooled.at}
            # Its rows hold the very outcomes it spooled: a slim one written here would
            # lose its detail.
            assert all(id(o) in written for row in record.rows for o in row.queries)
        at: list[int] = []
        index: dict[int, int] = {}  # offset of an outcome's line -> its place in `at`
        refs: list[list[int]] = []
        for row in record.rows:
            ref = []
            for outcome in row.queries:
                offset = written.get(id(outcome))
                if offset is None:
                    offset = written[id(outcome)] = self._fh.tell()
                    self._fh.write(spool.line(outcome))
                j = index.get(offset)
                if j is None:
                    j = index[offset] = len(at)
                    at.append(offset)
                ref.append(j)
            refs.append(ref)
        bare = [r.model_copy(update={"queries": []}) for r in record.rows]
        return self._write(record.model_copy(update={"rows": bare, "at": at, "refs": refs})
                           .model_dump_json())

    def close(self) -> None:
        if self._fh is not None:
            fh, self._fh = self._fh, None
            # Every line was flushed and fsynced when written: nothing is left to lose.
            with contextlib.suppress(OSError):
                fh.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rows_at(path: Path, offset: int) -> Iterator[tuple[Row, Iterator[QueryOutcome]]]:
    """The rows of the cell whose line `Journal.append` put at `offset`, each with its
    queries read from their own lines as they are iterated: one outcome held at a time."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        record = CellRecord.model_validate_json(fh.readline())
    if record.at is None or record.refs is None:
        for row in record.rows:  # queries inline
            yield row, iter(row.queries)
        return
    for row, ref in zip(record.rows, record.refs, strict=True):
        yield row, _outcomes(path, [record.at[j] for j in ref])


def _outcomes(path: Path, offsets: list[int]) -> Iterator[QueryOutcome]:
    with open(path, "rb") as fh:
        for offset in offsets:
            fh.seek(offset)
            yield _outcome(json.loads(fh.readline()))


def _outcome(data: object) -> QueryOutcome:
    if not isinstance(data, dict) or data.get("kind") != "outcome" or set(data) != {
            "kind", "outcome"}:
        raise ValueError("not an outcome line")
    return QueryOutcome.model_validate(data["outcome"])


def read(path: Path) -> tuple[Header | None, list[CellRecord], int]:
    """The header, the finished cells, and how many records could not be used: a line
    torn or bad, or the outcome lines of a cell whose own line never came (one each)."""
    try:
        fh = open(path, "rb")  # noqa: SIM115
    except FileNotFoundError:
        return None, [], 0
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the journal: {exc.strerror}") from None
    header: Header | None = None
    cells: list[CellRecord] = []
    bad = 0
    pending: dict[int, QueryOutcome] = {}  # outcome lines since the last cell line
    offset = 0
    with fh:
        for raw in fh:
            at, offset = offset, offset + len(raw)
            if not raw.strip():
                continue
            try:
                data = json.loads(raw.decode("utf-8", errors="replace"))
                kind = data.get("kind") if isinstance(data, dict) else None
                if kind == "header":
                    header = Header.model_validate(data)
                elif kind == "outcome":
                    pending[at] = _outcome(data)
                else:
                    record = CellRecord.model_validate(data)
                    cells.append(_whole(record, pending))
                    # Lines before the cell's own first: a cell cut off before its line.
                    first = min(record.at) if record.at else at
                    bad += any(line_at < first for line_at in pending)
                    pending = {}
            except (ValueError, ValidationError, KeyError, IndexError):
                bad += 1  # a line cut off by a crash mid-write: its cell's outcomes go too
                pending = {}
    return header, cells, bad + bool(pending)


def _whole(record: CellRecord, outcomes: dict[int, QueryOutcome]) -> CellRecord:
    """A cell line with its queries back in its rows, from the outcome lines before it."""
    if record.at is None or record.refs is None:
        return record
    mine = [outcomes.pop(offset) for offset in record.at]  # KeyError: not this cell's
    # What is left of the lines from this cell's first on is its own, unnamed (a spool
    # copied whole): not a loss.
    rows = [row.model_copy(update={"queries": [mine[j] for j in ref]})
            for row, ref in zip(record.rows, record.refs, strict=True)]
    return record.model_copy(update={"rows": rows, "at": None, "refs": None})
