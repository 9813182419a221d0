"""Setting a corpus up: fetch through its source kind, verify, build the candidate tree.

A finished setup leaves a marker holding the corpus's identity (its whole
entry in corpora.toml), so running setup again is a file read. Every engine
is given exactly `tree/`; gold and result paths are relative to it.

A `path` corpus's folder is the user's and may change after setup, which the
entry's identity cannot see: the marker also holds the stamps of the folder's
selected files (sizes and mtimes, content hashes) and their content identity.
Each check re-stats the folder, reads only files whose size or mtime moved, and
a folder whose content changed is not set up: the next setup rebuilds the tree
from it and says why (`source_changes`), never measuring the old copy.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import BenchError
from . import fingerprint as fp
from .config import Corpus
from .layout import CorpusDir
from .sources import SOURCES, Progress, Request, no_progress
from .sources import path as path_source
from .tree import Manifest, build_tree, selected_files


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


def _marker(where: CorpusDir) -> dict[str, Any] | None:
    try:
        marker = json.loads(where.setup_marker.read_text())
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def is_set_up(root: Path, corpus: Corpus) -> bool:
    where = dirs(root, corpus)
    marker = _marker(where)
    return (marker is not None and marker.get("identity") == corpus.identity
            and where.tree.is_dir() and not _folder_changes(corpus, marker)[0])


def source_changes(root: Path, corpus: Corpus) -> list[str]:
    """What changed in a `path` corpus's folder since setup copied it into the tree, one
    line each (`modified: a.py (size 10 -> 12, content)`); [] when nothing did, or the
    corpus is not set up from a folder."""
    marker = _marker(dirs(root, corpus))
    if marker is None or marker.get("identity") != corpus.identity:
        return []
    return _folder_changes(corpus, marker)[0]


def why_not_set_up(root: Path, corpus: Corpus) -> str:
    """Why a corpus is not set up, to follow "is": its folder changed since setup (the
    first change named), or it was never set up under this root."""
    if changes := source_changes(root, corpus):
        return f"not set up: {changed_since_setup(changes)}"
    return f"not set up under {root}"


def changed_since_setup(changes: list[str]) -> str:
    more = f" and {len(changes) - 1} more" if len(changes) > 1 else ""
    return f"its folder changed since setup ({changes[0]}{more})"


def content_identity(root: Path, corpus: Corpus) -> str | None:
    """The content identity of the folder the tree was built from, as setup recorded it."""
    return recorded_content(dirs(root, corpus))


def recorded_content(where: CorpusDir) -> str | None:
    """`content_identity` of the corpus set up in `where`; None for a pinned source."""
    marker = _marker(where)
    source = marker.get("source") if marker is not None else None
    content = source.get("content") if isinstance(source, dict) else None
    return content if isinstance(content, str) else None


def _stamps(corpus: Corpus, folder: Path, reuse: fp.Fingerprint | None) -> fp.Fingerprint:
    # Only what setup copies: a change in .git or an excluded file changes no tree.
    return fp.take_files(folder, selected_files(corpus.name, corpus.spec, folder), reuse)


def _folder_changes(corpus: Corpus,
                    marker: dict[str, Any]) -> tuple[list[str], fp.Fingerprint | None]:
    """The folder's changes since the marker's stamps, and its stamps now (None: not a
    folder corpus, or nothing to compare)."""
    folder = path_source.folder(corpus.spec, corpus.config_file.parent)
    if folder is None:
        return [], None
    source = marker.get("source")
    try:
        assert isinstance(source, dict)
        recorded = fp.Fingerprint.from_json(source.get("fingerprint"))
    except (AssertionError, ValueError):
        # Set up before folders were recorded, or a damaged marker: the copy's content is
        # unknown, so it is not trusted.
        return [f"no record of what {folder} held when it was set up"], None
    try:
        now = _stamps(corpus, folder, recorded)
    except (BenchError, OSError) as exc:
        return [f"{folder} cannot be read ({exc})"], None
    return fp.changes_between(recorded, now, mtimes=False), now


def setup(corpus: Corpus, root: Path, *, progress: Progress | None = None) -> SetupResult:
    """Fetch, verify, unpack and build the candidate tree (or reuse a verified one)."""
    where = dirs(root.resolve(), corpus)
    marker = _marker(where)
    changes: list[str] = []
    if marker is not None and marker.get("identity") == corpus.identity and where.tree.is_dir():
        changes, now = _folder_changes(corpus, marker)
        if not changes:
            if now is not None and now != fp.Fingerprint.from_json(marker["source"]
                                                                    ["fingerprint"]):
                _mark(where, corpus, now)  # touched, not changed: read no file again
            return SetupResult(corpus, where.tree, Manifest.read(where.manifest), True,
                               "already set up")
    where.base.mkdir(parents=True, exist_ok=True)
    where.setup_marker.unlink(missing_ok=True)
    previous = _fetch_record(where, corpus.pin)
    checkout, how, in_place, record = _materialize(corpus, where, progress or no_progress)
    # Stamped before the copy: an edit made while it runs is seen by the next check.
    stamps = _stamps(corpus, checkout, None) if path_source.folder(
        corpus.spec, corpus.config_file.parent) is not None else None
    # Hard links save a copy of bench's own checkout; the user's own files are copied, so
    # an engine that writes to its tree can never change them.
    manifest = build_tree(corpus.name, corpus.pin, corpus.spec, checkout, where,
                          link=not in_place)
    if how == "checkout reused":
        record = previous  # the fetch that made the checkout is still what it cost
    if record is not None:
        manifest = replace(manifest, fetch=record)
        manifest.write(where.manifest)
    _mark(where, corpus, stamps)
    if changes:
        shown = "; ".join(changes[:3]) + (f" and {len(changes) - 3} more" if len(changes) > 3
                                          else "")
        how = f"{how}; the tree was rebuilt, the folder changed since setup ({shown})"
    return SetupResult(corpus, where.tree, manifest, False, how)


def _mark(where: CorpusDir, corpus: Corpus, stamps: fp.Fingerprint | None) -> None:
    marker: dict[str, Any] = {"identity": corpus.identity, "pin": corpus.pin}
    if stamps is not None:
        marker["source"] = {"content": fp.content_id(stamps), "fingerprint": stamps.to_json()}
    where.setup_marker.write_text(json.dumps(marker))


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
