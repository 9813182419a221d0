"""A persistent engine: started once, one JSON request line in, one line out.

Each request has a deadline, covering both writing the request and waiting
for its answer. An engine that dies or hangs fails that query (recorded,
never dropped) and is restarted before the next one, so a late answer dies
with the process that was too slow to give it; an engine that fails again
right after a restart is declared down and the remaining queries fail fast
with that reason instead of each waiting out its deadline. stderr is drained
all the time so a chatty engine cannot block on it.

Attribution (protocol/PROTOCOL.md, "Persistent engines"): every request
carries a sequence number `id`, never reused within a session. A response
line whose top-level `id` is another number is not this request's answer:
it is discarded, counted, and the wait goes on. Once an engine has echoed an
id, a line without one is discarded the same way. Lines already waiting when
a request is about to be sent, and lines printed after the last request
(counted at close), are unsolicited too. Each Reply says how many lines it
discarded; `unsolicited_lines` is the session's total, complete after close().
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import BenchError
from ..processes import reaper, signals
from ..processes.command import DEFAULT_GRACE, DEFAULT_MAX_STDERR
from ..processes.pipes import Capture
from ..processes.spawn import spawn
from .lines import EOF, NO_ID, OVERSIZE, LineReader, Partial, answers, echoed_id, write_all

DEFAULT_MAX_LINE = 64 * 1024 * 1024
#: After EOF on its stdin, how long an engine may take to exit by itself before TERM.
EOF_WINDOW = 0.2


@dataclass(frozen=True)
class Reply:
    """One request's outcome: a response line or an error, never both."""

    line: bytes | None
    latency_s: float
    error: str | None = None
    restarted: bool = False
    #: the sequence number sent with the request (None: nothing was sent, the engine is down)
    id: int | None = None
    #: the line carried this request's id: attributed by the engine itself, not by order
    verified: bool = False
    #: lines discarded while serving this request: already waiting before it was sent,
    #: or carrying another id (or none, from an engine that echoes ids)
    unsolicited: int = 0


def _plural(n: int, what: str) -> str:
    return f"{n} line{'s' if n != 1 else ''} {what}"


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
        #: every line discarded over the session, those after the last request included
        self.unsolicited_lines = 0
        #: the engine has echoed an id at least once: from then on every answer must
        self.echoes_ids = False
        self._seq = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._tree: reaper.Tree | None = None
        self._reader: LineReader | None = None
        self._stderr: Capture | None = None
        self._needs_restart = False
        self._last_failed = False
        self._sampler_stop = threading.Event()
        self._sampler: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------
    def start(self) -> None:
        """Start the engine; raises EngineUnavailable when it cannot be started."""
        try:
            with signals.shielded():
                self._start()
        except BaseException:
            # An interrupt held during the start arrives here, with the engine in our charge.
            self._stop_process(polite=False)
            raise

    def _start(self) -> None:
        proc = spawn(
            self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, owner=self.owner,
            requires=self.requires,
        )
        self._proc = proc
        self._tree = reaper.Tree(root_pid=proc.pid, pgid=proc.pid)
        signals.track(self._tree)
        assert proc.stdout is not None and proc.stderr is not None
        self._reader = LineReader(os.dup(proc.stdout.fileno()), self.max_line)
        self._stderr = Capture(os.dup(proc.stderr.fileno()), DEFAULT_MAX_STDERR, "tail")
        proc.stdout.close()
        proc.stderr.close()
        self._stderr.start()
        assert proc.stdin is not None
        os.set_blocking(proc.stdin.fileno(), False)  # writes wait with a deadline instead
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
        """EOF (if polite) and a short window to exit, then TERM, grace, KILL; reap all."""
        proc, tree = self._proc, self._tree
        if proc is None or tree is None:
            return
        with signals.shielded():
            self._sampler_stop.set()
            if self._sampler is not None:
                self._sampler.join(timeout=5)
            with contextlib.suppress(Exception):
                self.peak_rss_bytes = max(self.peak_rss_bytes, tree.sample())
            done = threading.Event()

            def wait_then_mark() -> None:
                proc.wait()
                done.set()

            threading.Thread(target=wait_then_mark, daemon=True).start()
            if polite and proc.stdin is not None:
                self._close_politely(proc.stdin)
            tree.stop(grace=self.grace, root_done=done)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            reaper.disown(proc.pid)
            tree.reap()
            signals.untrack(tree)
            if self._reader is not None:
                self._reader.close()
            if self._stderr is not None:
                self._stderr.join(timeout=5)
            self._proc = None

    def _close_politely(self, stdin: object) -> None:
        """EOF, then count what it still prints while it may exit by itself."""
        reader = self._reader
        if reader is not None:
            self.unsolicited_lines += len(reader.stale())
        with contextlib.suppress(OSError):
            stdin.close()  # type: ignore[attr-defined]
        if reader is not None:
            # TERM comes after this short window, not after the grace period: the grace
            # is what a signalled engine gets, not a wait with nothing sent.
            self.unsolicited_lines += reader.rest(min(EOF_WINDOW, self.grace))

    def close(self) -> None:
        """EOF on stdin, a short window, then TERM and KILL whatever is left."""
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
        """Send one request and wait for its line, at most `timeout` seconds in all."""
        if self.down_reason is not None:
            return Reply(None, 0.0, error=f"engine is down: {self.down_reason}")
        self._seq += 1
        seq = self._seq
        try:
            data = (json.dumps({"id": seq, **payload}, ensure_ascii=False) + "\n").encode()
        except (TypeError, ValueError) as exc:  # UnicodeEncodeError: surrogates, not text
            # Nothing was sent: the engine is as good as before, only this request fails.
            return Reply(None, 0.0, error=f"the request cannot be sent as JSON: {exc}", id=seq)
        restarted = False
        if self._needs_restart or self._proc is None:
            self._stop_process(polite=False)
            try:
                self.start()
            except BenchError as exc:
                # The cell keeps what it has; the remaining queries fail with this reason.
                self.down_reason = f"could not be restarted: {exc.message}"
                return Reply(None, 0.0, error=f"engine is down: {self.down_reason}", id=seq)
            self.restarts += 1
            self._needs_restart = False
            restarted = True
        reply = self._exchange(seq, data, timeout)
        if restarted:
            reply = dataclasses.replace(reply, restarted=True)
        if reply.error is None:
            self._last_failed = False
            return reply
        if self._last_failed and restarted:
            self.down_reason = f"failed again right after a restart ({reply.error})"
        else:
            self._needs_restart = True
        self._stop_process(polite=False)
        self._last_failed = True
        return reply

    def _exchange(self, seq: int, data: bytes, timeout: float) -> Reply:
        proc, reader = self._proc, self._reader
        assert proc is not None and proc.stdin is not None and reader is not None
        stale = reader.stale()
        self.echoes_ids = self.echoes_ids or any(echoed_id(x) is not NO_ID for x in stale)
        other_id = no_id = 0

        def reply(line: bytes | None, error: str | None = None, verified: bool = False) -> Reply:
            discarded = len(stale) + other_id + no_id
            self.unsolicited_lines += discarded
            if error is not None and (other_id or no_id):
                parts = [_plural(other_id, "with another id")] if other_id else []
                parts += [_plural(no_id, "without an id")] if no_id else []
                error += f" ({', '.join(parts)} discarded)"
            return Reply(line, time.perf_counter() - start, error=error, id=seq,
                         verified=verified, unsolicited=discarded)

        start = time.perf_counter()
        deadline = time.monotonic() + timeout
        try:
            write_all(proc.stdin.fileno(), data, deadline)
        except TimeoutError:
            return reply(None, f"the engine did not read its request within {timeout:g}s; killed")
        except (BrokenPipeError, OSError, ValueError):
            return reply(None, self._died("before the request"))
        while True:
            try:
                item = reader.get(deadline - time.monotonic())
            except queue.Empty:
                return reply(None, f"no response within {timeout:g}s; killed")
            if item is EOF:
                return reply(None, self._died("without answering"))
            if item is OVERSIZE:
                return reply(None, f"response line longer than {self.max_line} bytes")
            if isinstance(item, Partial):
                return reply(None, self._died("mid-line (partial response)"))
            assert isinstance(item, bytes)
            value = echoed_id(item)
            if value is not NO_ID:
                self.echoes_ids = True
                if answers(value, seq):
                    return reply(item, verified=True)
                other_id += 1
            elif self.echoes_ids and item.lstrip().startswith(b"{"):
                no_id += 1  # an object that could have echoed the id and did not: a stray
            else:
                # No ids, or a line that is not a JSON object (a plain-text error): it can
                # only fail this query, never pass for another query's answer.
                return reply(item)

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
