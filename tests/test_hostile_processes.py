"""The hostile suite, class "processes": signals, teardown, orphans, rejected commands.

Each case checks the exact outcome by pid: which engine process is alive
afterwards (none), what signal it was sent, how long teardown took, and the
error raised. Real bench processes run in their own session so the test can
signal them; every case kills and reaps what it started, even when it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import FAKES, alive, children, fake, new_children
from minicorpus import make_corpus

from codesearch_bench.engine.session import EngineSession
from codesearch_bench.errors import CommandRejected, EngineUnavailable
from codesearch_bench.processes import command, guardian, lifeline, reaper

pytestmark = pytest.mark.hostile

HOSTILE = FAKES / "hostile_engine.py"
PARSE = {"format": "json", "results": "hits", "start": "start", "end": "end"}
GRACE = command.DEFAULT_GRACE  # what bench waits between TERM and KILL


def wait_for(path: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def pids_in(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def gone_within(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def kill_and_reap(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


@pytest.fixture
def cleanup() -> Iterator[list[Path]]:
    """Pid files whose processes are killed and reaped after the test, whatever happened."""
    files: list[Path] = []
    yield files
    for path in files:
        for pid in pids_in(path):
            if alive(pid):
                kill_and_reap(pid)
            else:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)


class Bench:
    """A real `bench compare` process over the mini corpus, in its own session."""

    def __init__(self, tmp: Path, cleanup: list[Path]) -> None:
        self.tmp, self.cleanup = tmp, cleanup
        self.toml = make_corpus(tmp)
        self.out = tmp / "out.json"
        self.pids = tmp / "engine.pids"
        cleanup.append(self.pids)
        self.proc: subprocess.Popen[bytes] | None = None

    def file(self, name: str) -> Path:
        return self.tmp / name

    def spec(self, *flags: str, oneshot: bool = False, index: bool = False) -> Path:
        base = [sys.executable, str(HOSTILE), "--pidfile", str(self.pids), *flags]
        data: dict[str, object] = {"name": "hostile", "spans": True, "parse": PARSE}
        if index:
            data["index"] = {"command": [*base, "--oneshot", "index"], "timeout": "30s"}
            data["search"] = {"command": [*base, "--oneshot", "{{query}}"]}
        elif oneshot:
            data["search"] = {"command": [*base, "--oneshot", "{{query}}"], "timeout": "30s"}
        else:
            data["search"] = {"command": base, "timeout": "30s"}
            data["mode"] = "persistent"
        path = self.tmp / "hostile.json"
        path.write_text(json.dumps(data))
        return path

    def start(self, spec: Path) -> None:
        argv = [sys.executable, "-m", "codesearch_bench", "compare", "--corpora-file",
                str(self.toml), "--work", str(self.tmp / "work"), "--json", str(self.out),
                "--engine", str(spec)]
        with open(self.tmp / "bench.err", "wb") as err:
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def signal(self, sig: int) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, sig)

    def wait(self, timeout: float = 20.0) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stderr(self) -> str:
        return (self.tmp / "bench.err").read_text(errors="replace")

    def engine_pid(self) -> int:
        (pid,) = pids_in(self.pids)[-1:]
        return pid

    def stop(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)


@pytest.fixture
def bench(tmp_path: Path, cleanup: list[Path]) -> Iterator[Bench]:
    run = Bench(tmp_path, cleanup)
    try:
        yield run
    finally:
        run.stop()


def assert_interrupted(bench: Bench, code: int) -> None:
    assert code == 130, bench.stderr()
    assert "interrupted" in bench.stderr()
    assert "Traceback" not in bench.stderr()
    assert json.loads(bench.out.read_text())["interrupted"] is True


# -- signals during teardown, on a real bench --------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_while_closing_waits_for_the_engine_to_be_stopped(bench: Bench, sig: int) -> None:
    """The issue's case: the signal lands in close's wait; the engine must still get TERM."""
    closing, signals = bench.file("closing"), bench.file("signals")
    bench.start(bench.spec("--closing", str(closing), "--linger", "30",
                           "--signals", str(signals)))
    wait_for(closing)
    began = time.monotonic()
    bench.signal(sig)
    code = bench.wait()
    took = time.monotonic() - began
    assert_interrupted(bench, code)
    assert signals.read_text().split() == ["TERM"]  # stopped by bench, not by chance
    assert not alive(bench.engine_pid())
    assert took < GRACE - 0.5  # TERM came before any grace wait, not after it


@pytest.mark.parametrize("first", [signal.SIGINT, signal.SIGTERM])
def test_second_signal_while_closing_kills_at_once(bench: Bench, first: int) -> None:
    closing, signals = bench.file("closing"), bench.file("signals")
    bench.start(bench.spec("--closing", str(closing), "--linger", "30", "--ignore-term",
                           "--signals", str(signals)))
    wait_for(closing)
    bench.signal(first)
    time.sleep(0.3)  # inside the grace wait after TERM, which the engine ignores
    began = time.monotonic()
    bench.signal(signal.SIGINT)
    code = bench.wait()
    assert_interrupted(bench, code)
    assert time.monotonic() - began < GRACE - 1.0  # escalated, did not wait out the grace
    assert signals.read_text().split() == ["TERM"]
    assert not alive(bench.engine_pid())


def test_second_sigint_during_interrupt_cleanup_of_a_persistent_engine(bench: Bench) -> None:
    """Ctrl-C mid-query starts the cleanup; a second Ctrl-C must not cut it short."""
    hung, signals = bench.file("hung"), bench.file("signals")
    bench.start(bench.spec("--hang-on", "2", "--marker", str(hung), "--ignore-term",
                           "--signals", str(signals)))
    wait_for(hung)
    bench.signal(signal.SIGINT)
    time.sleep(0.5)
    began = time.monotonic()
    bench.signal(signal.SIGINT)
    code = bench.wait()
    assert_interrupted(bench, code)
    assert time.monotonic() - began < GRACE - 1.0
    assert not alive(bench.engine_pid())


def test_second_sigint_during_interrupt_cleanup_of_a_oneshot_engine(bench: Bench) -> None:
    hung, signals = bench.file("hung"), bench.file("signals")
    bench.start(bench.spec("--hang-on", "1", "--marker", str(hung), "--ignore-term",
                           "--signals", str(signals), oneshot=True))
    wait_for(hung)
    bench.signal(signal.SIGINT)
    time.sleep(0.5)  # bench has sent SIGINT to the engine's group and waits out the grace
    began = time.monotonic()
    bench.signal(signal.SIGINT)
    code = bench.wait()
    assert_interrupted(bench, code)
    assert time.monotonic() - began < GRACE - 1.0
    assert signals.read_text().split()[0] == "INT"
    assert not alive(bench.engine_pid())


# -- bench killed outright ------------------------------------------------------------------

def test_sigkill_of_bench_takes_its_persistent_engine_with_it(bench: Bench) -> None:
    hung = bench.file("hung")
    bench.start(bench.spec("--hang-on", "2", "--marker", str(hung)))
    wait_for(hung)
    pid = bench.engine_pid()
    assert alive(pid)
    bench.signal(signal.SIGKILL)
    bench.wait()
    assert gone_within(pid, 2.0), "the engine outlived a SIGKILLed bench"


@pytest.mark.parametrize("stage", ["search", "index"])
def test_sigkill_of_bench_takes_its_oneshot_engine_with_it(bench: Bench, stage: str) -> None:
    hung = bench.file("hung")
    bench.start(bench.spec("--hang-on", "1", "--marker", str(hung),
                           oneshot=True, index=stage == "index"))
    wait_for(hung)
    pid = bench.engine_pid()
    bench.signal(signal.SIGKILL)
    bench.wait()
    assert gone_within(pid, 2.0), f"the {stage} command outlived a SIGKILLed bench"


def _parent(code: str) -> subprocess.Popen[bytes]:
    """A small bench-like parent, in its own session so the test can SIGKILL it alone."""
    return subprocess.Popen([sys.executable, "-c", code], start_new_session=True,
                            stdout=subprocess.PIPE)


def _kill_session(parent: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(parent.pid, signal.SIGKILL)
    parent.wait(timeout=10)


@pytest.mark.parametrize("launcher", ["guardian", "setpriv", "preexec_fn"])
def test_sigkill_of_the_parent_kills_a_oneshot_engine_either_way(
        tmp_path: Path, cleanup: list[Path], launcher: str) -> None:
    """Every way of tying a command to bench, in a parent small enough to SIGKILL here."""
    if launcher == "guardian" and not guardian.ready():
        pytest.skip("no pidfds here: commands cannot be watched")
    if launcher == "setpriv" and not lifeline.death_launcher():
        pytest.skip("no setpriv with --pdeathsig on this system")
    pids, hung = tmp_path / "pids", tmp_path / "hung"
    cleanup.append(pids)
    engine = fake("hostile_engine.py", "--oneshot", "retry", "--pidfile", str(pids),
                  "--hang-on", "1", "--marker", str(hung))
    code = ("import sys; from codesearch_bench.processes import guardian, lifeline, command\n"
            f"guardian._unavailable = {launcher != 'guardian'}\n"
            f"if {launcher == 'preexec_fn'}: lifeline._launcher = []\n"
            f"command.run({engine!r}, timeout=60)\n")
    parent = _parent(code)
    try:
        wait_for(hung)
        parent.kill()
        parent.wait(timeout=10)
        assert gone_within(pids_in(pids)[0], 2.0), f"the engine outlived its parent ({launcher})"
    finally:
        _kill_session(parent)


def test_sigkill_of_the_parent_kills_a_oneshot_commands_whole_group(
        tmp_path: Path, cleanup: list[Path]) -> None:
    """The guardian kills the group, so a grandchild goes too (a death signal would not)."""
    if not guardian.ready():
        pytest.skip("no pidfds here: commands cannot be watched")
    pids, kids, hung = tmp_path / "pids", tmp_path / "kids", tmp_path / "hung"
    cleanup += [pids, kids]
    engine = fake("hostile_engine.py", "--oneshot", "retry", "--pidfile", str(pids),
                  "--group-child", str(kids), "--hang-on", "1", "--marker", str(hung))
    parent = _parent(f"from codesearch_bench.processes import command\n"
                     f"command.run({engine!r}, timeout=60)\n")
    try:
        wait_for(hung)
        wait_for(kids)
        assert alive(pids_in(kids)[0])
        parent.kill()
        parent.wait(timeout=10)
        assert gone_within(pids_in(pids)[0], 2.0), "the command outlived its parent"
        assert gone_within(pids_in(kids)[0], 2.0), "the command's child outlived bench"
    finally:
        _kill_session(parent)


def test_the_guardian_ends_with_bench() -> None:
    if not guardian.ready():
        pytest.skip("no pidfds here: commands cannot be watched")
    parent = _parent("import sys; from codesearch_bench.processes import guardian, command\n"
                     "command.run([sys.executable, '-c', 'pass'], timeout=60)\n"
                     "print(guardian.pid(), flush=True)\n")
    try:
        out, _ = parent.communicate(timeout=30)
        assert parent.returncode == 0
        watcher = int(out.decode().split()[-1])
        assert gone_within(watcher, 2.0), "the guardian outlived a bench that exited"
    finally:
        _kill_session(parent)


def test_a_killed_guardian_is_replaced(tmp_path: Path, cleanup: list[Path],
                                       no_leftovers: None) -> None:
    if not guardian.ready():
        pytest.skip("no pidfds here: commands cannot be watched")
    first = guardian.pid()
    assert first is not None
    os.kill(first, signal.SIGKILL)
    # Dead, not dying: a message sent in the instant before it dies is lost with it.
    assert gone_within(first, 5.0)
    assert command.run([sys.executable, "-c", "pass"], timeout=30).returncode == 0
    second = guardian.pid()
    assert second not in (None, first) and alive(second)
    assert not alive(first)  # reaped, not left a zombie


# -- teardown of one session, in process ---------------------------------------------------

@pytest.fixture
def no_leftovers() -> Iterator[None]:
    before = {c.pid for c in children()}
    yield
    left = new_children(before)
    assert not left, f"left behind (pid, status): {left}"


def test_engine_ignoring_term_is_killed_within_the_grace(tmp_path: Path, cleanup: list[Path],
                                                         no_leftovers: None) -> None:
    pids, signals = tmp_path / "pids", tmp_path / "signals"
    cleanup.append(pids)
    s = EngineSession(fake("hostile_engine.py", "--pidfile", str(pids), "--linger", "30",
                           "--ignore-term", "--signals", str(signals)), grace=0.5)
    s.start()
    assert s.request({"query": "retry"}, timeout=10).error is None
    began = time.monotonic()
    s.close()
    assert time.monotonic() - began < 0.5 + 1.0  # TERM, one grace period, KILL
    assert signals.read_text().split() == ["TERM"]
    assert not alive(pids_in(pids)[0])


@pytest.mark.parametrize("flag", ["--setsid-child", "--double-fork-on-close"])
def test_grandchild_that_left_the_group_is_killed_and_reaped(
        tmp_path: Path, cleanup: list[Path], no_leftovers: None, flag: str) -> None:
    grandchild = tmp_path / "grandchild"
    cleanup.append(grandchild)
    s = EngineSession(fake("hostile_engine.py", flag, str(grandchild)), grace=0.5)
    s.start()
    assert s.request({"query": "retry"}, timeout=10).error is None
    if flag == "--setsid-child":
        wait_for(grandchild)
    s.close()
    wait_for(grandchild)  # a double fork during close records its pid before orphaning it
    (pid,) = pids_in(grandchild)
    assert not alive(pid)  # and no_leftovers checks it was reaped, not left a zombie


@pytest.mark.parametrize("reused", ["group", "seen pid"])
def test_a_reused_number_is_never_signalled(tmp_path: Path, reused: str) -> None:
    """After an engine is gone its pid or group number may name someone else."""
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 start_new_session=True)
    try:
        engine = subprocess.Popen([sys.executable, "-c", "pass"], start_new_session=True)
        tree = reaper.Tree(root_pid=engine.pid, pgid=engine.pid)
        engine.wait()
        if reused == "group":
            tree.pgid = bystander.pid  # the group number now belongs to the bystander
        else:
            tree.seen[bystander.pid] = "1"  # seen once, with a start time that is not its own
        tree.stop(grace=0.2)
        tree.signal(signal.SIGKILL)
        tree.kill_now()  # what a second Ctrl-C does, from inside a signal handler
        time.sleep(0.1)
        assert bystander.poll() is None, "a process that was never the engine's was killed"
    finally:
        bystander.kill()
        bystander.wait()


# -- the OS refusing a rendered command ---------------------------------------------------

ARG_MAX = os.sysconf("SC_ARG_MAX")


@pytest.mark.parametrize("argv, env, why", [
    (["x" * (256 * 1024)], None, "Argument list too long"),
    (["y" * (100 * 1024)] * (ARG_MAX // (100 * 1024) + 4), None, "Argument list too long"),
    (["nul\0byte"], None, "null byte"),
    ([], {"BENCH_Q": "nul\0byte"}, "null byte"),
], ids=["one huge argument", "many arguments", "NUL in an argument", "NUL in the env"])
def test_refused_command_is_command_rejected(argv: list[str], env: dict[str, str] | None,
                                             why: str, no_leftovers: None) -> None:
    with pytest.raises(CommandRejected) as info:
        command.run([sys.executable, "-c", "pass", *argv], timeout=5, env=env,
                    owner="engine 'big'")
    assert "engine 'big'" in info.value.message and why in info.value.message
    assert not isinstance(info.value, EngineUnavailable)


def test_refused_persistent_start_is_command_rejected(no_leftovers: None) -> None:
    s = EngineSession([sys.executable, "-c", "pass", "a\0b"], owner="engine 'nul'")
    with pytest.raises(CommandRejected, match="null byte"):
        s.start()


# -- the building blocks: deferred signals, death signal -----------------------------------

def _signal_soon(sig: int, times: int, gap: float, when: Path | None = None) -> threading.Thread:
    def send() -> None:
        if when is not None:
            wait_for(when)
        for _ in range(times):
            os.kill(os.getpid(), sig)
            time.sleep(gap)
    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def test_sigint_in_a_session_close_is_deferred_until_the_engine_is_stopped(
        tmp_path: Path, cleanup: list[Path], no_leftovers: None) -> None:
    pids, closing, signals = tmp_path / "pids", tmp_path / "closing", tmp_path / "signals"
    cleanup.append(pids)
    s = EngineSession(fake("hostile_engine.py", "--pidfile", str(pids), "--linger", "30",
                           "--closing", str(closing), "--signals", str(signals)), grace=2.0)
    s.start()
    assert s.request({"query": "retry"}, timeout=10).error is None
    sender = _signal_soon(signal.SIGINT, 1, 0.0, when=closing)
    with pytest.raises(KeyboardInterrupt):
        s.close()
    sender.join()
    assert signals.read_text().split() == ["TERM"]
    assert not alive(pids_in(pids)[0])


def test_two_sigints_in_a_session_close_kill_the_engine_now(
        tmp_path: Path, cleanup: list[Path], no_leftovers: None) -> None:
    pids, closing = tmp_path / "pids", tmp_path / "closing"
    cleanup.append(pids)
    s = EngineSession(fake("hostile_engine.py", "--pidfile", str(pids), "--linger", "30",
                           "--closing", str(closing), "--ignore-term", "--signals",
                           str(tmp_path / "signals")), grace=10.0)
    s.start()
    assert s.request({"query": "retry"}, timeout=10).error is None
    sender = _signal_soon(signal.SIGINT, 2, 0.3, when=closing)
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        s.close()
    sender.join()
    assert time.monotonic() - began < 3.0  # not the 10 s grace
    assert not alive(pids_in(pids)[0])


def test_sigint_during_a_oneshot_cleanup_kills_the_tree_now(
        tmp_path: Path, cleanup: list[Path], no_leftovers: None) -> None:
    pids, hung = tmp_path / "pids", tmp_path / "hung"
    cleanup.append(pids)
    argv = fake("hostile_engine.py", "--oneshot", "retry", "--pidfile", str(pids), "--hang-on",
                "1", "--marker", str(hung), "--ignore-term", "--signals",
                str(tmp_path / "signals"))
    sender = _signal_soon(signal.SIGINT, 2, 0.3, when=hung)
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        command.run(argv, timeout=30, grace=10.0)
    sender.join()
    assert time.monotonic() - began < 5.0  # not INT + 10 s + TERM + 10 s
    assert not alive(pids_in(pids)[0])


def test_engine_started_from_a_worker_thread_outlives_that_thread(no_leftovers: None) -> None:
    """The death signal follows the forking thread: only the main thread may arm it."""
    started: list[EngineSession] = []
    worker = threading.Thread(target=lambda: started.append(
        EngineSession(fake("hostile_engine.py"), grace=0.5).__enter__()))
    worker.start()
    worker.join()
    (s,) = started
    try:
        time.sleep(0.2)
        reply = s.request({"query": "retry"}, timeout=10)
        assert reply.error is None and b"pkg/retry.py" in (reply.line or b"")
    finally:
        s.close()


def test_child_exits_before_exec_when_bench_already_died(no_leftovers: None) -> None:
    """The death signal is armed after fork: a parent gone by then means exit, not run."""
    wrong_parent = os.getpid() + 1_000_000  # as if bench had died and we were re-parented
    child = subprocess.Popen([sys.executable, "-c", "print('ran')"], stdout=subprocess.PIPE,
                             preexec_fn=lifeline.die_with(wrong_parent))
    out, _ = child.communicate(timeout=10)
    assert child.returncode == lifeline.PARENT_GONE_EXIT and out == b""
