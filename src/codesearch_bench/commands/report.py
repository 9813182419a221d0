"""`bench report`: render saved result files; merge shards. Never re-runs an engine."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..merge import Combined, combine
from ..results import ResultFile
from .compare import read_result, write_json

FORMATS = ("table", "md", "json", "png")


@dataclass(frozen=True)
class ReportOptions:
    files: list[Path]
    format: str = "table"
    out: Path | None = None
    merge: bool = False


def load(files: list[Path], *, strict: bool) -> Combined:
    if not files:
        raise UsageError("give one or more result files (written by `bench compare --json`)")
    loaded = [(path, read_result(path)) for path in files]
    if len(loaded) == 1 and not strict:
        return Combined(loaded[0][1])
    return combine(loaded, strict=strict)


def merge(files: list[Path], out: Path) -> Combined:
    """Merge shards into one result file (written atomically)."""
    combined = load(files, strict=True)
    write_json(combined.result, out)
    return combined


def as_json(result: ResultFile) -> str:
    return result.model_dump_json(indent=1) + "\n"
