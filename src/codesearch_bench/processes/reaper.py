"""Process-tree bookkeeping shared by one-shot runs and persistent sessions.

Every engine runs in its own session (and so its own process group). A tree
is stopped in nox's order -- interrupt, terminate, kill -- with a grace period
between steps, and anything that slipped out of the group (a daemon that
called setsid) is tracked by pid and creation time and signalled too. A
number is only ever signalled while it still names the engine's process: a
pid is checked against the start time recorded when it was first seen, and
the group number only while a known member of the tree is still in it.

On Linux bench makes itself a child subreaper, so grandchildren orphaned by an
engine are re-parented to bench instead of to PID 1 (which, in containers and
micro-VMs, often never reaps). That lets bench reap them: "no process left"
includes no zombies (lifeline.py sets it up, with the death signal that
covers a bench killed outright).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Protocol

import psutil

from . import procfs
from .procfs import hwm, identity

__all__ = ["Tree", "disown", "hwm", "identity", "kill_orphans", "own", "reap_orphans"]

_lock = threading.Lock()


class Done(Protocol):
    """Says whether the tree's root has exited (a threading.Event is one)."""

    def is_set(self) -> bool: ...
#: pids of direct children that a Popen object owns and will wait for itself.
_owned: set[int] = set()


def own(pid: int) -> None:
    with _lock:
        _owned.add(pid)


def disown(pid: int) -> None:
    with _lock:
        _owned.discard(pid)


def _adopted_pids(preexisting: frozenset[int]) -> list[int]:
    """Our children that no Popen owns and that were not there before: orphans of a tree."""
    owned = frozenset(_owned)  # no lock: a signal handler may run this in the lock's holder
    return [p for p in procfs.own_children() if p not in owned and p not in preexisting]


@dataclass
class Tree:
    """A process group plus every descendant ever seen, with RSS sampling."""

    root_pid: int
    pgid: int
    seen: dict[int, str] = field(default_factory=dict)  # pid -> identity()
    peak_rss: int = 0
    preexisting: frozenset[int] = field(default_factory=lambda: _children_now())
    root_ident: str | None = None
    #: set by kill_now: the stop in progress goes straight to KILL.
    escalated: bool = False

    def __post_init__(self) -> None:
        if self.root_ident is None:
            self.root_ident = identity(self.root_pid)

    def _root_is_ours(self) -> bool:
        """The root alive or an unreaped zombie: its pid (and group) cannot be reused yet."""
        return self.root_ident is not None and identity(self.root_pid) == self.root_ident

    def owns_group(self) -> bool:
        """Whether self.pgid still names the engine's group, not a later one reusing it."""
        if self._root_is_ours():
            return True
        for pid, ident in list(self.seen.items()):
            if procfs.pgid(pid) == self.pgid and identity(pid) == ident:
                return True
        return any(procfs.pgid(pid) == self.pgid for pid in _adopted_pids(self.preexisting))

    def processes(self) -> list[psutil.Process]:
        """Live members: the root, its current descendants and any seen before."""
        procs: dict[int, psutil.Process] = {}
        if self._root_is_ours():
            try:
                root = psutil.Process(self.root_pid)
                procs[root.pid] = root
                for child in root.children(recursive=True):
                    procs[child.pid] = child
            except psutil.Error:
                pass
        for pid, ident in list(self.seen.items()):
            if pid in procs:
                continue
            if identity(pid) != ident:
                self.seen.pop(pid, None)
                continue
            try:
                proc = psutil.Process(pid)
                procs[pid] = proc
                # Orphans re-parented to us: their children too.
                for child in proc.children(recursive=True):
                    procs.setdefault(child.pid, child)
            except psutil.Error:
                self.seen.pop(pid, None)
        for pid in procs:
            if pid != self.root_pid and pid not in self.seen:
                first_seen = identity(pid)
                if first_seen is not None:
                    self.seen[pid] = first_seen
        return list(procs.values())

    def _fast_pids(self) -> list[int]:
        """The live tree from /proc child lists, remembering every pid seen."""
        stack = [self.root_pid] if self._root_is_ours() else []
        for pid, ident in list(self.seen.items()):
            if identity(pid) == ident:
                stack.append(pid)
            else:
                self.seen.pop(pid, None)
        found: list[int] = []
        visited: set[int] = set()
        while stack:
            pid = stack.pop()
            if pid in visited:
                continue
            visited.add(pid)
            found.append(pid)
            kids = procfs.children(pid)
            for kid in kids:
                if kid not in self.seen and kid != self.root_pid:
                    first_seen = identity(kid)
                    if first_seen is not None:
                        self.seen[kid] = first_seen
            stack.extend(kids)
        return found

    def pids(self) -> list[int]:
        """The live tree: cheap /proc child lists on Linux, a psutil walk elsewhere."""
        if procfs.FAST:
            return self._fast_pids()
        return [p.pid for p in self.processes()]

    def sample(self) -> int:
        """Sum the RSS of the live tree now; remember the peak.

        A single process's own high-water mark also bounds the tree's peak from
        below, and keeps a peak that fell between two samples.
        """
        total = 0
        for pid in self.pids():
            rss, mark = procfs.memory(pid)
            total += rss
            self.peak_rss = max(self.peak_rss, mark or 0)
        self.peak_rss = max(self.peak_rss, total)
        return total

    def group_members(self) -> list[psutil.Process]:
        """Every process still in the engine's process group (a full /proc scan)."""
        members = []
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()] if procfs.PROC \
            else psutil.pids()
        for pid in pids:
            try:
                if os.getpgid(pid) == self.pgid:
                    members.append(psutil.Process(pid))
            except (OSError, psutil.Error):
                continue
        return members

    def adopted(self) -> list[psutil.Process]:
        """Orphans re-parented to bench (as subreaper) since this tree started.

        Engines run one at a time in a process, so such a child can only have
        come from this tree -- typically a daemon that left the process group
        with setsid. `compare --jobs N` keeps that true: each concurrent cell
        runs in a worker process of its own, itself a subreaper, so an orphan
        is adopted by the worker whose cell made it (run/jobs.py), never by a
        process running another cell's engine.
        """
        out = []
        for pid in _adopted_pids(self.preexisting):
            with contextlib.suppress(psutil.Error):
                out.append(psutil.Process(pid))
        return out

    def leftovers(self, *, include_root: bool = False) -> list[psutil.Process]:
        out = []
        procs: dict[int, psutil.Process] = {}
        for pid in self.pids():
            with contextlib.suppress(psutil.Error):
                procs[pid] = psutil.Process(pid)
        group: list[psutil.Process] = []
        if self.owns_group():
            try:
                os.killpg(self.pgid, 0)  # one syscall says whether the group still has members
                group = self.group_members()
            except (ProcessLookupError, PermissionError):
                pass
        for member in group + self.adopted():
            if member.pid not in procs:
                procs[member.pid] = member
                ident = identity(member.pid)
                if ident is not None:
                    self.seen.setdefault(member.pid, ident)
        for proc in procs.values():
            if proc.pid == self.root_pid and not include_root:
                continue
            with contextlib.suppress(psutil.Error):
                if proc.status() != psutil.STATUS_ZOMBIE:
                    out.append(proc)
        return out

    def signal(self, sig: int, *, include_root: bool = True) -> None:
        """The group at once, then each member that left it: every process once.

        Twice would matter: an engine may take a second TERM to mean "skip the
        graceful shutdown".
        """
        grouped = False
        if self.owns_group():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, sig)
                grouped = True
        for proc in self.leftovers(include_root=include_root):
            if grouped and procfs.pgid(proc.pid) == self.pgid:
                continue
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)

    def kill_now(self) -> None:
        """SIGKILL the whole tree at once, without a grace period or any bookkeeping.

        Called from a signal handler, possibly while this tree's own methods are
        mid-walk: it only reads (seen is copied, never changed) and signals.
        """
        self.escalated = True
        targets: set[int] = set(_adopted_pids(self.preexisting))
        if self._root_is_ours():
            targets.update([self.root_pid, *procfs.descendants(self.root_pid)])
        for pid, ident in list(self.seen.items()):
            if identity(pid) == ident:
                targets.update([pid, *procfs.descendants(pid)])
        if self.owns_group():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)
        for pid in targets:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def stop(self, *, grace: float, interrupt: bool = False,
             root_done: Done | None = None, include_root: bool = True) -> bool:
        """Interrupt (optional) -> TERM -> KILL until nothing is left. True if KILL was needed."""
        steps = ([signal.SIGINT] if interrupt else []) + [signal.SIGTERM]
        for sig in steps:
            if self.escalated:
                break
            self.signal(sig, include_root=include_root)
            if self._wait_gone(grace, root_done, include_root, patient=False):
                self.reap()
                return False
        self.signal(signal.SIGKILL, include_root=include_root)
        self._wait_gone(max(grace, 5.0), root_done, include_root, patient=True)
        self.reap()
        return True

    def _wait_gone(self, timeout: float, root_done: Done | None,
                   include_root: bool, *, patient: bool) -> bool:
        """Wait for the tree to be gone; an escalation ends the wait unless patient."""
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            self.reap()
            root_gone = root_done is None or not include_root or root_done.is_set()
            if root_gone and not self.leftovers(include_root=False):
                return True
            if time.monotonic() >= deadline or (self.escalated and not patient):
                return False
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def reap(self) -> None:
        """waitpid every seen descendant that has become our zombie child."""
        for pid in list(self.seen):
            if pid == self.root_pid:
                continue
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                continue  # not our child (or already reaped): nothing to do
            if done:
                self.seen.pop(pid, None)
        reap_orphans()


def _children_now() -> frozenset[int]:
    return frozenset(procfs.own_children())


def kill_orphans(preexisting: frozenset[int], *, patience: float = 5.0) -> int:
    """SIGKILL and reap every child adopted since `preexisting` that no Popen owns.

    For a process that runs no engine itself (compare --jobs N's bench, whose own
    children are its workers): an orphan that reaches it can only come from a
    worker that died without stopping its cell, so nothing live owns it. Its own
    children are orphaned in turn and adopted next, hence the loop. How many died.
    """
    killed: set[int] = set()
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        pids = [p for p in _adopted_pids(preexisting) if not procfs.is_zombie(p)]
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.01)
        reap_orphans()
    reap_orphans()
    return len(killed)


def reap_orphans() -> int:
    """Reap zombie children that no Popen owns (orphans adopted as subreaper)."""
    reaped = 0
    for pid in procfs.own_children():
        with _lock:
            if pid in _owned:
                continue
        if not procfs.is_zombie(pid):
            continue
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            reaped += bool(done)
        except ChildProcessError:
            continue
    return reaped
