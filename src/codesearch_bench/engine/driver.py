"""Turn a loaded spec plus a corpus context into runs: index, search, version.

This is the only place that knows how a spec's templates meet real paths. It
returns data -- rendered commands, measurements, parsed hits and errors --
and leaves grading and printing to others.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import EngineUnavailable, SpecError
from ..model import Hit
from . import process, templating, variables
from .parse import ParseResult, parse
from .process import Measurement
from .session import EngineSession
from .spec import LoadedSpec
from .variables import Ask, Context

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


def ask(loaded: LoadedSpec, query: str, k: int, per_file: int) -> Ask:
    return Ask(query=query, k=k, n=k * loaded.spec.candidates, per_file=per_file)


def _render(loaded: LoadedSpec, which: Literal["index", "search"], ctx: Context,
            question: Ask | None = None) -> Rendered:
    cmd = loaded.spec.index if which == "index" else loaded.spec.search
    assert cmd is not None
    values = variables.values(loaded.name, loaded.spec_dir, ctx, question)
    try:
        argv = templating.render_argv(cmd.command, values)
        env = templating.render_env(loaded.spec.env, values)
        cwd = templating.render(cmd.dir, values) if cmd.dir else str(ctx.state)
        stdin = templating.render(cmd.stdin, values) if cmd.stdin is not None else None
    except templating.TemplateProblem as exc:
        raise SpecError(f"{loaded.file}: {which}: {exc}") from None
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


def run_index(loaded: LoadedSpec, ctx: Context) -> tuple[Rendered | None, Measurement | None]:
    """Run the index command, if the spec has one. The state dir is created first."""
    ctx.state.mkdir(parents=True, exist_ok=True)
    rendered = render_index(loaded, ctx)
    if rendered is None:
        return None, None
    measurement = process.run(
        rendered.argv, timeout=loaded.spec.index_timeout, cwd=rendered.cwd, env=rendered.env,
        stdin=rendered.stdin.encode() if rendered.stdin is not None else None,
        owner=_owner(loaded, "index"), requires=loaded.spec.requires,
    )
    return rendered, measurement


def engine_version(loaded: LoadedSpec) -> str | None:
    """The output of the spec's `version` command, first line; None if absent or failing."""
    if not loaded.spec.version:
        return None
    values = variables.values(loaded.name, loaded.spec_dir)
    try:
        argv = templating.render_argv(loaded.spec.version, values)
        m = process.run(argv, timeout=VERSION_TIMEOUT, cwd=str(loaded.spec_dir),
                        owner=_owner(loaded, "version"), requires=loaded.spec.requires)
    except (EngineUnavailable, templating.TemplateProblem) as exc:
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
        return render_search(self.loaded, self.ctx, query, k, per_file)

    def search(self, query: str, k: int, per_file: int) -> SearchResult:
        spec = self.loaded.spec
        if self.session is not None:
            reply = self.session.request(
                variables.request(self.ctx, ask(self.loaded, query, k, per_file)),
                spec.search_timeout)
            result = SearchResult(latency_s=reply.latency_s, rendered=self.start_command,
                                  raw=reply.line or b"")
            if reply.error is not None:
                result.error = reply.error
                return result
        else:
            rendered = render_search(self.loaded, self.ctx, query, k, per_file)
            m = process.run(
                rendered.argv, timeout=spec.search_timeout, cwd=rendered.cwd, env=rendered.env,
                stdin=rendered.stdin.encode() if rendered.stdin is not None else None,
                owner=_owner(self.loaded, "search"), requires=spec.requires,
            )
            result = SearchResult(latency_s=m.wall_s, rendered=rendered, raw=m.stdout,
                                  truncated=m.stdout_truncated, timed_out=m.timed_out,
                                  leftovers=m.leftovers_killed)
            if not m.ok:
                tail = m.stderr_tail(5)
                result.error = m.describe_failure() + (f"; stderr: {tail}" if tail else "")
                return result
            if m.stdout_truncated:
                result.error = f"output exceeded {len(m.stdout)} bytes and was cut off"
                return result
        result.parsed = parse(spec.parse, result.raw)
        result.hits = result.parsed.hits
        if result.parsed.engine_error is not None:
            result.error = f"engine error: {result.parsed.engine_error[:500]}"
        elif result.parsed.fatal or (result.parsed.bad_records and not result.hits):
            result.error = "unparseable output: " + "; ".join(result.parsed.errors)
        return result
