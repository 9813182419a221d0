"""A persistent engine: started once, one JSON request line in, one line out.

Each request has a deadline. An engine that dies or hangs fails that query
(recorded, never dropped) and is restarted before the next one; an engine
that fails again right after a restart is declared down and the remaining
queries fail fast with that reason instead of each waiting out its deadline.
stderr is drained all the time so a chatty engine cannot block on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import select
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import reaper
from .pipes import Capture
from .process import DEFAULT_GRACE, DEFAULT_MAX_STDERR, spawn

DEFAULT_MAX_LINE = 64 * 1024 * 1024
_EOF = object()
_OVERSIZE = object()


@dataclass(frozen=True)
class Reply:
    """One request's outcome: a response line or an error, never both."""

    line: bytes | None
    latency_s: float
    error: str | None = None
    restarted: bool = False


class _LineReader:
    """Split the engine's stdout into lines, read in the caller's thread.

    Reading where the answer is awaited (select with the request's deadline)
    avoids a thread hand-off per response, which would dominate the cost of a
    fast engine. Lines past the cap become an _OVERSIZE marker.
    """

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
        return _OVERSIZE if oversize else line

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

    def get(self, timeout: float) -> object:
        """The next line, _OVERSIZE, ("partial", bytes) or _EOF; raises queue.Empty."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._line()
            if line is not None:
                return line
            if self.eof:
                if self.buf and not self.skipping:
                    rest = bytes(self.buf)
                    self.buf.clear()
                    return ("partial", rest)
                return _EOF
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise queue.Empty
            self._fill(remaining)

    def stale(self) -> int:
        """Discard complete lines that arrived unasked; returns how many."""
        count = 0
        while self._fill(0):
            pass
        while self._line() is not None:
            count += 1
        return count

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _write_all(fd: int, data: bytes, timeout: float) -> None:
    """Write everything, waiting at most `timeout` for an engine that stops reading."""
    deadline = time.monotonic() + timeout
    view = memoryview(data)
    while view:
        _, ready, _ = select.select([], [fd], [], max(deadline - time.monotonic(), 0.0))
        if not ready:
            raise TimeoutError
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            continue
        view = view[written:]


class EngineSession:
    """Drive one persistent engine process for a whole run."""

    rss_method = ("max(tree RSS summed over /proc samples, per-process VmHWM at those "
                  "samples) over the session")

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        owner: str = "engine",
        requires: str | None = None,
        grace: float = DEFAULT_GRACE,
        max_line: int = DEFAULT_MAX_LINE,
        sample_interval: float = 0.05,
    ) -> None:
        self.argv = list(argv)
        self.cwd, self.env, self.owner, self.requires = cwd, env, owner, requires
        self.grace, self.max_line, self.sample_interval = grace, max_line, sample_interval
        self.restarts = 0
        self.down_reason: str | None = None
        self.peak_rss_bytes = 0
        self.unsolicited_lines = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._tree: reaper.Tree | None = None
        self._reader: _LineReader | None = None
        self._stderr: Capture | None = None
        self._needs_restart = False
        self._last_failed = False
        self._sampler_stop = threading.Event()
        self._sampler: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Start the engine; raises EngineUnavailable when it cannot be started."""
        proc = spawn(
            self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, owner=self.owner,
            requires=self.requires,
        )
        assert proc.stdout is not None and proc.stderr is not None
        self._reader = _LineReader(os.dup(proc.stdout.fileno()), self.max_line)
        self._stderr = Capture(os.dup(proc.stderr.fileno()), DEFAULT_MAX_STDERR, "tail")
        proc.stdout.close()
        proc.stderr.close()
        self._stderr.start()
        assert proc.stdin is not None
        os.set_blocking(proc.stdin.fileno(), False)  # writes wait with a deadline instead
        self._proc = proc
        self._tree = reaper.Tree(root_pid=proc.pid, pgid=proc.pid)
        self._sampler_stop.clear()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._sampler_stop.wait(self.sample_interval):
            tree = self._tree
            if tree is not None:
                with contextlib.suppress(Exception):
                    self.peak_rss_bytes = max(self.peak_rss_bytes, tree.sample())

    def stderr_tail(self, lines: int = 15) -> str:
        if self._stderr is None:
            return ""
        text = bytes(self._stderr.buf).decode("utf-8", errors="replace").rstrip()
        return "\n".join(text.splitlines()[-lines:])

    def _stop_process(self, *, polite: bool) -> None:
        proc, tree = self._proc, self._tree
        if proc is None or tree is None:
            return
        self._sampler_stop.set()
        if self._sampler is not None:
            self._sampler.join(timeout=5)
        with contextlib.suppress(Exception):
            self.peak_rss_bytes = max(self.peak_rss_bytes, tree.sample())
        if polite and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=self.grace)
        done = threading.Event()
        if proc.poll() is not None:
            done.set()
        else:
            def wait_then_mark() -> None:
                proc.wait()
                done.set()

            threading.Thread(target=wait_then_mark, daemon=True).start()
        tree.stop(grace=self.grace, root_done=done)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        reaper.disown(proc.pid)
        tree.reap()
        if self._reader is not None:
            self._reader.close()
        if self._stderr is not None:
            self._stderr.join(timeout=5)
        self._proc = None

    def close(self) -> None:
        """EOF on stdin, wait, then TERM and KILL whatever is left."""
        self._stop_process(polite=True)

    def __enter__(self) -> EngineSession:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc is not None else None

    # -- requests --------------------------------------------------------
    def request(self, payload: Mapping[str, object], timeout: float) -> Reply:
        """Send one request and wait for one line, at most `timeout` seconds."""
        if self.down_reason is not None:
            return Reply(None, 0.0, error=f"engine is down: {self.down_reason}")
        restarted = False
        if self._needs_restart or self._proc is None:
            self._stop_process(polite=False)
            self.start()
            self.restarts += 1
            self._needs_restart = False
            restarted = True
        reply = self._exchange(payload, timeout)
        if reply.error is None:
            self._last_failed = False
            return Reply(reply.line, reply.latency_s, restarted=restarted)
        if self._last_failed and restarted:
            self.down_reason = f"failed again right after a restart ({reply.error})"
            self._stop_process(polite=False)
        else:
            self._needs_restart = True
            self._stop_process(polite=False)
        self._last_failed = True
        return Reply(None, reply.latency_s, error=reply.error, restarted=restarted)

    def _exchange(self, payload: Mapping[str, object], timeout: float) -> Reply:
        proc, reader = self._proc, self._reader
        assert proc is not None and proc.stdin is not None and reader is not None
        # Lines nobody asked for are not the answer to this request.
        self.unsolicited_lines += reader.stale()
        data = (json.dumps(payload, ensure_ascii=False) + "\n").encode("utf-8")
        start = time.perf_counter()
        try:
            _write_all(proc.stdin.fileno(), data, timeout)
        except TimeoutError:
            return Reply(None, time.perf_counter() - start,
                         error=f"the engine did not read its request within {timeout:g}s; killed")
        except (BrokenPipeError, OSError, ValueError):
            return Reply(None, time.perf_counter() - start, error=self._died("before the request"))
        try:
            item = reader.get(timeout)
        except queue.Empty:
            return Reply(None, time.perf_counter() - start,
                         error=f"no response within {timeout:g}s; killed")
        latency = time.perf_counter() - start
        if item is _EOF:
            return Reply(None, latency, error=self._died("without answering"))
        if item is _OVERSIZE:
            return Reply(None, latency, error=f"response line longer than {self.max_line} bytes")
        if isinstance(item, tuple):
            return Reply(None, latency, error=self._died("mid-line (partial response)"))
        assert isinstance(item, bytes)
        return Reply(item, latency)

    def _died(self, when: str) -> str:
        proc = self._proc
        code = None
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = proc.wait(timeout=self.grace)
        if code is not None and self._stderr is not None:
            # Its last words may still be in the pipe: let the drain reach EOF (bounded,
            # since a leftover grandchild can hold stderr open).
            self._stderr.join(timeout=min(self.grace, 1.0))
        tail = self.stderr_tail(5)
        where = f"; stderr: {tail}" if tail else ""
        return f"engine exited {when} (status {code}){where}"
