"""Safe archive extraction: nothing may land outside the target.

Refused, with the member named: absolute paths, `..` components, links whose
target leaves the archive's tree, hard links to members outside it, device
and FIFO files. The archive's single top folder (`rich-13.9.4/`, npm's
`package/`) is stripped. Extraction goes to a temporary sibling directory
that is renamed into place only when everything succeeded, so a refused or
broken archive leaves nothing half-unpacked.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile
import zipfile
from pathlib import Path

from ..errors import CorpusError


def _clean(name: str, archive: Path) -> str:
    name = name.replace("\\", "/")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise CorpusError(f"{archive}: member {name!r} has an absolute path; refusing to unpack")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise CorpusError(f"{archive}: member {name!r} escapes the target with '..'; "
                          "refusing to unpack")
    return "/".join(parts)


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


def _link_inside(member_path: str, target: str, archive: Path, name: str) -> None:
    if target.startswith("/"):
        raise CorpusError(f"{archive}: link {name!r} points to absolute path {target!r}; "
                          "refusing to unpack")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(member_path), target))
    if resolved == ".." or resolved.startswith("../"):
        raise CorpusError(f"{archive}: link {name!r} -> {target!r} points outside the archive; "
                          "refusing to unpack")


def extract(archive: Path, dest: Path) -> None:
    """Unpack a .tar(.gz|.bz2|.xz), .tgz or .zip into dest (which must not exist)."""
    if dest.exists():
        raise CorpusError(f"{dest} already exists; remove it to unpack again")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        if zipfile.is_zipfile(archive):
            _extract_zip(archive, tmp)
        else:
            _extract_tar(archive, tmp)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _extract_tar(archive: Path, tmp: Path) -> None:
    try:
        tar = tarfile.open(archive)  # noqa: SIM115 -- closed by the `with tar` below
    except (tarfile.TarError, OSError) as exc:
        raise CorpusError(f"{archive}: not a readable archive: {exc}") from None
    with tar:
        members = tar.getmembers()
        cleaned = [_clean(m.name, archive) for m in members]
        top = _top_folder(cleaned)
        plan: list[tuple[tarfile.TarInfo, str]] = []
        for member, name in zip(members, cleaned, strict=True):
            rel = _strip(name, top)
            if not rel:
                continue
            if member.ischr() or member.isblk() or member.isfifo() or member.isdev():
                raise CorpusError(f"{archive}: member {member.name!r} is a device or FIFO; "
                                  "refusing to unpack")
            if member.issym():
                _link_inside(rel, member.linkname, archive, member.name)
            elif member.islnk():
                target = _strip(_clean(member.linkname, archive), top)
                if not target:
                    raise CorpusError(f"{archive}: hard link {member.name!r} points outside "
                                      "the archive; refusing to unpack")
            plan.append((member, rel))
        for member, rel in plan:
            out = tmp / rel
            if member.isdir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            _no_link_in_path(tmp, out.parent, archive, member.name)
            if member.issym():
                os.symlink(member.linkname, out)
            elif member.islnk():
                os.link(tmp / _strip(_clean(member.linkname, archive), top), out)
            elif member.isfile():
                src = tar.extractfile(member)
                assert src is not None
                with src, open(out, "wb") as fh:
                    shutil.copyfileobj(src, fh, 1 << 20)
                os.chmod(out, 0o755 if member.mode & 0o111 else 0o644)


def _no_link_in_path(tmp: Path, folder: Path, archive: Path, name: str) -> None:
    """A member must not be written through a symlinked folder created earlier."""
    rel = folder.relative_to(tmp)
    current = tmp
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            raise CorpusError(f"{archive}: member {name!r} would be written through the "
                              f"symlink {part!r}; refusing to unpack")


def _extract_zip(archive: Path, tmp: Path) -> None:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        cleaned = [_clean(i.filename, archive) for i in infos]
        top = _top_folder(cleaned)
        for info, name in zip(infos, cleaned, strict=True):
            rel = _strip(name, top)
            if not rel:
                continue
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise CorpusError(f"{archive}: member {info.filename!r} is a symlink inside a "
                                  "zip; refusing to unpack")
            out = tmp / rel
            if info.is_dir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(out, "wb") as fh:
                shutil.copyfileobj(src, fh, 1 << 20)
