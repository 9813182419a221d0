"""The watcher that kills bench's one-shot commands if bench itself is killed.

A command run once per query needs a death signal like any engine, but arming
one in the child costs: a preexec_fn forces a full fork of bench (~10 ms at
100 MiB), and util-linux's setpriv as a launcher is one more exec per query
(~1.3 ms of every query's measured latency here, measured against a plain
spawn). Instead bench starts one small process, the guardian, once, and hands
it a pidfd of every command it starts (SCM_RIGHTS over a socket, ~20 us). When
bench dies, however it dies, the guardian's end of the socket reads EOF and it
kills every command still registered -- with its process group while the
command still runs, so grandchildren go too (a death signal reaches only the
direct child). A pidfd names one process for good, so a number reused after
the command ended is never signalled.

The guardian holds nothing bench waits on and lives in its own session (a
terminal's Ctrl-C is bench's to handle). The one gap is the moment between a
command's fork and its registration: a bench SIGKILLed right then leaves that
one command running to its own end. A guardian that is itself killed is
replaced at the next command (its socket refuses the message); a command
registered in the instant it dies goes unwatched. Linux only (pidfds, 5.3+); elsewhere
spawn.py falls back to setpriv or a preexec_fn.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import socket
import subprocess
import sys
import threading

from . import reaper

#: The guardian's program, run by the same interpreter in isolated mode (-I -S):
#: messages are b"+<pid>" with the command's pidfd, or b"-<pid>" once bench reaped it.
_PROGRAM = r"""
import os, select, signal, socket
sock = socket.socket(fileno=0)
held = {}
while True:
    try:
        msg, fds, _, _ = socket.recv_fds(sock, 64, 1)
    except InterruptedError:
        continue
    except OSError:
        break
    if not msg:
        break
    pid = int(msg[1:])
    if msg[:1] == b"+" and fds:
        old = held.pop(pid, None)
        if old is not None:
            os.close(old)
        held[pid] = fds[0]
    else:
        fd = held.pop(pid, None)
        if fd is not None:
            os.close(fd)
for pid, fd in held.items():
    running = not select.select([fd], [], [], 0)[0]
    if running:  # its group's number is still its own: the whole group goes
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_guardian: _Guardian | None = None
_unavailable = False


class _Guardian:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _PROGRAM], stdin=theirs.fileno(),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        finally:
            theirs.close()
        self.sock = ours
        self.owner = os.getpid()

    def send(self, message: bytes, fds: list[int]) -> None:
        socket.send_fds(self.sock, [message], fds)

    def close(self) -> None:
        """Bench is ending normally: the guardian sees EOF, finds nothing left, and exits."""
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            self.proc.wait(timeout=2)


def _ours() -> _Guardian | None:
    """The guardian this process started; not one a forked parent left in our memory."""
    g = _guardian
    return g if g is not None and g.owner == os.getpid() else None


def pid() -> int | None:
    """The guardian's pid in this process, if one runs (for bookkeeping of children)."""
    g = _ours()
    return g.proc.pid if g is not None else None


def ready() -> bool:
    """Whether commands can be watched here (Linux with pidfds), starting the guardian."""
    if _unavailable or not sys.platform.startswith("linux"):
        return False
    if not (hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")):
        return False
    return _current() is not None


def watch(child: int) -> bool:
    """Register a just-started command; False if it cannot be watched (use another way)."""
    global _unavailable
    try:
        fd = os.pidfd_open(child)
    except OSError as exc:
        # No pidfds in this kernel: stop trying. Anything else (out of descriptors,
        # say) leaves this one command to bench's own teardown.
        if exc.errno in (errno.ENOSYS, errno.EINVAL, errno.EPERM):
            _unavailable = True
        return False
    try:
        for _attempt in range(2):
            g = _current()
            if g is None:
                return False
            try:
                g.send(b"+%d" % child, [fd])
                return True
            except OSError:
                _drop(g)  # the guardian died (killed by hand?): a new one takes over
        return False
    finally:
        os.close(fd)


def release(child: int) -> None:
    """The command has been reaped: the guardian forgets it."""
    g = _ours()
    if g is None:
        return
    with contextlib.suppress(OSError):
        g.send(b"-%d" % child, [])


def _current() -> _Guardian | None:
    global _guardian, _unavailable
    g = _ours()
    if g is not None:
        return g
    with _lock:
        if _ours() is None:
            try:
                _guardian = _Guardian()
            except OSError:
                _unavailable = True
                return None
            atexit.register(_guardian.close)
            reaper.own(_guardian.proc.pid)  # orphan sweeps must leave it alone
        return _guardian


def _drop(g: _Guardian) -> None:
    global _guardian
    with _lock:
        if _guardian is g:
            _guardian = None
    reaper.disown(g.proc.pid)
    with contextlib.suppress(OSError):
        g.sock.close()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        g.proc.wait(timeout=1)
