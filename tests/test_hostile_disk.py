"""The hostile suite, class "disk and guardian": a dead guardian, full disks, small refusals.

The guardian cases kill the process that watches bench's one-shot commands and
then SIGKILL bench itself: no command may outlive it. The disk cases make every
write bench does for a run (journal, spool, result file, engine state) fail
with ENOSPC or EIO and check that the error names the path and the cause,
exits with the documented code, and that what finished is still in the journal.
"""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest
from helpers import alive
from test_hostile_processes import Bench, gone_within, pids_in, wait_for
from test_hostile_processes import bench as bench
from test_hostile_processes import cleanup as cleanup

from codesearch_bench.processes import guardian

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
