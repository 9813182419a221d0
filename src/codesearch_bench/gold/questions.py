"""A corpus's hand-written questions as validate and compare read them.

A corpus may have none -- no `queries` key, or a file with no question in it --
and is then run on its needle track only: a choice, said as a note. A `queries`
file that is named but missing or malformed is a typo and stays an error. A
question with no `split` is run by `--split all` alone, which validate says
before a `--split test` run finds it out.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..corpus.config import Corpus
from ..errors import QueryError
from .queries import QuerySet, load_queries

#: what a corpus without questions is run on, and how to ask for it
NEEDLES_ONLY = ("it is run on its needle track only (`bench compare --query-set needles`, "
                "or `--query-set all`)")


@dataclass(frozen=True)
class Questions:
    """The corpus's question set, or None and why it has none."""

    query_set: QuerySet | None
    none_because: str = ""

    @property
    def note(self) -> str:
        """What validate and compare say of a corpus without questions."""
        return f"no hand-written questions ({self.none_because}): {NEEDLES_ONLY}"


def questions_of(corpus: Corpus) -> Questions:
    """The corpus's hand-written questions; raises QueryError for a named file that is
    missing or malformed."""
    path = corpus.queries_path
    if path is None:
        return Questions(None, "corpora.toml names no `queries` file for it")
    if not path.exists():
        raise QueryError(f"{path}: no such query set ({corpus.config_file}: corpus "
                         f"`{corpus.name}`, key `queries`): fix the path, which is relative "
                         "to corpora.toml, or drop the key to run the corpus on its needle "
                         "track only")
    qs = load_queries(path)
    if not qs.queries:
        return Questions(None, f"its query set {path} holds no question")
    return Questions(qs)


def unsplit(qs: QuerySet) -> str | None:
    """The warning for questions with no `split`, or None when every one has one."""
    missing = sum(q.split is None for q in qs.queries)
    if not missing:
        return None
    total = len(qs.queries)
    if missing == total:
        what = (f"no query of the {total} has a `split`: `--split dev` and `--split test` "
                "find none and stop")
    else:
        what = (f"{missing} of its {total} queries lack a `split`: `--split dev` and "
                "`--split test` leave them out")
    return (f"{qs.path}: {what}; only `--split all` (the default) runs them. Give each query "
            '"split": "dev" or "test" to tune on one and report on the other')
