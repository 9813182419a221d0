"""Validate one set-up corpus: its query set loads, is honest, and every gold item resolves.

Per corpus: files, tier, queries, gold resolved, lint problems (duplicate ids,
leaked symbol names) and every failure with the nearest path or symbol as a
suggestion; and the needle track, generated if it is not yet, with its gold
resolved on the doc-blanked tree. `bench validate` shows these; any problem makes it exit non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..corpus import setup
from ..corpus.config import Corpus
from ..corpus.tree import Manifest
from ..errors import BenchError
from .needles import track as needles
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
    needles: GoldReport | None = None  # the needle track's gold on its doc-blanked tree

    @property
    def ok(self) -> bool:
        failed = any(r is not None and r.failures for r in (self.report, self.needles))
        return not (self.errors or self.lint or failed)


def check_corpus(corpus: Corpus, root: Path) -> CorpusCheck:
    check = CorpusCheck(corpus.name)
    if not setup.is_set_up(root, corpus):
        check.errors.append(f"{setup.why_not_set_up(root, corpus)}: run "
                            f"`bench setup --corpus {corpus.name}`"
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
    try:
        # Generated from the set-up tree on first use (seconds on the large corpora), kept.
        built = needles.prepare(corpus, where)
        check.needles = resolve_set(corpus, built.dirs.tree, built.query_set, built.dirs.gold)
    except BenchError as exc:
        check.errors.append(f"needle track: {exc.message}")
    return check
