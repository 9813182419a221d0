"""Validate one set-up corpus: its query set loads, is honest, and every gold item resolves.

Per corpus: files, tier, queries, gold resolved, lint problems (duplicate ids,
leaked symbol names) and every failure with the nearest path or symbol as a
suggestion. `bench validate` shows these; any problem makes it exit non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..corpus import setup
from ..corpus.config import Corpus
from ..corpus.tree import Manifest
from ..errors import BenchError
from .queries import lint, load_queries
from .sets import GoldReport, resolve_set


@dataclass
class CorpusCheck:
    name: str
    manifest: Manifest | None = None
    queries: int = 0
    report: GoldReport | None = None
    lint: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        failed = self.report is not None and bool(self.report.failures)
        return not (self.errors or self.lint or failed)


def check_corpus(corpus: Corpus, root: Path) -> CorpusCheck:
    check = CorpusCheck(corpus.name)
    if not setup.is_set_up(root, corpus):
        check.errors.append(f"not set up under {root}: run `bench setup --corpus {corpus.name}`"
                            ", or point --work (or --corpora-root, $BENCH_WORK, "
                            "$BENCH_CORPORA) at where it was set up")
        return check
    where = setup.dirs(root, corpus)
    check.manifest = Manifest.read(where.manifest)
    if corpus.queries_path is None:
        check.errors.append("corpora.toml names no `queries` file for this corpus")
        return check
    try:
        qs = load_queries(corpus.queries_path)
    except BenchError as exc:
        check.errors.append(exc.message)
        return check
    check.queries = len(qs.queries)
    check.lint = lint(qs)
    check.report = resolve_set(corpus, where.tree, qs, where.gold)
    return check
