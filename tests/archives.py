"""Build small (and deliberately malicious) archives and local git repos for tests."""

from __future__ import annotations

import io
import stat
import subprocess
import tarfile
import warnings
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path


def make_tar(path: Path, members: dict[str, bytes | tuple[str, str]], *, top: str = "pkg-1.0",
             ) -> Path:
    """members: name -> bytes (a file) or ("symlink"|"hardlink"|"fifo", target)."""
    with tarfile.open(path, "w:gz") as tar:
        for name, content in members.items():
            full = f"{top}/{name}" if top else name
            info = tarfile.TarInfo(full)
            if isinstance(content, tuple):
                kind, target = content
                info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                             "fifo": tarfile.FIFOTYPE}[kind]
                info.linkname = target
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return path


@dataclass(frozen=True)
class Member:
    """One tar member, written exactly as given (no top folder added, duplicates kept).

    kind: file, dir, symlink, hardlink, fifo, chr, blk, or raw (tartype as is).
    zeros: a file of that many zero bytes, streamed so a bomb costs no memory.
    """

    name: str
    data: bytes = b""
    kind: str = "file"
    target: str = ""
    mode: int = 0o644
    zeros: int = 0
    tartype: bytes = b""
    pax: dict[str, str] = field(default_factory=dict)


def file(name: str, data: bytes = b"x = 1\n", mode: int = 0o644) -> Member:
    return Member(name, data, mode=mode)


def folder(name: str) -> Member:
    return Member(name, kind="dir", mode=0o755)


def symlink(name: str, target: str) -> Member:
    return Member(name, kind="symlink", target=target)


def hardlink(name: str, target: str) -> Member:
    return Member(name, kind="hardlink", target=target)


def special(name: str, kind: str) -> Member:
    return Member(name, kind=kind)


def zeros(name: str, size: int) -> Member:
    return Member(name, zeros=size)


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buf), self.left)
        buf[:n] = bytes(n)
        self.left -= n
        return n


_TYPES = {"file": tarfile.REGTYPE, "dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE,
          "hardlink": tarfile.LNKTYPE, "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE,
          "blk": tarfile.BLKTYPE}


def tar_of(path: Path, members: Sequence[Member], *, compression: str = "gz",
           fmt: int = tarfile.PAX_FORMAT) -> Path:
    """A tar of exactly these members, in this order."""
    with tarfile.open(path, f"w:{compression}", format=fmt) as tar:
        for m in members:
            info = tarfile.TarInfo(m.name)
            info.type = m.tartype or _TYPES[m.kind]
            info.mode = m.mode
            info.linkname = m.target
            info.pax_headers = dict(m.pax)
            if m.kind != "file" or m.tartype:
                tar.addfile(info)
            elif m.zeros:
                info.size = m.zeros
                tar.addfile(info, io.BufferedReader(_Zeros(m.zeros)))
            else:
                info.size = len(m.data)
                tar.addfile(info, io.BytesIO(m.data))
    return path


def escape_chain(top: str, depth: int = 20) -> tuple[list[Member], str]:
    """The issue's chain: `x/y -> ..`, `x/l1 -> y/..`, ... `x/l<depth>`.

    Each link is inside the archive by normpath, but each climbs one folder
    higher on disk, so `x/l<depth>` is `/` from anywhere shallower than depth.
    Returns the members and the name of the last link.
    """
    members = [symlink(f"{top}/x/y", "..")]
    previous = "y"
    for i in range(1, depth + 1):
        members.append(symlink(f"{top}/x/l{i}", f"{previous}/.."))
        previous = f"l{i}"
    return members, f"{top}/x/l{depth}"


@dataclass(frozen=True)
class ZipMember:
    """One zip entry: mode sets the Unix file type and bits kept in external_attr."""

    name: str
    data: bytes = b"x = 1\n"
    mode: int | None = None
    flag_bits: int = 0  # patched into both headers after writing (zipfile resets them)
    zeros: int = 0  # that many zero bytes instead of data, written in chunks


def zip_of(path: Path, members: Sequence[ZipMember]) -> Path:
    """A zip of exactly these entries (duplicates kept), deflated."""
    offsets: list[tuple[int, int]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": wanted here
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for m in members:
                info = zipfile.ZipInfo(m.name)
                info.compress_type = zipfile.ZIP_DEFLATED
                if m.mode is not None:
                    info.external_attr = m.mode << 16
                elif m.name.endswith("/"):
                    info.external_attr = (stat.S_IFDIR | 0o755) << 16
                with zf.open(info, "w") as fh:
                    left = m.zeros
                    while left:
                        fh.write(bytes(min(left, 1 << 20)))
                        left -= min(left, 1 << 20)
                    if not m.zeros:
                        fh.write(m.data)
                if m.flag_bits:
                    offsets.append((info.header_offset, m.flag_bits))
    if offsets:
        _patch_flags(path, offsets)
    return path


def _patch_flags(path: Path, offsets: list[tuple[int, int]]) -> None:
    """Set general-purpose flag bits in the local and the central header of some entries."""
    raw = bytearray(path.read_bytes())
    wanted = dict(offsets)
    for local, bits in offsets:
        raw[local + 6] |= bits & 0xFF
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        local = int.from_bytes(raw[at + 42:at + 46], "little")
        if local in wanted:
            raw[at + 8] |= wanted[local] & 0xFF
        at = raw.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(raw))


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_git_repo(path: Path, commits: list[dict[str, bytes | str | None]]) -> list[str]:
    """A repository with one commit per dict, returning the commit ids. Each dict maps a
    name to its text or bytes, to "->target" (a symlink), or to None (removed)."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.invalid")
    git(path, "config", "user.name", "t")
    shas = []
    for i, files in enumerate(commits):
        for name, content in files.items():
            f = path / name
            f.parent.mkdir(parents=True, exist_ok=True)
            if content is None:
                f.unlink()
            elif isinstance(content, str) and content.startswith("->"):
                f.symlink_to(content[2:])
            else:
                f.write_bytes(content if isinstance(content, bytes) else content.encode())
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"commit {i}")
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas
