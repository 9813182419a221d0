"""Turn a loaded spec plus a corpus context into runs: index, search, version.

This is the only place that knows how a spec's templates meet real paths. It
returns data -- rendered commands, measurements, parsed hits and errors --
and leaves grading and printing to others.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import process, templating
from .errors import EngineUnavailable, SpecError
from .parse import Hit, ParseResult, parse
from .process import Measurement
from .session import EngineSession
from .spec import LoadedSpec, python_executable

VERSION_TIMEOUT = 30.0


@dataclass(frozen=True)
class Context:
    """Where one engine runs for one corpus."""

    root: Path
    state: Path
    corpus: str
    lang: str = ""


@dataclass(frozen=True)
class Rendered:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    stdin: str | None = None

    def shell_line(self) -> str:
        import shlex

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


def _vars(loaded: LoadedSpec, ctx: Context) -> dict[str, object]:
    return {
        "root": str(ctx.root),
        "state": str(ctx.state),
        "name": loaded.name,
        "lang": ctx.lang,
        "corpus": ctx.corpus,
        "spec_dir": str(loaded.spec_dir),
        "python": python_executable(),
    }


def _render(loaded: LoadedSpec, which: str, variables: dict[str, object]) -> Rendered:
    cmd = loaded.spec.index if which == "index" else loaded.spec.search
    assert cmd is not None
    try:
        argv = templating.render_argv(cmd.command, variables)
        env = templating.render_env(loaded.spec.env, variables)
        cwd = templating.render(cmd.dir, variables) if cmd.dir else str(variables["state"])
        stdin = templating.render(cmd.stdin, variables) if cmd.stdin is not None else None
    except templating.TemplateProblem as exc:
        raise SpecError(f"{loaded.file}: {which}: {exc}") from None
    cwd_path = Path(cwd)
    if not cwd_path.is_absolute():
        cwd_path = loaded.spec_dir / cwd_path
    return Rendered(argv=argv, env=env, cwd=str(cwd_path), stdin=stdin)


def render_index(loaded: LoadedSpec, ctx: Context) -> Rendered | None:
    if loaded.spec.index is None:
        return None
    return _render(loaded, "index", _vars(loaded, ctx))


def search_vars(loaded: LoadedSpec, ctx: Context, query: str, k: int,
                per_file: int) -> dict[str, object]:
    variables = _vars(loaded, ctx)
    variables.update(query=query, k=k, n=k * loaded.spec.candidates, per_file=per_file)
    return variables


def render_search(loaded: LoadedSpec, ctx: Context, query: str, k: int,
                  per_file: int) -> Rendered:
    return _render(loaded, "search", search_vars(loaded, ctx, query, k, per_file))


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


def dir_bytes(path: Path) -> int:
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, name)).st_size
    return total


def engine_version(loaded: LoadedSpec) -> str | None:
    """The output of the spec's `version` command, first line; None if absent or failing."""
    if not loaded.spec.version:
        return None
    variables = {"name": loaded.name, "spec_dir": str(loaded.spec_dir),
                 "python": python_executable()}
    try:
        argv = templating.render_argv(loaded.spec.version, variables)
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
            self.start_command = _render(self.loaded, "search", _vars(self.loaded, self.ctx))
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

    def search(self, query: str, k: int, per_file: int) -> SearchResult:
        spec = self.loaded.spec
        if self.session is not None:
            payload = {
                "query": query, "k": k, "n": k * spec.candidates, "per_file": per_file,
                "root": str(self.ctx.root), "corpus": self.ctx.corpus, "state": str(self.ctx.state),
            }
            reply = self.session.request(payload, spec.search_timeout)
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
