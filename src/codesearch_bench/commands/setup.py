"""`bench setup`: fetch each pinned corpus, verify it, build its candidate tree.

One corpus failing does not stop the others; the failures are returned with
the results and the CLI exits non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import corpora, sources
from ..errors import BenchError


@dataclass(frozen=True)
class SetupOutcome:
    name: str
    result: corpora.SetupResult | None
    error: BenchError | None


def run(corpora_file: Path, names: str | None, root: Path,
        progress: sources.Progress | None = None) -> list[SetupOutcome]:
    table = corpora.load_corpora(corpora_file)
    out = []
    for corpus in corpora.select(table, names):
        try:
            out.append(SetupOutcome(corpus.name, corpora.setup(corpus, root, progress=progress),
                                    None))
        except BenchError as exc:
            out.append(SetupOutcome(corpus.name, None, exc))
    return out
