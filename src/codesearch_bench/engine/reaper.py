"""Process-tree bookkeeping shared by one-shot runs and persistent sessions.

Every engine runs in its own session (and so its own process group). A tree
is stopped in nox's order -- interrupt, terminate, kill -- with a grace period
between steps, and anything that slipped out of the group (a daemon that
called setsid) is tracked by pid and creation time and signalled too.

On Linux bench makes itself a child subreaper, so grandchildren orphaned by an
engine are re-parented to bench instead of to PID 1 (which, in containers and
micro-VMs, often never reaps). That lets bench reap them: "no process left"
includes no zombies.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

import psutil

_PR_SET_CHILD_SUBREAPER = 36
_subreaper_done = False
_lock = threading.Lock()
#: pids of direct children that a Popen object owns and will wait for itself.
_owned: set[int] = set()


def become_subreaper() -> bool:
    """Adopt orphaned descendants (Linux only). Idempotent; returns success."""
    global _subreaper_done
    if _subreaper_done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        ok = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False
    _subreaper_done = ok
    return ok


def own(pid: int) -> None:
    with _lock:
        _owned.add(pid)


def disown(pid: int) -> None:
    with _lock:
        _owned.discard(pid)


_PROC = os.path.isdir("/proc/self/task")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _proc_children_supported() -> bool:
    pid = os.getpid()
    return os.path.exists(f"/proc/{pid}/task/{pid}/children")


_FAST = _PROC and _proc_children_supported()


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def identity(pid: int) -> str | None:
    """What makes a pid this process and not a later one reusing the number."""
    if _PROC:
        stat = _read(f"/proc/{pid}/stat")
        if stat is None:
            return None
        return stat.rsplit(")", 1)[-1].split()[19]  # starttime, in clock ticks since boot
    try:
        return repr(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


def _children(pid: int) -> list[int]:
    """Direct children from /proc/PID/task/*/children: far cheaper than a /proc scan."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        data = _read(f"/proc/{pid}/task/{tid}/children")
        if data:
            out.extend(int(x) for x in data.split())
    return out


def hwm(pid: int) -> int | None:
    """VmHWM: the process's own peak RSS since its last exec, in bytes (Linux)."""
    status = _read(f"/proc/{pid}/status")
    if not status:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


def _memory(pid: int) -> tuple[int, int | None]:
    """(current RSS, own peak RSS or None) in bytes; a zombie or a gone pid is (0, None)."""
    if _PROC:
        statm = _read(f"/proc/{pid}/statm")
        parts = statm.split() if statm else []
        rss = int(parts[1]) * _PAGE if len(parts) > 1 else 0
        return rss, hwm(pid)
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return 0, None
        return proc.memory_info().rss, None
    except psutil.Error:
        return 0, None


@dataclass
class Tree:
    """A process group plus every descendant ever seen, with RSS sampling."""

    root_pid: int
    pgid: int
    seen: dict[int, str] = field(default_factory=dict)  # pid -> identity()
    peak_rss: int = 0
    preexisting: frozenset[int] = field(default_factory=lambda: _children_now())

    def processes(self) -> list[psutil.Process]:
        """Live members: the root, its current descendants and any seen before."""
        procs: dict[int, psutil.Process] = {}
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
        stack = [self.root_pid]
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
            kids = _children(pid)
            for kid in kids:
                if kid not in self.seen and kid != self.root_pid:
                    first_seen = identity(kid)
                    if first_seen is not None:
                        self.seen[kid] = first_seen
            stack.extend(kids)
        return found

    def pids(self) -> list[int]:
        """The live tree: cheap /proc child lists on Linux, a psutil walk elsewhere."""
        if _FAST:
            return self._fast_pids()
        return [p.pid for p in self.processes()]

    def sample(self) -> int:
        """Sum the RSS of the live tree now; remember the peak.

        A single process's own high-water mark also bounds the tree's peak from
        below, and keeps a peak that fell between two samples.
        """
        total = 0
        for pid in self.pids():
            rss, mark = _memory(pid)
            total += rss
            self.peak_rss = max(self.peak_rss, mark or 0)
        self.peak_rss = max(self.peak_rss, total)
        return total

    def group_members(self) -> list[psutil.Process]:
        """Every process still in the engine's process group (a full /proc scan)."""
        members = []
        pids = [int(d) for d in os.listdir("/proc") if d.isdigit()] if _PROC else psutil.pids()
        for pid in pids:
            try:
                if os.getpgid(pid) == self.pgid:
                    members.append(psutil.Process(pid))
            except (OSError, psutil.Error):
                continue
        return members

    def adopted(self) -> list[psutil.Process]:
        """Orphans re-parented to bench (as subreaper) since this tree started.

        Engines run one at a time, so such a child can only have come from this
        tree -- typically a daemon that left the process group with setsid.
        """
        out = []
        for pid in _own_children():
            with _lock:
                if pid in _owned:
                    continue
            if pid not in self.preexisting:
                with contextlib.suppress(psutil.Error):
                    out.append(psutil.Process(pid))
        return out

    def leftovers(self, *, include_root: bool = False) -> list[psutil.Process]:
        out = []
        procs: dict[int, psutil.Process] = {}
        for pid in self.pids():
            with contextlib.suppress(psutil.Error):
                procs[pid] = psutil.Process(pid)
        try:
            os.killpg(self.pgid, 0)  # one syscall says whether the group still has members
            group = self.group_members()
        except (ProcessLookupError, PermissionError):
            group = []
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
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, sig)
        for proc in self.leftovers(include_root=include_root):
            with contextlib.suppress(psutil.Error):
                proc.send_signal(sig)

    def stop(self, *, grace: float, interrupt: bool = False,
             root_done: threading.Event | None = None, include_root: bool = True) -> bool:
        """Interrupt (optional) -> TERM -> KILL until nothing is left. True if KILL was needed."""
        steps = ([signal.SIGINT] if interrupt else []) + [signal.SIGTERM]
        for sig in steps:
            self.signal(sig, include_root=include_root)
            if self._wait_gone(grace, root_done, include_root):
                self.reap()
                return False
        self.signal(signal.SIGKILL, include_root=include_root)
        self._wait_gone(max(grace, 5.0), root_done, include_root)
        self.reap()
        return True

    def _wait_gone(self, timeout: float, root_done: threading.Event | None,
                   include_root: bool) -> bool:
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            self.reap()
            root_gone = root_done is None or not include_root or root_done.is_set()
            if root_gone and not self.leftovers(include_root=False):
                return True
            if time.monotonic() >= deadline:
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


def _own_children() -> list[int]:
    if _FAST:
        return _children(os.getpid())
    try:
        return [c.pid for c in psutil.Process().children()]
    except psutil.Error:
        return []


def _children_now() -> frozenset[int]:
    return frozenset(_own_children())


def _is_zombie(pid: int) -> bool:
    if _PROC:
        stat = _read(f"/proc/{pid}/stat")
        return stat is not None and stat.rsplit(")", 1)[-1].split()[0] == "Z"
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def reap_orphans() -> int:
    """Reap zombie children that no Popen owns (orphans adopted as subreaper)."""
    reaped = 0
    for pid in _own_children():
        with _lock:
            if pid in _owned:
                continue
        if not _is_zombie(pid):
            continue
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
            reaped += bool(done)
        except ChildProcessError:
            continue
    return reaped
