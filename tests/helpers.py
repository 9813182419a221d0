"""Helpers for tests that run the fake engines in tests/fakes."""

from __future__ import annotations

import sys
from pathlib import Path

import psutil

FAKES = Path(__file__).resolve().parent / "fakes"


def fake(name: str, *args: str) -> list[str]:
    """argv running one fake engine with the interpreter running the tests."""
    return [sys.executable, str(FAKES / name), *args]


def alive(pid: int) -> bool:
    """True while pid is a running (not zombie) process."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def children() -> list[psutil.Process]:
    """Children of the test process that still exist, zombies included; not the
    guardian (processes/guardian.py), which bench starts once and keeps to its end."""
    from codesearch_bench.processes import guardian

    out = []
    for child in psutil.Process().children():
        if child.pid == guardian.pid():
            continue
        try:
            child.status()
        except psutil.NoSuchProcess:
            continue
        out.append(child)
    return out


def new_children(before: set[int]) -> list[tuple[int, str]]:
    """Children of the test process, zombies included, that were not in `before`.

    Tests compare against a snapshot because the test process is a child
    subreaper (process.py makes it one): an orphan of some unrelated subprocess
    may be waiting to be reaped, and that is not the test's doing.
    """
    out = []
    for child in children():
        if child.pid not in before:
            try:
                out.append((child.pid, child.status()))
            except psutil.NoSuchProcess:
                continue
    return out
