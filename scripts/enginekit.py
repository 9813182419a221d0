"""The engine adapters' shared kit, stdlib only.

Every adapter in this folder starts with the same line, then imports the kit
and its siblings (querywords, chunking, mcpbridge_*) as plain modules:

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # scripts/: enginekit & co.

Python puts a script's folder on sys.path when it runs the script, but not
when a test loads the script by path, hence the line. Stdlib only, because
the adapters start under the interpreter that runs bench, and dense/semble
import their heavy libraries only after re-executing elsewhere.

    walk, read_text, texts, split_lines   a tree's files as text
    attach_text                           a hit's text, read from its lines
    emit, log, brief                      output and messages
    decode_request, Request, serve        bench's JSON-lines protocol, one loop
    command_line, add_query_arguments     the index/search/serve command line
    Interpreter                           re-exec into $X_PYTHON, once
    claim_stdout                          keep stray prints off the response channel
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeVar

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".bzr"})
MAX_FILE_BYTES = 1_000_000
BINARY_SNIFF = 8192  # a NUL byte this early means a binary file

Hit = dict[str, Any]  # {path, start, end, text, score, ...}: one line of JSON to bench
Opened = TypeVar("Opened")


# --- a tree's files ---------------------------------------------------------
def walk(root: str, skip_dirs: frozenset[str] = SKIP_DIRS) -> Iterator[str]:
    """Regular files under root, relative with /; no VCS folders, no symlinks.

    Sorted by name within a folder, a folder's own files before its subfolders'.
    """
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip_dirs)
        for name in sorted(files):
            full = os.path.join(folder, name)
            if os.path.islink(full) or not os.path.isfile(full):
                continue
            yield os.path.relpath(full, root).replace(os.sep, "/")


def read_text(path: str, max_bytes: int = MAX_FILE_BYTES) -> str | None:
    """The file as text (CRLF as LF), or None if it is too big or looks binary."""
    try:
        if os.path.getsize(path) > max_bytes:
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if b"\0" in data[:BINARY_SNIFF]:
        return None
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n")


def texts(root: str) -> Iterator[tuple[str, str]]:
    """(relative path, text) of every file walk() finds and read_text() can read."""
    for rel in walk(root):
        text = read_text(os.path.join(root, rel))
        if text is not None:
            yield rel, text


def split_lines(text: str) -> list[str]:
    """Lines split on LF only, without the empty one after a final newline.

    Only LF: a chunk's lines must be the lines bench counts. (attach_text reads
    with str.splitlines, which also splits on \\f, \\x1c and the like; each
    keeps the splitting it always had, so hits stay as they were.)
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def attach_text(root: str, hits: list[Hit]) -> None:
    """Clip each hit's end to its file and attach the lines start..end as its text."""
    cache: dict[str, list[str]] = {}
    for hit in hits:
        path = hit["path"]
        if path not in cache:
            try:
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
                    cache[path] = fh.read().splitlines()
            except OSError:
                cache[path] = []
        lines = cache[path]
        hit["end"] = max(hit["start"], min(hit["end"], len(lines)))
        hit["text"] = "\n".join(lines[hit["start"] - 1 : hit["end"]])


# --- output -----------------------------------------------------------------
def emit(document: object, out: TextIO | None = None) -> None:
    """One JSON document as one line, flushed: bench reads line by line."""
    out = out if out is not None else sys.stdout
    out.write(json.dumps(document) + "\n")
    out.flush()


def log(prog: str, message: str) -> None:
    print(f"{prog}: {message}", file=sys.stderr, flush=True)


def brief(text: str, limit: int = 300) -> str:
    """The text on one line, cut to at most limit characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def claim_stdout() -> TextIO:
    """The response channel, and file descriptor 1 pointed at stderr from now on.

    Whatever else prints (a library, a warning, native code writing to fd 1)
    then lands on stderr instead of in front of bench's next response line.
    """
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


# --- the JSON-lines protocol ------------------------------------------------
@dataclass(frozen=True)
class Request:
    """One search request as the adapters read it (bench also sends k, root, corpus)."""

    query: str
    n: int
    per_file: int
    state: str
    fields: Mapping[str, Any]


def decode_request(line: str | bytes) -> dict[str, Any]:
    """A request line as a JSON object; ValueError when it is not one."""
    request = json.loads(line)
    if not isinstance(request, dict):
        raise ValueError("a request is a JSON object")
    return request


def request_state(request: Mapping[str, Any], default_state: str | None) -> str:
    state = request.get("state") or default_state
    if not state:
        raise ValueError("request has no state and no --state was given")
    return str(state)


def serve(prog: str, default_state: str | None, open_state: Callable[[str], Opened],
          answer: Callable[[Opened, Request], list[Hit]], *,
          errors: tuple[type[BaseException], ...] = (),
          stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """One JSON request per line in, one JSON line out, until EOF.

    Each state is opened once (open_state) and kept. Every response echoes the
    request's `id` (see protocol/PROTOCOL.md). A request that cannot be
    answered (a malformed line, no index, or one of `errors`) gets
    {"error": ...} and no "hits", which bench records as a failed query; the
    loop goes on. Any other exception ends the adapter, and bench restarts it.
    """
    stdin = stdin if stdin is not None else sys.stdin
    stdout = stdout if stdout is not None else sys.stdout
    opened: dict[str, Opened] = {}
    for line in stdin:
        if not line.strip():
            continue
        echo: dict[str, Any] = {}
        try:
            fields = decode_request(line)
            if "id" in fields:
                # Echoed so bench can tell this answer from a late or stray line.
                echo = {"id": fields["id"]}
            state = request_state(fields, default_state)
            if state not in opened:
                opened[state] = open_state(state)
            request = Request(str(fields.get("query", "")), int(fields.get("n", 10)),
                              int(fields.get("per_file", 1)), state, fields)
            response: dict[str, Any] = {"hits": answer(opened[state], request)}
        except (ValueError, TypeError, *errors) as exc:
            log(prog, str(exc))
            response = {"error": str(exc)}
        emit({**echo, **response}, stdout)
    return 0


# --- the command line -------------------------------------------------------
def add_query_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("n", type=int)
    parser.add_argument("per_file", type=int)
    parser.add_argument("query")


def command_line(doc: str | None, commands: Mapping[str, str], *, search_root: bool = False,
                 version_help: str | None = None,
                 ) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The parser and its subcommand parsers, for adapters to add their own options.

        index ROOT STATE
        search [ROOT] STATE N PER_FILE QUERY
        serve [--state STATE]

    `commands` maps the subcommands wanted to their help. With version_help
    there is a --version flag and no subcommand is required.
    """
    parser = argparse.ArgumentParser(description=next(iter((doc or "").splitlines()), ""))
    if version_help is not None:
        parser.add_argument("--version", action="store_true", help=version_help)
    sub = parser.add_subparsers(dest="command", required=version_help is None)
    parsers: dict[str, argparse.ArgumentParser] = {}
    for name, help_text in commands.items():
        p = sub.add_parser(name, help=help_text)
        if name == "index":
            p.add_argument("root")
            p.add_argument("state")
        elif name == "search":
            if search_root:
                p.add_argument("root")
            p.add_argument("state")
            add_query_arguments(p)
        elif name == "serve":
            p.add_argument("--state", default=None, help="used when a request names none")
        else:
            raise ValueError(f"unknown subcommand {name!r}")
        parsers[name] = p
    return parser, parsers


# --- another interpreter ----------------------------------------------------
@dataclass(frozen=True)
class Interpreter:
    """The Python named by an environment variable, which holds an adapter's libraries."""

    variable: str  # e.g. DENSE_PYTHON
    mark: str  # set in the environment once re-executed, so it happens only once
    prog: str

    def maybe_reexec(self, script: str, argv: Sequence[str]) -> None:
        """Run script under $variable (once) when that is set."""
        target = os.environ.get(self.variable)
        if not target or os.environ.get(self.mark):
            return
        os.environ[self.mark] = "1"
        try:
            os.execv(target, [target, os.path.abspath(script), *argv])
        except OSError as exc:
            sys.exit(f"{self.prog}: cannot run {self.variable}={target}: {exc.strerror}")

    def hint(self, what: str) -> str:
        """For an ImportError: name the variable, or the interpreter it already named."""
        if not os.environ.get(self.mark):
            return f" (set {self.variable} to a Python that has {what})"
        return f" ({self.variable}={os.environ.get(self.variable)})"
