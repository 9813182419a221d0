"""Every path inside a set-up corpus's folder, named once.

    <root>/<name>/download/          cached archive (pypi sdist, npm tarball)
    <root>/<name>/checkout/          the unpacked archive or git work tree at the pin
    <root>/<name>/.checkout-pin      the pin the checkout was made from
    <root>/<name>/tree/              the candidate tree every engine is given
    <root>/<name>/manifest.json      files, bytes, files per language, tier, pin
    <root>/<name>/gold/              resolved gold spans, cached by content
    <root>/<name>/.setup-done.json   the corpus identity a finished setup was built from
    <root>/<name>/tracks/<track>/    a track's own tree variant, manifest, gold cache,
                                     generated queries.jsonl and track.json (how it was made)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CorpusDir:
    base: Path

    @classmethod
    def of(cls, root: Path, name: str) -> CorpusDir:
        return cls(root / name)

    @property
    def download(self) -> Path:
        return self.base / "download"

    @property
    def checkout(self) -> Path:
        return self.base / "checkout"

    @property
    def checkout_pin(self) -> Path:
        return self.base / ".checkout-pin"

    @property
    def tree(self) -> Path:
        return self.base / "tree"

    @property
    def manifest(self) -> Path:
        return self.base / "manifest.json"

    @property
    def gold(self) -> Path:
        return self.base / "gold"

    @property
    def setup_marker(self) -> Path:
        return self.base / ".setup-done.json"

    def track(self, name: str) -> CorpusDir:
        """A track's folder, laid out like a corpus's: its tree is what engines search."""
        return CorpusDir(self.base / "tracks" / name)

    @property
    def queries(self) -> Path:
        return self.base / "queries.jsonl"

    @property
    def record(self) -> Path:
        return self.base / "track.json"
