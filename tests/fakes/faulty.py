"""A one-shot or persistent engine that misbehaves on purpose, for the fault suite.

    faulty.py MODE [QUERY]          one-shot: answers QUERY, misbehaving per MODE
    faulty.py --persistent MODE     persistent: JSON-lines requests on stdin

Good answers point at pkg/config.py lines 4-7 (the mini corpus in the tests).
Modes: ok, hang, crash-on-terminal, garbage, huge, nonutf8, zero, outside,
grandchild, die-after-2, never-answer, partial, sigint-parent (sends SIGINT to
its parent, bench, while $FAULTY_MARKER exists; records its pid in $FAULTY_PIDS).
Index mode: `faulty.py index-hang` sleeps forever.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

GOOD = {"hits": [{"path": "pkg/config.py", "start": 4, "end": 7, "text": "def load_settings"}]}


def record_pid() -> None:
    if path := os.environ.get("FAULTY_PIDS"):
        with open(path, "a") as fh:
            fh.write(f"{os.getpid()}\n")


def answer(mode: str, query: str, count: int) -> bytes | None:
    """The bytes to print for one query, or None to print nothing."""
    if mode == "hang":
        time.sleep(3600)
    if mode == "crash-on-terminal" and "terminal" in query:
        sys.stderr.write("faulty: segfault pretending\n")
        sys.exit(139)
    if mode == "garbage":
        return b"Traceback? no: this is not JSON at all\n"
    if mode == "huge":
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            sys.stdout.buffer.write(chunk)
        return b"\n"
    if mode == "nonutf8":
        return b'{"hits": [{"path": "pkg/config.py", "start": 4, "end": 7, "text": "\xff\xfe"}]}\n'
    if mode == "zero":
        return json.dumps({"hits": [{"path": "pkg/config.py", "start": 0, "end": 3}]}).encode()
    if mode == "outside":
        outside = os.environ.get("FAULTY_OUTSIDE", "/etc/passwd")
        hits = [{"path": "../../etc/passwd", "start": 1, "end": 5},
                {"path": outside, "start": 1, "end": 400},
                {"path": "pkg/config.py", "start": 4, "end": 7}]
        return json.dumps({"hits": hits}).encode()
    if mode == "grandchild":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                         start_new_session=True)
    if mode == "sigint-parent" and os.path.exists(os.environ.get("FAULTY_MARKER", "/nonexistent")):
        record_pid()
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(3600)
    return json.dumps(GOOD).encode()


def oneshot(mode: str, query: str) -> None:
    out = answer(mode, query, 0)
    if out is not None:
        sys.stdout.buffer.write(out.rstrip(b"\n") + b"\n")


def persistent(mode: str) -> None:
    record_pid()
    count = 0
    for line in sys.stdin:
        count += 1
        query = json.loads(line)["query"]
        if mode == "never-answer":
            continue
        if mode == "die-after-2" and count > 2:
            sys.exit(1)
        if mode == "partial":
            sys.stdout.write('{"hits": [{"path": "pkg/con')
            sys.stdout.flush()
            sys.exit(0)
        out = answer(mode, query, count)
        if out is not None:
            sys.stdout.buffer.write(out.rstrip(b"\n") + b"\n")
            sys.stdout.flush()


if __name__ == "__main__":
    if sys.argv[1] == "index-hang":
        time.sleep(3600)
    elif sys.argv[1] == "--persistent":
        persistent(sys.argv[2])
    else:
        oneshot(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "")
