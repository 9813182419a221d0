"""Pipes to and from an engine: drain its output under a cap, feed its stdin.

A pipe nobody reads fills up and blocks the engine; a pipe read without a cap
lets a runaway engine exhaust bench's memory. A `Sink` keeps only the head
(stdout: the answer) or the tail (stderr: the last words) of what is drained.
A one-shot command's pipes are drained by the caller's own selector loop
(process.py); `Capture` drains a pipe forever on a thread of its own, for a
persistent engine's stderr.
"""

from __future__ import annotations

import contextlib
import os
import threading

CHUNK = 1 << 16


class Sink:
    """What was read from one pipe, capped: its head or its tail."""

    def __init__(self, cap: int, keep: str) -> None:
        self.cap, self.keep = cap, keep
        self.buf = bytearray()
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        if self.keep == "head":
            room = self.cap - len(self.buf)
            if room > 0:
                self.buf += chunk[:room]
            if len(chunk) > max(room, 0):
                self.truncated = True
        else:
            self.buf += chunk
            if len(self.buf) > self.cap:
                del self.buf[: len(self.buf) - self.cap]
                self.truncated = True


class Capture(threading.Thread):
    """Drain a pipe forever on a thread; keep the head (or the tail) up to a cap."""

    def __init__(self, fd: int, cap: int, keep: str) -> None:
        super().__init__(daemon=True)
        self.fd = fd
        self.sink = Sink(cap, keep)

    @property
    def buf(self) -> bytearray:
        return self.sink.buf

    @property
    def truncated(self) -> bool:
        return self.sink.truncated

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, CHUNK):
                self.sink.add(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)
