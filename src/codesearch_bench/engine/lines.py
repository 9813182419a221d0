"""A persistent engine's stdout as lines, its stdin written under a deadline.

Reading happens in the thread that awaits the answer (select with the
request's deadline): a thread hand-off per response would dominate the cost
of a fast engine. Lines past the cap become OVERSIZE; a half line at EOF is
handed back as Partial so the caller can say the engine died mid-line.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import time
from dataclasses import dataclass

EOF = object()
OVERSIZE = object()


@dataclass(frozen=True)
class Partial:
    """What was left of a line when the engine closed its stdout."""

    data: bytes


Item = bytes | Partial | object  # a line, a Partial, EOF or OVERSIZE


class LineReader:
    """Split the engine's stdout into lines, read in the caller's thread."""

    def __init__(self, fd: int, max_line: int) -> None:
        self.fd, self.max_line = fd, max_line
        self.buf = bytearray()
        self.skipping = False
        self.eof = False

    def _line(self) -> object | None:
        nl = self.buf.find(b"\n")
        if nl < 0:
            if len(self.buf) > self.max_line:
                self.buf.clear()
                self.skipping = True
            return None
        line = bytes(self.buf[:nl])
        del self.buf[: nl + 1]
        oversize = self.skipping or len(line) > self.max_line
        self.skipping = False
        return OVERSIZE if oversize else line

    def _fill(self, timeout: float) -> bool:
        """Read what is there within timeout; False when nothing came."""
        if self.eof:
            return False
        try:
            ready, _, _ = select.select([self.fd], [], [], max(timeout, 0.0))
            if not ready:
                return False
            chunk = os.read(self.fd, 1 << 16)
        except (OSError, ValueError):
            chunk = b""
        if not chunk:
            self.eof = True
            return False
        self.buf += chunk
        return True

    def get(self, timeout: float) -> Item:
        """The next line, OVERSIZE, a Partial or EOF; raises queue.Empty at the timeout."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._line()
            if line is not None:
                return line
            if self.eof:
                if self.buf and not self.skipping:
                    rest = bytes(self.buf)
                    self.buf.clear()
                    return Partial(rest)
                return EOF
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise queue.Empty
            self._fill(remaining)

    def stale(self) -> list[object]:
        """The complete lines (or OVERSIZE markers) already there, unasked; consumed."""
        while self._fill(0):
            pass
        out = []
        while (line := self._line()) is not None:
            out.append(line)
        return out

    def rest(self, timeout: float) -> int:
        """Count every line (a trailing half line too) until EOF or the timeout."""
        deadline = time.monotonic() + timeout
        count = 0
        while True:
            try:
                item = self.get(max(deadline - time.monotonic(), 0.0))
            except queue.Empty:
                return count
            if item is EOF:
                return count
            count += 1

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def write_all(fd: int, data: bytes, deadline: float) -> None:
    """Write everything to non-blocking `fd` by `deadline` (monotonic), or raise
    TimeoutError: the other end stopped reading."""
    # The fd is non-blocking: write first, and wait only when the pipe is full, so a
    # request that fits (nearly all) costs one system call, not two.
    view = memoryview(data)
    while view:
        with contextlib.suppress(BlockingIOError):
            view = view[os.write(fd, view):]
        if not view:
            return
        _, ready, _ = select.select([], [fd], [], max(deadline - time.monotonic(), 0.0))
        if not ready:
            raise TimeoutError


NO_ID = object()


def echoed_id(line: object) -> object:
    """The top-level "id" of a JSON-object line, or NO_ID when it has none.

    The cheap byte test first: most lines of an engine that does not echo ids
    are never parsed here.
    """
    if not isinstance(line, bytes) or b'"id"' not in line:
        return NO_ID
    text = line.lstrip()
    if not text.startswith(b"{"):
        return NO_ID
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting deep enough to be an attack
        return NO_ID
    return data["id"] if isinstance(data, dict) and "id" in data else NO_ID


def answers(value: object, seq: int) -> bool:
    """An echoed id matches only as the same JSON integer (true is not 1, "1" is not 1)."""
    return type(value) is int and value == seq
