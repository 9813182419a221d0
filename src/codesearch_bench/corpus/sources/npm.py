"""`source = "npm"`: a package tarball, pinned by its integrity (sha512).

`npm pack NAME@VERSION --json` fetches it through npm's own configuration; the
tarball's digest must equal the pinned integrity before it is unpacked.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import field_validator

from ...errors import CorpusError
from .. import unpack
from ..entry import Entry
from .base import Fetched, Request, Source
from .fetching import check_integrity


class NpmCorpus(Entry):
    source: Literal["npm"]
    package: str
    version: str
    integrity: str

    @field_validator("integrity")
    @classmethod
    def _integrity(cls, value: str) -> str:
        if not re.match(r"^sha(1|256|384|512)-[A-Za-z0-9+/=]+$", value):
            raise ValueError("integrity looks like 'sha512-<base64>' (from `npm view NAME@VER "
                             "dist.integrity`)")
        return value

    def pin(self) -> str:
        return f"npm {self.package}@{self.version} {self.integrity}"


def fetch(request: Request) -> Fetched:
    spec: NpmCorpus = request.entry
    cache = request.dirs.download
    cached = sorted(cache.glob("*.tgz")) if cache.is_dir() else []
    archive = next((p for p in cached if spec.version in p.name), None)
    if archive is None:
        archive = npm_pack(spec.package, spec.version, cache)
    try:
        check_integrity(archive, spec.integrity, request.what)
    except CorpusError:
        archive.unlink(missing_ok=True)
        raise
    unpack.extract(archive, request.dirs.checkout)
    return Fetched(request.dirs.checkout, f"npm tarball {archive.name}, integrity verified")


def npm_pack(package: str, version: str, dest_dir: Path) -> Path:
    """`npm pack` the exact version into dest_dir; returns the tarball."""
    if shutil.which("npm") is None:
        raise CorpusError(f"npm {package}@{version}: npm is not on PATH",
                          hint="install Node.js and npm to set up npm corpora")
    dest_dir = dest_dir.resolve()  # npm runs in the temp dir: relative paths would double
    dest_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest_dir) as tmp:
        proc = subprocess.run(
            ["npm", "pack", f"{package}@{version}", "--json", "--pack-destination", tmp],
            capture_output=True, text=True, cwd=tmp, timeout=600,
        )
        if proc.returncode != 0:
            raise CorpusError(f"npm pack {package}@{version} failed: "
                              f"{proc.stderr.strip()[-500:]}")
        try:
            info = json.loads(proc.stdout)[0]
        except (ValueError, IndexError, KeyError):
            raise CorpusError(f"npm pack {package}@{version}: unreadable output") from None
        filename = str(info["filename"])
        produced = Path(tmp) / filename
        final = dest_dir / filename.replace("/", "-")
        os.replace(produced, final)
    return final




SOURCE = Source("npm", NpmCorpus, fetch)
