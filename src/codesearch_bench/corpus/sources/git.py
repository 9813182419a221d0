"""`source = "git"`: the files of exactly one commit.

Every commit of one repository is fetched into one shared object store under
the corpora root (gitstore.py): a shallow fetch of the pinned commit when the
server allows it, so a second commit fetches only what the first did not bring,
else every branch and tag once; the commit's tree is written out with `git
archive` into the corpus's checkout, a plain folder (no `.git`). The archive
must name the pinned commit. Private mirrors redirect with git's own
`url.<base>.insteadOf`. The bytes fetched into the store and written to the
checkout are recorded in the corpus's manifest (`fetch`).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator

from ..entry import Entry
from . import gitstore
from .base import Fetched, Request, Source

_HEX40 = re.compile(r"^[0-9a-f]{40}$")


class GitCorpus(Entry):
    source: Literal["git"]
    url: str
    commit: str

    @field_validator("commit")
    @classmethod
    def _commit(cls, value: str) -> str:
        if not _HEX40.match(value):
            raise ValueError("a git pin is the full 40-hex commit id (lower case)")
        return value

    def pin(self) -> str:
        return f"git {self.url}@{self.commit}"


def fetch(request: Request) -> Fetched:
    spec: GitCorpus = request.entry
    root = request.dirs.base.parent
    done = gitstore.pin(root, spec.url, spec.commit, request.dirs.checkout, what=request.what)
    how = (f"{done.how} ({gitstore.human(done.fetched)} fetched, "
           f"{gitstore.human(done.stored)} stored)")
    return Fetched(request.dirs.checkout, how, record=done.record(root, spec.url, spec.commit))


SOURCE = Source("git", GitCorpus, fetch)
