"""`source = "debian"`: a Debian source package's upstream tarball, pinned by its sha256.

The tarball comes through apt's own configured mirror: the machine's `deb`
entries are turned into `deb-src` entries inside a private apt state folder
(under the corpus's download folder), and `apt-get source --download-only`
runs against that folder alone. System configuration is read, never written;
no host name is written anywhere. Only the upstream (`.orig.tar.*`) tarball
is used: it must match the pinned sha256 before it is unpacked, so Debian's
own patches never reach the tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Literal

from pydantic import field_validator

from ...errors import CorpusError
from .. import unpack
from ..entry import Entry
from . import aptsources
from .base import Fetched, Request, Source
from .fetching import check_sha256, file_digest

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_ORIG = re.compile(r"\.orig\.tar\.(gz|xz|bz2)$")
APT_TIMEOUT = 900


class DebianCorpus(Entry):
    source: Literal["debian"]
    package: str
    version: str
    sha256: str

    @field_validator("sha256")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not _HEX64.match(value):
            raise ValueError("sha256 is the upstream tarball's digest: 64 lower-case hex "
                             "digits (`sha256sum PACKAGE_VERSION.orig.tar.*`)")
        return value

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        if not re.match(r"^[0-9A-Za-z.+~:-]+$", value):
            raise ValueError("version is a Debian version such as '1.23-4' "
                             "(`apt-cache showsrc PACKAGE`)")
        return value

    def pin(self) -> str:
        return f"debian {self.package}={self.version} sha256:{self.sha256}"


def fetch(request: Request) -> Fetched:
    spec: DebianCorpus = request.entry
    archive = _cached(request.dirs.download, spec.sha256)
    how = "cached upstream tarball"
    if archive is None:
        archive = _download(spec, request.dirs.download, request.what)
        how = "upstream tarball through apt's configured mirror"
    unpack.extract(archive, request.dirs.checkout)
    return Fetched(request.dirs.checkout, f"{how} {archive.name}, sha256 verified")


def _cached(folder: Path, sha256: str) -> Path | None:
    if not folder.is_dir():
        return None
    for path in sorted(folder.iterdir()):
        if path.is_file() and _ORIG.search(path.name) and \
                file_digest(path, "sha256").hex() == sha256:
            return path
    return None


def _download(spec: DebianCorpus, folder: Path, what: str) -> Path:
    if shutil.which("apt-get") is None:
        raise CorpusError(f"{what}: apt-get is not on PATH",
                          hint="debian corpora need apt (Debian or Ubuntu); pin a pypi, npm "
                          "or git source instead on other systems")
    folder = folder.resolve()
    state = aptsources.private_state(folder / "apt", what)
    options = aptsources.options(state)
    _apt(["apt-get", *options, "update"], folder, what, "apt-get update")
    drop = folder / "source"
    shutil.rmtree(drop, ignore_errors=True)
    drop.mkdir(parents=True)
    _apt(["apt-get", *options, "source", "--download-only", "--only-source",
          f"{spec.package}={spec.version}"], drop, what,
         f"apt-get source {spec.package}={spec.version}")
    tarballs = sorted(p for p in drop.iterdir() if _ORIG.search(p.name))
    if not tarballs:
        raise CorpusError(f"{what}: {spec.package}={spec.version} has no upstream tarball "
                          "(.orig.tar.*): a native Debian package",
                          hint="pin a package with an upstream tarball, or use a path source")
    if len(tarballs) > 1:
        names = ", ".join(p.name for p in tarballs)
        raise CorpusError(f"{what}: {spec.package}={spec.version} has several upstream "
                          f"tarballs ({names})", hint="pin the main one through a path source")
    try:
        check_sha256(tarballs[0], spec.sha256, what)
    except CorpusError:
        shutil.rmtree(drop, ignore_errors=True)
        raise
    final = folder / tarballs[0].name
    os.replace(tarballs[0], final)
    shutil.rmtree(drop, ignore_errors=True)
    return final


def _apt(argv: list[str], cwd: Path, what: str, label: str) -> None:
    try:
        proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True,
                              timeout=APT_TIMEOUT, env={**os.environ, "LC_ALL": "C"})
    except subprocess.TimeoutExpired:
        raise CorpusError(f"{what}: {label} did not finish in {APT_TIMEOUT} s",
                          hint="check that apt's mirror is reachable") from None
    if proc.returncode != 0:
        tail = (proc.stderr.strip() or proc.stdout.strip())[-600:]
        hint = ("check the package name and version with `apt-cache showsrc PACKAGE`"
                if "source" in label else "check that apt's mirror is reachable")
        raise CorpusError(f"{what}: {label} failed (exit {proc.returncode}): {tail}", hint=hint)


SOURCE = Source("debian", DebianCorpus, fetch)
