"""Teardown that a signal cannot cut short, and a second signal that means "now".

bench turns SIGINT and SIGTERM into KeyboardInterrupt, which can land on any
line -- including in the middle of stopping an engine, where it would skip
the TERM, the KILL or the reaping and leave the engine running while bench
says it stopped everything. So teardown (and the few lines between a spawn
and its bookkeeping) runs `shielded()`: a signal arriving there is held until
the block ends, then delivered exactly as it would have been (the handler in
place before, or the default action).

A second signal while one is held -- or any signal while bench is already
tearing down because of an interrupt -- asks for haste: every tracked engine
tree gets SIGKILL at once, whole group and escaped members; the teardown then
finishes (its waits end as soon as the processes are gone) and reaps. A signal
never makes bench skip the reaping.

Python runs signal handlers in the main thread only, so only the main thread
shields; in any other thread a KeyboardInterrupt cannot be raised anyway.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType
from typing import Any

from .reaper import Tree

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_tracked: dict[int, Tree] = {}
Handler = Callable[[int, FrameType | None], Any] | int | None


def track(tree: Tree) -> None:
    """A tree with live processes: what a second signal kills at once."""
    _tracked[id(tree)] = tree


def untrack(tree: Tree) -> None:
    _tracked.pop(id(tree), None)


def kill_all() -> None:
    for tree in list(_tracked.values()):
        # Runs inside a signal handler: an exception here would surface on a random line.
        with contextlib.suppress(Exception):
            tree.kill_now()


class _Shield:
    """The state of the main thread's shielded blocks (they nest; the outermost rules)."""

    def __init__(self) -> None:
        self.depth = 0
        self.held: list[int] = []
        self.urgent = False
        self.saved: dict[int, Handler] = {}

    def hold(self, signum: int, _frame: FrameType | None) -> None:
        if self.held or self.urgent:
            kill_all()
        self.held.append(signum)

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if self.depth == 0:
            self.held = []
            # Already unwinding an interrupt: this teardown is the first signal's, so the
            # next one is the second.
            self.urgent = isinstance(sys.exc_info()[1], KeyboardInterrupt)
            for sig in _SIGNALS:
                self.saved[sig] = signal.signal(sig, self.hold)
        self.depth += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self.depth -= 1
        if self.depth:
            return
        for sig in _SIGNALS:
            previous = self.saved.pop(sig)
            # None: a handler set outside Python, which cannot be put back; the default is.
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        held, self.held = self.held, []
        if held:
            _deliver(held[0])


def _deliver(signum: int) -> None:
    """What the signal would have done had it not been held."""
    handler = signal.getsignal(signum)
    if callable(handler):
        handler(signum, None)
    elif handler != signal.SIG_IGN:
        signal.raise_signal(signum)  # the default action, with the handler just restored


_shield = _Shield()


def shielded() -> _Shield:
    """`with shielded():` -- SIGINT/SIGTERM wait for the block; a second one kills now."""
    return _shield


class Interrupts:
    """SIGINT and SIGTERM as one KeyboardInterrupt, raised once.

    The first signal interrupts. A signal during an engine's teardown never
    reaches this handler: `shielded` holds it there (and a second one
    kills the engines at once), then delivers the first through here. Once the
    interrupt is raised every engine is stopped and reaped on the way out, and
    what is left is writing the partial result and the last message: a second
    signal outside teardown is ignored so it cannot cut that short (or print a
    traceback); a third restores the default action, for a bench that hangs.
    """

    def __init__(self) -> None:
        self.count = 0

    def done(self) -> None:
        """The command has finished (its result written): what is left is the exit, so a
        signal now is ignored like a second one, and a further one still ends a hang."""
        self.count = max(self.count, 1)

    def __call__(self, signum: int, _frame: object) -> None:
        self.count += 1
        if self.count == 1:
            raise KeyboardInterrupt
        if self.count >= 3:
            signal.signal(signum, signal.SIG_DFL)
            signal.raise_signal(signum)


@contextlib.contextmanager
def handling(handler: Handler, *, restore: bool = True) -> Iterator[None]:
    """`handler` for SIGINT and SIGTERM inside the block, what was there before after it.

    Installed from the main thread only (Python allows no other); elsewhere the block
    runs with the handlers as they are. Every place that takes over bench's stop signals
    goes through here, so each is handed back however the block ends -- unless
    `restore` is False: the block is the whole program (bench's own main), and the
    handler stays for the exit that follows, where Python's default would end a process
    that finished its work by the signal (or with a traceback).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in _SIGNALS}
    try:
        yield
    finally:
        if restore:
            for sig, before in previous.items():
                signal.signal(sig, before if before is not None else signal.SIG_DFL)
