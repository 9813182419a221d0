"""Run tracking: a finished comparison's rows logged where people keep results.

`tracker_for(value)` turns a `--track` value into a tracker: `jsonl:PATH`
(one JSON line per row, no extra), `mlflow` or `mlflow:URI` (one MLflow run
per row, the `mlflow` extra). Make it before the comparison runs, so a bad
value or a missing extra fails before any engine does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ..errors import TrackingFailed, UsageError
from ..results.schema import ResultFile
from .jsonl import JsonlTracker
from .mlflow_runs import MlflowTracker

__all__ = ["TRACKERS", "Tracker", "TrackingFailed", "tracker_for"]


class Tracker(Protocol):
    def track(self, result: ResultFile, result_path: Path | None,
              extra_artifacts: list[Path]) -> str:
        """Log every row; returns what was done, for the CLI to print."""
        ...


def _jsonl(arg: str | None) -> Tracker:
    if not arg:
        raise UsageError("--track jsonl needs a file: --track jsonl:PATH")
    return JsonlTracker(Path(arg))


def _mlflow(arg: str | None) -> Tracker:
    return MlflowTracker(arg or None)


#: kind -> (factory taking what follows the first colon, the forms it takes)
TRACKERS: dict[str, tuple[Callable[[str | None], Tracker], str]] = {
    "jsonl": (_jsonl, "jsonl:PATH"),
    "mlflow": (_mlflow, "mlflow, mlflow:URI"),
}


def tracker_for(value: str) -> Tracker:
    """The tracker a `--track` value names; a UsageError for anything else."""
    kind, colon, arg = value.partition(":")
    if kind not in TRACKERS:
        forms = "; ".join(form for _, form in TRACKERS.values())
        raise UsageError(f"--track {value!r}: no tracker {kind!r}", hint=f"use {forms}")
    factory, _ = TRACKERS[kind]
    return factory(arg if colon else None)
