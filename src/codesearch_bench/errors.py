"""The error hierarchy: one class per exit code, and exit codes only from classes.

Every message is written for the person at the terminal: what went wrong,
what to do next, and where to read more. Everything below the CLI raises; the
CLI's error boundary is the only place that prints an error and returns its
class's exit code.

    0    success
    1    EngineFailed: an engine ran but failed (the run still finished)
    2    UsageError: bad usage; SpecError: a bad engine spec
    3    CorpusError: corpora.toml, a download, a pin or an archive; QueryError: a query set
    4    EngineUnavailable: an engine that cannot be started
    5    RegressionFound: `bench report --baseline` found a watched metric worse
    6    StorageError: a file bench writes cannot be written (a full disk, an I/O error)
    130  Interrupted: Ctrl-C or SIGTERM; engines stopped and reaped
"""

from __future__ import annotations

from typing import Literal


class BenchError(Exception):
    """Base of every error the CLI reports without a traceback."""

    exit_code = 1
    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        if hint:
            self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class EngineFailed(BenchError):
    """An engine ran but did not do its job (index failed, every query failed)."""

    exit_code = 1


class CommandRejected(EngineFailed):
    """The OS refused a rendered command itself (an argument too long, a NUL byte).

    That one query fails with this message; the cell and its other queries go on.
    """

    hint = ("pass long or binary queries on stdin (`search.stdin: \"{{query}}\"`) or use "
            "`mode: \"persistent\"`")


class UsageError(BenchError):
    """The command line itself is wrong."""

    exit_code = 2
    hint = "run `bench <command> --help` for the flags"


class SpecError(UsageError):
    """An engine spec is malformed: names the file, the field and the fix."""

    hint = "see docs/engine-specs.md or protocol/engine.schema.json"


class CorpusError(BenchError):
    """corpora.toml, a download, a pin or an archive is wrong."""

    exit_code = 3
    hint = "see docs/corpora.md for every corpora.toml key"


class QueryError(CorpusError):
    """A query set is malformed, or its gold does not resolve."""

    hint = "see protocol/PROTOCOL.md for the query-set format"


class EngineUnavailable(BenchError):
    """An engine's executable is missing or cannot be started."""

    exit_code = 4
    hint = "install what the spec's `requires` names, then run `bench probe` on it"


class RegressionFound(BenchError):
    """The regression gate found a watched metric worse than the baseline allows."""

    exit_code = 5
    hint = "the table says which row and metric; see docs/reading-a-comparison.md#regression-gate"


class LoggingFailed(EngineFailed):
    """A logger could not log a finished comparison; the result file is unaffected."""

    hint = "the result JSON is written; log it again later with the same --log-to value"


class StorageError(BenchError):
    """A file bench must write cannot be written: a full disk, an I/O error, read-only.

    The message names the file and the cause; what finished before stays where it was
    written (a comparison's journal keeps every finished cell).
    """

    exit_code = 6
    hint = "free space there (or pick another place with --json / --work), then run again"

    @classmethod
    def of(cls, path: object, exc: OSError, what: str, *, hint: str = "") -> StorageError:
        """`what` (e.g. "the journal") at `path` could not be written because of `exc`."""
        named = f"{what} {path}" if what else str(path)
        return cls(f"cannot write {named}: {exc.strerror or exc}", hint=hint)


class Interrupted(BenchError):
    """The user pressed Ctrl-C (or bench got SIGTERM); children have been reaped."""

    exit_code = 130


#: Where a cell can fail, as recorded in a result file's `failures[].stage`.
Stage = Literal["spec", "setup", "gold", "program", "index", "search", "start"]

#: The error class each recorded failure stands for: a run's exit code is the
#: largest of its failures' classes' codes.
STAGE_ERRORS: dict[str, type[BenchError]] = {
    "spec": SpecError, "setup": CorpusError, "gold": QueryError,
    # The engine's program is missing: the same exit (4) whether the run stopped for it
    # before any engine ran or went on without it under --keep-going.
    "program": EngineUnavailable,
    "index": EngineFailed, "search": EngineFailed, "start": EngineFailed,
}


def exit_code_of(stages: list[str]) -> int:
    """0 for no failure, else the largest exit code among the failures' classes."""
    return max((STAGE_ERRORS[s].exit_code for s in stages), default=0)
