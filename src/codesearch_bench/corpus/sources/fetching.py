"""What every source needs to bring bytes in safely: downloads and digests.

A download lands under a `.part` name and appears only when complete; a
digest is checked before anything is unpacked, so a wrong pin or a changed
upload never reaches the tree.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from ...errors import CorpusError

Progress = Callable[[str, int, int | None], None]  # label, bytes done, total


def no_progress(label: str, done: int, total: int | None) -> None:
    """The progress callback when nobody is watching."""


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


def download(url: str, dest: Path, *, label: str, progress: Progress = no_progress) -> None:
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


