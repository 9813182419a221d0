"""`source = "path"`: a local directory (used in place) or archive (sha256 optional).

For private code: nothing is downloaded. A relative path is relative to the
corpora file. A directory is copied into the tree at setup and may be edited
afterwards: setup records its files by content (corpus/setup.py), so an edit is
noticed and the tree rebuilt rather than the old copy measured.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ...errors import CorpusError
from .. import unpack
from ..entry import Entry
from .base import Fetched, Request, Source
from .fetching import check_sha256


class PathCorpus(Entry):
    source: Literal["path"]
    path: str
    sha256: str | None = None

    def pin(self) -> str:
        return f"path {self.path}" + (f" sha256:{self.sha256}" if self.sha256 else " (unpinned)")


def where(spec: PathCorpus, config_dir: Path) -> Path:
    """The file or folder the entry names, a relative path taken from the corpora file's."""
    source = Path(spec.path).expanduser()
    return source if source.is_absolute() else config_dir / source


def folder(entry: object, config_dir: Path) -> Path | None:
    """The directory a `path` entry uses in place; None for an archive or another source."""
    if not isinstance(entry, PathCorpus) or entry.sha256:
        return None
    source = where(entry, config_dir)
    return source if source.is_dir() else None


def fetch(request: Request) -> Fetched:
    spec: PathCorpus = request.entry
    source = where(spec, request.config_dir)
    if source.is_dir():
        if spec.sha256:
            raise CorpusError(f"{request.what}: sha256 pins an archive, but {source} is a "
                              "directory")
        return Fetched(source, "local directory (used in place)", in_place=True)
    if not source.is_file():
        raise CorpusError(f"{request.what}: path {source} does not exist")
    if spec.sha256:
        check_sha256(source, spec.sha256, request.what)
    unpack.extract(source, request.dirs.checkout)
    how = "local archive" + (", sha256 verified" if spec.sha256 else " (unpinned)")
    return Fetched(request.dirs.checkout, how)


SOURCE = Source("path", PathCorpus, fetch)
