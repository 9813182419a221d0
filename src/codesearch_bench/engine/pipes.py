"""Pipes to and from an engine: drain its output under a cap, feed its stdin.

A pipe nobody reads fills up and blocks the engine; a pipe read without a cap
lets a runaway engine exhaust bench's memory. `Capture` drains forever and
keeps only the head (stdout: the answer) or the tail (stderr: the last words).
"""

from __future__ import annotations

import contextlib
import os
import threading


class Capture(threading.Thread):
    """Drain a pipe forever; keep the head (or the tail) up to a cap."""

    def __init__(self, fd: int, cap: int, keep: str) -> None:
        super().__init__(daemon=True)
        self.fd, self.cap, self.keep = fd, cap, keep
        self.buf = bytearray()
        self.truncated = False

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 1 << 16):
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
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)


def feed(pipe: object, data: bytes) -> None:
    try:
        pipe.write(data)  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError):
        pass
    finally:
        with contextlib.suppress(OSError):
            pipe.close()  # type: ignore[attr-defined]
