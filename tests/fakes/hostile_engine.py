"""A persistent (or one-shot) engine that attacks bench's process handling and protocol.

    hostile_engine.py [OPTIONS]                  persistent: JSON-lines requests on stdin
    hostile_engine.py --oneshot QUERY [OPTIONS]  one-shot: one answer on stdout

An honest answer names the mini corpus's gold file for the query (see
tests/minicorpus.py), so a shifted answer scores as a miss:
{"hits": [{"path": FILE, "start": 1, "end": 3}], "query": QUERY}.

Lifetime (what the process tests need to time their signals):
    --pidfile FILE        append this process's pid when it starts
    --signals FILE        record each SIGTERM/SIGINT as a line (TERM, INT), then exit
    --ignore-term         ... but keep running after recording it (only KILL stops it)
    --closing FILE        on EOF, create FILE: bench has started closing the engine
    --linger S            on EOF, sleep S seconds before exiting
    --hang-on N           on request N (1-based; the one-shot run is request 1), create
                          --marker FILE and sleep for an hour
    --marker FILE
    --setsid-child FILE   at start, fork a grandchild that calls setsid and sleeps; its pid
                          goes to FILE
    --double-fork-on-close FILE  on EOF, double-fork a setsid grandchild that sleeps
                          (its pid to FILE) and exit at once

Protocol (one request line in, one line out, unless told otherwise; matching a
word of the query, not a count, keeps a misbehaviour to one query across restarts):
    --echo-id             put the request's "id" in every answer
    --wrong-id            echo id + 1000
    --string-id           echo the id as a string
    --twice S             answer each request once more S seconds later
    --banner              print a line before the first answer
    --extra-line          print a second line after every answer
    --late WORD:S         answer a query containing WORD only after S seconds
    --out-of-order        before each answer, repeat the previous request's answer
    --partial-on WORD     on a query containing WORD write half a line and exit
    --no-read             never read stdin
    --slow-read S         wait S seconds before reading stdin at all
    --nested-id           hits carry an "id" of their own (not the request's)
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

GOLD = (("settings parsed", "pkg/config.py"), ("terminal cells", "pkg/cells.py"),
        ("retry", "pkg/retry.py"), ("writes settings", "pkg/config.py"))

args = sys.argv[1:]


def opt(name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a") as fh:
            fh.write(text + "\n")


def touch(path: str | None) -> None:
    if path:
        with open(path + ".tmp", "w"):
            pass
        os.replace(path + ".tmp", path)


def on_signal(signum: int, _frame: object) -> None:
    append(opt("--signals"), "TERM" if signum == signal.SIGTERM else "INT")
    if "--ignore-term" not in args:
        sys.exit(0)


def sleeper_grandchild(pidfile: str, *, double: bool) -> None:
    """Fork a grandchild that leaves the group (setsid) and sleeps; record its pid."""
    first = os.fork()
    if first == 0:
        os.setsid()
        if double:
            second = os.fork()
            if second:
                append(pidfile, str(second))
                os._exit(0)  # the middle process exits: the grandchild is orphaned
        else:
            append(pidfile, str(os.getpid()))
        time.sleep(3600)
        os._exit(0)
    if double:
        os.waitpid(first, 0)


def gold_file(query: str) -> str:
    for words, path in GOLD:
        if words in query:
            return path
    return "pkg/none.py"


def answer(request: dict[str, Any]) -> dict[str, Any]:
    query = str(request.get("query", ""))
    hit: dict[str, Any] = {"path": gold_file(query), "start": 1, "end": 3}
    if "--nested-id" in args:
        hit["id"] = "chunk-7"
    out: dict[str, Any] = {"hits": [hit], "query": query}
    if "id" in request:
        if "--echo-id" in args:
            out["id"] = request["id"]
        elif "--wrong-id" in args:
            out["id"] = request["id"] + 1000
        elif "--string-id" in args:
            out["id"] = str(request["id"])
    return out


def emit(obj: object) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def hang() -> None:
    touch(opt("--marker"))
    time.sleep(3600)


def close() -> None:
    touch(opt("--closing"))
    if pidfile := opt("--double-fork-on-close"):
        sleeper_grandchild(pidfile, double=True)
        return
    time.sleep(float(opt("--linger") or 0))


def serve() -> None:
    if "--no-read" in args:
        time.sleep(3600)
    time.sleep(float(opt("--slow-read") or 0))
    late_word, _, late_s = (opt("--late") or "").partition(":")
    previous: dict[str, Any] | None = None
    if "--banner" in args:
        emit({"banner": "hostile engine ready"})
    for count, line in enumerate(sys.stdin, start=1):
        request = json.loads(line)
        if str(count) == opt("--hang-on"):
            hang()
        query = str(request.get("query", ""))
        if (word := opt("--partial-on")) and word in query:
            sys.stdout.write('{"hits": [{"path": "pkg/con')
            sys.stdout.flush()
            os._exit(0)
        if late_word and late_word in query:
            time.sleep(float(late_s))
        out = answer(request)
        if "--out-of-order" in args and previous is not None:
            emit(previous)
        emit(out)
        if "--extra-line" in args:
            emit({"status": "done"})
        if delay := opt("--twice"):
            time.sleep(float(delay))
            emit(out)
        previous = out
    close()


def main() -> None:
    append(opt("--pidfile"), str(os.getpid()))
    if opt("--signals"):
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    if pidfile := opt("--setsid-child"):
        sleeper_grandchild(pidfile, double=False)
    if (pidfile := opt("--group-child")) and os.fork() == 0:
        append(pidfile, str(os.getpid()))  # stays in the engine's group
        time.sleep(3600)
        os._exit(0)
    if "--oneshot" in args:
        if opt("--hang-on") == "1":
            hang()
        emit(answer({"query": opt("--oneshot")}))
        return
    serve()


if __name__ == "__main__":
    main()
