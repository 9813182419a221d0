"""Resolve a whole query set's gold against a candidate tree, with a cache.

The cache key is the query-set hash, the corpus identity (pin and file
selection) and the tree-sitter grammar versions, so any change that could
move a span re-resolves it. Only a set that resolved completely is cached.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rapidfuzz import process as fuzz_process

from ..corpus.config import Corpus
from ..corpus.tree import read_lines, tree_files
from ..model import Span
from .grammars import GoldError, grammar_versions
from .queries import GoldRef, QuerySet
from .resolve import resolve

POLICY_VERSION = 2  # bump when the span policy in PROTOCOL.md changes (2: Go var blocks)


@dataclass
class GoldReport:
    spans: dict[str, list[Span]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    resolved: int = 0
    total: int = 0
    cached: bool = False


def cache_key(corpus: Corpus, qs: QuerySet) -> str:
    blob = json.dumps({"queries": qs.sha256, "corpus": corpus.identity,
                       "grammars": grammar_versions(), "policy": POLICY_VERSION},
                      sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def resolve_set(corpus: Corpus, tree: Path, qs: QuerySet, cache_dir: Path | None = None,
                ) -> GoldReport:
    key = cache_key(corpus, qs)
    cache = cache_dir / f"{key}.json" if cache_dir else None
    if cache is not None and cache.is_file():
        try:
            data = json.loads(cache.read_text())
            spans = {qid: [Span(**s) for s in items] for qid, items in data.items()}
            total = sum(len(v) for v in spans.values())
            return GoldReport(spans, [], total, total, cached=True)
        except (ValueError, TypeError):
            cache.unlink(missing_ok=True)
    report = GoldReport()
    files: list[str] | None = None
    for q in qs.queries:
        items: list[Span] = []
        for ref in q.gold:
            report.total += 1
            if not (tree / ref.path).is_file():
                files = files if files is not None else tree_files(tree)
                report.failures.append(f"{q.id}: {ref.path}: no such file in the tree"
                                       + _nearest(ref.path, files))
                continue
            span = _resolve(corpus, tree, q.id, ref, report)
            if span is not None:
                items.append(span)
                report.resolved += 1
        report.spans[q.id] = items
    if cache is not None and not report.failures:
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({qid: [asdict(s) for s in v]
                                     for qid, v in report.spans.items()}))
    return report


def _resolve(corpus: Corpus, tree: Path, qid: str, ref: GoldRef, report: GoldReport,
             ) -> Span | None:
    if ref.symbol is None:
        if ref.end is not None:
            lines = read_lines(tree, ref.path) or []
            if ref.end > len(lines):
                report.failures.append(f"{qid}: {ref.path}: lines {ref.start}-{ref.end} run "
                                       f"past the file's {len(lines)} lines")
                return None
        return Span(ref.path, ref.start, ref.end, grade=ref.grade)
    try:
        return resolve(tree, ref.path, ref.symbol, kind=ref.kind, line=ref.line,
                       h_as_cpp=corpus.spec.h_as_cpp)
    except GoldError as exc:
        tip = f"; nearest: {', '.join(exc.suggestions[:3])}" if exc.suggestions else ""
        report.failures.append(f"{qid}: {ref.label}: {exc}{tip}")
        return None


def _nearest(path: str, files: list[str]) -> str:
    match = fuzz_process.extractOne(path, files, score_cutoff=50)
    return f"; did you mean {match[0]!r}?" if match else ""
