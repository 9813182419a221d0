"""One interface for every kind of corpus source, as pre-commit has for languages.

A source kind is a module of this package exposing `SOURCE`: its pydantic
model (the pin fields on top of `Entry`) and `fetch`, which brings the pinned
content onto disk, verified, and says how. Adding a kind is adding a module
and naming it in the registry (`sources/__init__.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..entry import Entry
from ..layout import CorpusDir
from .fetching import Progress


@dataclass(frozen=True)
class Fetched:
    """Where the pinned content is now, and how it got there (shown by setup)."""

    checkout: Path
    how: str
    in_place: bool = False  # a local directory used as it is: nothing to cache or pin
    # What the fetch cost on disk, kept in the manifest (git: bytes fetched and stored).
    record: dict[str, Any] | None = None


@dataclass(frozen=True)
class Request:
    """What a fetch is given: the entry, its folder, and where relative paths start."""

    name: str
    entry: Any  # the source kind's own Entry subclass
    dirs: CorpusDir
    config_dir: Path
    progress: Progress

    @property
    def what(self) -> str:
        return f"corpus {self.name!r}"


@dataclass(frozen=True)
class Source:
    kind: str
    model: type[Entry]
    fetch: Callable[[Request], Fetched]
