"""Experiment logging: a finished comparison's rows logged where people keep results.

`logger_for(value)` turns a `--log-to` value into a logger: `jsonl:PATH`
(one JSON line per row, no extra), `mlflow` or `mlflow:URI` (one MLflow run
per row, the `mlflow` extra). Make it, and `check()` it, before the comparison
runs, so a bad value, a missing extra, a file that cannot be appended to or a
server that does not answer fails before any engine does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ...errors import LoggingFailed, UsageError
from ...results.schema import ResultFile
from .jsonl import JsonlLogger
from .mlflow_runs import MlflowLogger

__all__ = ["LOGGERS", "Logger", "LoggingFailed", "logger_for"]


class Logger(Protocol):
    def check(self) -> None:
        """Raise a UsageError now if the target cannot be logged to (not writable, not
        reachable); called before any engine runs."""
        ...

    def log(self, result: ResultFile, result_path: Path | None,
              extra_artifacts: list[Path]) -> str:
        """Log every row; returns what was done, for the CLI to print."""
        ...


def _jsonl(arg: str | None) -> Logger:
    if not arg:
        raise UsageError("--log-to jsonl needs a file: --log-to jsonl:PATH")
    return JsonlLogger(Path(arg))


def _mlflow(arg: str | None) -> Logger:
    return MlflowLogger(arg or None)


#: kind -> (factory taking what follows the first colon, the forms it takes)
LOGGERS: dict[str, tuple[Callable[[str | None], Logger], str]] = {
    "jsonl": (_jsonl, "jsonl:PATH"),
    "mlflow": (_mlflow, "mlflow, mlflow:URI"),
}


def logger_for(value: str) -> Logger:
    """The logger a `--log-to` value names; a UsageError for anything else."""
    kind, colon, arg = value.partition(":")
    if kind not in LOGGERS:
        forms = "; ".join(form for _, form in LOGGERS.values())
        raise UsageError(f"--log-to {value!r}: no logger {kind!r}", hint=f"use {forms}")
    factory, _ = LOGGERS[kind]
    return factory(arg if colon else None)
