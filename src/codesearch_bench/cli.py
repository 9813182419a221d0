"""The `bench` command line: argument parsing and the error boundary.

Commands raise; only `main` turns errors into messages and exit codes, so the
whole CLI can be driven from tests through `main([...])`.

Exit codes: 0 success; 1 an engine failed (the run still finished); 2 bad
usage or a bad engine spec; 3 a corpus or query-set problem; 4 an engine that
cannot be started; 130 interrupted.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
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
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--root", type=Path, help="a directory to search (ad hoc)")
    where.add_argument("--corpus", help="a set-up corpus from corpora.toml")
    p.add_argument("--query", metavar="ID", help="a query id from the corpus's query set")
    p.add_argument("--text", help="the query text (with --root; overrides --query's text)")
    p.add_argument("--expect", action="append", default=[],
                   metavar="PATH[:SYMBOL|:START-END]",
                   help="expected answer, relative to the tree (repeatable)")
    _corpus_flags(p)
    p.add_argument("--work", type=Path, default=None,
                   help="work dir (default $BENCH_WORK or ./.bench); probe state goes in "
                   "<work>/probe")
    p.add_argument("--k", type=int, default=20, help="cutoff (default 20); n = k x candidates")
    p.add_argument("--per-file", type=int, default=None,
                   help="chunks per file (default: the spec's first setting)")
    p.add_argument("--reindex", action="store_true", help="clear the probe state first")


def _corpus_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--corpora-file", type=Path, default=None,
                   help="corpora.toml (default: ./corpora.toml, else the project's)")
    p.add_argument("--corpora-root", type=Path, default=None,
                   help="where corpora are set up (default $BENCH_CORPORA or <work>/corpora)")


def _add_corpus_command(sub: argparse._SubParsersAction[_Parser], name: str,
                        help_text: str) -> None:
    """setup and validate take the same flags: which corpora, and where they live."""
    p = sub.add_parser(name, help=help_text)
    p.add_argument("--corpus", default=None,
                   help="NAME[,NAME...] or all (default: the default corpora)")
    p.add_argument("--work", type=Path, default=None, help="work dir (default ./.bench)")
    _corpus_flags(p)


def _add_compare(sub: argparse._SubParsersAction[_Parser]) -> None:
    p = sub.add_parser(
        "compare", help="run engines over corpora and score them the same way",
        description="Run every engine on every corpus (the shipped default engines on the "
        "default corpora when none are given), score them with one protocol, print a table "
        "per corpus and the paired comparisons, and optionally write the result JSON.",
    )
    p.add_argument("--engine", action="append", default=[], type=Path,
                   help="engine spec (repeatable; default: engines/default-engines.txt)")
    p.add_argument("--corpus", default=None,
                   help="NAME[,NAME...] or all (default: the default corpora)")
    p.add_argument("--work", type=Path, default=None,
                   help="work dir (default $BENCH_WORK or ./.bench); state in <work>/state")
    p.add_argument("--reindex", action="store_true",
                   help="clear each engine's state dir and rebuild its index")
    p.add_argument("--json", type=Path, default=None, metavar="OUT",
                   help="write the result JSON here (atomically)")
    p.add_argument("--cutoffs", default="5,10,20", help="cutoffs k (default 5,10,20)")
    p.add_argument("--limit", type=int, default=None, help="only the first N queries per corpus")
    p.add_argument("--resume", type=Path, default=None, metavar="OUT.json",
                   help="skip the cells a previous (interrupted) run already finished; "
                   "writes to --json, or back to this file")
    p.add_argument("--shard", default=None, metavar="I/N",
                   help="run only shard I of N of the (engine x corpus) cells; merge the shards "
                   "with `bench report --merge`")
    _corpus_flags(p)


def _add_report(sub: argparse._SubParsersAction[_Parser]) -> None:
    p = sub.add_parser(
        "report", help="render saved result files (table, Markdown, JSON, plots); merge shards",
        description="Render one or more result files written by `bench compare --json`, "
        "never re-running an engine. Several files are shown side by side only when they "
        "share the protocol version, cutoffs, corpus pins and query sets. With --merge, shards "
        "of one comparison are combined into one result file.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument("--format", choices=["table", "md", "json", "png"], default="table")
    p.add_argument("--out", type=Path, default=None,
                   help="output file (md/json) or directory (png; default ./report)")
    p.add_argument("--merge", action="store_true",
                   help="merge shards into one result file (needs -o/--output)")
    p.add_argument("-o", "--output", type=Path, default=None, help="merged result file")


def build_parser() -> _Parser:
    parser = _Parser(
        prog="bench",
        description="Score code-search tools against each other on pinned open-source code.",
    )
    parser.add_argument("--version", action="version", version=f"codesearch-bench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_corpus_command(sub, "setup",
                        "fetch pinned corpora, verify them, build candidate trees")
    _add_corpus_command(sub, "validate",
                        "check every gold path and symbol span resolves; lint the queries")
    _add_probe(sub)
    _add_compare(sub)
    _add_report(sub)
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
    from .workdir import default_corpora_file, default_corpora_root, default_work

    work = getattr(args, "work", None) or default_work()
    corpora_file = getattr(args, "corpora_file", None) or default_corpora_file()
    corpora_root = getattr(args, "corpora_root", None) or default_corpora_root(work)
    if args.command == "setup":
        from . import report
        from .commands import setup

        with report.download_progress(err) as progress:
            outcomes = setup.run(corpora_file, args.corpus, corpora_root, progress)
        report.render_setup(console, outcomes)
        failed = [o.error for o in outcomes if o.error is not None]
        return max((e.exit_code for e in failed), default=0)
    if args.command == "validate":
        from . import report
        from .commands import validate

        checks = validate.run(corpora_file, args.corpus, corpora_root)
        report.render_validate(console, checks)
        return 0 if all(c.ok for c in checks) else 3
    if args.command == "compare":
        return _compare(args, work, corpora_file, corpora_root, console, err)
    if args.command == "report":
        return _report(args, console, err)
    if args.command == "probe":
        from .commands.probe import parse_expect, probe, probe_corpus, resolve_expect
        from .report import render_probe

        expected = [parse_expect(e) for e in args.expect]
        if args.corpus:
            result = probe_corpus(
                args.engine, corpora_file=corpora_file, corpora_root=corpora_root,
                corpus=args.corpus, query_id=args.query, text=args.text, work=work,
                k=args.k, per_file=args.per_file, reindex=args.reindex, extra_expect=expected,
            )
        else:
            if args.text is None:
                raise UsageError("probe --root needs --text \"the query\"")
            if args.query:
                raise UsageError("--query ID picks a query from a corpus: use it with --corpus")
            result = probe(
                args.engine, root=args.root, query=args.text, work=work,
                expected=[resolve_expect(args.root, e) for e in expected],
                k=args.k, per_file=args.per_file, reindex=args.reindex,
            )
        render_probe(console, result)
        return 1 if result.error else 0
    raise UsageError(f"unknown command {args.command!r}")


def _compare(args: argparse.Namespace, work: Path, corpora_file: Path, corpora_root: Path,
             console: Console, err: Console) -> int:
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from .commands import compare
    from .report.compare import render_compare

    try:
        cutoffs = tuple(int(x) for x in args.cutoffs.split(",") if x.strip())
    except ValueError:
        raise UsageError(f"--cutoffs {args.cutoffs!r}: write whole numbers like 5,10,20") from None
    if not cutoffs:
        raise UsageError("--cutoffs needs at least one cutoff")
    shard = None
    if args.shard:
        try:
            i, n = (int(x) for x in args.shard.split("/"))
        except ValueError:
            raise UsageError(f"--shard {args.shard!r}: write I/N, e.g. 2/4") from None
        shard = (i, n)
    opts = compare.Options(
        engines=list(args.engine), corpora_file=corpora_file, corpora_root=corpora_root,
        work=work, corpus=args.corpus, reindex=args.reindex, cutoffs=cutoffs,
        limit=args.limit, json_out=args.json or args.resume, resume=args.resume, shard=shard,
    )
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task("starting")

        def cell_done(engine: str, corpus: str, ok: bool) -> None:
            mark = "[green]done[/]" if ok else "[red]failed[/]"
            bar.console.print(f"{mark} {engine} × {corpus}")

        events = compare.Events(
            stage=lambda msg: bar.update(task, description=msg),
            tick=lambda msg: bar.update(task, description=msg),
            cell_done=cell_done,
        )
        outcome = compare.run(opts, events)
    render_compare(console, outcome.result)
    if opts.json_out:
        console.print(f"wrote {opts.json_out}")
    return compare.exit_code(outcome.failures)


def _report(args: argparse.Namespace, console: Console, err: Console) -> int:
    from .commands import report
    from .report.compare import render_compare

    if args.merge:
        if args.output is None:
            raise UsageError("--merge needs -o/--output FILE for the merged result")
        combined = report.merge(list(args.files), args.output)
        for line in combined.duplicates:
            err.print(f"[yellow]duplicate:[/] {line}")
        for cell in combined.missing:
            err.print(f"[yellow]missing cell:[/] {cell} (no row and no recorded failure)")
        console.print(f"merged {len(args.files)} files into {args.output}: "
                      f"{len(combined.result.rows)} rows, {len(combined.result.failures)} "
                      "failed combinations")
        return 1 if combined.missing else 0
    combined = report.load(list(args.files), strict=False)
    for line in combined.duplicates:
        err.print(f"[yellow]duplicate row ignored:[/] {line}")
    result = combined.result
    if args.format == "table":
        render_compare(console, result)
    elif args.format == "md":
        from .report.markdown import render_markdown

        text = render_markdown(result)
        if args.out:
            args.out.write_text(text)
            console.print(f"wrote {args.out}")
        else:
            console.print(text, markup=False, highlight=False, soft_wrap=True)
    elif args.format == "json":
        text = report.as_json(result)
        if args.out:
            args.out.write_text(text)
            console.print(f"wrote {args.out}")
        else:
            sys.stdout.write(text)
    else:
        from .report.plots import render_plots

        paths = render_plots(result, args.out or Path("report"))
        for path in paths:
            console.print(f"wrote {path}")
    return 0


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    console = Console()
    err = Console(stderr=True)
    # SIGTERM (a CI timeout, `kill`) takes the same path as Ctrl-C: engines are
    # stopped and reaped, and a comparison still writes its partial JSON.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
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
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
