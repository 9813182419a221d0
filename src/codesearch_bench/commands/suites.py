"""`--suite`: a named suite over the corpora file, or a folder `bench import` wrote.

compare, setup, validate and probe read `--suite` the same way: quick is the
default corpora and their hand-written questions, full is every corpus and
both tracks, and a folder holding corpora.toml is an imported suite (every
corpus in it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..corpus.config import Corpus
from ..errors import QueryError, UsageError
from ..gold.queries import load_queries
from ..workdir import Where


@dataclass(frozen=True)
class Suite:
    corpus: str | None  # --corpus when none is given (None: the default corpora)
    query_set: str


#: quick stays a few minutes on 2 cores: the default corpora, their questions and their
#: name-blind needles (where the power is); full is every corpus and both tracks.
SUITES = {"quick": Suite(None, "all"), "full": Suite("full", "all")}


def suite(value: str, corpora_file: Path) -> tuple[Suite, Path]:
    """The suite `value` names, and the corpora file it reads."""
    if value in SUITES:
        return SUITES[value], corpora_file
    folder = Path(value)
    if (folder / "corpora.toml").is_file():
        return Suite("all", "questions"), folder / "corpora.toml"
    raise UsageError(f"--suite {value!r}: give quick, full, or a folder holding corpora.toml "
                     "(what `bench import` writes)")


def corpus_of_query(corpora: dict[str, Corpus], query_id: str) -> str:
    """The one corpus whose hand-written query set has this id (an imported suite's)."""
    found = []
    for name, corpus in corpora.items():
        path = corpus.queries_path
        if path is None:
            continue
        try:
            ids = {q.id for q in load_queries(path).queries}
        except QueryError:
            continue
        if query_id in ids:
            found.append(name)
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageError(f"--query {query_id}: no corpus of the suite has that query",
                         hint="check the id in the suite's query files, or name --corpus")
    raise UsageError(f"--query {query_id}: several corpora have that id "
                     f"({', '.join(sorted(found))})", hint="name one with --corpus")


def suited(where: Where, args: object) -> Where:
    """`where` reading the corpora file of the command line's --suite, if it names one."""
    value = getattr(args, "suite", None)
    if value is None:
        return where
    return replace(where, corpora_file=suite(value, where.corpora_file)[1])


def selection(args: object) -> tuple[str, ...]:
    """The flags of the command line that chose its corpora and where they live, for a
    command a hint names: `bench setup --corpus X` alone would read the default corpora
    file, which has no corpus of an imported suite, and the default work dir."""
    flags: list[str] = []
    suite_value = getattr(args, "suite", None)
    if suite_value is not None and suite_value != "quick":  # quick: no flag says the same
        flags += ["--suite", str(suite_value)]
    for flag, dest in (("--corpora-file", "corpora_file"), ("--work", "work"),
                       ("--corpora-root", "corpora_root")):
        if (value := getattr(args, dest, None)) is not None:
            flags += [flag, str(value)]
    return tuple(flags)


def corpus_of(args: object) -> str | None:
    """The corpora --suite selects when --corpus is not given (None: the default ones)."""
    value = getattr(args, "suite", None)
    if value is None:
        return None
    return SUITES[value].corpus if value in SUITES else "all"
