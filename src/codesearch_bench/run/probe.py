"""`bench probe`'s work: one cell for one query, and everything the adapter made of it.

It goes through the same index step (cell.ensure_index) and the same
`evaluate()` as compare, so what it shows is what compare would score: the
rendered commands, the raw output, the parsed hits after normalization (does
each path exist? what is at each span?) beside the expected answer, and the
`!!` warnings that mean "fix the adapter, not the tool". The answer is a
`results/probe.ProbeReport`, which render/probe.py shows.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus import setup
from ..corpus.config import load_corpora, select
from ..corpus.tree import Manifest, TreeText, tree_files
from ..engine import state
from ..engine.driver import Context, Searcher, SearchResult
from ..engine.output.unmatched import problems, tally
from ..engine.spec import LoadedSpec, load_spec
from ..errors import UsageError
from ..gold.grammars import GoldError
from ..gold.queries import QuerySet, load_queries
from ..gold.resolve import resolve
from ..gold.sets import resolve_set
from ..model import Span, overlaps
from ..results.probe import ProbeHit, ProbeReport
from ..scoring import lineshift
from ..scoring.evaluate import Evaluation, evaluate
from ..scoring.grade import depth_limited, lacks_spans
from ..scoring.normalize import Normalized
from ..workdir import Where, find_spec, is_engine_list
from .cell import IndexStep, ensure_index
from .options import DEFAULT_CUTOFFS


@dataclass(frozen=True)
class ProbeOptions:
    """One probe: an engine, a query, and where to ask it -- a set-up corpus (`corpus`:
    its tree, and with `query_id` a query and its gold from its set) or any tree (`root`)."""

    engine: str | Path
    where: Where
    corpus: str | None = None
    root: Path | None = None
    query_id: str | None = None
    text: str | None = None  # the query's text; with query_id, asked instead of its own
    expected: list[Span] = field(default_factory=list)  # --expect, symbols not yet resolved
    k: int = 20
    per_file: int | None = None
    reindex: bool = False
    #: the flags that chose the corpora (--suite DIR, --work ...), repeated in a hint
    selection: tuple[str, ...] = ()


def probe(opts: ProbeOptions) -> ProbeReport:
    """The probe's report; a wrong argument (no such corpus, symbol, per_file) is a
    UsageError, an engine that failed is the report's `error`."""
    if is_engine_list(Path(opts.engine)):
        raise UsageError(f"--engine {opts.engine}: probe runs one engine, and this names a "
                         "list of them", hint="give one spec, e.g. --engine engines/grep.json")
    if opts.corpus:
        return _on_corpus(opts, opts.corpus)
    if opts.root is None or opts.text is None:
        raise UsageError("probe needs --root DIR with --text, or --corpus NAME")
    expected = [resolve_expect(opts.root, e) for e in opts.expected]
    return _on_tree(opts, root=opts.root, query=opts.text, expected=expected)


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


def _on_corpus(opts: ProbeOptions, name: str) -> ProbeReport:
    """Probe against a set-up corpus: its tree, and a query (with gold) from its set."""
    where = opts.where
    (corpus,) = select(load_corpora(where.corpora_file), name)
    if not setup.is_set_up(where.corpora_root, corpus):
        raise UsageError(f"corpus {corpus.name!r} is "
                         f"{setup.why_not_set_up(where.corpora_root, corpus)}",
                         hint="run `" + shlex.join(["bench", "setup", "--corpus", corpus.name,
                                                    *opts.selection]) + "` first, or point "
                         "--work (or --corpora-root, $BENCH_WORK, $BENCH_CORPORA) at where it "
                         "was set up")
    dirs = setup.dirs(where.corpora_root, corpus)
    expected = list(opts.expected)
    query_text = opts.text
    if opts.query_id is not None:
        if corpus.queries_path is None:
            raise UsageError(f"corpus {corpus.name!r} has no query set")
        query_set = load_queries(corpus.queries_path)
        query = query_set.by_id(opts.query_id)
        query_text = opts.text or query.query
        resolved = resolve_set(corpus, dirs.tree,
                               QuerySet(query_set.path, [query], query_set.sha256))
        expected.extend(resolved.spans.get(query.id, []))
        expected.extend(Span(f"(unresolved) {failure}") for failure in resolved.failures)
    if query_text is None:
        raise UsageError("give --query ID (from the corpus's query set) or --text")
    expected = [resolve_expect(dirs.tree, e, h_as_cpp=corpus.spec.h_as_cpp) for e in expected]
    return _on_tree(opts, root=dirs.tree, query=query_text, expected=expected,
                    corpus_key=corpus.name, corpus_pin=corpus.identity,
                    lang=",".join(corpus.spec.languages), query_id=opts.query_id,
                    tree_size=Manifest.read(dirs.manifest).files)


def _on_tree(opts: ProbeOptions, *, root: Path, query: str, expected: list[Span],
             corpus_key: str | None = None, corpus_pin: str = "", lang: str = "",
             query_id: str | None = None, tree_size: int | None = None) -> ProbeReport:
    """Probe the engine on this tree: its index, the one search, its evaluation."""
    loaded = load_spec(find_spec(Path(opts.engine)))
    spec = loaded.spec
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a directory")
    root = root.resolve()
    k = opts.k
    per_file = opts.per_file if opts.per_file is not None else spec.per_file[0]
    if per_file not in spec.per_file:
        raise UsageError(
            f"--per-file {per_file}: {loaded.file} serves per_file {spec.per_file} only"
        )
    if k < 1:
        raise UsageError(f"--k {k}: a cutoff is a whole number >= 1")
    key = corpus_key or state.root_key(root)
    ctx = Context(root=root, state=state.state_dir(opts.where.work, "probe", loaded.name, key),
                  corpus=key, lang=lang)
    report = ProbeReport(loaded=loaded, root=root, state=ctx.state, query=query,
                         query_id=query_id, k=k, n=k * spec.candidates, per_file=per_file,
                         expected=expected)
    size = tree_size if tree_size is not None else len(tree_files(root))
    gold = [e for e in report.expected if not e.path.startswith("(unresolved)")]
    asked = _ask(loaded, ctx, corpus_pin or str(root), query, gold, k=k, per_file=per_file,
                 tree_files=size, reindex=opts.reindex,
                 cutoffs=(*(c for c in DEFAULT_CUTOFFS if c < k), k))
    _describe(report, asked, size)
    return report


@dataclass
class _Asked:
    """One cell for one query: the index step, the search, and its evaluation."""

    index: IndexStep
    search: SearchResult | None = None
    evaluation: Evaluation | None = None


def _ask(loaded: LoadedSpec, ctx: Context, corpus_pin: str, query: str, gold: list[Span], *,
         k: int, per_file: int, tree_files: int, reindex: bool,
         cutoffs: tuple[int, ...]) -> _Asked:
    """What compare does for one query of one cell, kept whole for showing."""
    step = ensure_index(loaded, ctx, corpus_pin, reindex=reindex)
    asked = _Asked(step)
    if step.out is None:
        return asked
    with Searcher(loaded, ctx) as searcher:
        asked.search = searcher.search(query, k, per_file)
    asked.evaluation = evaluate("probe", asked.search, gold, loaded.spec,
                                text=TreeText(ctx.root), per_file=per_file,
                                cutoffs=cutoffs, tree_files=tree_files)
    return asked


def _describe(report: ProbeReport, asked: _Asked, tree_size: int) -> None:
    """Fill the report from what the one cell did; compare's own values, shown."""
    step = asked.index
    report.index_command = step.command
    report.index = step.measurement
    report.index_cached = bool(step.out is not None and step.out.cached)
    if step.out is None:
        report.error = (step.error or "index failed") + (
            f"\n{step.stderr_tail}" if step.stderr_tail else "")
        return
    search, evaluation = asked.search, asked.evaluation
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
    compared = lineshift.applies(report.loaded.spec)
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
                               for e in report.expected),
            text_place=lineshift.place(hit, text) if compared else None))
    _warn(report, evaluation.normalized, tree_size)


def _warn(report: ProbeReport, normalized: Normalized | None, tree_size: int) -> None:
    """The `!!` warnings (the adapter is wrong) and the notes beside them."""
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
    _lines(report)
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


def _lines(report: ProbeReport) -> None:
    """`!! lines` when the tool's own text is one line off its lines on most spans; a note
    when it is nowhere near them (then its text says nothing about its lines)."""
    shifts = lineshift.Shifts()
    for ph in report.hits:
        if ph.text_place is not None:
            shifts.add(ph.text_place)
    if not shifts.compared:
        return
    verdict = shifts.verdict(report.loaded.spec.line_base)
    if verdict is not None:
        report.warnings.append(f"lines: {verdict}")
    elif shifts.elsewhere == shifts.compared:
        report.notes.append(
            f"the tool's text is not the tree's text at any of its {shifts.compared} spans "
            "with text, nor one line off: nothing to say about its line numbers")
