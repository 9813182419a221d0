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
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import EngineUnavailable
from . import reaper
from .pipes import Capture, feed

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


def spawn(argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None,
          stdin: int, stdout: int, stderr: int, owner: str, requires: str | None,
          ) -> subprocess.Popen[bytes]:
    """Popen in a new session, turning a missing binary into EngineUnavailable."""
    reaper.become_subreaper()
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=full_env, stdin=stdin, stdout=stdout, stderr=stderr,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        missing = argv[0] if exc.filename in (None, argv[0]) else exc.filename
        if cwd and not os.path.isdir(cwd):
            raise EngineUnavailable(f"{owner}: working directory {cwd} does not exist") from None
        need = f"; it requires: {requires}" if requires else ""
        raise EngineUnavailable(
            f"{owner}: executable {missing!r} not found on PATH{need}"
        ) from None
    except PermissionError:
        raise EngineUnavailable(f"{owner}: {argv[0]!r} is not executable") from None
    except OSError as exc:
        raise EngineUnavailable(f"{owner}: cannot start {argv[0]!r}: {exc}") from None
    reaper.own(proc.pid)
    return proc


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
    own_peak = reaper.hwm(os.getpid()) or 0
    start = time.perf_counter()
    proc = spawn(
        argv, cwd=cwd, env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, owner=owner, requires=requires,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out = Capture(os.dup(proc.stdout.fileno()), max_stdout, "head")
    err = Capture(os.dup(proc.stderr.fileno()), max_stderr, "tail")
    proc.stdout.close()
    proc.stderr.close()
    out.start()
    err.start()
    if stdin is not None:
        threading.Thread(target=feed, args=(proc.stdin, stdin), daemon=True).start()

    tree = reaper.Tree(root_pid=proc.pid, pgid=proc.pid)
    exited = threading.Event()
    status: dict[str, object] = {}

    def wait() -> None:
        _, code, usage = os.wait4(proc.pid, 0)
        status["end"] = time.perf_counter()
        status["code"] = os.waitstatus_to_exitcode(code)
        status["maxrss"] = usage.ru_maxrss * 1024  # KiB on Linux
        exited.set()

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    timed_out = killed = False
    try:
        deadline = start + timeout
        # VmHWM keeps each process's peak between samples, so sampling can thin out
        # quickly; the sampler competes with the engine for the CPU.
        delay = 0.005
        while not exited.is_set():
            tree.sample()
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                timed_out = True
                killed = tree.stop(grace=grace, root_done=exited)
                break
            exited.wait(min(delay, remaining))
            delay = min(delay * 2, 0.1)
    except BaseException:
        tree.stop(grace=grace, interrupt=True, root_done=exited)
        raise
    finally:
        waiter.join(timeout=max(grace, 5.0) * 2)
        proc.returncode = status.get("code", -9)
        reaper.disown(proc.pid)

    # The main process is gone; anything of its tree still running is a leftover.
    leftovers = tree.leftovers()
    if leftovers:
        tree.stop(grace=grace, include_root=False)
    tree.reap()
    out.join(timeout=10)
    err.join(timeout=10)
    end = float(status.get("end", time.perf_counter()))  # type: ignore[arg-type]
    maxrss = int(status.get("maxrss", 0))  # type: ignore[call-overload]
    if maxrss <= own_peak:
        maxrss = 0  # possibly inherited from bench itself: not the engine's figure
    peak = max(tree.peak_rss, maxrss) or None
    return Measurement(
        argv=tuple(argv),
        returncode=status.get("code"),  # type: ignore[arg-type]
        stdout=bytes(out.buf),
        stderr=bytes(err.buf),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        wall_s=end - start,
        peak_rss_bytes=peak,
        rss_method=RSS_METHOD,
        timed_out=timed_out,
        killed=killed,
        leftovers_killed=len(leftovers),
    )
