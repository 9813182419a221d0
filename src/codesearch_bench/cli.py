"""The `bench` command line: argument parsing and the error boundary.

Commands raise; only `main` turns errors into messages and exit codes, so the
whole CLI can be driven from tests through `main([...])`.

Exit codes: 0 success; 1 an engine failed (the run still finished); 2 bad
usage or a bad engine spec; 3 a corpus or query-set problem; 4 an engine that
cannot be started; 130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from . import __version__
from .errors import BenchError, UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def _add_probe(sub: argparse._SubParsersAction[_Parser]) -> None:
    p = sub.add_parser(
        "probe", help="run one query through one engine and show what the adapter made of it",
        description="Index (into its own state dir), run one query, and print the rendered "
        "commands, raw output, parsed hits with normalized paths and spans, and the "
        "expected answer. Run it before any comparison.",
    )
    p.add_argument("--engine", required=True, type=Path, help="engine spec (JSON)")
    p.add_argument("--root", type=Path, required=True, help="directory to search")
    p.add_argument("--text", required=True, help="the query text")
    p.add_argument("--expect", action="append", default=[], metavar="PATH[:START-END]",
                   help="expected answer, relative to the root (repeatable)")
    p.add_argument("--work", type=Path, default=None,
                   help="work dir (default $BENCH_WORK or ./.bench); probe state goes in "
                   "<work>/probe")
    p.add_argument("--k", type=int, default=20, help="cutoff (default 20); n = k x candidates")
    p.add_argument("--per-file", type=int, default=None,
                   help="chunks per file (default: the spec's first setting)")
    p.add_argument("--reindex", action="store_true", help="clear the probe state first")


def build_parser() -> _Parser:
    parser = _Parser(
        prog="bench",
        description="Score code-search tools against each other on pinned open-source code.",
    )
    parser.add_argument("--version", action="version", version=f"codesearch-bench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_probe(sub)
    return parser


def go_style(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """Accept the Go tool's single-dash long flags: `-engine x` -> `--engine x`."""
    longs: set[str] = set()
    shorts: set[str] = set()
    for action in _all_actions(parser):
        for opt in action.option_strings:
            (longs if opt.startswith("--") else shorts).add(opt)
    out = []
    for arg in argv:
        if arg.startswith("-") and not arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if "-" + name in longs and name not in shorts:
                arg = "-" + name + eq + value
        out.append(arg)
    return out


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                actions.extend(_all_actions(child))
    return actions


def run(argv: Sequence[str], console: Console, err: Console) -> int:
    """Parse and dispatch; raises BenchError."""
    parser = build_parser()
    args = parser.parse_args(go_style(argv, parser))
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "probe":
        from .commands.probe import parse_expect, probe
        from .report import render_probe
        from .workdir import default_work

        report = probe(
            args.engine, root=args.root, query=args.text,
            work=args.work or default_work(),
            expected=[parse_expect(e) for e in args.expect],
            k=args.k, per_file=args.per_file, reindex=args.reindex,
        )
        render_probe(console, report)
        return 1 if report.error else 0
    raise UsageError(f"unknown command {args.command!r}")


def main(argv: Sequence[str] | None = None) -> int:
    console = Console()
    err = Console(stderr=True)
    try:
        return run(sys.argv[1:] if argv is None else argv, console, err)
    except BenchError as exc:
        err.print(f"[bold red]error:[/] {exc.message}", highlight=False, markup=True,
                  soft_wrap=True)
        if exc.hint:
            err.print(f"[dim]hint: {exc.hint}[/]", highlight=False, soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        err.print("[bold red]interrupted[/]: engines stopped and reaped")
        return 130
    except SystemExit as exc:  # --help and --version exit through argparse
        return int(exc.code or 0)


if __name__ == "__main__":
    sys.exit(main())
