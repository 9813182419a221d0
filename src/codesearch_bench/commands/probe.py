"""`bench probe`: one cell for one query, and everything the adapter made of it.

Run it before any comparison. This module reads the command line, hands it to
`run/probe.probe` -- the same index step and the same `evaluate()` as compare --
and shows the report it returns (render/probe.py).
"""

from __future__ import annotations

import argparse
import re

from ..corpus.config import load_corpora
from ..errors import EngineFailed, UsageError
from ..model import Span
from ..render.probe import render_probe
from ..render.ui import UI
from ..run.probe import ProbeOptions, probe
from ..workdir import Where
from .suites import corpus_of_query, selection, suited

_EXPECT = re.compile(r"^(?P<path>[^:]+)(?::(?P<rest>.+))?$")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def run(args: argparse.Namespace, ui: UI) -> int:
    where = suited(Where.of(args), args)
    expected = [parse_expect(e) for e in args.expect]
    if args.root is None and args.corpus is None:
        if args.suite is None or args.query is None:
            raise UsageError("probe needs --root DIR, --corpus NAME, or --suite DIR with "
                             "--query ID")
        args.corpus = corpus_of_query(load_corpora(where.corpora_file), args.query)
    if not args.corpus:
        if args.text is None:
            raise UsageError("probe --root needs --text \"the query\"")
        if args.query:
            raise UsageError("--query ID picks a query from a corpus: use it with --corpus")
    report = probe(ProbeOptions(
        engine=args.engine, where=where, corpus=args.corpus or None,
        root=None if args.corpus else args.root,
        query_id=args.query if args.corpus else None, text=args.text, expected=expected,
        k=args.k, per_file=args.per_file, reindex=args.reindex, selection=selection(args)))
    render_probe(ui.out, report)
    return EngineFailed.exit_code if report.error else 0


def parse_expect(value: str) -> Span:
    """PATH, PATH:START-END or PATH:SYMBOL (resolved later against the tree)."""
    match = _EXPECT.match(value.strip())
    if not match:
        raise UsageError(f"--expect {value!r}: write PATH, PATH:START-END or PATH:SYMBOL")
    path, rest = match.group("path"), match.group("rest")
    if rest is None:
        return Span(path)
    if m := _RANGE.match(rest):
        start = int(m.group(1))
        return Span(path, start, int(m.group(2) or start))
    return Span(path, symbol=rest)
