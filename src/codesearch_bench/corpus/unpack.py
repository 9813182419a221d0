"""Safe archive extraction: nothing may land outside the target, nothing changes silently.

Refused, with the member named: absolute paths, `..` components, names too long
for a file system, device and FIFO files, unknown member types, a member
colliding with an earlier one (a duplicate, a file where a folder or a symlink
was), anything written or hard-linked through a symlink, and symlinks whose
target leaves the tree once resolved on disk, link by link (safewrite.py:
nothing is ever opened through a link, so a chain of links that each look
inside cannot lead out). Caps bound the unpacked bytes, the member count and
the compression ratio; each error names its cap and how to raise it.

The archive's single top folder (`rich-13.9.4/`, npm's `package/`) is
stripped. Extraction goes to a temporary sibling directory that is renamed
into place only when everything succeeded, so a refused or broken archive
leaves nothing half-unpacked.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO

from ..errors import CorpusError
from .caps import CHUNK, MAX_COMPONENT_BYTES, MAX_NAME_BYTES, Budget, Inflated, Stream, caps, show
from .safewrite import Target, Unsafe

# What reading a broken archive raises: gzip, bz2 and some zip problems are OSError.
READ_ERRORS = (tarfile.TarError, zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError,
               OSError, NotImplementedError, RuntimeError, ValueError)


def _decompressed(raw: IO[bytes]) -> Stream:
    head = raw.read(6)
    raw.seek(0)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if head.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)
    return raw


def _clean(name: str, archive: Path, label: str | None = None) -> str:
    label = label or f"member {show(name)}"
    unified = name.replace("\\", "/")
    if unified.startswith("/") or (len(unified) > 1 and unified[1] == ":"):
        raise CorpusError(f"{archive}: {label} has an absolute path; refusing to unpack")
    parts = [p for p in unified.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise CorpusError(f"{archive}: {label} escapes the target with '..'; refusing to unpack")
    clean = "/".join(parts)
    size = len(clean.encode("utf-8", "surrogateescape"))
    if size > MAX_NAME_BYTES:
        raise CorpusError(f"{archive}: {label} has a name of {size} bytes, over the cap of "
                          f"{MAX_NAME_BYTES} bytes (a fixed limit); refusing to unpack")
    for part in parts:
        if (n := len(part.encode("utf-8", "surrogateescape"))) > MAX_COMPONENT_BYTES:
            raise CorpusError(f"{archive}: {label} has a name component of {n} bytes; file "
                              f"systems allow {MAX_COMPONENT_BYTES} bytes; refusing to unpack")
    return clean


def _top_folder(names: list[str]) -> str | None:
    tops = {n.split("/", 1)[0] for n in names if n}
    if len(tops) != 1:
        return None
    top = tops.pop()
    # A lone file at the top is not a folder to strip.
    return top if any("/" in n for n in names) else None


def _strip(name: str, top: str | None) -> str:
    if top is None:
        return name
    return name[len(top) + 1:] if name.startswith(top + "/") else ""


def _corrupt(archive: Path, name: str, exc: BaseException) -> CorpusError:
    at = f" at member {show(name)}" if name else ""
    return CorpusError(f"{archive}: the archive is corrupt or truncated{at}: {exc}; "
                       "refusing to unpack", hint="download or rebuild the archive")


def _refusal(archive: Path, label: str, exc: Unsafe) -> CorpusError:
    return CorpusError(f"{archive}: {label} {exc.reason}; refusing to unpack")


def extract(archive: Path, dest: Path, *, max_bytes: int | None = None,
            max_members: int | None = None, max_ratio: int | None = None,
            ratio_floor: int | None = None) -> None:
    """Unpack a .tar(.gz|.bz2|.xz), .tgz or .zip into dest (which must not exist).

    Each cap not given comes from its environment variable (ENV), else its default.
    """
    limits = caps(max_bytes=max_bytes, max_members=max_members, max_ratio=max_ratio,
                  ratio_floor=ratio_floor)
    if dest.exists() or dest.is_symlink():
        raise CorpusError(f"{dest} already exists; remove it to unpack again")
    try:
        budget = Budget(archive, limits)
    except OSError as exc:
        raise CorpusError(f"{archive}: cannot read the archive: {exc.strerror}") from None
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        if zipfile.is_zipfile(archive):
            _extract_zip(archive, tmp, budget)
        else:
            _extract_tar(archive, tmp, budget)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _copy(read: Callable[[int], bytes], fd: int, name: str, archive: Path,
          budget: Budget) -> None:
    with open(fd, "wb") as out:
        while True:
            try:
                chunk = read(CHUNK)
            except READ_ERRORS as exc:
                raise _corrupt(archive, name, exc) from None
            if not chunk:
                return
            budget.add(name, len(chunk), declared=False)
            out.write(chunk)


def _write(archive: Path, name: str, label: str, action: Callable[[], None]) -> None:
    """One member through the target: refusals and OS errors become the member's error."""
    try:
        action()
    except Unsafe as exc:
        raise _refusal(archive, label, exc) from None
    except OSError as exc:
        raise CorpusError(f"{archive}: could not unpack member {show(name)}: "
                          f"{exc.strerror or exc}") from None


def _recheck(archive: Path, target: Target, names: dict[str, str]) -> None:
    try:
        target.recheck()
    except Unsafe as exc:
        rel = exc.rel or ""
        raise _refusal(archive, f"link {show(names.get(rel, rel))} -> "
                                f"{target.links.get(rel, '')!r}", exc) from None


Plan = list[tuple[tarfile.TarInfo, str, str]]


def _extract_tar(archive: Path, tmp: Path, budget: Budget) -> None:
    with open(archive, "rb") as raw:
        stream = Inflated(_decompressed(raw), budget)
        try:
            tar = tarfile.open(fileobj=stream, mode="r:")  # noqa: SIM115 -- `with tar` below
        except tarfile.ReadError as exc:
            raise CorpusError(f"{archive}: not a readable archive: {exc}") from None
        except READ_ERRORS as exc:
            raise _corrupt(archive, "", exc) from None
        with tar:
            plan = _tar_plan(tar, stream, archive, budget)
            names = {rel: m.name for m, rel, _ in plan}
            with Target(tmp) as target:
                for member, rel, link in plan:
                    _tar_member(tar, member, rel, link, target, archive, budget)
                _recheck(archive, target, names)


def _tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str, link: str,
                target: Target, archive: Path, budget: Budget) -> None:
    name = member.name
    budget.current = name
    if member.isdir():
        _write(archive, name, f"member {show(name)}", lambda: target.mkdir(rel))
    elif member.issym():
        _write(archive, name, f"link {show(name)} -> {link!r}",
               lambda: target.symlink(rel, link))
    elif member.islnk():
        _write(archive, name, f"hard link {show(name)}", lambda: target.hardlink(rel, link))
    else:
        def write_file() -> None:
            fd = target.create(rel, executable=bool(member.mode & 0o111))
            try:
                src = tar.extractfile(member)
            except READ_ERRORS as exc:
                os.close(fd)
                raise _corrupt(archive, name, exc) from None
            assert src is not None  # a regular member always has data
            with src:
                _copy(src.read, fd, name, archive, budget)
        _write(archive, name, f"member {show(name)}", write_file)


def _tar_plan(tar: tarfile.TarFile, stream: Inflated, archive: Path, budget: Budget) -> Plan:
    """Every member checked against the caps and the rules before anything is written."""
    members: list[tarfile.TarInfo] = []
    while True:
        try:
            member = tar.next()
        except READ_ERRORS as exc:
            raise _corrupt(archive, budget.current, exc) from None
        if member is None:
            break
        budget.member(member.name)
        if member.isreg():
            budget.add(member.name, member.size, declared=True)
        members.append(member)
    _check_end(tar, stream, archive, budget)
    cleaned = [_clean(m.name, archive) for m in members]
    top = _top_folder(cleaned)
    plan: Plan = []
    for member, name in zip(members, cleaned, strict=True):
        label = f"member {show(member.name)}"
        if member.ischr() or member.isblk() or member.isfifo():
            raise CorpusError(f"{archive}: {label} is a device or FIFO; refusing to unpack")
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            kind = member.type.decode("latin-1")
            raise CorpusError(f"{archive}: {label} has tar type {kind!r}, which is not a file, "
                              "folder or link; refusing to unpack")
        rel = _strip(name, top)
        if not rel:
            if not member.isdir():
                raise CorpusError(f"{archive}: {label} is not a folder, yet every other "
                                  "member is inside it; refusing to unpack")
            continue
        link = member.linkname
        if member.islnk():
            link = _strip(_clean(link, archive, f"hard link {show(member.name)} -> "
                                                f"{show(link)}"), top)
            if not link:
                raise CorpusError(f"{archive}: hard link {show(member.name)} points outside "
                                  "the archive; refusing to unpack")
        plan.append((member, rel, link))
    return plan


def _check_end(tar: tarfile.TarFile, stream: Inflated, archive: Path, budget: Budget) -> None:
    """tarfile ends the archive at the first bad header without a word; bench says so."""
    try:
        stream.seek(tar.offset)
        block = stream.read(tarfile.BLOCKSIZE)
    except READ_ERRORS as exc:
        raise _corrupt(archive, budget.current, exc) from None
    if block.strip(b"\0"):
        after = f" after member {show(budget.current)}" if budget.current else ""
        raise CorpusError(f"{archive}: the archive is corrupt: what follows{after} is not a "
                          "tar header; refusing to unpack",
                          hint="download or rebuild the archive")


def _extract_zip(archive: Path, tmp: Path, budget: Budget) -> None:
    try:
        zf = zipfile.ZipFile(archive)
    except READ_ERRORS as exc:
        raise CorpusError(f"{archive}: not a readable archive: {exc}") from None
    with zf:
        infos = zf.infolist()
        for info in infos:
            budget.member(info.filename)
            _zip_kind(info, archive)
            if not info.is_dir():
                budget.add(info.filename, info.file_size, declared=True)
        cleaned = [_clean(i.filename, archive) for i in infos]
        top = _top_folder(cleaned)
        with Target(tmp) as target:
            for info, name in zip(infos, cleaned, strict=True):
                _zip_member(zf, info, _strip(name, top), target, archive, budget)
            _recheck(archive, target, {})


def _zip_kind(info: zipfile.ZipInfo, archive: Path) -> bool:
    """True for a folder entry; refuses what is neither a file nor a folder, or is encrypted."""
    label = f"member {show(info.filename)}"
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise CorpusError(f"{archive}: {label} is a symlink inside a zip; refusing to unpack")
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise CorpusError(f"{archive}: {label} is a device or FIFO; refusing to unpack")
    if info.flag_bits & 0x1:
        raise CorpusError(f"{archive}: {label} is encrypted; refusing to unpack")
    return info.is_dir() or kind == stat.S_IFDIR


def _zip_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, rel: str, target: Target,
                archive: Path, budget: Budget) -> None:
    name = info.filename
    budget.current = name
    label = f"member {show(name)}"
    is_dir = _zip_kind(info, archive)
    if not rel:
        if not is_dir:
            raise CorpusError(f"{archive}: {label} is not a folder, yet every other member is "
                              "inside it; refusing to unpack")
        return
    if is_dir:
        _write(archive, name, label, lambda: target.mkdir(rel))
        return

    def write_file() -> None:
        fd = target.create(rel, executable=bool((info.external_attr >> 16) & 0o111))
        try:
            src = zf.open(info)
        except READ_ERRORS as exc:
            os.close(fd)
            raise _corrupt(archive, name, exc) from None
        with src:
            _copy(src.read, fd, name, archive, budget)
    _write(archive, name, label, write_file)
