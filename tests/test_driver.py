"""The driver: a spec written to disk, rendered against a Context, run one-shot or persistent."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import FAKES, children, new_children

from codesearch_bench.engine import driver, state
from codesearch_bench.engine.driver import Context, Searcher
from codesearch_bench.engine.spec import LoadedSpec, load_spec
from codesearch_bench.errors import EngineUnavailable

NASTY = 'x"; rm -rf ~; echo "'
JSON_PARSE = {"format": "json", "results": "hits", "path": "file", "start": "from",
              "end": "to", "text": "body", "score": "score"}
ECHO_PARSE = {"format": "json", "results": "hits", "start": "start", "end": "end",
              "text": "text"}


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    before = {c.pid for c in children()}
    yield
    left = new_children(before)
    assert not left, f"left behind (pid, status): {left}"


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    """A folder holding copies of the fakes, as an engine's own scripts would sit by its spec."""
    folder = tmp_path / "engines"
    folder.mkdir()
    for script in FAKES.glob("*.py"):
        shutil.copy(script, folder / script.name)
    return folder


@pytest.fixture
def ctx(tmp_path: Path) -> Context:
    root = tmp_path / "tree"
    (root / "src").mkdir(parents=True)
    return Context(root=root, state=tmp_path / "state" / "fake" / "rich", corpus="rich",
                   lang="python")


def write_spec(spec_dir: Path, data: dict[str, Any], name: str = "fake.json") -> LoadedSpec:
    path = spec_dir / name
    path.write_text(json.dumps(data, indent=2))
    return load_spec(path)


def oneshot(spec_dir: Path, **extra: Any) -> LoadedSpec:
    data = {
        "name": "fake",
        "spans": True,
        "tokens": True,
        "candidates": 3,
        "requires": "nothing: it is a test fake",
        "env": ["FAKE_STATE={{state}}", "FAKE_CORPUS={{corpus}}"],
        "index": {"command": ["{{python}}", "{{spec_dir}}/oneshot_json.py", "index",
                              "{{root}}"]},
        "search": {"command": ["{{python}}", "{{spec_dir}}/oneshot_json.py", "--n", "{{n}}",
                               "--query", "{{query}}", "{{k}}", "{{per_file}}", "{{lang}}"],
                   "timeout": "30s"},
        "parse": JSON_PARSE,
    }
    data.update(extra)
    return write_spec(spec_dir, data)


def persistent(spec_dir: Path, *flags: str) -> LoadedSpec:
    return write_spec(spec_dir, {
        "name": "echo",
        "mode": "persistent",
        "spans": True,
        "candidates": 2,
        "search": {"command": ["{{python}}", "{{spec_dir}}/persistent_echo.py", *flags],
                   "timeout": "5s"},
        "parse": ECHO_PARSE,
    }, name="echo.json")


# -- rendering ---------------------------------------------------------------

def test_render_search(spec_dir: Path, ctx: Context) -> None:
    loaded = oneshot(spec_dir)
    rendered = driver.render_search(loaded, ctx, NASTY, k=20, per_file=2)
    assert rendered.argv == [sys.executable, f"{spec_dir.resolve()}/oneshot_json.py", "--n",
                             "60", "--query", NASTY, "20", "2", "python"]
    assert rendered.env == {"FAKE_STATE": str(ctx.state), "FAKE_CORPUS": "rich"}
    assert rendered.cwd == str(ctx.state)  # default working directory
    assert rendered.stdin is None
    # The printed line, pasted into a shell, runs the same argv.
    words = shlex.split(rendered.shell_line()[1:-1])
    assert words == ["cd", str(ctx.state), "&&", f"FAKE_STATE={ctx.state}", "FAKE_CORPUS=rich",
                     *rendered.argv]


def test_relative_dir_is_under_spec_dir(spec_dir: Path, ctx: Context) -> None:
    loaded = oneshot(spec_dir, search={"command": ["{{python}}", "-V"], "dir": "sub"})
    assert driver.render_search(loaded, ctx, "q", 5, 1).cwd == str(spec_dir.resolve() / "sub")


def test_render_index(spec_dir: Path, ctx: Context) -> None:
    rendered = driver.render_index(oneshot(spec_dir), ctx)
    assert rendered is not None and rendered.argv[-2:] == ["index", str(ctx.root)]
    assert driver.render_index(oneshot(spec_dir, index=None), ctx) is None


# -- one-shot ----------------------------------------------------------------

def test_oneshot_search(spec_dir: Path, ctx: Context) -> None:
    loaded = oneshot(spec_dir)
    ctx.state.mkdir(parents=True)
    with Searcher(loaded, ctx) as s:
        assert s.session is None and s.peak_rss_bytes is None
        result = s.search(NASTY, k=1, per_file=1)
    assert result.error is None
    out = json.loads(result.raw)
    # The query reached the engine verbatim, as exactly one argument.
    assert out["argv"] == ["--n", "3", "--query", NASTY, "1", "1", "python"]
    assert out["env"] == {"FAKE_STATE": str(ctx.state), "FAKE_CORPUS": "rich"}
    assert Path(out["cwd"]).resolve() == ctx.state.resolve()
    assert [(h.path, h.start, h.end, h.text, h.score) for h in result.hits] == [
        ("src/a.py", 3, 9, "def a(): ...", 2.5), ("src/b.py", 1, 2, "import a", 1.0)]
    assert result.parsed is not None and not result.parsed.errors
    assert result.latency_s > 0
    assert result.rendered is not None and result.rendered.argv[5] == NASTY
    assert not result.truncated


def test_oneshot_stdin(spec_dir: Path, ctx: Context) -> None:
    search = {"command": ["{{python}}", "{{spec_dir}}/oneshot_json.py"],
              "stdin": "{\"q\": {{ query | tojson }}}"}
    ctx.state.mkdir(parents=True)
    result = Searcher(oneshot(spec_dir, search=search), ctx).search(NASTY, 5, 1)
    assert json.loads(json.loads(result.raw)["stdin"]) == {"q": NASTY}


def test_run_index_creates_state(spec_dir: Path, ctx: Context) -> None:
    rendered, measurement = driver.run_index(oneshot(spec_dir), ctx)
    assert ctx.state.is_dir()
    assert rendered is not None and measurement is not None and measurement.ok
    assert json.loads(measurement.stdout)["argv"] == ["index", str(ctx.root)]
    (ctx.state / "index.db").write_bytes(b"x" * 1000)
    assert state.dir_bytes(ctx.state) == 1000
    assert driver.run_index(oneshot(spec_dir, index=None), ctx) == (None, None)


def test_oneshot_failure_carries_stderr(spec_dir: Path, ctx: Context) -> None:
    loaded = oneshot(spec_dir, search={"command": ["{{python}}", "{{spec_dir}}/crasher.py"]})
    ctx.state.mkdir(parents=True)
    result = Searcher(loaded, ctx).search("q", 5, 1)
    assert result.error is not None
    assert result.error.startswith("exited with status 3; stderr: ")
    assert "index is corrupt" in result.error
    assert result.hits == [] and result.parsed is None


@pytest.mark.parametrize("mode", ["text", "binary"])
def test_oneshot_garbage_is_a_failed_query(spec_dir: Path, ctx: Context, mode: str) -> None:
    loaded = oneshot(spec_dir, search={"command": ["{{python}}", "{{spec_dir}}/garbage.py",
                                                   mode]})
    ctx.state.mkdir(parents=True)
    result = Searcher(loaded, ctx).search("q", 5, 1)
    assert result.error is not None and result.error.startswith("unparseable output: ")
    assert result.hits == []


def test_oneshot_missing_binary(spec_dir: Path, ctx: Context) -> None:
    loaded = oneshot(spec_dir, search={"command": ["no-such-engine-abc", "{{query}}"]})
    ctx.state.mkdir(parents=True)
    with pytest.raises(EngineUnavailable) as info:
        Searcher(loaded, ctx).search("q", 5, 1)
    assert "'no-such-engine-abc' not found" in str(info.value)
    assert "nothing: it is a test fake" in str(info.value)
    assert str(loaded.file) in str(info.value)


def test_go_style_spec_runs(spec_dir: Path, ctx: Context) -> None:
    loaded = oneshot(spec_dir, search={"command": [
        "{{python}}", "{{spec_dir}}/oneshot_json.py", "{{.Query}}", "{{.N}}", "{{.PerFile}}",
        "{{.Root}}"]})
    ctx.state.mkdir(parents=True)
    result = Searcher(loaded, ctx).search("find it", 4, 2)
    assert json.loads(result.raw)["argv"] == ["find it", "12", "2", str(ctx.root)]


def test_engine_version(spec_dir: Path) -> None:
    loaded = oneshot(spec_dir, version=["{{python}}", "-c", "print('fake 1.2.3'); print('x')"])
    assert driver.engine_version(loaded) == "fake 1.2.3"
    assert driver.engine_version(oneshot(spec_dir)) is None
    failing = oneshot(spec_dir, version=["{{python}}", "{{spec_dir}}/crasher.py"])
    assert driver.engine_version(failing) == (
        "failed (exited with status 3): crasher: stderr line 0")
    missing = oneshot(spec_dir, version=["no-such-engine-abc", "--version"])
    assert (driver.engine_version(missing) or "").startswith("unavailable: ")


# -- persistent --------------------------------------------------------------

def test_persistent_search(spec_dir: Path, ctx: Context) -> None:
    loaded = persistent(spec_dir)
    with Searcher(loaded, ctx) as s:
        assert s.session is not None and ctx.state.is_dir()
        assert s.start_command is not None
        assert s.start_command.argv == [sys.executable,
                                        f"{spec_dir.resolve()}/persistent_echo.py"]
        first = s.search(NASTY, k=10, per_file=2)
        second = s.search("second", k=10, per_file=1)
        pid = json.loads(first.raw)["pid"]
    assert first.error is None and second.error is None
    assert [(h.path, h.start, h.end, h.text) for h in first.hits] == [("echo.py", 1, 1, NASTY)]
    request = json.loads(first.raw)["request"]
    request.pop("id", None)  # the session's own sequence number (test_session.py's business)
    assert request == {
        "query": NASTY, "k": 10, "n": 20, "per_file": 2, "root": str(ctx.root),
        "corpus": "rich", "state": str(ctx.state)}
    assert json.loads(second.raw)["pid"] == pid
    assert first.rendered == s.start_command
    assert s.session.restarts == 0
    assert s.peak_rss_bytes is not None


def test_persistent_crash_is_a_failed_query_then_recovers(spec_dir: Path, ctx: Context) -> None:
    with Searcher(persistent(spec_dir), ctx) as s:
        crashed = s.search("CRASH", 5, 1)
        assert crashed.error is not None and "status 3" in crashed.error
        assert crashed.hits == [] and crashed.parsed is None
        ok = s.search("fine", 5, 1)
        assert ok.error is None and ok.hits[0].text == "fine"
        assert s.session is not None and s.session.restarts == 1


def test_persistent_garbage_response_is_unparseable(spec_dir: Path, ctx: Context) -> None:
    loaded = write_spec(spec_dir, {
        "name": "echo", "mode": "persistent",
        "search": {"command": ["{{python}}", "{{spec_dir}}/persistent_echo.py"]},
        "parse": {"format": "json", "results": "request"},
    }, name="bad.json")
    with Searcher(loaded, ctx) as s:
        result = s.search("q", 5, 1)
    assert result.error is not None and result.error.startswith("unparseable output: ")
