"""`bench probe`: one engine, one query, everything the adapter made of it.

Run it before any comparison. It shows the rendered commands, the raw output,
the parsed hits after normalization (does each path exist? what is at each
span?) beside the expected answer, and the two `!!` warnings that mean "fix
the adapter, not the tool": results without spans although the spec promises
them, and fewer file slots than the cutoff while the raw results hit n.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import driver, scoring, workdir
from ..errors import UsageError
from ..parse import Hit, ParseResult
from ..process import Measurement
from ..spec import LoadedSpec, load_spec
from ..tree import read_lines

RAW_EXCERPT_LINES = 20
_EXPECT = re.compile(r"^(?P<path>[^:]+)(?::(?P<rest>.+))?$")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


@dataclass(frozen=True)
class Expected:
    path: str
    symbol: str | None = None
    start: int | None = None
    end: int | None = None

    @property
    def label(self) -> str:
        if self.symbol and self.start is not None:
            return f"{self.path}:{self.symbol} (lines {self.start}-{self.end})"
        if self.start is not None:
            return f"{self.path}:{self.start}-{self.end}"
        return self.path


@dataclass(frozen=True)
class ProbeHit:
    raw_rank: int
    slot: int | None  # 1-based file slot after collapsing; None if a later chunk was dropped
    hit: Hit
    exists: bool
    span_text: str | None  # the tree's lines at the span (first lines), if readable
    past_eof: bool
    expected_file: bool
    expected_chunk: bool


@dataclass
class ProbeReport:
    loaded: LoadedSpec
    root: Path
    state: Path
    query: str
    query_id: str | None
    k: int
    n: int
    per_file: int
    index_command: driver.Rendered | None = None
    index: Measurement | None = None
    index_cached: bool = False
    search: driver.SearchResult | None = None
    parsed: ParseResult | None = None
    hits: list[ProbeHit] = field(default_factory=list)
    outside: int = 0
    outside_examples: tuple[str, ...] = ()
    slots: int = 0
    expected: list[Expected] = field(default_factory=list)
    expected_file_rank: int | None = None
    expected_chunk_rank: int | None = None
    warnings: list[str] = field(default_factory=list)  # the `!!` lines
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def raw_excerpt(self) -> list[str]:
        if self.search is None:
            return []
        text = self.search.raw.decode("utf-8", errors="replace")
        lines = text.splitlines()
        out = [line if len(line) <= 240 else line[:240] + " …" for line in
               lines[:RAW_EXCERPT_LINES]]
        if len(lines) > RAW_EXCERPT_LINES:
            out.append(f"… {len(lines) - RAW_EXCERPT_LINES} more lines")
        return out


def parse_expect(value: str) -> Expected:
    """PATH, PATH:START-END or PATH:SYMBOL (resolved later against the tree)."""
    match = _EXPECT.match(value.strip())
    if not match:
        raise UsageError(f"--expect {value!r}: write PATH, PATH:START-END or PATH:SYMBOL")
    path, rest = match.group("path"), match.group("rest")
    if rest is None:
        return Expected(path)
    if m := _RANGE.match(rest):
        start = int(m.group(1))
        return Expected(path, start=start, end=int(m.group(2) or start))
    return Expected(path, symbol=rest)


def resolve_expect(root: Path, exp: Expected, *, h_as_cpp: bool = False) -> Expected:
    """Give a PATH:SYMBOL expectation its tree-sitter span (if it has none yet)."""
    if exp.symbol is None or exp.start is not None:
        return exp
    from ..gold import GoldError, resolve

    if not (root / exp.path).is_file():
        raise UsageError(f"--expect {exp.path}: no such file under {root}")
    try:
        span = resolve(root, exp.path, exp.symbol, h_as_cpp=h_as_cpp)
    except GoldError as exc:
        tip = f" (nearest: {', '.join(exc.suggestions[:3])})" if exc.suggestions else ""
        raise UsageError(f"--expect {exp.path}:{exp.symbol}: {exc}{tip}") from None
    return Expected(exp.path, exp.symbol, span.start, span.end)


def probe_corpus(engine: str | Path, *, corpora_file: Path, corpora_root: Path, corpus: str,
                 query_id: str | None, text: str | None, work: Path, k: int = 20,
                 per_file: int | None = None, reindex: bool = False,
                 extra_expect: list[Expected] | None = None) -> ProbeReport:
    """Probe against a set-up corpus: its tree, and a query (with gold) from its set."""
    from .. import corpora, goldset, queries

    table = corpora.load_corpora(corpora_file)
    (chosen,) = corpora.select(table, corpus)
    if not corpora.is_set_up(corpora_root, chosen):
        raise UsageError(f"corpus {chosen.name!r} is not set up under {corpora_root}",
                         hint=f"run `bench setup --corpus {chosen.name}` first")
    tree = corpora.tree_path(corpora_root, chosen)
    expected = list(extra_expect or [])
    query_text = text
    if query_id is not None:
        if chosen.queries_path is None:
            raise UsageError(f"corpus {chosen.name!r} has no query set")
        qs = queries.load_queries(chosen.queries_path)
        q = qs.by_id(query_id)
        query_text = text or q.query
        sub = queries.QuerySet(qs.path, [q], qs.sha256)
        report = goldset.resolve_set(chosen, tree, sub)
        for item in report.spans.get(q.id, []):
            expected.append(Expected(item.path, item.symbol, item.start, item.end))
        for failure in report.failures:
            expected.append(Expected(f"(unresolved) {failure}"))
    if query_text is None:
        raise UsageError("give --query ID (from the corpus's query set) or --text")
    expected = [resolve_expect(tree, e, h_as_cpp=chosen.spec.h_as_cpp) for e in expected]
    return probe(engine, root=tree, query=query_text, work=work, corpus_key=chosen.name,
                 corpus_pin=chosen.pin, lang=",".join(chosen.spec.languages),
                 query_id=query_id, expected=expected, k=k, per_file=per_file,
                 reindex=reindex)


def probe(
    engine: str | Path,
    *,
    root: Path,
    query: str,
    work: Path,
    corpus_key: str | None = None,
    corpus_pin: str = "",
    lang: str = "",
    query_id: str | None = None,
    expected: list[Expected] | None = None,
    k: int = 20,
    per_file: int | None = None,
    reindex: bool = False,
) -> ProbeReport:
    loaded = load_spec(engine)
    spec = loaded.spec
    if not root.is_dir():
        raise UsageError(f"--root {root}: not a directory")
    root = root.resolve()
    per_file = per_file if per_file is not None else spec.per_file[0]
    if per_file not in spec.per_file:
        raise UsageError(
            f"--per-file {per_file}: {loaded.file} serves per_file {spec.per_file} only"
        )
    key = corpus_key or workdir.root_key(root)
    state = workdir.state_dir(work, "probe", loaded.name, key).resolve()
    ctx = driver.Context(root=root, state=state, corpus=key, lang=lang)
    report = ProbeReport(loaded=loaded, root=root, state=state, query=query, query_id=query_id,
                         k=k, n=k * spec.candidates, per_file=per_file,
                         expected=list(expected or []))
    pin = corpus_pin or str(root)
    if reindex:
        workdir.clear(state)
    report.index_command = driver.render_index(loaded, ctx)
    if report.index_command is not None:
        if workdir.index_finished(state, loaded.sha256, pin):
            report.index_cached = True
        else:
            workdir.forget_finished(state)
            _, report.index = driver.run_index(loaded, ctx)
            assert report.index is not None
            if not report.index.ok:
                tail = report.index.stderr_tail()
                report.error = f"index {report.index.describe_failure()}" + (
                    f"\n{tail}" if tail else "")
                return report
            workdir.mark_finished(state, loaded.sha256, pin)
    state.mkdir(parents=True, exist_ok=True)
    with driver.Searcher(loaded, ctx) as searcher:
        report.search = searcher.search(query, k, per_file)
    report.parsed = report.search.parsed
    if report.search.error:
        report.error = f"search failed: {report.search.error}"
    _grade(report)
    return report


def _grade(report: ProbeReport) -> None:
    spec = report.loaded.spec
    search = report.search
    assert search is not None
    normalized = scoring.normalize(search.hits, report.root, strip_prefix=spec.strip_prefix,
                                   line_base=spec.line_base)
    report.outside, report.outside_examples = normalized.outside, normalized.outside_examples
    slots = scoring.collapse(normalized.hits, report.per_file)
    report.slots = len(slots)
    kept = {(h.rank): s.rank for s in slots for h in s.chunks}
    files: dict[str, list[str] | None] = {}
    missing = 0
    for hit in normalized.hits:
        if hit.path not in files:
            files[hit.path] = read_lines(report.root, hit.path)
        lines = files[hit.path]
        exists = lines is not None
        missing += not exists
        span_text = None
        past_eof = False
        if lines is not None and hit.start is not None and hit.end is not None:
            past_eof = hit.end > len(lines) or hit.start < 1
            span_text = "\n".join(lines[max(hit.start, 1) - 1 : hit.end][:3])
        exp_file = any(e.path == hit.path for e in report.expected)
        exp_chunk = any(
            e.path == hit.path and e.start is not None and hit.start is not None
            and hit.end is not None and hit.start <= e.end and e.start <= hit.end  # type: ignore[operator]
            for e in report.expected
        )
        report.hits.append(ProbeHit(hit.rank, kept.get(hit.rank), hit, exists, span_text,
                                    past_eof, exp_file, exp_chunk))
    for ph in report.hits:
        if ph.slot is None:
            continue
        if ph.expected_file and report.expected_file_rank is None:
            report.expected_file_rank = ph.slot
        if ph.expected_chunk and report.expected_chunk_rank is None:
            report.expected_chunk_rank = ph.slot

    raw = len(search.hits)
    if scoring.lacks_spans(search.hits, spec.spans):
        report.warnings.append(
            "results carry no line spans although the spec says spans: true -- "
            "the span fields (parse.start/end/lines) are wrong"
        )
    tree_files = sum(len(files) for _, _, files in os.walk(report.root))
    if scoring.depth_limited(raw, report.n, report.slots, report.k, tree_files):
        report.warnings.append(
            f"only {report.slots} file slots from {raw} raw results (n={report.n}) for "
            f"cutoff {report.k} -- the engine is losing recall to request depth; "
            "raise `candidates`"
        )
    if missing:
        report.notes.append(
            f"{missing} result(s) name files that do not exist in the tree -- "
            "check strip_prefix and the path field"
        )
    if report.outside:
        report.notes.append(
            f"{report.outside} result(s) point outside the tree and were dropped "
            f"(e.g. {report.outside_examples[0]!r})"
        )
    past = sum(ph.past_eof for ph in report.hits)
    if past:
        report.notes.append(
            f"{past} span(s) run past the end of their file or start before line 1 -- "
            "check line_base"
        )
    if not spec.spans:
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
