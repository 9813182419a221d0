"""The hostile suite, class "disk and guardian": a dead guardian, full disks, small refusals.

The guardian cases kill the process that watches bench's one-shot commands and
then SIGKILL bench itself: no command may outlive it. The disk cases make every
write bench does for a run (journal, spool, result file, engine state) fail
with ENOSPC or EIO and check that the error names the path and the cause,
exits with the documented code, and that what finished is still in the journal
(one case fills a real 12 KiB tmpfs, where root may mount one). The rest: a
--log-to target that cannot be used, a timeout below the floor, a resume over a
damaged journal, a stop signal at exit after the result was written.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from helpers import alive
from minicorpus import make_corpus
from test_faults import spec as faults_spec
from test_hostile_processes import Bench, gone_within, pids_in, wait_for
from test_hostile_processes import bench as bench
from test_hostile_processes import cleanup as cleanup

from codesearch_bench import cli
from codesearch_bench.cli import main
from codesearch_bench.engine import state
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.errors import BenchError, SpecError, StorageError
from codesearch_bench.processes import guardian
from codesearch_bench.results import held, journal, spool, write
from codesearch_bench.results.schema import ResultFile

pytestmark = pytest.mark.hostile


def _guardians(pid: int) -> list[int]:
    """The guardian processes a bench process runs (its children running guardian code)."""
    out = []
    for child in psutil.Process(pid).children():
        try:
            if "socket.recv_fds" in " ".join(child.cmdline()):
                out.append(child.pid)
        except psutil.Error:
            continue
    return out


def _replaced(pid: int, dead: int, timeout: float = 5.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fresh = [g for g in _guardians(pid) if g != dead]
        if fresh:
            return fresh[0]
        time.sleep(0.01)
    raise AssertionError("no new guardian took over the in-flight commands")


# -- a dead guardian -----------------------------------------------------------------------

@pytest.mark.parametrize("stage", ["search", "index"])
def test_sigkill_of_bench_after_its_guardian_died_leaves_no_command(
        bench: Bench, stage: str) -> None:
    if not guardian.ready():
        pytest.skip("no pidfds here: commands cannot be watched")
    hung = bench.file("hung")
    bench.start(bench.spec("--hang-on", "1", "--marker", str(hung),
                           oneshot=True, index=stage == "index"))
    wait_for(hung)
    pid = bench.engine_pid()
    assert bench.proc is not None
    (first,) = _guardians(bench.proc.pid)
    os.kill(first, signal.SIGKILL)
    assert gone_within(first, 5.0)
    _replaced(bench.proc.pid, first)
    bench.signal(signal.SIGKILL)
    bench.wait()
    assert gone_within(pid, 2.0), f"the in-flight {stage} command outlived bench and its guardian"


def test_guardian_killed_twice_still_leaves_nothing(bench: Bench) -> None:
    if not guardian.ready():
        pytest.skip("no pidfds here: commands cannot be watched")
    hung = bench.file("hung")
    bench.start(bench.spec("--hang-on", "1", "--marker", str(hung), oneshot=True))
    wait_for(hung)
    pid = bench.engine_pid()
    assert bench.proc is not None
    (first,) = _guardians(bench.proc.pid)
    os.kill(first, signal.SIGKILL)
    second = _replaced(bench.proc.pid, first)
    os.kill(second, signal.SIGKILL)
    assert gone_within(second, 5.0)
    _replaced(bench.proc.pid, second)
    bench.signal(signal.SIGKILL)
    bench.wait()
    assert gone_within(pid, 2.0), "the command outlived bench and two dead guardians"
    assert not [p for p in pids_in(bench.pids) if alive(p)]


# -- a full disk, a failing disk -------------------------------------------------------------

class _Failing:
    """A binary file whose writes fail once `budget` bytes went through (a disk filling)."""

    def __init__(self, fh: Any, budget: int, err: int) -> None:
        self._fh, self._budget, self._err = fh, budget, err

    def write(self, data: bytes) -> int:
        if len(data) > self._budget:
            raise OSError(self._err, os.strerror(self._err))
        self._budget -= len(data)
        return int(self._fh.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fh, name)

    def __enter__(self) -> _Failing:
        return self

    def __exit__(self, *exc: object) -> None:
        self._fh.close()


def _failing_open(budget: int, err: int, suffix: str) -> Any:
    """An `open` whose files named ...suffix fail after `budget` bytes; others are real."""
    real = open

    def fake(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        fh = real(path, mode, *args, **kwargs)
        if str(path).endswith(suffix) and ("w" in mode or "a" in mode):
            return _Failing(fh, budget, err)
        return fh
    return fake


ERRS = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO}


def _compare(tmp: Path, *extra: str) -> tuple[int, Path]:
    toml = tmp / "corpora.toml"
    if not toml.exists():  # a second run (a resume) uses the first one's
        toml = make_corpus(tmp)
    out = tmp / "out.json"
    argv = ["compare", "--corpora-file", str(toml), "--work", str(tmp / "work"),
            "--json", str(out)]
    for name in ("first", "second"):
        argv += ["--engine", str(faults_spec(tmp, name, "ok"))]
    return main([*argv, *extra]), out


def _no_traceback(err: str) -> None:
    assert "Traceback" not in err and "OSError" not in err, err


@pytest.mark.parametrize("cause", list(ERRS))
def test_a_journal_that_cannot_be_written_names_it_and_keeps_what_finished(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        cause: str) -> None:
    # Room for the header and the first cell, not for the second.
    first_cell = []
    real_append = journal.Journal.append

    def append(self: journal.Journal, *args: Any, **kwargs: Any) -> int:
        if first_cell:
            monkeypatch.setattr(self, "_fh", _Failing(self._fh, 10, ERRS[cause]))
        first_cell.append(1)
        return real_append(self, *args, **kwargs)
    monkeypatch.setattr(journal.Journal, "append", append)
    code, out = _compare(tmp_path)
    err = capsys.readouterr().err
    _no_traceback(err)
    assert code == StorageError.exit_code == 6
    log = journal.path_for(out)
    assert str(log) in err and os.strerror(ERRS[cause]) in err
    _header, cells, bad = journal.read(log)
    assert [c.engine for c in cells] == ["first"] and bad == 0  # the cut line is taken back
    assert "--resume" in err


@pytest.mark.parametrize("cause", list(ERRS))
def test_a_result_file_that_cannot_be_written_names_it_and_keeps_the_journal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        cause: str) -> None:
    real = os.fdopen

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        fh = real(fd, *args, **kwargs)
        if os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1].startswith(".out.json."):
            return _Failing(fh, 100, ERRS[cause])
        return fh
    monkeypatch.setattr(write.os, "fdopen", fdopen)
    code, out = _compare(tmp_path)
    err = capsys.readouterr().err
    _no_traceback(err)
    assert code == 6
    assert str(out) in err and os.strerror(ERRS[cause]) in err
    assert not out.exists() and not list(tmp_path.glob(".out.json.*"))  # no half file
    _header, cells, _bad = journal.read(journal.path_for(out))
    assert sorted(c.engine for c in cells) == ["first", "second"]  # nothing finished lost


@pytest.mark.parametrize("cause", list(ERRS))
def test_a_spool_that_cannot_be_written_fails_its_cell_with_the_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        cause: str) -> None:
    # Buffered: the bytes fail when flushed at close, which must not be swallowed.
    monkeypatch.setattr(spool, "open", _failing_open(0, ERRS[cause], ".cell0"),
                        raising=False)
    monkeypatch.setattr(held.HeldRows, "room", lambda *_a: False)  # every cell spooled
    code, out = _compare(tmp_path)
    err = capsys.readouterr().err
    _no_traceback(err)
    result = ResultFile.model_validate_json(out.read_text())
    failure = next(f for f in result.failures if f.engine == "first")
    assert ".cell0" in failure.message and os.strerror(ERRS[cause]) in failure.message
    assert code != 0


@pytest.mark.parametrize("cause", list(ERRS))
def test_a_state_marker_that_cannot_be_written_names_the_state_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cause: str) -> None:
    def fake(*_a: Any, **_k: Any) -> Any:
        raise OSError(ERRS[cause], os.strerror(ERRS[cause]))
    state_dir = state.state_dir(tmp_path / "work", "state", "e", "c")
    state.prepare(state_dir)
    real = os.open

    def opener(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if path == state.MARKER:
            return fake()  # type: ignore[no-any-return]
        return real(path, flags, *args, **kwargs)
    monkeypatch.setattr(state.os, "open", opener)
    with pytest.raises(BenchError) as caught:
        state.mark_finished(state_dir, "a" * 64, "pin")
    assert str(state_dir) in str(caught.value) and os.strerror(ERRS[cause]) in str(caught.value)


@pytest.mark.parametrize("cause", list(ERRS))
def test_a_disk_error_no_stage_named_still_ends_with_the_path_and_the_cause(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        cause: str) -> None:
    """The error boundary's last line: any write that fails for the disk's sake."""
    target = str(tmp_path / "somewhere.json")

    def broken(*_a: Any, **_k: Any) -> int:
        raise OSError(ERRS[cause], os.strerror(ERRS[cause]), target)
    monkeypatch.setattr(cli, "run", broken)
    code = main(["compare"])
    err = capsys.readouterr().err
    _no_traceback(err)
    assert code == StorageError.exit_code
    assert target in err.replace("\n", "") and os.strerror(ERRS[cause]) in err


class _FailingFlush(_Failing):
    """Writes land in a buffer; the disk refuses them when they are flushed (at close)."""

    def write(self, data: bytes) -> int:
        return len(data)

    def close(self) -> None:
        self._fh.close()
        raise OSError(self._err, os.strerror(self._err))


@pytest.mark.parametrize("cause", list(ERRS))
def test_a_spool_whose_last_flush_fails_fails_its_cell(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cause: str) -> None:
    real = open

    def fake(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        return _FailingFlush(real(path, mode, *args, **kwargs), 0, ERRS[cause])
    monkeypatch.setattr(spool, "open", fake, raising=False)
    sp = spool.Spool(tmp_path / "out.json.journal.cell0")
    with pytest.raises(StorageError) as caught:
        sp.close()
    assert str(tmp_path / "out.json.journal.cell0") in str(caught.value)
    assert os.strerror(ERRS[cause]) in str(caught.value)


# -- --log-to / --track targets checked before any engine runs -----------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("target", ["parent-is-a-file", "a-directory", "read-only-file",
                                    "mlflow-server-down"])
def test_an_unusable_track_target_fails_before_any_engine_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    value = {"parent-is-a-file": f"jsonl:{blocker / 'runs.jsonl'}",
             "a-directory": f"jsonl:{tmp_path}",
             "read-only-file": f"jsonl:{blocker}",
             "mlflow-server-down": f"mlflow:http://127.0.0.1:{_free_port()}"}[target]
    if target == "read-only-file":
        if os.geteuid() == 0:
            pytest.skip("root writes a read-only file all the same")
        blocker.chmod(0o444)
    if target == "mlflow-server-down":
        pytest.importorskip("mlflow", reason="mlflow-skinny is in the test extra")
    ran = tmp_path / "ran"
    engine = faults_spec(tmp_path, "e", "ok")
    data = json.loads(engine.read_text())
    data["index"] = {"command": [sys.executable, "-c",
                                 f"open({str(ran)!r}, 'w').close()"]}
    engine.write_text(json.dumps(data))
    toml = make_corpus(tmp_path)
    began = time.monotonic()
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--json", str(tmp_path / "out.json"), "--engine", str(engine),
                 "--track", value])
    err = capsys.readouterr().err
    assert code == 2, err
    assert not ran.exists(), "an engine ran before the target was found unusable"
    assert not (tmp_path / "out.json").exists()
    assert value.split(":", 1)[1].split("//")[-1] in err.replace("\n", "")
    assert time.monotonic() - began < 30


# -- a timeout too short to mean anything --------------------------------------------------

@pytest.mark.parametrize(("field", "value"), [("search", 1e-9), ("search", "1ms"),
                                              ("index", 0.000001), ("search", 5e-324)])
def test_a_timeout_below_the_floor_is_refused_with_the_field_and_the_minimum(
        tmp_path: Path, field: str, value: object) -> None:
    data: dict[str, object] = {"name": "e", "search": {"command": ["true", "{{query}}"]},
                               "parse": {"format": "jsonl", "path": "path"}}
    data[field] = {**data.get(field, {"command": ["true"]}), "timeout": value}  # type: ignore[dict-item]
    path = tmp_path / "e.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    text = str(caught.value)
    assert f"{field}.timeout" in text and "10ms" in text, text
    assert str(path) in text


# -- a resume over a damaged journal says what it skipped ----------------------------------

def test_a_resume_says_how_many_damaged_journal_lines_it_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # A run that stopped after its first cell, its journal then damaged: a line made
    # garbage and a last line cut off mid-write, as a crash leaves it.
    out = tmp_path / "out.json"
    with monkeypatch.context() as patch:
        patch.setattr(journal.Journal, "append",
                      _stop_after_first(journal.Journal.append))
        assert _compare(tmp_path)[0] == 130
    log = journal.path_for(out)
    with open(log, "ab") as fh:
        fh.write(b"not json at all\n" + b'{"kind":"cell","engine":"sec')
    capsys.readouterr()
    code, _ = _compare(tmp_path, "--resume", str(out))
    err = capsys.readouterr().err
    assert code == 0, err
    assert "2 unreadable or unfinished journal record(s) ignored" in " ".join(err.split())


def _stop_after_first(real: Any) -> Any:
    def append(self: journal.Journal, *args: Any, **kwargs: Any) -> int:
        offset = int(real(self, *args, **kwargs))
        raise KeyboardInterrupt  # stops the run right after the first cell is journaled
        return offset
    return append


# -- a stop signal at exit, after a complete result was written ----------------------------

_AT_EXIT = """
import atexit, os, signal, sys, time
from codesearch_bench import cli
sys.argv = ["bench", *sys.argv[1:]]
def late():
    os.kill(os.getpid(), signal.{sig})
    time.sleep(0.2)
if "{when}" == "atexit":
    atexit.register(late)  # registered first: runs last, after bench's own exit handlers
code = cli.main()
if "{when}" == "after-main":
    late()
sys.exit(code)
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("when", ["after-main", "atexit"])
def test_a_stop_signal_at_exit_after_a_complete_result_does_not_end_bench_by_it(
        tmp_path: Path, sig: str, when: str) -> None:
    toml = make_corpus(tmp_path)
    out = tmp_path / "out.json"
    argv = ["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "work"),
            "--json", str(out), "--engine", str(faults_spec(tmp_path, "first", "ok"))]
    proc = subprocess.run([sys.executable, "-c", _AT_EXIT.format(sig=sig, when=when), *argv],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    assert ResultFile.model_validate_json(out.read_text()).rows


# -- a real full disk: a tiny tmpfs ----------------------------------------------------------

@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 12 KiB tmpfs (root only): room for a journal's first cells, not for a run."""
    where = tmp_path / "tiny"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(where)],
            capture_output=True).returncode != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_real_full_disk_ends_with_the_journal_and_keeps_whole_cells(
        tmp_path: Path, tiny_disk: Path) -> None:
    toml = make_corpus(tmp_path)
    out = tiny_disk / "out.json"
    argv = [sys.executable, "-m", "codesearch_bench", "compare", "--corpora-file", str(toml),
            "--work", str(tmp_path / "work"), "--json", str(out)]
    for name in ("first", "second", "third", "fourth"):
        argv += ["--engine", str(faults_spec(tmp_path, name, "ok"))]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert proc.returncode == StorageError.exit_code, proc.stderr[-2000:]
    _no_traceback(proc.stderr)
    assert "No space left on device" in proc.stderr and str(tiny_disk) in proc.stderr
    _header, cells, bad = journal.read(journal.path_for(out))
    assert bad == 0  # the cell cut off by the full disk was taken back whole
    assert len(cells) < 4
