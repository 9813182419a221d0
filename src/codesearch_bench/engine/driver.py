"""Turn a loaded spec plus a corpus context into runs: index, search, version.

This is the only place that knows how a spec's templates meet real paths. It
returns data -- rendered commands, measurements, parsed hits and errors --
and leaves grading and printing to others.

A rendered command is checked against what the OS will pass before it is
spawned: a NUL byte, text that cannot be encoded, an argument over Linux's
MAX_ARG_STRLEN or a command line over ARG_MAX would each make exec fail, and
a query that renders to one fails alone (`SearchResult.rejected`) with the
advice to send it on stdin or to a persistent engine, where it is data.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import CommandRejected, EngineUnavailable, SpecError
from ..model import Hit
from ..processes import command
from ..processes.command import Measurement
from .output.parse import ParseResult, parse
from .session import EngineSession
from .spec import LoadedSpec
from .templates import rendering, variables
from .templates.variables import Ask, Context

VERSION_TIMEOUT = 30.0

__all__ = ["Ask", "Context", "Rendered", "SearchResult", "Searcher", "engine_version",
           "render_index", "render_search", "run_index"]


@dataclass(frozen=True)
class Rendered:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    stdin: str | None = None

    def shell_line(self) -> str:
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in self.env.items())
        cmd = shlex.join(self.argv)
        return f"(cd {shlex.quote(self.cwd)} && {env + ' ' if env else ''}{cmd})"


@dataclass
class SearchResult:
    hits: list[Hit] = field(default_factory=list)
    parsed: ParseResult | None = None
    latency_s: float = 0.0
    error: str | None = None
    raw: bytes = b""
    rendered: Rendered | None = None
    truncated: bool = False
    timed_out: bool = False
    leftovers: int = 0
    #: bench refused to run this query's command (it could not be rendered, or the
    #: OS would refuse it): the spec or the query is at fault, not the engine.
    rejected: bool = False
    unsolicited: int = 0  # a persistent engine's stray lines discarded while serving this one


def ask(loaded: LoadedSpec, query: str, k: int, per_file: int) -> Ask:
    return Ask(query=query, k=k, n=k * loaded.spec.candidates, per_file=per_file)


def _render(loaded: LoadedSpec, which: Literal["index", "search"], ctx: Context,
            question: Ask | None = None) -> Rendered:
    cmd = loaded.spec.index if which == "index" else loaded.spec.search
    assert cmd is not None
    values = variables.values(loaded.name, loaded.spec_dir, ctx, question)

    def render(label: str, template: str) -> str:
        try:
            return rendering.render(template, values)
        except rendering.TemplateProblem as exc:
            raise SpecError(f"{loaded.file}: field `{label}`: {exc}") from None

    argv = [render(f"{which}.command[{i}]", part) for i, part in enumerate(cmd.command)]
    env = {}
    for i, entry in enumerate(loaded.spec.env):
        key, _, value = entry.partition("=")
        env[key] = render(f"env[{i}]", value)
    cwd = render(f"{which}.dir", cmd.dir) if cmd.dir else str(ctx.state)
    stdin = render(f"{which}.stdin", cmd.stdin) if cmd.stdin is not None else None
    cwd_path = Path(cwd)
    if not cwd_path.is_absolute():
        cwd_path = loaded.spec_dir / cwd_path
    return Rendered(argv=argv, env=env, cwd=str(cwd_path), stdin=stdin)


def render_index(loaded: LoadedSpec, ctx: Context) -> Rendered | None:
    if loaded.spec.index is None:
        return None
    return _render(loaded, "index", ctx)


def render_search(loaded: LoadedSpec, ctx: Context, query: str, k: int,
                  per_file: int) -> Rendered:
    return _render(loaded, "search", ctx, ask(loaded, query, k, per_file))


def _owner(loaded: LoadedSpec, which: str) -> str:
    return f"engine {loaded.name!r} ({loaded.file}) {which}"


@functools.cache
def os_limits() -> tuple[int | None, int]:
    """(longest single argument or env entry, whole argv + environment) exec accepts, in bytes.

    Linux caps each string at 32 pages (MAX_ARG_STRLEN) whatever ARG_MAX says;
    other systems have only the total.
    """
    try:
        total = os.sysconf("SC_ARG_MAX")
    except (ValueError, OSError):
        total = -1
    total = total if total > 0 else 128 * 1024  # the smallest Linux ever had
    per_arg = 32 * os.sysconf("SC_PAGE_SIZE") if sys.platform.startswith("linux") else None
    return per_arg, total


def _encoded(text: str, what: str, owner: str) -> bytes:
    if "\x00" in text:
        raise CommandRejected(f"{owner}: {what} contains a NUL byte, which the OS cannot pass")
    try:
        return os.fsencode(text)
    except UnicodeEncodeError as exc:
        raise CommandRejected(f"{owner}: {what} cannot be encoded for the OS "
                              f"({exc.reason} at character {exc.start})") from None


def check_command(rendered: Rendered, owner: str) -> None:
    """Raise CommandRejected for a command exec would refuse, before anything is spawned."""
    per_arg, total_max = os_limits()
    strings = [(f"argument {i}", arg) for i, arg in enumerate(rendered.argv)]
    # The child's environment is bench's own plus the spec's, as processes/spawn.py builds it.
    env = {**os.environ, **rendered.env}
    strings += [(f"env {key}", f"{key}={value}") for key, value in env.items()]
    total = 0
    for what, text in strings:
        size = len(_encoded(text, what, owner)) + 1  # with its terminating NUL
        if per_arg is not None and size > per_arg:
            raise CommandRejected(f"{owner}: {what} is {size - 1} bytes; Linux passes at most "
                                  f"{per_arg - 1} bytes in one (MAX_ARG_STRLEN)")
        total += size + 8  # and its pointer
    if total > total_max:
        raise CommandRejected(f"{owner}: the command line and environment take {total} bytes; "
                              f"the OS passes at most {total_max} (ARG_MAX)")
    _encoded(rendered.cwd, "the working directory", owner)
    if rendered.stdin is not None:
        try:
            rendered.stdin.encode()
        except UnicodeEncodeError as exc:
            raise CommandRejected(f"{owner}: stdin cannot be encoded as UTF-8 ({exc.reason} at "
                                  f"character {exc.start})") from None


def _rejected(exc: CommandRejected) -> str:
    """The query's one-line error: what the OS refused, and what to do instead."""
    return f"{exc.message}; {exc.hint}"


def run_index(loaded: LoadedSpec, ctx: Context) -> tuple[Rendered | None, Measurement | None]:
    """Run the index command, if the spec has one. The state dir is created first."""
    ctx.state.mkdir(parents=True, exist_ok=True)
    rendered = render_index(loaded, ctx)
    if rendered is None:
        return None, None
    check_command(rendered, _owner(loaded, "index"))
    measurement = command.run(
        rendered.argv, timeout=loaded.spec.index_timeout, cwd=rendered.cwd, env=rendered.env,
        stdin=rendered.stdin.encode() if rendered.stdin is not None else None,
        owner=_owner(loaded, "index"), requires=loaded.spec.requires,
    )
    return rendered, measurement


def missing_executable(loaded: LoadedSpec) -> str | None:
    """Why an index or search command cannot start at all (its program is not there), found
    before any engine runs; None when it can, or when the program depends on a corpus."""
    values = variables.values(loaded.name, loaded.spec_dir)
    for which, cmd in (("index", loaded.spec.index), ("search", loaded.spec.search)):
        if cmd is None:
            continue
        try:
            program = rendering.render(cmd.command[0], values)
        except rendering.TemplateProblem:
            continue  # it names root, state or the query: only a real run can tell
        if os.sep in program or (os.altsep and os.altsep in program):
            base = Path(program) if Path(program).is_absolute() else loaded.spec_dir / program
            found = base.is_file() and os.access(base, os.X_OK)
        else:
            found = shutil.which(program) is not None
        if not found:
            need = f"; it requires: {loaded.spec.requires}" if loaded.spec.requires else ""
            return f"{_owner(loaded, which)}: executable {program!r} not found{need}"
    return None


def engine_version(loaded: LoadedSpec) -> str | None:
    """The output of the spec's `version` command, first line; None if absent or failing."""
    if not loaded.spec.version:
        return None
    values = variables.values(loaded.name, loaded.spec_dir)
    try:
        argv = rendering.render_argv(loaded.spec.version, values)
        m = command.run(argv, timeout=VERSION_TIMEOUT, cwd=str(loaded.spec_dir),
                        owner=_owner(loaded, "version"), requires=loaded.spec.requires)
    except (EngineUnavailable, CommandRejected, rendering.TemplateProblem) as exc:
        return f"unavailable: {exc}"
    text = (m.stdout or m.stderr).decode("utf-8", errors="replace").strip()
    first = text.splitlines()[0] if text else ""
    return first if m.ok else f"failed ({m.describe_failure()}): {first}"


class Searcher:
    """Runs queries for one engine × corpus, one-shot or through a session."""

    def __init__(self, loaded: LoadedSpec, ctx: Context) -> None:
        self.loaded, self.ctx = loaded, ctx
        self.session: EngineSession | None = None
        self.start_command: Rendered | None = None

    def __enter__(self) -> Searcher:
        if self.loaded.spec.mode == "persistent":
            self.ctx.state.mkdir(parents=True, exist_ok=True)
            self.start_command = _render(self.loaded, "search", self.ctx)
            check_command(self.start_command, _owner(self.loaded, "search"))
            self.session = EngineSession(
                self.start_command.argv, cwd=self.start_command.cwd, env=self.start_command.env,
                owner=_owner(self.loaded, "search"), requires=self.loaded.spec.requires,
            )
            self.session.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.session is not None:
            self.session.close()

    @property
    def peak_rss_bytes(self) -> int | None:
        return self.session.peak_rss_bytes if self.session is not None else None

    def command(self, query: str, k: int, per_file: int) -> Rendered:
        """What runs for this query: the session's start command, or the one-shot argv."""
        if self.start_command is not None:
            return self.start_command
        try:
            return render_search(self.loaded, self.ctx, query, k, per_file)
        except SpecError:
            # This query's command cannot be rendered (search() said why): show the
            # templates it would have come from, never a command that did not run.
            search = self.loaded.spec.search
            return Rendered(argv=list(search.command), env={}, cwd=str(self.ctx.state),
                            stdin=search.stdin)

    def _no_match(self, m: Measurement) -> bool:
        """The command exited with a status the spec says means no match (grep's 1): its
        output, if any, is read as usual, and none is zero results, not a failure."""
        return not m.timed_out and m.returncode in self.loaded.spec.no_results_exit

    def search(self, query: str, k: int, per_file: int) -> SearchResult:
        spec = self.loaded.spec
        if self.session is not None:
            try:
                query.encode("utf-8")
            except UnicodeEncodeError as exc:  # raw bytes smuggled in as surrogates
                return SearchResult(
                    error=f"the query cannot be sent as JSON: it is not valid text "
                          f"({exc.reason} at character {exc.start})",
                    rendered=self.start_command, rejected=True)
            reply = self.session.request(
                variables.request(self.ctx, ask(self.loaded, query, k, per_file)),
                spec.search_timeout)
            result = SearchResult(latency_s=reply.latency_s, rendered=self.start_command,
                                  raw=reply.line or b"", unsolicited=reply.unsolicited)
            if reply.error is not None:
                result.error = reply.error
                return result
        else:
            owner = _owner(self.loaded, "search")
            try:
                rendered = render_search(self.loaded, self.ctx, query, k, per_file)
            except SpecError as exc:  # a long query met a template that multiplies it
                return SearchResult(error=f"cannot render this query's command: "
                                    f"{exc.message}", rejected=True)
            try:
                check_command(rendered, owner)
                m = command.run(
                    rendered.argv, timeout=spec.search_timeout, cwd=rendered.cwd,
                    env=rendered.env, owner=owner, requires=spec.requires,
                    stdin=rendered.stdin.encode() if rendered.stdin is not None else None,
                )
            except CommandRejected as exc:
                return SearchResult(error=_rejected(exc), rendered=rendered, rejected=True)
            result = SearchResult(latency_s=m.wall_s, rendered=rendered, raw=m.stdout,
                                  truncated=m.stdout_truncated, timed_out=m.timed_out,
                                  leftovers=m.leftovers_killed)
            if not m.ok and not self._no_match(m):
                tail = m.stderr_tail(5)
                result.error = m.describe_failure() + (f"; stderr: {tail}" if tail else "")
                return result
            if m.stdout_truncated:
                result.error = f"output exceeded {len(m.stdout)} bytes and was cut off"
                return result
        # A regex that backtracks for ever is bounded by the query's own deadline, and counts
        # towards the timeouts-in-a-row that stop asking a hanging engine.
        result.parsed = parse(spec.parse, result.raw, timeout=spec.search_timeout)
        result.timed_out = result.timed_out or result.parsed.timed_out
        result.hits = result.parsed.hits
        if result.parsed.engine_error is not None:
            result.error = f"engine error: {result.parsed.engine_error[:500]}"
        elif result.parsed.fatal or (result.parsed.bad_records and not result.hits):
            result.error = "unparseable output: " + "; ".join(result.parsed.errors)
        return result
