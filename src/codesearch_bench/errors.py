"""The error hierarchy: one class per exit code.

Every message is written for the person at the terminal: what went wrong,
what to do next, and where to read more. The CLI is the only place that turns
these into exit codes; everything below it raises.
"""

from __future__ import annotations


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


class UsageError(BenchError):
    """The command line itself is wrong."""

    exit_code = 2
    hint = "run `bench <command> --help` for the flags"


class SpecError(BenchError):
    """An engine spec is malformed: names the file, the field and the fix."""

    exit_code = 2
    hint = "see README.md, 'Writing an engine spec', or protocol/engine.schema.json"


class CorpusError(BenchError):
    """corpora.toml, a download, a pin or an archive is wrong."""

    exit_code = 3
    hint = "see corpora.toml and README.md, 'Corpora'"


class QueryError(BenchError):
    """A query set is malformed."""

    exit_code = 3
    hint = "see protocol/PROTOCOL.md for the query-set format"


class EngineUnavailable(BenchError):
    """An engine's executable is missing or cannot be started."""

    exit_code = 4
    hint = "install what the spec's `requires` names, then run `bench probe` on it"


class EngineFailed(BenchError):
    """An engine ran but did not do its job (index failed, bad output)."""

    exit_code = 1


class Interrupted(BenchError):
    """The user pressed Ctrl-C; children have been reaped."""

    exit_code = 130
    hint = ""
