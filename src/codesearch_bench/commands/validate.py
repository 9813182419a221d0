"""`bench validate`: every gold path and symbol span resolves, and the set is honest.

Per corpus: files, tier, queries, gold resolved, lint problems (duplicate
ids, leaked symbol names) and every failure with the nearest path or symbol
as a suggestion. Any failure makes the command exit non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import corpora, goldset, queries
from ..errors import BenchError
from ..tree import Manifest


@dataclass
class CorpusCheck:
    name: str
    manifest: Manifest | None = None
    queries: int = 0
    report: goldset.GoldReport | None = None
    lint: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        failed = self.report is not None and bool(self.report.failures)
        return not (self.errors or self.lint or failed)


def check_corpus(corpus: corpora.Corpus, root: Path) -> CorpusCheck:
    check = CorpusCheck(corpus.name)
    if not corpora.is_set_up(root, corpus):
        check.errors.append(f"not set up under {root}: run `bench setup --corpus {corpus.name}`")
        return check
    base = corpora.corpus_dir(root, corpus)
    check.manifest = Manifest.read(base / "manifest.json")
    if corpus.queries_path is None:
        check.errors.append("corpora.toml names no `queries` file for this corpus")
        return check
    try:
        qs = queries.load_queries(corpus.queries_path)
    except BenchError as exc:
        check.errors.append(exc.message)
        return check
    check.queries = len(qs.queries)
    check.lint = queries.lint(qs)
    check.report = goldset.resolve_set(corpus, base / "tree", qs, base / "gold")
    return check


def run(corpora_file: Path, names: str | None, root: Path) -> list[CorpusCheck]:
    table = corpora.load_corpora(corpora_file)
    return [check_corpus(c, root) for c in corpora.select(table, names)]
