"""Setting a corpus up: fetch through its source kind, verify, build the candidate tree.

A finished setup leaves a marker holding the corpus's identity (its whole
entry in corpora.toml), so running setup again is a file read. Every engine
is given exactly `tree/`; gold and result paths are relative to it.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import BenchError
from .config import Corpus
from .layout import CorpusDir
from .sources import SOURCES, Progress, Request, no_progress
from .tree import Manifest, build_tree


@dataclass(frozen=True)
class SetupResult:
    corpus: Corpus
    tree: Path
    manifest: Manifest
    cached: bool
    how: str


@dataclass(frozen=True)
class SetupOutcome:
    """One corpus of `bench setup`: set up, or the error that stopped it."""

    name: str
    result: SetupResult | None
    error: BenchError | None


def dirs(root: Path, corpus: Corpus) -> CorpusDir:
    return CorpusDir.of(root, corpus.name)


def is_set_up(root: Path, corpus: Corpus) -> bool:
    where = dirs(root, corpus)
    try:
        marker = json.loads(where.setup_marker.read_text())
    except (OSError, ValueError):
        return False
    return marker.get("identity") == corpus.identity and where.tree.is_dir()


def setup(corpus: Corpus, root: Path, *, progress: Progress | None = None) -> SetupResult:
    """Fetch, verify, unpack and build the candidate tree (or reuse a verified one)."""
    where = dirs(root.resolve(), corpus)
    if is_set_up(root.resolve(), corpus):
        return SetupResult(corpus, where.tree, Manifest.read(where.manifest), True,
                           "already set up")
    where.base.mkdir(parents=True, exist_ok=True)
    where.setup_marker.unlink(missing_ok=True)
    previous = _fetch_record(where, corpus.pin)
    checkout, how, in_place, record = _materialize(corpus, where, progress or no_progress)
    # Hard links save a copy of bench's own checkout; the user's own files are copied, so
    # an engine that writes to its tree can never change them.
    manifest = build_tree(corpus.name, corpus.pin, corpus.spec, checkout, where,
                          link=not in_place)
    if how == "checkout reused":
        record = previous  # the fetch that made the checkout is still what it cost
    if record is not None:
        manifest = replace(manifest, fetch=record)
        manifest.write(where.manifest)
    where.setup_marker.write_text(json.dumps({"identity": corpus.identity, "pin": corpus.pin}))
    return SetupResult(corpus, where.tree, manifest, False, how)


def setup_all(corpora: list[Corpus], root: Path, progress: Progress | None = None,
              done: Callable[[int, int, int], None] | None = None) -> list[SetupOutcome]:
    """Each corpus in turn; one failing does not stop the others.

    `done(corpora finished, corpora in all, bytes of the trees set up so far)` is
    called before the first and after each one, for a progress line.
    """
    out = []
    stored = 0
    if done is not None:
        done(0, len(corpora), 0)
    for i, corpus in enumerate(corpora, 1):
        try:
            result = setup(corpus, root, progress=progress)
            out.append(SetupOutcome(corpus.name, result, None))
            stored += result.manifest.bytes
        except BenchError as exc:
            out.append(SetupOutcome(corpus.name, None, exc))
        if done is not None:
            done(i, len(corpora), stored)
    return out


def _fetch_record(where: CorpusDir, pin: str) -> dict[str, Any] | None:
    """The fetch record of the manifest setup last wrote, when it was of this pin."""
    try:
        manifest = Manifest.read(where.manifest)
    except BenchError:
        return None
    return manifest.fetch if manifest.pin == pin else None


def _materialize(corpus: Corpus, where: CorpusDir,
                 progress: Progress) -> tuple[Path, str, bool, dict[str, Any] | None]:
    checkout, pin_file = where.checkout, where.checkout_pin
    if checkout.is_dir() and pin_file.is_file() and pin_file.read_text() == corpus.pin:
        return checkout, "checkout reused", False, None
    if checkout.exists():
        shutil.rmtree(checkout)
    pin_file.unlink(missing_ok=True)
    source = SOURCES[corpus.spec.source]
    fetched = source.fetch(Request(corpus.name, corpus.spec, where, corpus.config_file.parent,
                                   progress))
    if not fetched.in_place:
        pin_file.write_text(corpus.pin)
    return fetched.checkout, fetched.how, fetched.in_place, fetched.record


def invalidate(root: Path, corpus: Corpus) -> None:
    """Forget a set-up corpus whose tree an engine changed: the next setup starts over.

    The tree may share inodes with the checkout, so both are rebuilt from the source.
    """
    where = dirs(root, corpus)
    where.setup_marker.unlink(missing_ok=True)
    where.checkout_pin.unlink(missing_ok=True)
