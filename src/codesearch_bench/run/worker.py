"""The cells of `bench compare --jobs N`, in a process of their own (see jobs.py).

`main([FD])` (bench runs it with `python -c`): bench writes on stdin, one after
another, the names of job files -- a pickle of a cell and its tree's
fingerprint, removed once read -- and the worker runs each cell, sending on
the pipe FD length-prefixed pickles: ("tick", text) after each query, then
("done", Measured). EOF on stdin: no more cells. A cell runs in this
process's main thread exactly as `--jobs 1` runs it in bench's: engines started
with their death signal, teardown shielded, this process their subreaper, one
cell at a time. SIGINT and SIGTERM interrupt it as they interrupt bench
(signals.Interrupts, the handler bench itself uses); a cell cut short sends nothing,
and the worker exits 130.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..processes import signals
from . import jobs
from .cell import measure


def _send(fd: int, message: object) -> None:
    data = memoryview(jobs.frame(message))
    while data:
        data = data[os.write(fd, data):]


def _jobs(stdin: BinaryIO) -> Iterator[Path]:
    """The job files bench names, until EOF."""
    while len(head := stdin.read(jobs.HEADER)) == jobs.HEADER:
        body = stdin.read(int.from_bytes(head, "big"))
        yield Path(pickle.loads(body))


def main(argv: list[str]) -> int:
    fd = int(argv[0])
    with signals.handling(signals.Interrupts()):
        try:
            for job_file in _jobs(sys.stdin.buffer):
                with job_file.open("rb") as fh:
                    cell, expected = pickle.load(fh)
                job_file.unlink(missing_ok=True)
                result = measure(cell, expected, lambda text: _send(fd, ("tick", text)))
                # Shielded: a signal now waits until the finished cell has reached bench.
                with signals.shielded():
                    _send(fd, ("done", result))
        except KeyboardInterrupt:
            return 130
        finally:
            os.close(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
