"""What ties an engine's life to bench's: the subreaper and the death signal.

On Linux bench makes itself a child subreaper, so grandchildren orphaned by an
engine are re-parented to bench instead of to PID 1 (which, in containers and
micro-VMs, often never reaps) and bench can kill and reap them.

A bench that is SIGKILLed runs no cleanup at all, so a persistent engine is
started with a death signal (PR_SET_PDEATHSIG, SIGKILL): the kernel kills it
when bench goes. Its own children get none (the kernel does not pass it on
across fork): a grandchild that outlives a SIGKILLed bench is the one orphan
left, and only a bench still running can sweep those. A command run once per
query is watched by guardian.py instead, which kills its whole group; setpriv
(death_launcher) is the fallback where there is no guardian.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: The status of a child that found bench already gone before it could exec.
PARENT_GONE_EXIT = 125
_subreaper_done = False
_libc: Any = None
_launcher: list[str] | None = None


def _prctl() -> Any:
    """libc's prctl, looked up once (the child of a fork must not have to)."""
    global _libc
    if not sys.platform.startswith("linux"):
        return None
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            return None
    return getattr(_libc, "prctl", None)


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux only). Idempotent; returns success."""
    global _subreaper_done
    if _subreaper_done:
        return True
    prctl = _prctl()
    if prctl is None:
        return False
    _subreaper_done = bool(prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    return _subreaper_done


def die_with(parent: int) -> Callable[[], None] | None:
    """A preexec_fn that gives the child SIGKILL when its parent's forking thread ends.

    Runs in the child between fork and exec, where only async-signal-safe work
    is sound in a threaded parent: it makes one foreign call through a function
    pointer resolved here, in the parent, and reads getppid -- no import, no
    lock, no allocation that another thread could have held at fork time. If
    bench died before the death signal was armed, the child was re-parented
    and would never get it: it exits instead of running. None off Linux.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    kill = int(signal.SIGKILL)

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, kill, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(PARENT_GONE_EXIT)
    return arm


def death_launcher() -> list[str]:
    """An argv prefix that arms the death signal and execs the command; [] if there is none.

    util-linux's setpriv does in the child what die_with does, after a plain
    vfork-style spawn: a preexec_fn forces a full fork, whose cost grows with
    bench's memory (measured per spawn of /bin/true: about +10 ms at bench's
    usual 100 MiB, +60 ms at 550 MiB; the launcher about +1-3 ms whatever the
    size), too much for an engine started once per query. It cannot check
    that bench is still there when the signal is armed (die_with does): a
    bench killed in the moment between fork and setpriv's prctl leaves that
    one command running to its own end. Probed once per process.
    """
    global _launcher
    if _launcher is None:
        found = shutil.which("setpriv") if sys.platform.startswith("linux") else None
        prefix = [found, "--pdeathsig", "KILL", "--"] if found else []
        if found:
            try:
                subprocess.run([*prefix, found, "--version"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               check=True, timeout=10)
            except (OSError, subprocess.SubprocessError):
                prefix = []  # an old setpriv without --pdeathsig
        _launcher = prefix
    return list(_launcher)
