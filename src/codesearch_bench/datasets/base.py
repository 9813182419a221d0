"""What every importer produces: corpora whose files and queries came from a dataset file.

An importer reads the upstream format from its own definition and returns a
`Suite`; `write.py` turns it into a folder `bench compare --corpora-file` runs.
Every row an importer drops is counted under a reason, never dropped silently.
An importer whose dataset is on the Hugging Face hub says so (`Hub`): with no
--from, hub.py loads the pinned revision and hands its rows to the same load.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
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
    first_at: dict[str, str] = field(default_factory=dict)  # reason -> where first dropped


@dataclass(frozen=True)
class ImportOptions:
    source: Path
    name: str | None = None  # the corpus name (default: the dataset's)
    split: str = "test"  # which qrels file (BEIR: qrels/<split>.tsv)
    extension: str = "txt"  # the generated files' extension (a grammar for `py`, `js`...)
    limit: int | None = None  # keep the first N queries (a quick look)
    license: str | None = None  # the dataset's license, when the files do not say
    languages: list[str] | None = None  # RepoQA: only these languages (default: all)
    repos: Path | None = None  # SWE-QA: a folder of local clones, one per repository


#: (config, split) -> that split's rows, from the pinned revision of the dataset on the hub.
Fetch = Callable[[str | None, str], list[dict[str, Any]]]


@dataclass(frozen=True)
class HubSource:
    """One dataset on the Hugging Face hub, pinned to a commit of its repository."""

    id: str  # owner/name on the hub
    revision: str  # a full commit sha of the dataset repository
    config: str | None = None  # load_dataset's `name` (None: the dataset's default config)


@dataclass(frozen=True)
class Hub:
    """Where an importer's rows live on the hub, and how they become what --from reads.

    `export` fetches the split(s) it needs and writes them, in the importer's own
    --from format, under the folder it is given; it returns the path to load, so
    the importer's row handling is the only one.
    """

    variants: Mapping[str, HubSource]  # --variant NAME -> its source; empty: named by --hub
    default: str | None  # the variant loaded when none is named
    export: Callable[[Fetch, HubSource, Path, ImportOptions], Path]


@dataclass(frozen=True)
class Importer:
    name: str
    summary: str
    load: Callable[[ImportOptions], Suite]
    hub: Hub | None = None  # None: not on the hub, --from is required
    download: str = ""  # what --from takes and where to get it (named in errors)
    #: the flags of `bench import NAME` it reads beyond --from, --out, --limit, --license
    #: and those its hub brings (--hub; --variant when it has variants; --split);
    #: --max-tasks brings --task-bytes and --corpora-root with it
    flags: frozenset[str] = frozenset()
