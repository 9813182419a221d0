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
one command running to its own end.

A guardian that is itself killed takes its registrations with it, so bench
keeps its own pidfd of every command in flight and a thread waits on the
guardian's end of the socket: when it hangs up, a new guardian is started at
once and every command still in flight is registered with it again. If none
can be started, those commands are left to bench's own teardown (the signal
handlers and the end of each command), which a bench SIGKILLed in that state
does not run. What stays open is the few milliseconds between a guardian's
death and its replacement. Linux only (pidfds, 5.3+); elsewhere spawn.py falls
back to setpriv or a preexec_fn.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import select
import signal
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

# Re-entrant: release() may run in a signal handler on the thread that holds it.
_lock = threading.RLock()
_guardian: _Guardian | None = None
_unavailable = False
#: pid -> bench's own pidfd of each command in flight, to register again with a new guardian.
_held: dict[int, int] = {}
_held_owner = os.getpid()


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
        self.dropped = False
        # The watcher must never take bench's signals: one delivered to it would not wake
        # the main thread from a blocking call, and its handler would run late. A thread
        # starts with its creator's mask, so block them all around the start.
        watcher = threading.Thread(target=self._watch, name="guardian-watch", daemon=True)
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
        try:
            watcher.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)

    def _watch(self) -> None:
        """Wait for the guardian to hang up; then a new one takes over what it held."""
        poller = select.poll()
        try:
            poller.register(self.sock, select.POLLIN | select.POLLHUP)
        except (OSError, ValueError):
            return
        while True:  # the guardian never writes: any event is its end of the socket closing
            try:
                poller.poll(None)
                break
            except InterruptedError:
                continue
            except (OSError, ValueError):
                return
        if not self.dropped and self.owner == os.getpid():
            _replace(self)

    def send(self, message: bytes, fds: list[int]) -> None:
        socket.send_fds(self.sock, [message], fds)

    def close(self) -> None:
        """Bench is ending normally: the guardian sees EOF, finds nothing left, and exits."""
        self.dropped = True  # its hang-up is expected now: no replacement
        self.hang_up()

    def hang_up(self) -> None:
        """Shut the socket down, then close it.

        A close alone would not reach the guardian while the watcher thread still
        polls the socket (the poll holds the file open); a shutdown does, and wakes it.
        """
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
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
    with _lock:
        held = _ours_held()
        held[child] = fd  # before the send: a replacement in between registers it too
        for _attempt in range(2):
            g = _current()
            if g is None:
                break
            try:
                g.send(b"+%d" % child, [fd])
                return True
            except OSError:
                _replace(g)  # the guardian died (killed by hand?): a new one takes over
        held.pop(child, None)
    os.close(fd)
    return False


def release(child: int) -> None:
    """The command has been reaped: the guardian forgets it."""
    with _lock:
        fd = _ours_held().pop(child, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        g = _ours()
        if g is None:
            return
        with contextlib.suppress(OSError):
            g.send(b"-%d" % child, [])


def _ours_held() -> dict[int, int]:
    """This process's in-flight commands; a forked child starts with none of its parent's."""
    global _held, _held_owner
    if _held_owner != os.getpid():
        _held, _held_owner = {}, os.getpid()  # the parent's pidfds are the parent's to close
    return _held


def _replace(g: _Guardian) -> None:
    """The guardian `g` died: start another and register every command still in flight.

    Commands that cannot be registered (no guardian can start) stay with bench's
    own teardown; their pidfds are kept, so a later guardian still takes them.
    """
    with _lock:
        _drop(g)
        held = dict(_ours_held())
        if not held:
            return
        fresh = _current()
        if fresh is None:
            return
        for child, fd in held.items():
            try:
                fresh.send(b"+%d" % child, [fd])
            except OSError:
                return  # this one died too: its own watcher starts the next


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
        g.dropped = True
        if _guardian is g:
            _guardian = None
    reaper.disown(g.proc.pid)
    g.hang_up()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        g.proc.wait(timeout=1)
