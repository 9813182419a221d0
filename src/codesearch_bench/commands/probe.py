"""`bench probe`: one cell for one query, and everything the adapter made of it.

Run it before any comparison. It goes through the same index step and the
same `evaluate()` as compare, so what it shows is what compare would score:
the rendered commands, the raw output, the parsed hits after normalization
(does each path exist? what is at each span?) beside the expected answer, and
the two `!!` warnings that mean "fix the adapter, not the tool".
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from ..corpus import setup
from ..corpus.config import load_corpora, select
from ..corpus.tree import Manifest, TreeText, tree_files
from ..engine import state
from ..engine.driver import Context
from ..engine.output.unmatched import problems, tally
from ..engine.spec import load_spec
from ..errors import EngineFailed, UsageError
from ..gold.grammars import GoldError
from ..gold.queries import QuerySet, load_queries
from ..gold.resolve import resolve
from ..gold.sets import resolve_set
from ..model import Span, overlaps
from ..render.probe import render_probe
from ..render.ui import UI
from ..results.probe import ProbeHit, ProbeReport
from ..run.cell import Probed, probe_query
from ..run.options import DEFAULT_CUTOFFS
from ..scoring.grade import depth_limited, lacks_spans
from ..scoring.normalize import Normalized
from ..workdir import Where, find_spec
from .suites import corpus_of_query, suited

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
    if args.corpus:
        report = probe_corpus(
            args.engine, where, corpus=args.corpus, query_id=args.query, text=args.text,
            k=args.k, per_file=args.per_file, reindex=args.reindex, extra_expect=expected)
    else:
        if args.text is None:
            raise UsageError("probe --root needs --text \"the query\"")
        if args.query:
            raise UsageError("--query ID picks a query from a corpus: use it with --corpus")
        root = args.root
        report = probe(args.engine, root=root, query=args.text, work=where.work,
                       expected=[resolve_expect(root, e) for e in expected],
                       k=args.k, per_file=args.per_file, reindex=args.reindex)
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


def resolve_expect(root: Path, exp: Span, *, h_as_cpp: bool = False) -> Span:
    """Give a PATH:SYMBOL expectation its tree-sitter span (if it has none yet)."""
    if exp.symbol is None or not exp.file_level:
        return exp
    if not (root / exp.path).is_file():
        raise UsageError(f"--expect {exp.path}: no such file under {root}")
    try:
        span = resolve(root, exp.path, exp.symbol, h_as_cpp=h_as_cpp)
    except GoldError as exc:
        tip = f" (nearest: {', '.join(exc.suggestions[:3])})" if exc.suggestions else ""
        raise UsageError(f"--expect {exp.path}:{exp.symbol}: {exc}{tip}") from None
    return Span(exp.path, span.start, span.end, exp.symbol)


def probe_corpus(engine: str | Path, where: Where, *, corpus: str, query_id: str | None,
                 text: str | None, k: int = 20, per_file: int | None = None,
                 reindex: bool = False, extra_expect: list[Span] | None = None) -> ProbeReport:
    """Probe against a set-up corpus: its tree, and a query (with gold) from its set."""
    (chosen,) = select(load_corpora(where.corpora_file), corpus)
    if not setup.is_set_up(where.corpora_root, chosen):
        raise UsageError(f"corpus {chosen.name!r} is not set up under {where.corpora_root}",
                         hint=f"run `bench setup --corpus {chosen.name}` first, or point "
                         "--work (or --corpora-root, $BENCH_WORK, $BENCH_CORPORA) at where it "
                         "was set up")
    dirs = setup.dirs(where.corpora_root, chosen)
    expected = list(extra_expect or [])
    query_text = text
    if query_id is not None:
        if chosen.queries_path is None:
            raise UsageError(f"corpus {chosen.name!r} has no query set")
        qs = load_queries(chosen.queries_path)
        q = qs.by_id(query_id)
        query_text = text or q.query
        report = resolve_set(chosen, dirs.tree, QuerySet(qs.path, [q], qs.sha256))
        expected.extend(report.spans.get(q.id, []))
        expected.extend(Span(f"(unresolved) {failure}") for failure in report.failures)
    if query_text is None:
        raise UsageError("give --query ID (from the corpus's query set) or --text")
    expected = [resolve_expect(dirs.tree, e, h_as_cpp=chosen.spec.h_as_cpp) for e in expected]
    return probe(engine, root=dirs.tree, query=query_text, work=where.work,
                 corpus_key=chosen.name, corpus_pin=chosen.identity,
                 lang=",".join(chosen.spec.languages), query_id=query_id, expected=expected,
                 k=k, per_file=per_file, reindex=reindex,
                 tree_size=Manifest.read(dirs.manifest).files)


def probe(engine: str | Path, *, root: Path, query: str, work: Path,
          corpus_key: str | None = None, corpus_pin: str = "", lang: str = "",
          query_id: str | None = None, expected: list[Span] | None = None, k: int = 20,
          per_file: int | None = None, reindex: bool = False,
          tree_size: int | None = None) -> ProbeReport:
    loaded = load_spec(find_spec(Path(engine)))
    spec = loaded.spec
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a directory")
    root = root.resolve()
    per_file = per_file if per_file is not None else spec.per_file[0]
    if per_file not in spec.per_file:
        raise UsageError(
            f"--per-file {per_file}: {loaded.file} serves per_file {spec.per_file} only"
        )
    if k < 1:
        raise UsageError(f"--k {k}: a cutoff is a whole number >= 1")
    key = corpus_key or state.root_key(root)
    ctx = Context(root=root, state=state.state_dir(work, "probe", loaded.name, key),
                  corpus=key, lang=lang)
    report = ProbeReport(loaded=loaded, root=root, state=ctx.state, query=query,
                         query_id=query_id, k=k, n=k * spec.candidates, per_file=per_file,
                         expected=list(expected or []))
    size = tree_size if tree_size is not None else len(tree_files(root))
    gold = [e for e in report.expected if not e.path.startswith("(unresolved)")]
    probed = probe_query(loaded, ctx, corpus_pin or str(root), query, gold, k=k,
                         per_file=per_file, tree_files=size, reindex=reindex,
                         cutoffs=(*(c for c in DEFAULT_CUTOFFS if c < k), k))
    _describe(report, probed, size)
    return report


def _describe(report: ProbeReport, probed: Probed, tree_size: int) -> None:
    """Fill the report from what the one cell did; compare's own values, shown."""
    step = probed.index
    report.index_command = step.command
    report.index = step.measurement
    report.index_cached = bool(step.out is not None and step.out.cached)
    if step.out is None:
        report.error = (step.error or "index failed") + (
            f"\n{step.stderr_tail}" if step.stderr_tail else "")
        return
    search, evaluation = probed.search, probed.evaluation
    assert search is not None and evaluation is not None
    report.search = search
    if search.error:
        report.error = f"search failed: {search.error}"
    if report.expected:
        report.outcome = evaluation.outcome
    text = TreeText(report.root)
    slot_of = {hit.rank: slot.rank for slot in evaluation.slots for hit in slot.chunks}
    report.slots = len(evaluation.slots)
    hits = evaluation.normalized.hits if evaluation.normalized is not None else []
    for hit in hits:
        lines = text.lines(hit.path)
        shown = text.at(hit.path, hit.start, hit.end)
        past_eof = lines is not None and hit.start is not None and hit.end is not None and (
            hit.end > len(lines) or hit.start < 1)
        report.hits.append(ProbeHit(
            hit=hit, slot=slot_of.get(hit.rank), exists=lines is not None,
            span_text="\n".join(shown[:3]) if shown is not None else None, past_eof=past_eof,
            expected_file=any(e.path == hit.path for e in report.expected),
            expected_chunk=any(e.path == hit.path and overlaps(hit, e)
                               for e in report.expected)))
    _warn(report, evaluation.normalized, tree_size)


def _warn(report: ProbeReport, normalized: Normalized | None, tree_size: int) -> None:
    search = report.search
    assert search is not None
    engine = report.loaded.spec
    raw = len(search.hits)
    for problem in problems(engine.parse, tally([search.parsed])):
        report.warnings.append(f"{problem} -- a wrong path scores as plain zeros")
    if lacks_spans(search.hits, engine.spans):
        report.warnings.append(
            "results carry no line spans although the spec says spans: true -- "
            "the span fields (parse.start/end/lines) are wrong"
        )
    if depth_limited(raw, report.n, report.slots, report.k, tree_size):
        report.warnings.append(
            f"only {report.slots} file slots from {raw} raw results (n={report.n}) for "
            f"cutoff {report.k} -- the engine is losing recall to request depth; "
            "raise `candidates`"
        )
    missing = sum(not h.exists for h in report.hits)
    if missing:
        report.notes.append(
            f"{missing} result(s) name files that do not exist in the tree -- "
            "check strip_prefix and the path field"
        )
    if normalized is not None and normalized.outside:
        report.notes.append(
            f"{normalized.outside} result(s) point outside the tree and were dropped "
            f"(e.g. {normalized.outside_examples[0]!r})"
        )
    past = sum(ph.past_eof for ph in report.hits)
    if past:
        report.notes.append(
            f"{past} span(s) run past the end of their file or start before line 1 -- "
            "check line_base"
        )
    if not engine.spans:
        report.notes.append("spans: false -- this engine is graded at file granularity only")
    if search.parsed is not None and search.parsed.replaced_bytes:
        report.notes.append(
            f"{search.parsed.replaced_bytes} undecodable byte(s) in the output were replaced"
        )
    if search.parsed is not None and search.parsed.bad_records:
        report.notes.append(
            f"{search.parsed.bad_records} result record(s) could not be read: "
            + "; ".join(search.parsed.errors)
        )
