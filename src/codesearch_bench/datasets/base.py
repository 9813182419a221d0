"""What every importer produces: corpora whose files and queries came from a dataset file.

An importer reads the upstream format from its own definition and returns a
`Suite`; `write.py` turns it into a folder `bench compare --corpora-file` runs.
Every row an importer drops is counted under a reason, never dropped silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..gold.queries import Query


@dataclass
class ImportedCorpus:
    name: str
    files: dict[str, bytes]  # the generated tree: path -> content
    queries: list[Query]
    languages: list[str] = field(default_factory=list)
    description: str = ""
    git: tuple[str, str] | None = None  # (url, commit): pinned in git, no files of its own


@dataclass
class Suite:
    dataset: str
    corpora: list[ImportedCorpus]
    provenance: dict[str, Any]  # dataset, revision, source files and their sha256, license
    kept: int = 0
    dropped: Counter[str] = field(default_factory=Counter)


@dataclass(frozen=True)
class Options:
    source: Path
    name: str | None = None  # the corpus name (default: the dataset's)
    split: str = "test"  # which qrels file (BEIR: qrels/<split>.tsv)
    extension: str = "txt"  # the generated files' extension (a grammar for `py`, `js`...)
    limit: int | None = None  # keep the first N queries (a quick look)
    license: str | None = None  # the dataset's license, when the files do not say
    languages: list[str] | None = None  # RepoQA: only these languages (default: all)


@dataclass(frozen=True)
class Importer:
    name: str
    summary: str
    load: Callable[[Options], Suite]
