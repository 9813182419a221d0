"""The `bench` command line: the parser, dispatch to `commands/`, the error boundary.

Commands raise; only `main` turns errors into messages and exit codes (each
error class carries its own; see errors.py), so the whole CLI can be driven
from tests through `main([...])`.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from . import __version__
from .arguments import Parser, parse
from .commands import preload
from .errors import BenchError, Interrupted, StorageError, UsageError
from .processes import signals
from .render import EXPORTERS
from .render.ui import UI

if TYPE_CHECKING:
    from .datasets.base import Importer


def _add_probe(sub: argparse._SubParsersAction[Parser]) -> None:
    p = sub.add_parser(
        "probe", help="run one query through one engine and show what the adapter made of it",
        description="Index (into its own state dir), run one query, and print the rendered "
        "commands, raw output, parsed hits with normalized paths and spans, and the "
        "expected answer. Run it before any comparison.",
    )
    p.add_argument("--engine", required=True, type=Path, help="engine spec (JSON)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--root", type=Path, help="a directory to search (ad hoc)")
    where.add_argument("--corpus", help="a set-up corpus from corpora.toml (with --suite DIR "
                       "and --query: the corpus that has that query)")
    p.add_argument("--suite", default=None, metavar="quick|full|DIR",
                   help="the corpora of a named suite, or of a folder `bench import` wrote")
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


def _add_corpus_command(sub: argparse._SubParsersAction[Parser], name: str,
                        help_text: str) -> None:
    """setup and validate take the same flags: which corpora, and where they live."""
    p = sub.add_parser(name, help=help_text)
    p.add_argument("--corpus", default=None,
                   help="NAME[,NAME...] or all (default: the suite's corpora)")
    p.add_argument("--suite", default=None, metavar="quick|full|DIR",
                   help="quick (default): the default corpora; full: every corpus; DIR: a "
                   "suite `bench import` wrote (every corpus of its corpora.toml)")
    p.add_argument("--work", type=Path, default=None, help="work dir (default ./.bench)")
    _corpus_flags(p)


def _add_compare(sub: argparse._SubParsersAction[Parser]) -> None:
    p = sub.add_parser(
        "compare", help="run engines over corpora and score them the same way",
        description="Run every engine on every corpus (the shipped default engines on the "
        "default corpora when none are given), score them with one protocol, print a table "
        "per corpus and the paired comparisons, and optionally write the result JSON.",
    )
    p.add_argument("--engine", action="append", default=[], type=Path,
                   help="engine spec (JSON), a .txt list of specs (one a line, relative to "
                   "it), or `defaults`, the default set (engines/default-engines.txt); "
                   "repeatable: `--engine defaults --engine my.json` runs both (default: "
                   "defaults)")
    p.add_argument("--corpus", default=None,
                   help="NAME[,NAME...] or all (default: the suite's corpora)")
    p.add_argument("--suite", default="quick", metavar="quick|full|DIR",
                   help="quick (default): the default corpora, questions and needles; full: "
                   "every corpus, questions and needles; DIR: a suite `bench import` wrote "
                   "(its corpora.toml, every corpus)")
    p.add_argument("--query-set", choices=["questions", "needles", "needles-named", "all"],
                   default=None,
                   help="hand-written questions, needles generated from the code's doc "
                   "comments (searched in a doc-blanked tree; name-blind), or both (default: "
                   "the suite's); needles-named: the needles whose query holds words of the "
                   "gold's name, a breakout")
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
    p.add_argument("--log-to", "--track", dest="log_to", default=None,
                   metavar="jsonl:PATH|mlflow[:URI]",
                   help="log every row where you keep results (mlflow needs the mlflow extra); "
                   "--track is the same flag")
    p.add_argument("--split", choices=["all", "dev", "test"], default="all",
                   help="only the dev or the test queries (tune on dev, report on test); "
                   "recorded on every row")
    p.add_argument("--query", default=None, metavar="ID[,ID]",
                   help="only these queries (a quick look; every corpus must have them)")
    p.add_argument("--keep-going", action="store_true",
                   help="run what is valid when a spec or a corpus is broken (default: stop "
                   "before any engine runs, listing every problem)")
    p.add_argument("--wide", action="store_true",
                   help="every per_file pass and every cutoff in the table (default: the "
                   "headline table, which fits 100 columns)")
    p.add_argument("--headline-only", action="store_true",
                   help="ask only each engine's headline per_file pass (per_file 1 when "
                   "served): the numbers the tables lead with, at a fraction of the time")
    p.add_argument("--shard", default=None, metavar="I/N|auto",
                   help="run only shard I of N of the (engine x corpus) cells, or `auto`: the "
                   "index and count from a Slurm array, a Kubernetes Indexed Job or "
                   "BENCH_SHARD_INDEX/BENCH_SHARD_COUNT; merge with `bench report --merge`")
    p.add_argument("--jobs", default="1", metavar="N|auto",
                   help="run up to N cells at once, never two on one corpus (auto: one per "
                   "CPU; default 1). Quality is the same; rows measured beside another cell "
                   "are flagged concurrent=N, their latency and memory not comparable")
    _corpus_flags(p)


def _add_report(sub: argparse._SubParsersAction[Parser]) -> None:
    p = sub.add_parser(
        "report", help="render saved result files (table, Markdown, JSON, plots); merge shards",
        description="Render one or more result files written by `bench compare --json`, "
        "never re-running an engine. Several files are shown side by side only when they "
        "share the protocol version, cutoffs, corpus pins and query sets. With --merge, shards "
        "of one comparison are combined into one result file.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE")
    p.add_argument("--format", choices=list(EXPORTERS), default="table")
    p.add_argument("--out", type=Path, default=None,
                   help="output file (md, json) or directory (png, html; default ./report)")
    p.add_argument("--wide", action="store_true",
                   help="table: every per_file pass and every cutoff")
    p.add_argument("--all-queries", action="store_true",
                   help="json: the whole result file, every row's per-query outcomes too "
                   "(default: rows with their metrics and flags, comparisons, summaries, "
                   "corpora and engines; no per-query outcomes)")
    p.add_argument("--split", choices=["all", "dev", "test"], default="all",
                   help="only the dev or the test queries: rows and statistics recomputed")
    p.add_argument("--by", choices=["tag", "language", "tier", "corpus"], default=None,
                   help="each engine's means per group of queries (table, md or json)")
    p.add_argument("--baseline", type=Path, default=None, metavar="OLD.json",
                   help="compare with an earlier result row by row (paired tests on the shared "
                   "queries); prints Markdown fit for a pull-request comment")
    p.add_argument("--fail-on", choices=["regression"], default=None,
                   help="with --baseline: exit 5 when a watched metric is significantly worse")
    p.add_argument("--max-drop", type=float, default=None, metavar="X",
                   help="with --baseline: exit 5 when a watched metric drops by more than X")
    p.add_argument("--allow-missing", action="store_true",
                   help="with a gate: pass on what both files hold, although baseline rows are "
                   "missing, the new run was interrupted or scores are NaN (else exit 5)")
    p.add_argument("--merge", action="store_true",
                   help="merge shards into one result file (needs -o/--output)")
    p.add_argument("-o", "--output", type=Path, default=None, help="merged result file")


def _add_import(sub: argparse._SubParsersAction[Parser]) -> None:
    from .datasets import IMPORTERS  # names and flags only

    p = sub.add_parser(
        "import", help="turn a public benchmark's files into a suite compare can run",
        description="Convert a dataset you downloaded into a suite: corpora.toml (each tree "
        "pinned by content), query sets, and the dataset's provenance in every entry. Run it "
        "with `bench compare --suite OUT`; `bench import DATASET --help` lists the flags "
        "that dataset takes.")
    datasets = p.add_subparsers(dest="dataset", metavar="DATASET", required=True,
                                parser_class=Parser, title="datasets")
    for _, importer in sorted(IMPORTERS.items()):
        _add_importer(datasets, importer)


#: every flag of `bench import`, unset: an importer's parser has only the flags it reads,
#: and the command reads one namespace whatever the dataset
_IMPORT_DEFAULTS: dict[str, object] = {
    "source": None, "variant": None, "hub": None, "out": None, "name": None, "split": "test",
    "ext": "txt", "limit": None, "max_tasks": None, "task_bytes": None, "corpora_root": None,
    "license": None, "language": None, "repos": None}


def _add_importer(sub: argparse._SubParsersAction[Parser], importer: Importer) -> None:
    p = sub.add_parser(importer.name, help=importer.summary,
                       description=f"{importer.summary}. Run the suite it writes with "
                       "`bench compare --suite OUT`.")
    hub, flags = importer.hub, importer.flags
    variants = list(hub.variants) if hub else []
    p.add_argument("--from", dest="source", type=Path, default=None, metavar="PATH",
                   help=f"the downloaded dataset: {importer.download}" + (
                       "; without --from, the pinned --variant is loaded from the Hugging "
                       "Face hub (the `datasets` extra)" if variants else ""))
    if variants and hub:
        p.add_argument("--variant", default=None,
                       help=f"without --from, which pinned dataset to load: "
                       f"{', '.join(variants)} (default {hub.default})")
    if hub:
        p.add_argument("--hub", default=None, metavar="ID@REVISION",
                       help="without --from, load this hub dataset at this full commit" + (
                           " instead" if variants else ": required then (e.g. a CoIR set)"))
    p.add_argument("--out", type=Path, default=None,
                   help="the suite folder to write (default: ./suites/<name>)")
    if "--name" in flags:
        p.add_argument("--name", default=None,
                       help="corpus name (default: the dataset folder's)")
    if "--split" in flags or hub:
        p.add_argument("--split", default="test", help=(
            "which qrels to import, or which split to load from the hub" if "--split" in flags
            else "without --from, which split to load from the hub") + " (default test)")
    if "--ext" in flags:
        p.add_argument("--ext", default="txt", help="extension of the generated files, e.g. "
                       "py for a grammar (default txt)")
    p.add_argument("--limit", type=int, default=None, help="only the first N queries")
    if "--max-tasks" in flags:
        p.add_argument("--max-tasks", default=None, metavar="N|auto",
                       help="keep at most N tasks (corpora), and only as many as the disk of "
                       "the corpora root holds; auto: as many as fit (tasks of one "
                       "repository kept together, so they share its git store)")
        p.add_argument("--task-bytes", default=None, metavar="SIZE",
                       help="with --max-tasks: a task tree's size when no commit of its "
                       "repository is set up yet (e.g. 300M; default 200M)")
        p.add_argument("--corpora-root", type=Path, default=None,
                       help="with --max-tasks: where the corpora will be set up, whose free "
                       "space counts (default $BENCH_CORPORA or <work>/corpora)")
    p.add_argument("--license", default=None, help="the dataset's license, when its files "
                   "do not say (recorded in the provenance)")
    if "--language" in flags:
        p.add_argument("--language", default=None, metavar="LANG[,LANG]",
                       help="only these languages (default: every language in the file)")
    if "--repos" in flags:
        p.add_argument("--repos", type=Path, default=None, metavar="DIR",
                       help="the local clones, one per repository (DIR/<name> or "
                       "DIR/<owner>/<name>), whose pinned trees resolve the answers' citations")
    given = {action.dest for action in p._actions}
    p.set_defaults(**{dest: value for dest, value in _IMPORT_DEFAULTS.items()
                      if dest not in given})


def build_parser() -> Parser:
    parser = Parser(
        prog="bench",
        description="Score code-search tools against each other on pinned open-source code.",
    )
    parser.add_argument("--version", action="version", version=f"codesearch-bench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _add_corpus_command(sub, "setup",
                        "fetch pinned corpora, verify them, build candidate trees")
    _add_corpus_command(sub, "validate",
                        "check every gold path and symbol span resolves; lint the queries")
    _add_probe(sub)
    _add_compare(sub)
    _add_report(sub)
    _add_import(sub)
    return parser


COMMANDS = {
    "setup": "codesearch_bench.commands.setup",
    "validate": "codesearch_bench.commands.validate",
    "probe": "codesearch_bench.commands.probe",
    "compare": "codesearch_bench.commands.compare",
    "report": "codesearch_bench.commands.report",
    "import": "codesearch_bench.commands.import_",
}


def run(argv: Sequence[str], ui: UI) -> int:
    """Parse and dispatch to the command's `run(args, ui)`; raises BenchError."""
    parser = build_parser()
    args = parse(parser, argv)
    args.argv = list(argv)  # what was typed, so a command can say how to run it again
    if args.command is None:
        parser.print_help()
        return UsageError.exit_code
    preload.before(args.command)
    # Imported on use: `bench --help` should not pay for tree-sitter and numpy.
    command = importlib.import_module(COMMANDS[args.command])
    code: int = command.run(args, ui)
    return code


#: What a disk, not bench, gets wrong: full, over quota, failing, read-only.
DISK_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})


def main(argv: Sequence[str] | None = None) -> int:
    ui = UI()
    # SIGTERM takes the same path as Ctrl-C: engines are stopped and reaped, and a
    # comparison still writes its partial JSON.
    interrupts = signals.Interrupts()
    # Without argv this is the program itself (the `bench` script, `python -m`): the
    # handler stays in place for the exit, so a signal after the result was written
    # cannot end bench by the signal. Called in-process, the caller's handlers come back.
    with signals.handling(interrupts, restore=argv is not None):
        try:
            code = run(sys.argv[1:] if argv is None else argv, ui)
            interrupts.done()  # the work is done and written: only the exit is left
            return code
        except Interrupted as exc:
            what = exc.message.removeprefix("interrupted: ")
            ui.err.print(f"[bold red]interrupted[/]: {escape(what)}", soft_wrap=True)
            return exc.exit_code
        except BenchError as exc:
            ui.error(exc.message, exc.hint)
            return exc.exit_code
        except KeyboardInterrupt:
            ui.err.print("[bold red]interrupted[/]: engines stopped and reaped")
            return Interrupted.exit_code
        except OSError as exc:
            if exc.errno not in DISK_ERRORS:
                raise  # a bug, not the disk: its traceback is what a report needs
            # The last line for a write that no stage named itself (an import's, say).
            failed = StorageError.of(exc.filename or "a file", exc, "")
            ui.error(failed.message, failed.hint)
            return failed.exit_code
        except SystemExit as exc:  # --help and --version exit through argparse
            return int(exc.code or 0)
        finally:
            interrupts.done()


if __name__ == "__main__":
    sys.exit(main())
