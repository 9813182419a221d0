"""The result journal: each cell appended the moment it finishes, so nothing finished is lost.

One JSON object per line: a header, then one line per finished cell -- its rows,
its failure, and the engine and corpus records it was measured with. Each line
is flushed and fsynced before the next cell starts, so a crash, a SIGKILL or a
power cut loses at most the cell that was running. A last line cut off
mid-write is ignored on reading (and counted). `bench compare` builds its
result file from what it measured and journaled; `--resume` reads the journal
beside the result file, so a run killed before it wrote any JSON still resumes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import UsageError
from .schema import CorpusOut, EngineOut, Failure, Row

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


def path_for(result: Path) -> Path:
    """The journal of a result file: `out.json` -> `out.json.journal`."""
    return result.with_name(result.name + SUFFIX)


class Journal:
    """Append-only, one fsynced line per finished cell."""

    def __init__(self, path: Path, header: Header, *, fresh: bool) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Kept open for the whole run and closed in close(): one line per cell. Binary,
        # so a line's offset is a plain byte count (read_at finds the cell again).
        self._fh: IO[bytes] | None = open(  # noqa: SIM115
            path, "wb" if fresh else "ab")
        if fresh or path.stat().st_size == 0:
            self._write(header.model_dump_json())

    def _write(self, line: str) -> int:
        assert self._fh is not None
        offset = self._fh.tell()
        self._fh.write(line.encode() + b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return offset

    def append(self, record: CellRecord) -> int:
        """Journal one finished cell; the byte offset its line starts at."""
        return self._write(record.model_dump_json())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_at(path: Path, offset: int) -> CellRecord:
    """The cell journaled at `offset` (what `Journal.append` returned)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        return CellRecord.model_validate_json(fh.readline())


def read(path: Path) -> tuple[Header | None, list[CellRecord], int]:
    """The header, the finished cells, and how many lines could not be read (torn or bad)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None, [], 0
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the journal: {exc.strerror}") from None
    header: Header | None = None
    cells: list[CellRecord] = []
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if isinstance(data, dict) and data.get("kind") == "header":
                header = Header.model_validate(data)
            else:
                cells.append(CellRecord.model_validate(data))
        except (ValueError, ValidationError):
            bad += 1  # a line cut off by a crash mid-write
    return header, cells, bad
