"""Validate one set-up corpus: its query set loads, is honest, and every gold item resolves.

Per corpus: files, tier, queries, gold resolved, lint problems (duplicate ids,
leaked symbol names) and every failure with the nearest path or symbol as a
suggestion; and the needle track, generated if it is not yet, with its gold
resolved on the doc-blanked tree. `bench validate` shows these; any problem makes it exit
non-zero. Notes are said without failing: a corpus with no hand-written questions (run on
its needle track only), questions without a split, include globs that take documentation
files (engines search them; needles whose words they repeat are dropped).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..corpus import setup
from ..corpus.config import Corpus
from ..corpus.tree import Manifest, tree_files
from ..errors import BenchError
from .needles import track as needles
from .needles.elsewhere import is_documentation
from .queries import lint
from .questions import questions_of, unsplit
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
    notes: list[str] = field(default_factory=list)  # said, never failed on
    needles_only: bool = False  # no hand-written questions: run on the needle track only

    @property
    def ok(self) -> bool:
        failed = any(r is not None and r.failures for r in (self.report, self.needles))
        return not (self.errors or self.lint or failed)


def check_corpus(corpus: Corpus, root: Path, *, selection: Sequence[str] = ()) -> CorpusCheck:
    """`selection`: the flags that chose the corpora file and the folders (--suite, --work
    ...), repeated in the commands the problems name."""
    check = CorpusCheck(corpus.name)
    if not setup.is_set_up(root, corpus):
        command = shlex.join(["bench", "setup", "--corpus", corpus.name, *selection])
        check.errors.append(f"{setup.why_not_set_up(root, corpus)}: run `{command}`"
                            ", or point --work (or --corpora-root, $BENCH_WORK, "
                            "$BENCH_CORPORA) at where it was set up")
        return check
    where = setup.dirs(root, corpus)
    check.manifest = Manifest.read(where.manifest)
    try:
        questions = questions_of(corpus)
    except BenchError as exc:
        check.errors.append(exc.message)
        return check
    qs = questions.query_set
    if qs is None:
        check.needles_only = True
        check.notes.append(questions.note)
    else:
        check.queries = len(qs.queries)
        check.lint = lint(qs)
        if (warning := unsplit(qs)) is not None:
            check.notes.append(warning)
        check.report = resolve_set(corpus, where.tree, qs, where.gold)
    try:
        # Generated from the set-up tree on first use (seconds on the large corpora), kept.
        built = needles.prepare(corpus, where)
        check.needles = resolve_set(corpus, built.dirs.tree, built.query_set, built.dirs.gold)
    except BenchError as exc:
        check.errors.append(f"needle track: {exc.message}")
        return check
    if (note := documentation_note(where.tree, built.record)) is not None:
        check.notes.append(note)
    if qs is None and not built.query_set.queries:
        check.errors.append(
            "nothing to run: no hand-written questions, and no documented definition survived "
            f"the needle filters ({built.record.get('candidates', 0)} candidates); give the "
            "corpus a `queries` file in corpora.toml")
    return check


def documentation_note(tree: Path, record: dict[str, object]) -> str | None:
    """Say when the tree engines search holds documentation files (docs/, README, *.rst)."""
    found = [rel for rel in tree_files(tree) if is_documentation(rel)]
    if not found:
        return None
    caught = record.get("found_elsewhere_in")
    in_docs = caught.get("documentation", 0) if isinstance(caught, dict) else 0
    shown = ", ".join(found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
    return (f"the include globs take {len(found)} documentation file(s) ({shown}): engines "
            f"search them, and the needle track dropped {in_docs} needle(s) whose words they "
            "repeat; leave them out with `exclude` in corpora.toml if they are not code")
