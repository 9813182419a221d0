"""Hostile runs: kills, torn journals, resumes, two benches at once, bad flags, markup.

Classes of the hostile suite covered here: journal (nothing finished is lost),
concurrency (one bench per work dir and result file), flags (bad query sets and
flags stop before any engine runs) and console (user text is never markup).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from minicorpus import QUERIES, make_corpus
from test_behaviour_golden import quality

from codesearch_bench import workdir
from codesearch_bench.cli import main
from codesearch_bench.errors import UsageError
from codesearch_bench.results import journal
from codesearch_bench.results.schema import ResultFile

pytestmark = pytest.mark.hostile

# Answers well; hangs while $SLOW_MARKER exists (so a test can kill bench mid-cell);
# records its pid in $SLOW_PIDS; fails every query when $SLOW_FAIL is set.
ENGINE = '''
import json, os, sys, time
if os.environ.get("SLOW_PIDS"):
    with open(os.environ["SLOW_PIDS"], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
if os.environ.get("SLOW_FAIL"):
    sys.exit(3)
marker = os.environ.get("SLOW_MARKER")
if sys.argv[1] == "slow" and marker and os.path.exists(marker):
    time.sleep(3600)
query = sys.argv[2]
hits = [{"path": "pkg/config.py", "start": 4, "end": 7, "text": "def load_settings"}]
if "terminal" in query:
    hits.insert(0, {"path": "pkg/cells.py", "start": 1, "end": 3, "text": "def cell_len"})
print(json.dumps({"hits": hits}))
'''


class Run:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.toml = make_corpus(tmp)
        self.script = tmp / "engine.py"
        self.script.write_text(ENGINE)
        self.out = tmp / "out.json"
        self.work = tmp / "work"
        self.good = self.spec("good")
        self.slow = self.spec("slow")

    def spec(self, name: str, **extra: Any) -> Path:
        path = self.tmp / f"{name}.json"
        data = {"name": name, "spans": True, "tokens": True,
                "search": {"command": [sys.executable, str(self.script), name, "{{query}}"],
                           "timeout": "20s"},
                "parse": {"format": "json", "results": "hits", "start": "start", "end": "end",
                          "text": "text"}, **extra}
        path.write_text(json.dumps(data))
        return path

    def argv(self, *engines: Path, work: Path | None = None, out: Path | None = None,
             extra: tuple[str, ...] = ()) -> list[str]:
        args = ["compare", "--corpora-file", str(self.toml), "--work", str(work or self.work),
                "--json", str(out or self.out)]
        for engine in engines:
            args += ["--engine", str(engine)]
        return [*args, *extra]

    def bench(self, argv: list[str], env: dict[str, str] | None = None,
              ) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-m", "codesearch_bench", *argv],
                                env={**os.environ, **(env or {})}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


def _wait_for(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def _cells_in_journal(path: Path) -> int:
    return len(journal.read(path)[1])


def _kill_pids(path: Path) -> None:
    for pid in (path.read_text().split() if path.exists() else []):
        with contextlib.suppress(psutil.Error):
            psutil.Process(int(pid)).kill()


def _comparable(result: dict[str, Any]) -> dict[str, Any]:
    """Quality fields, without the index's cached flag (a resumed cell may reuse its index)."""
    data = quality(result)
    for row in data["rows"]:
        row["index"] = {k: v for k, v in row["index"].items() if k in ("files", "chunks")}
    return data


# -- journal: nothing finished is lost ---------------------------------------------------------

def test_sigkill_then_resume_equals_an_uninterrupted_run(run: Run) -> None:
    marker, pids = run.tmp / "hang-now", run.tmp / "pids"
    marker.touch()
    env = {"SLOW_MARKER": str(marker), "SLOW_PIDS": str(pids)}
    bench = run.bench(run.argv(run.good, run.slow), env)
    try:
        log = journal.path_for(run.out)
        _wait_for(lambda: log.exists() and _cells_in_journal(log) >= 1)
        _wait_for(lambda: pids.exists() and len(pids.read_text().split()) > 4)  # slow is hung
        os.killpg(bench.pid, signal.SIGKILL)
        bench.wait(timeout=10)
    finally:
        _kill_pids(pids)
    assert not run.out.exists(), "a killed run wrote no result file"
    (cell,) = journal.read(journal.path_for(run.out))[1]
    assert cell.engine == "good" and cell.rows
    marker.unlink()
    assert main(run.argv(run.good, run.slow, extra=("--resume", str(run.out)))) == 0
    resumed = json.loads(run.out.read_text())
    assert not journal.path_for(run.out).exists(), "the journal is gone once the JSON is whole"
    fresh_out = run.tmp / "fresh.json"
    assert main(run.argv(run.good, run.slow, work=run.tmp / "w2", out=fresh_out)) == 0
    assert _comparable(resumed) == _comparable(json.loads(fresh_out.read_text()))
    kept = next(r for r in resumed["rows"] if r["engine"] == "good" and r["headline"])
    assert [q["latency_s"] for q in kept["queries"]] == \
        [q.latency_s for q in cell.rows[0].queries], "the finished cell was kept, not rerun"


def test_resume_keeps_a_failed_cells_record(run: Run) -> None:
    failing = run.spec("failing", search={"command": [sys.executable, "-c", "import sys; "
                                                      "sys.exit(3)"]})
    assert main(run.argv(run.good, failing)) == 1
    assert main(run.argv(run.good, failing, extra=("--resume", str(run.out)))) == 1
    result = ResultFile.load(run.out)
    (failure,) = result.failures
    assert failure.engine == "failing" and "all 4 queries failed" in failure.message


def test_resume_with_fewer_engines_keeps_the_others_rows(run: Run) -> None:
    assert main(run.argv(run.good, run.slow)) == 0
    assert main(run.argv(run.good, extra=("--resume", str(run.out)))) == 0
    result = ResultFile.load(run.out)
    assert {r.engine for r in result.rows} == {"good", "slow"}
    assert set(result.engines) == {"good", "slow"}
    # The two answer alike on every query: one engine for quality, said, not paired.
    assert result.comparisons == []
    assert {(t.engine, t.twin_of) for t in result.twins} == {("slow", "good")}


def test_a_torn_journal_line_is_ignored_and_its_cell_rerun(run: Run) -> None:
    assert main(run.argv(run.good)) == 0
    done = ResultFile.load(run.out)
    log = journal.path_for(run.out)
    header = journal.Header(protocol_version=done.protocol_version, cutoffs=done.cutoffs,
                            created="2999-01-01T00:00:00+00:00")
    record = journal.CellRecord(engine="good", corpus="mini", rows=done.rows,
                                engine_info=done.engines["good"],
                                corpus_info=done.corpora["mini"])
    text = record.model_dump_json()
    log.write_text(header.model_dump_json() + "\n" + text[: len(text) // 2])
    run.out.unlink()
    assert main(run.argv(run.good, run.slow, extra=("--resume", str(run.out)))) == 0
    result = ResultFile.load(run.out)
    assert {r.engine for r in result.rows} == {"good", "slow"}


def test_resume_from_the_journal_alone(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(run.argv(run.good)) == 0
    done = ResultFile.load(run.out)
    log = journal.path_for(run.out)
    with journal.Journal(log, journal.Header(protocol_version=done.protocol_version,
                                             cutoffs=done.cutoffs, created="x"),
                         fresh=True) as book:
        book.append(journal.CellRecord(engine="good", corpus="mini", rows=done.rows,
                                       engine_info=done.engines["good"],
                                       corpus_info=done.corpora["mini"]))
    run.out.unlink()
    pids = run.tmp / "pids"
    monkeypatch.setenv("SLOW_PIDS", str(pids))
    assert main(run.argv(run.good, extra=("--resume", str(run.out)))) == 0
    assert ResultFile.load(run.out).rows[0].queries == done.rows[0].queries
    assert not pids.exists(), "the journaled cell ran again"


def test_resume_refuses_other_cutoffs(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run.argv(run.good)) == 0
    assert main(run.argv(run.good, extra=("--resume", str(run.out), "--cutoffs", "1,3"))) == 2
    assert "cutoffs [5, 10, 20]" in capsys.readouterr().err


def test_resume_of_nothing_is_a_clear_error(run: Run, capsys: pytest.CaptureFixture[str],
                                            ) -> None:
    assert main(run.argv(run.good, extra=("--resume", str(run.tmp / "never.json")))) == 2
    assert "neither that result file nor its journal" in capsys.readouterr().err


def test_a_stale_result_file_is_not_mixed_into_a_resumed_run(run: Run) -> None:
    assert main(run.argv(run.good)) == 0  # an earlier, complete run at the same path
    old = ResultFile.load(run.out)
    marker, pids = run.tmp / "hang-now", run.tmp / "pids"
    marker.touch()
    bench = run.bench(run.argv(run.good, run.slow),
                      {"SLOW_MARKER": str(marker), "SLOW_PIDS": str(pids)})
    try:
        log = journal.path_for(run.out)
        _wait_for(lambda: log.exists() and _cells_in_journal(log) >= 1)
        os.killpg(bench.pid, signal.SIGKILL)
        bench.wait(timeout=10)
    finally:
        _kill_pids(pids)
    (cell,) = journal.read(log)[1]
    marker.unlink()
    assert main(run.argv(run.good, run.slow, extra=("--resume", str(run.out)))) == 0
    good = next(r for r in ResultFile.load(run.out).rows if r.engine == "good" and r.headline)
    assert good.queries == cell.rows[0].queries != old.rows[0].queries


def test_ctrl_c_without_json_writes_to_the_work_dir_and_says_how_to_resume(run: Run) -> None:
    marker = run.tmp / "hang-now"
    marker.touch()
    argv = run.argv(run.good, run.slow)
    del argv[argv.index("--json"):argv.index("--json") + 2]
    pids = run.tmp / "pids"
    bench = run.bench(argv, {"SLOW_MARKER": str(marker), "SLOW_PIDS": str(pids)})
    try:
        _wait_for(lambda: pids.exists() and len(pids.read_text().split()) > 4)
        os.killpg(bench.pid, signal.SIGINT)
        _, err = bench.communicate(timeout=30)
    finally:
        _kill_pids(pids)
    assert bench.returncode == 130, err
    (written,) = (run.work / "results").glob("compare-*.json")
    assert ResultFile.load(written).interrupted
    assert str(written) in err and "--resume" in err
    assert _locks(run) == [], "an interrupted run leaves no lock file"


# -- concurrency: one bench per work dir and result file -------------------------------------

def test_a_second_bench_on_the_same_work_dir_is_refused(
        run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    with workdir.locked(run.work / ".lock", "work dir", "--work"):
        assert main(run.argv(run.good)) == 2
    err = capsys.readouterr().err
    assert f"pid {os.getpid()}" in err and "--work" in err
    assert not run.out.exists()


def test_a_second_bench_writing_the_same_result_file_is_refused(
        run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    lock = run.out.with_name(run.out.name + ".lock")
    with workdir.locked(lock, "result file", "--json"):
        assert main(run.argv(run.good, work=run.tmp / "other-work")) == 2
    assert "another bench" in capsys.readouterr().err


def test_a_lock_left_by_a_killed_bench_does_not_block(run: Run) -> None:
    (run.work).mkdir(parents=True)
    (run.work / ".lock").write_text("999999")  # a file, but no process holds its lock
    assert main(run.argv(run.good)) == 0


def _locks(run: Run) -> list[Path]:
    return sorted(p for p in run.tmp.rglob("*") if p.name.endswith(".lock"))


def test_a_run_leaves_no_lock_file_whether_it_succeeds_or_fails(run: Run) -> None:
    assert main(run.argv(run.good)) == 0
    assert run.out.exists() and _locks(run) == []
    failing = run.spec("failing", search={"command": [sys.executable, "-c", "import sys; "
                                                      "sys.exit(3)"]})
    assert main(run.argv(failing)) == 1
    assert _locks(run) == []
    missing = run.spec("missing", search={"command": ["no-such-program-anywhere"]})
    assert main(run.argv(missing)) != 0  # stopped before any engine ran
    assert _locks(run) == []
    del_json = run.argv(run.good)
    del del_json[del_json.index("--json"):del_json.index("--json") + 2]
    assert main(del_json) == 0  # its lock was <work>/results/compare-<time>.json.lock
    assert (run.work / "results").is_dir() and _locks(run) == []


def test_a_lock_file_removed_by_its_holder_is_not_taken_as_held(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The race the removal opens: a bench opens the lock file, its holder finishes (the
    # file removed, the lock released) and a third bench makes and locks a new file at
    # the path, before the first one's flock. That flock succeeds on a file nobody can
    # find any more: it must not count.
    path = tmp_path / "out.json.lock"
    real = workdir.fcntl.flock
    third: list[int] = []

    def flock(fd: int, op: int) -> None:
        if not third:
            os.unlink(path)
            third.append(os.open(path, os.O_RDWR | os.O_CREAT, 0o644))
            real(third[0], workdir.fcntl.LOCK_EX)
        real(fd, op)

    monkeypatch.setattr(workdir.fcntl, "flock", flock)
    try:
        with pytest.raises(UsageError, match="in use by another bench"), \
                workdir.locked(path, "result file", "--json"):
            pass
    finally:
        os.close(third[0])
    assert path.exists(), "the refused bench removed nothing"


_HOLD = """
import os, sys
sys.path.insert(0, sys.argv[1])
from codesearch_bench import workdir
from codesearch_bench.errors import UsageError
lock, inside, rounds = sys.argv[2], sys.argv[3], int(sys.argv[4])
held = 0
while held < rounds:
    try:
        with workdir.locked(workdir.Path(lock), "result file", "--json"):
            fd = os.open(inside, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # fails if shared
            os.close(fd)
            os.unlink(inside)
            held += 1
    except UsageError:
        pass
"""


def test_concurrent_benches_still_exclude_each_other(tmp_path: Path) -> None:
    src = str(Path(workdir.__file__).resolve().parents[1])
    lock, inside = tmp_path / "r.json.lock", tmp_path / "inside"
    procs = [subprocess.Popen([sys.executable, "-c", _HOLD, src, str(lock), str(inside),
                               "150"], stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errors
    assert not lock.exists() and not inside.exists()


# -- flags and query sets: stopped before any engine runs ---------------------------------------

def _queries(run: Run, queries: list[dict[str, Any]]) -> None:
    (run.tmp / "mini.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))


@pytest.mark.parametrize(("change", "problem"), [
    (lambda qs: [*qs, {**qs[0], "query": "another text entirely"}], "duplicate id"),
    (lambda qs: [{**qs[0], "query": "where is load_settings defined"}, *qs[1:]],
     "contains the gold symbol name"),
    (lambda qs: [*qs, {**qs[1], "id": "q9"}], "same query text"),
])
def test_a_dishonest_query_set_runs_no_engine(run: Run, change: Any, problem: str,
                                              capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    _queries(run, change([dict(q) for q in QUERIES]))
    pids = run.tmp / "pids"
    monkeypatch.setenv("SLOW_PIDS", str(pids))
    assert main(run.argv(run.good)) == 3
    assert problem in capsys.readouterr().err
    assert not pids.exists(), "an engine ran on a query set with problems"


@pytest.mark.parametrize("flags", [("--limit", "0"), ("--limit", "-1"), ("--cutoffs", "0"),
                                   ("--cutoffs", "5,x"), ("--shard", "3/2")])
def test_bad_numbers_are_usage_errors(run: Run, flags: tuple[str, str]) -> None:
    assert main(run.argv(run.good, extra=flags)) == 2
    assert not run.out.exists()


@pytest.mark.parametrize("names", ["", ",", " , "])
def test_an_empty_corpus_list_is_an_error(run: Run, names: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(run.argv(run.good, extra=("--corpus", names))) == 3
    assert "names no corpus" in capsys.readouterr().err


@pytest.mark.parametrize("name", ['"mini\\n"', '"a/b"', '".hidden"', '"' + "x" * 65 + '"'])
def test_corpus_names_must_match_whole(tmp_path: Path, name: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    toml = tmp_path / "corpora.toml"
    toml.write_text(f'[corpus.{name}]\nsource = "path"\npath = "."\n')
    assert main(["setup", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--corpus", "all"]) == 3
    assert "a name is 1-64 letters" in capsys.readouterr().err


# -- console: user text is never read as markup --------------------------------------------------

def test_a_spec_name_with_brackets_is_printed_as_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "mine[v2].local.json"
    spec.write_text("{not json")
    (tmp_path / "root").mkdir()
    assert main(["probe", "--engine", str(spec), "--root", str(tmp_path / "root"),
                 "--text", "q", "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert "mine[v2].local.json" in err and "Traceback" not in err


def test_engine_stderr_with_markup_is_shown_literally(
        run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    loud = run.spec("loud", index={"command": [
        sys.executable, "-c", "import sys; sys.stderr.write('[bold red]boom[/] [link=x]y\\n'); "
        "sys.exit(2)"]})
    assert main(run.argv(run.good, loud)) == 1
    out = capsys.readouterr().out
    assert "[bold red]boom[/] [link=x]y" in out


def test_a_query_with_markup_is_probed_literally(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "echo.json"
    spec.write_text(json.dumps({"name": "echo", "search": {"command": [
        sys.executable, "-c", "print('{\"hits\": []}')", "{{query}}"]},
        "parse": {"format": "json", "results": "hits"}}))
    (tmp_path / "root").mkdir()
    query = "[red]where[/] is [bold]x[/bold] [/]"
    assert main(["probe", "--engine", str(spec), "--root", str(tmp_path / "root"),
                 "--text", query, "--work", str(tmp_path / "w")]) == 0
    assert query in capsys.readouterr().out


def test_emoji_codes_in_user_text_are_printed_as_written(
        capsys: pytest.CaptureFixture[str]) -> None:
    from codesearch_bench.render.ui import UI

    UI().warn("engine a:fire:b", "path :smile:/x.py")
    err = capsys.readouterr().err
    assert "a:fire:b" in err and ":smile:/x.py" in err


def test_the_progress_line_shows_a_cell_name_as_written() -> None:
    import io

    from rich.console import Console

    from codesearch_bench.render import progress

    console = Console(file=io.StringIO(), force_terminal=True, width=120, emoji=False)
    with progress.compare_progress(console, plain=False) as bar:
        assert isinstance(bar, progress.CompareProgress)
        bar.cell = "mine[v2] × :fire:"
        bar._show()
        line = bar.bar.columns[1].render(bar.bar.tasks[0])
    assert line.plain == "mine[v2] × :fire:"


def test_a_hint_with_brackets_keeps_them(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from codesearch_bench.render.ui import UI

    ui = UI()
    ui.error("plots need matplotlib [x]", "pip install 'codesearch-bench[plots]'")
    err = capsys.readouterr().err
    assert "codesearch-bench[plots]" in err and "matplotlib [x]" in err
