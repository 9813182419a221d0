"""Run one command to completion under a deadline, and measure it.

The child starts in a new session. At its deadline the whole tree gets TERM,
then, after a grace period, KILL; the tree is always reaped, grandchildren
included. Output is captured up to a cap (the head of stdout, the tail of
stderr) and the pipes are drained past it, so a runaway engine can neither
exhaust memory nor block on a full pipe.

Peak RSS is the largest of these readings (named in `rss_method`): the whole
tree's RSS summed over samples from /proc (every few ms at first, then every
50 ms), each process's own high-water mark (VmHWM) at those samples, and the
kernel's maximum for the direct child (wait4's ru_maxrss, the figure
`/usr/bin/time -v` prints). Linux carries the *parent's* peak into a child's
ru_maxrss across fork and exec, so a small engine started by a large bench
would report bench's memory; ru_maxrss is therefore used only when it exceeds
bench's own peak at spawn time, where it can only be the child's.

Spawning and every step of teardown run shielded (signals.py): an
interrupt there waits until the tree is stopped and reaped, and a second one
kills the tree at once instead of cutting the cleanup short.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import guardian, procfs, reaper, signals
from .pipes import CHUNK, Sink
from .spawn import spawn

DEFAULT_MAX_STDOUT = 64 * 1024 * 1024
DEFAULT_MAX_STDERR = 64 * 1024
DEFAULT_GRACE = 3.0
RSS_METHOD = ("max(tree RSS summed over /proc samples, per-process VmHWM at those samples, "
              "wait4 ru_maxrss when above bench's own peak)")


@dataclass(frozen=True)
class Measurement:
    """What one run did. Failures are data here, never exceptions."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: bytes
    stderr: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    wall_s: float
    peak_rss_bytes: int | None
    rss_method: str
    timed_out: bool
    killed: bool
    leftovers_killed: int

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def stderr_tail(self, lines: int = 15) -> str:
        text = self.stderr.decode("utf-8", errors="replace").rstrip()
        return "\n".join(text.splitlines()[-lines:])

    def describe_failure(self) -> str:
        """One line saying why this run failed, for a row's gap."""
        if self.timed_out:
            return f"timed out after {self.wall_s:.1f}s and was killed"
        if self.returncode is not None and self.returncode < 0:
            return f"killed by signal {-self.returncode}"
        return f"exited with status {self.returncode}"


class _Exit:
    """Whether the direct child has exited, found without a thread waiting for it.

    `is_set` collects the exit status with a non-blocking wait4 (the child is
    bench's own: nothing else reaps it), so the reaper's stop() can poll it
    like an Event. `fd` is a pidfd that turns readable when the child exits,
    which wakes the selector loop at once; None where the OS has none, and
    then the loop polls at its sampling pace.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.status: dict[str, object] = {}
        self.fd: int | None = None
        with contextlib.suppress(AttributeError, OSError):
            self.fd = os.pidfd_open(pid)

    def is_set(self) -> bool:
        if self.status:
            return True
        try:
            pid, code, usage = os.wait4(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere: the status is lost, not the run
            self.status = {"end": time.perf_counter(), "code": -9, "maxrss": 0}
            return True
        if pid == 0:
            return False
        self.status = {"end": time.perf_counter(), "code": os.waitstatus_to_exitcode(code),
                       "maxrss": usage.ru_maxrss * 1024}  # KiB on Linux
        return True

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None


class _Child:
    """One started command: its process, tree, and one selector loop over its pipes.

    The caller's thread drains stdout and stderr, feeds stdin, notices the exit
    (on a pidfd) and samples memory, all in one loop: no helper thread per
    command, whose start-up alone cost more than the rest of the bookkeeping.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.tree: reaper.Tree | None = None
        self.out: Sink | None = None
        self.err: Sink | None = None
        self.exit: _Exit | None = None
        self.sel: selectors.BaseSelector | None = None
        self.pending = b""  # stdin not written yet

    @property
    def status(self) -> dict[str, object]:
        return self.exit.status if self.exit is not None else {}

    def start(self, argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None,
              stdin: bytes | None, max_stdout: int, max_stderr: int, owner: str,
              requires: str | None) -> None:
        """Spawn and take charge of everything at once; run shielded, so nothing is lost."""
        proc = spawn(
            argv, cwd=cwd, env=env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, owner=owner, requires=requires,
            per_query=True,
        )
        self.proc = proc
        self.tree = reaper.Tree(root_pid=proc.pid, pgid=proc.pid)
        signals.track(self.tree)
        self.exit = _Exit(proc.pid)
        assert proc.stdout is not None and proc.stderr is not None
        self.out, self.err = Sink(max_stdout, "head"), Sink(max_stderr, "tail")
        sel = self.sel = selectors.DefaultSelector()
        for pipe, sink in ((proc.stdout, self.out), (proc.stderr, self.err)):
            fd = os.dup(pipe.fileno())
            pipe.close()
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ, sink)
        if self.exit.fd is not None:
            sel.register(self.exit.fd, selectors.EVENT_READ, None)
        if stdin is not None:
            assert proc.stdin is not None
            fd = os.dup(proc.stdin.fileno())
            proc.stdin.close()
            if stdin:
                os.set_blocking(fd, False)
                self.pending = stdin
                sel.register(fd, selectors.EVENT_WRITE, "stdin")
            else:
                os.close(fd)

    def _pump(self, timeout: float) -> None:
        """Wait up to timeout for the child's pipes or its exit; move what is ready."""
        assert self.sel is not None
        for key, _ in self.sel.select(timeout):
            fd = int(key.fd)
            if key.data is None:
                continue  # the pidfd: the exit is collected by the caller
            if key.data == "stdin":
                try:
                    written = os.write(fd, self.pending[:CHUNK])
                    self.pending = self.pending[written:]
                except BlockingIOError:
                    continue
                except OSError:  # the engine closed its stdin: the rest is not wanted
                    self.pending = b""
                if not self.pending:
                    self._drop(fd)
                continue
            try:
                chunk = os.read(fd, CHUNK)
            except BlockingIOError:
                continue
            except OSError:
                chunk = b""
            if chunk:
                key.data.add(chunk)
            else:
                self._drop(fd)

    def _drop(self, fd: int) -> None:
        assert self.sel is not None
        self.sel.unregister(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    def _pipes_open(self) -> bool:
        assert self.sel is not None
        return any(key.data is not None for key in self.sel.get_map().values())

    def wait(self, deadline: float, grace: float) -> tuple[bool, bool]:
        """Drain and sample until the command exits or its deadline; (timed_out, killed)."""
        assert self.tree is not None and self.exit is not None
        # VmHWM keeps each process's peak between samples, so sampling can thin out
        # quickly; the sampler competes with the engine for the CPU.
        delay, next_sample = 0.005, time.perf_counter()
        while not self.exit.is_set():
            now = time.perf_counter()
            if now >= next_sample:
                self.tree.sample()
                next_sample, delay = now + delay, min(delay * 2, 0.1)
            remaining = deadline - now
            if remaining <= 0:
                with signals.shielded():
                    return True, self.tree.stop(grace=grace, root_done=self.exit)
            if self.exit.fd is None and not self._pipes_open():
                time.sleep(min(next_sample - now, remaining, 0.005))
                continue
            self._pump(max(0.0, min(next_sample - now, remaining)))
        return False, False

    def abort(self, grace: float) -> None:
        """Interrupted or failed mid-run: interrupt, TERM, KILL, then the usual finish."""
        if self.tree is not None:
            self.tree.stop(grace=grace, interrupt=True, root_done=self.exit)
        self.finish(grace)

    def finish(self, grace: float) -> int:
        """Reap the command, kill and reap what it left running; how many were left."""
        if self.proc is None or self.tree is None or self.exit is None:
            return 0
        give_up = time.perf_counter() + max(grace, 5.0) * 2
        while not self.exit.is_set() and time.perf_counter() < give_up:
            time.sleep(0.002)
        self.proc.returncode = int(self.status.get("code", -9))  # type: ignore[call-overload]
        reaper.disown(self.proc.pid)
        # The main process is gone; anything of its tree still running is a leftover.
        leftovers = self.tree.leftovers()
        if leftovers:
            self.tree.stop(grace=grace, include_root=False)
        self.tree.reap()
        guardian.release(self.proc.pid)
        signals.untrack(self.tree)
        self._drain(time.perf_counter() + 10)
        return len(leftovers)

    def _drain(self, give_up: float) -> None:
        """Read the pipes to their end (the tree is gone, so it comes), then close all."""
        if self.sel is None:
            return
        for key in list(self.sel.get_map().values()):
            if key.data is None:
                self.sel.unregister(key.fd)
        if self.exit is not None:
            self.exit.close()
        while self._pipes_open() and time.perf_counter() < give_up:
            self._pump(max(0.0, give_up - time.perf_counter()))
        for key in list(self.sel.get_map().values()):
            self._drop(int(key.fd))
        self.sel.close()


def _own_peak() -> int:
    """bench's own peak RSS: what a child's ru_maxrss may have inherited across fork."""
    try:
        import resource
    except ImportError:  # not POSIX
        return procfs.hwm(os.getpid()) or 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    max_stdout: int = DEFAULT_MAX_STDOUT,
    max_stderr: int = DEFAULT_MAX_STDERR,
    grace: float = DEFAULT_GRACE,
    owner: str = "command",
    requires: str | None = None,
) -> Measurement:
    """Run argv to completion or to its deadline; see the module docstring."""
    own_peak = _own_peak()
    start = time.perf_counter()
    child = _Child()
    try:
        with signals.shielded():
            child.start(argv, cwd=cwd, env=env, stdin=stdin, max_stdout=max_stdout,
                        max_stderr=max_stderr, owner=owner, requires=requires)
        timed_out, killed = child.wait(start + timeout, grace)
    except BaseException:
        with signals.shielded():
            child.abort(grace)
        raise
    with signals.shielded():
        leftovers = child.finish(grace)
    assert child.tree is not None and child.out is not None and child.err is not None
    end = float(child.status.get("end", time.perf_counter()))  # type: ignore[arg-type]
    maxrss = int(child.status.get("maxrss", 0))  # type: ignore[call-overload]
    if maxrss <= own_peak:
        maxrss = 0  # possibly inherited from bench itself: not the engine's figure
    peak = max(child.tree.peak_rss, maxrss) or None
    return Measurement(
        argv=tuple(argv),
        returncode=child.status.get("code"),  # type: ignore[arg-type]
        stdout=bytes(child.out.buf),
        stderr=bytes(child.err.buf),
        stdout_truncated=child.out.truncated,
        stderr_truncated=child.err.truncated,
        wall_s=end - start,
        peak_rss_bytes=peak,
        rss_method=RSS_METHOD,
        timed_out=timed_out,
        killed=killed,
        leftovers_killed=leftovers,
    )
