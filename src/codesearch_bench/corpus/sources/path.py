"""`source = "path"`: a local directory (used in place) or archive (sha256 optional).

For private code: nothing is downloaded. A relative path is relative to the
corpora file.
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


def fetch(request: Request) -> Fetched:
    spec: PathCorpus = request.entry
    source = Path(spec.path).expanduser()
    if not source.is_absolute():
        source = request.config_dir / source
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
