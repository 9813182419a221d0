"""What the kernel says about a process: identity, children, memory, zombie state.

Read from /proc on Linux, one small file per question, because a full psutil
walk per sample would cost more than a fast engine's query; psutil elsewhere.
Every reader returns a neutral value for a pid that is gone, never raises.
"""

from __future__ import annotations

import os

import psutil

PROC = os.path.isdir("/proc/self/task")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _proc_children_supported() -> bool:
    pid = os.getpid()
    return os.path.exists(f"/proc/{pid}/task/{pid}/children")


#: /proc/PID/task/*/children exists (a kernel option): child lists without a full scan.
FAST = PROC and _proc_children_supported()


def read(path: str) -> str | None:
    # Raw reads: a text file object per read cost more than the read itself, and a
    # one-shot query reads about ten of these files.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = os.read(fd, 1 << 16)
        while len(data) % (1 << 16) == 0 and data:
            more = os.read(fd, 1 << 16)
            if not more:
                break
            data += more
        return data.decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def identity(pid: int) -> str | None:
    """What makes a pid this process and not a later one reusing the number."""
    if PROC:
        stat = read(f"/proc/{pid}/stat")
        if stat is None:
            return None
        return stat.rsplit(")", 1)[-1].split()[19]  # starttime, in clock ticks since boot
    try:
        return repr(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


def children(pid: int) -> list[int]:
    """Direct children from /proc/PID/task/*/children: far cheaper than a /proc scan."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for tid in tids:
        data = read(f"/proc/{pid}/task/{tid}/children")
        if data:
            out.extend(int(x) for x in data.split())
    return out


def own_children() -> list[int]:
    if FAST:
        return children(os.getpid())
    try:
        return [c.pid for c in psutil.Process().children()]
    except psutil.Error:
        return []


def descendants(pid: int) -> list[int]:
    """pid's live descendants, read-only (a signal handler may call this mid-walk)."""
    if not FAST:
        try:
            return [c.pid for c in psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            return []
    found: list[int] = []
    stack = children(pid)
    while stack:
        kid = stack.pop()
        if kid not in found:
            found.append(kid)
            stack.extend(children(kid))
    return found


def hwm(pid: int) -> int | None:
    """VmHWM: the process's own peak RSS since its last exec, in bytes (Linux)."""
    status = read(f"/proc/{pid}/status")
    if not status:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return None


def memory(pid: int) -> tuple[int, int | None]:
    """(current RSS, own peak RSS or None) in bytes; a zombie or a gone pid is (0, None)."""
    if PROC:
        statm = read(f"/proc/{pid}/statm")
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


def is_zombie(pid: int) -> bool:
    if PROC:
        stat = read(f"/proc/{pid}/stat")
        return stat is not None and stat.rsplit(")", 1)[-1].split()[0] == "Z"
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None
