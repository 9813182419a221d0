"""`bench compare --jobs N`: up to N cells at once, each in a worker process of its own.

Processes, not threads, because every guarantee bench gives about an engine's
processes rests on the engine being started by a main thread in a process
that runs one cell at a time:

- The death signal (PR_SET_PDEATHSIG) fires when the *thread* that forked the
  engine ends (processes/spawn.py), so engines started by worker threads would
  get none, and a `kill -9` of bench would leave them running. A worker's
  engines are started by its main thread; the worker itself dies with bench
  (die_with, armed by bench's main thread) and its engines die with it.
- Signals reach only the main thread: a worker thread could not be
  interrupted mid-query, nor shield its teardown (processes/signals.py). Each
  worker has a main thread with bench's own handlers, so a forwarded SIGINT
  stops its cell exactly as Ctrl-C stops `--jobs 1`, and a second one kills
  its engine trees at once.
- Orphans re-parent to the nearest subreaper. Each worker is one, so an
  orphan is adopted by the worker whose cell made it and reaper.Tree's
  "orphans since this tree started are this tree's" stays true; with threads
  every cell's orphans would reach the one bench and could not be told
  apart. An orphan that reaches bench itself comes only from a worker that
  died without stopping its cell, and is killed (reaper.kill_orphans).
- Scoring is Python: threads would share one interpreter lock.

A worker runs cells one after another (one at a time), so its start-up (about
half a second) and what a cell loads once, like the tokenizer, are paid once per
worker, not per cell.

The scheduling rule: the first cell in the plan's order whose keys (its
corpus) no running cell holds starts whenever fewer than N run; a cell's keys
are held until bench has journaled it (and rebuilt a tree its engine changed).
So two cells never share a corpus tree, a checkout or a state dir, and the
cells run in the plan's order as far as the corpora allow. Each finished cell
is handed to `finish` at once, in the order they finish, with the most cells
that ran at once while it ran (itself included).

Ctrl-C or SIGTERM: every worker gets SIGINT and stops its cell as bench would
(its engines stopped and reaped); bench waits for every worker, keeps the
cells that finished meanwhile, then raises KeyboardInterrupt. A further
signal is forwarded (the workers kill their engines at once); the one after
kills the workers, whose engines die with them.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Generic, TypeVar

from ..corpus.fingerprint import Fingerprint, verify
from ..processes import lifeline, procfs, reaper, signals
from ..results.schema import Failure
from .cell import Cell, Measured

T = TypeVar("T")
Job = tuple[Cell, Fingerprint]
HEADER = 8  # a frame: its length (8 bytes, big-endian), then a pickle
#: The worker's command: this package importable whatever sys.path bench had, and the
#: environment left as it is, since the engines inherit it.
_HOME = str(Path(__file__).resolve().parent.parent)
_MAIN = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from codesearch_bench.run.worker import main; sys.exit(main(sys.argv[2:]))")


def cpus() -> int:
    """The CPUs this process may run on (`--jobs auto`)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def frame(message: object) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(HEADER, "big") + data


class _Worker(Generic[T]):
    """One worker process: its pipes, the cell it runs now (None: idle), what it said.

    It runs cells one after another, each from a job file named on its stdin, so
    the start-up and what a cell loads once (the tokenizer's ranks) are paid once
    per worker, not once per cell.
    """

    def __init__(self) -> None:
        self.item: T | None = None
        self.keys: set[str] = set()
        self.job: Job | None = None
        self.job_file: Path | None = None
        self.beside = 1  # the most cells running at once while this one ran
        self.buf = bytearray()
        self.log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 -- closed in close()
        read, write = os.pipe()
        try:
            # Its own session: a Ctrl-C at the terminal reaches bench alone, which forwards
            # it once. Started from bench's main thread, so its death signal lasts.
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _MAIN, _HOME, str(write)],
                stdin=subprocess.PIPE, stdout=self.log, stderr=self.log,
                pass_fds=(write,), start_new_session=True,
                preexec_fn=lifeline.die_with(os.getpid()))
        except BaseException:
            os.close(read)
            self.log.close()
            raise
        finally:
            os.close(write)
        reaper.own(self.proc.pid)
        self.fd = read
        os.set_blocking(read, False)

    def give(self, item: T, keys: set[str], job: Job) -> None:
        """Start a cell: the job goes in a file, its name down the worker's stdin."""
        fd, name = tempfile.mkstemp(prefix="bench-cell-", suffix=".pickle")
        self.job_file = Path(name)
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(job, fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.item, self.keys, self.job, self.beside = item, keys, job, 1
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(frame(name))
            self.proc.stdin.flush()
        except OSError:
            pass  # the worker is gone: its pipe's end says so, and the cell fails there

    def take(self) -> tuple[bool, list[str], Measured | None]:
        """Read what the pipe holds: (at its end, the ticks it carried, a finished cell)."""
        ticks: list[str] = []
        finished: Measured | None = None
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return False, ticks, finished
            if not chunk:
                return True, ticks, finished
            self.buf += chunk
            for kind, body in self._messages():
                if kind == "tick":
                    ticks.append(str(body))
                elif kind == "done" and isinstance(body, Measured):
                    finished = body

    def _messages(self) -> Iterator[tuple[str, object]]:
        while len(self.buf) >= HEADER:
            size = int.from_bytes(self.buf[:HEADER], "big")
            if len(self.buf) < HEADER + size:
                return
            message = pickle.loads(bytes(self.buf[HEADER:HEADER + size]))
            del self.buf[:HEADER + size]
            yield message

    def idle(self) -> None:
        """The cell is over: the worker waits for the next one."""
        self.item, self.keys, self.job = None, set(), None
        if self.job_file is not None:
            self.job_file.unlink(missing_ok=True)
            self.job_file = None

    def signal(self, signum: int) -> None:
        if self.proc.returncode is None:  # not reaped: the pid is still the worker's
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signum)

    def dismiss(self) -> None:
        """No more cells: EOF on its stdin, and it exits."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def wait(self) -> None:
        """The pipe is at its end, so the worker is exiting: reap it."""
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # closed its pipe yet lives on: not ours to keep
            self.proc.kill()
            self.proc.wait()
        reaper.disown(self.proc.pid)

    def died(self) -> Measured:
        """The worker ended mid-cell: the cell failed; its tree is checked still."""
        assert self.job is not None
        cell, expected = self.job
        code = self.proc.returncode
        how = (f"was killed by signal {-code}" if code is not None and code < 0
               else f"exited with status {code}")
        self.log.seek(0)
        tail = self.log.read()[-8192:].decode("utf-8", errors="replace").rstrip()
        return Measured(
            rows=[], changes=verify(cell.tree, expected),
            failure=Failure(engine=cell.loaded.name, corpus=cell.corpus, stage="search",
                            message=f"the worker process running this cell {how} before it "
                            "finished", stderr_tail="\n".join(tail.splitlines()[-15:]) or None))

    def close(self) -> None:
        self.dismiss()
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.log.close()
        self.idle()


def run(items: Sequence[T], jobs: int, *, keys: Callable[[T], set[str]],
        skip: Callable[[T], bool], start: Callable[[T], Job],
        finish: Callable[[T, Measured, int], None],
        tick: Callable[[str], None]) -> None:
    """Run every item's cell in worker processes; see the module docstring.

    `skip(item)` is asked when the item's turn comes (a corpus whose tree could not
    be rebuilt); `start(item)` gives the cell and its tree's fingerprint as it must be
    found after; `finish(item, measured, beside)` keeps a finished cell.
    """
    lifeline.become_subreaper()  # a dead worker's orphans come here, to be killed
    preexisting = frozenset(procfs.own_children())
    waiting = list(items)
    workers: list[_Worker[T]] = []
    sel = selectors.DefaultSelector()

    def keep(worker: _Worker[T], result: Measured, stopping: bool) -> None:
        item, beside = worker.item, worker.beside
        worker.idle()
        assert item is not None
        finish(item, result, beside)
        if result.interrupted and not stopping:
            raise KeyboardInterrupt  # kept above: it finished before the signal

    def pump(keeping: bool = True, stopping: bool = False) -> None:
        for key, _ in sel.select(timeout=1.0):
            worker: _Worker[T] = key.data
            ended, ticks, result = worker.take()
            for message in ticks:
                tick(message)
            if result is not None and worker.item is not None and keeping:
                keep(worker, result, stopping)
            if not ended:
                continue
            sel.unregister(worker.fd)
            worker.wait()
            workers.remove(worker)
            reaper.kill_orphans(preexisting)
            # Stopping, a cell without a result was cut short: not finished, not kept.
            died = worker.died() if worker.item is not None and not stopping else None
            if died is not None and keeping:
                keep(worker, died, stopping)
            worker.close()

    try:
        while True:
            while True:
                waiting = [i for i in waiting if not skip(i)]
                busy = [w for w in workers if w.item is not None]
                if len(busy) >= jobs:
                    break
                held = set().union(*(w.keys for w in busy))
                item = next((i for i in waiting if not keys(i) & held), None)
                if item is None:
                    break
                waiting.remove(item)
                job = start(item)
                # Shielded: a signal waits until the worker is known, so it is stopped too.
                with signals.shielded():
                    worker = next((w for w in workers if w.item is None), None)
                    if worker is None:
                        worker = _Worker()
                        workers.append(worker)
                        sel.register(worker.fd, selectors.EVENT_READ, worker)
                    worker.give(item, keys(item), job)
                running = [w for w in workers if w.item is not None]
                for w in running:
                    w.beside = max(w.beside, len(running))
            if not waiting:
                for w in workers:
                    if w.item is None:
                        w.dismiss()  # no cell is left for it
            if not workers:
                return
            pump()
    except KeyboardInterrupt:
        _stop(workers, lambda: pump(stopping=True))
        raise
    except BaseException:
        # A failure of bench's own: stop every cell, keep none.
        _stop(workers, lambda: pump(keeping=False, stopping=True))
        raise
    finally:
        for worker in list(workers):  # only if stopping itself failed
            worker.signal(signal.SIGKILL)
            worker.wait()
            worker.close()
        sel.close()
        reaper.kill_orphans(preexisting)


def _stop(running: Sequence[_Worker[T]], pump: Callable[[], None]) -> None:
    """Interrupt every worker and wait for all; further signals hasten them, then kill."""
    count = 0

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal count
        count += 1
        for worker in running:
            worker.signal(signum if count < 2 else signal.SIGKILL)

    with signals.handling(forward):
        for worker in running:
            worker.signal(signal.SIGINT)  # an idle one exits; a busy one stops its cell
        while running:
            pump()
