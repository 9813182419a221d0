"""A candidate tree's fingerprint: every path, and each file's size, mtime, mode and content.

Taken when setup builds the tree (and kept in its manifest), checked after an
engine has run on it: an engine that wrote, deleted, added, chmodded or
replaced a file in the tree would otherwise change every later engine's
answers, and their scores, without a word. The content hash is what catches a
rewrite that kept the size and put the mtime back; blake2b-128 costs a few
milliseconds per MiB, so a 2,000-file tree is checked in well under a second.
Nothing here follows a link or blocks on a FIFO an engine left.

The same stamps watch a `path` corpus's own folder, which setup copies into the
tree once: `take(folder, reuse=recorded)` reads only the files whose size or
mtime moved since, and `content_id` names the folder by what its files hold
(paths, kinds, sizes, modes, contents; never mtimes), so a folder touched but
unchanged is the same corpus and one edited is not.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

VERSION = 1
DEFAULT_LIMIT = 20
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC


@dataclass(frozen=True)
class Stamp:
    kind: str  # "file", "folder", "symlink" or "other"
    size: int
    mtime_ns: int
    mode: int  # the permission bits
    digest: str  # a file's content hash, a symlink's target, else ""


@dataclass(frozen=True)
class Fingerprint:
    entries: dict[str, Stamp]  # posix path relative to the tree -> its stamp

    def rows(self) -> dict[str, list[str | int]]:
        """Each entry as the JSON list [kind, size, mtime_ns, mode, digest]."""
        return {rel: [s.kind, s.size, s.mtime_ns, s.mode, s.digest]
                for rel, s in self.entries.items()}

    def to_json(self) -> dict[str, object]:
        return {"version": VERSION, "entries": self.rows()}

    @classmethod
    def from_json(cls, data: object) -> Fingerprint:
        """The inverse of to_json; ValueError names what is malformed."""
        if not isinstance(data, dict) or data.get("version") != VERSION:
            raise ValueError(f"fingerprint: not a version-{VERSION} fingerprint")
        entries = data.get("entries")
        if not isinstance(entries, dict):
            raise ValueError("fingerprint: `entries` is not an object")
        out = {}
        for rel, row in entries.items():
            if not (isinstance(row, list) and len(row) == 5 and isinstance(row[0], str)
                    and all(isinstance(v, int) for v in row[1:4]) and isinstance(row[4], str)):
                raise ValueError(f"fingerprint: entry {rel!r} is not [kind, size, mtime_ns, "
                                 "mode, digest]")
            out[str(rel)] = Stamp(row[0], row[1], row[2], row[3], row[4])
        return cls(out)


def _digest(folder: int | None, name: str, st: os.stat_result) -> str:
    try:
        fd = os.open(name, _READ, dir_fd=folder)
    except OSError:
        return "unreadable"
    with open(fd, "rb") as fh:
        now = os.fstat(fh.fileno())
        if (now.st_ino, now.st_dev) != (st.st_ino, st.st_dev) or not stat.S_ISREG(now.st_mode):
            return "changed while read"
        try:
            return hashlib.file_digest(fh, lambda: hashlib.blake2b(digest_size=16)).hexdigest()
        except OSError:
            return "unreadable"


def _stamp(folder: int | None, name: str, known: Stamp | None = None) -> Stamp:
    st = os.lstat(name, dir_fd=folder)
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISREG(st.st_mode):
        if (known is not None and known.kind == "file" and known.size == st.st_size
                and known.mtime_ns == st.st_mtime_ns):
            # Size and mtime as recorded: the content is taken as recorded, unread.
            return Stamp("file", st.st_size, st.st_mtime_ns, mode, known.digest)
        return Stamp("file", st.st_size, st.st_mtime_ns, mode, _digest(folder, name, st))
    if stat.S_ISDIR(st.st_mode):
        return Stamp("folder", 0, 0, mode, "")  # its mtime moves with every change inside
    if stat.S_ISLNK(st.st_mode):
        return Stamp("symlink", 0, 0, 0, os.readlink(name, dir_fd=folder))
    return Stamp("other", 0, 0, mode, "")


def take(tree: Path, reuse: Fingerprint | None = None) -> Fingerprint:
    """Every path under tree (links recorded, never followed) and its stamp; with `reuse`,
    a file whose size and mtime are as it records keeps its recorded content hash."""
    top = os.fspath(tree)
    entries: dict[str, Stamp] = {}
    known = reuse.entries if reuse is not None else {}
    for root, dirs, files, folder in os.fwalk(top, follow_symlinks=False):
        base = os.path.relpath(root, top)
        for name in [*dirs, *files]:
            rel = name if base == "." else f"{base}/{name}"
            try:
                key = rel.replace(os.sep, "/")
                entries[key] = _stamp(folder, name, known.get(key))
            except FileNotFoundError:
                continue  # gone between the listing and the lstat
    return Fingerprint(dict(sorted(entries.items())))


def content_id(fp: Fingerprint) -> str:
    """The folder's identity by content: every path, kind, size, mode and content hash.
    Mtimes are left out: a file touched but unchanged keeps the identity."""
    h = hashlib.blake2b(digest_size=16)
    for rel, s in fp.entries.items():
        h.update(f"{rel}\0{s.kind}\0{s.size}\0{s.mode}\0{s.digest}\n".encode(
            "utf-8", errors="surrogateescape"))
    return h.hexdigest()


def take_files(root: Path, rels: list[str], reuse: Fingerprint | None = None) -> Fingerprint:
    """The stamps of the listed files under root (a folder's selection: what setup copies),
    each read only when its size or mtime moved since `reuse`; a file gone is left out."""
    known = reuse.entries if reuse is not None else {}
    entries: dict[str, Stamp] = {}
    for rel in sorted(rels):
        try:
            entries[rel] = _stamp(None, os.path.join(root, rel), known.get(rel))
        except FileNotFoundError:
            continue  # gone between the listing and the lstat: a removal
    return Fingerprint(entries)


def _differences(old: Stamp, new: Stamp) -> list[str]:
    out = []
    if old.size != new.size:
        out.append(f"size {old.size} -> {new.size}")
    if old.digest != new.digest:
        out.append("target" if old.kind == "symlink" else "content")
    if old.mode != new.mode:
        out.append(f"mode {old.mode:o} -> {new.mode:o}")
    if old.mtime_ns != new.mtime_ns:
        out.append("mtime")
    return out


def verify(tree: Path, expected: Fingerprint, *, limit: int = DEFAULT_LIMIT) -> list[str]:
    """What differs between the tree now and expected, one line per path; [] if nothing.

    Lines are `added: P (kind)`, `removed: P`, `modified: P (what)`, sorted by
    path; past `limit` lines, one more says how many were left out.
    """
    try:
        st = os.lstat(tree)
    except FileNotFoundError:
        return [f"the tree {tree} is gone"]
    if not stat.S_ISDIR(st.st_mode):
        return [f"the tree {tree} is no longer a folder"]
    return changes_between(expected, take(tree), limit=limit)


def changes_between(expected: Fingerprint, now: Fingerprint, *, limit: int = DEFAULT_LIMIT,
                    mtimes: bool = True) -> list[str]:
    """`verify`'s lines for two fingerprints; `mtimes=False` leaves out a change of mtime
    alone (a folder's files touched, their content the same)."""
    actual = now.entries
    changes = []
    for rel in sorted(set(expected.entries) | set(actual)):
        old, new = expected.entries.get(rel), actual.get(rel)
        if old is None and new is not None:
            changes.append(f"added: {rel} ({new.kind})")
        elif new is None:
            changes.append(f"removed: {rel}")
        elif old is not None and old.kind != new.kind:
            changes.append(f"modified: {rel} ({old.kind} -> {new.kind})")
        elif old is not None and (what := [d for d in _differences(old, new)
                                           if mtimes or d != "mtime"]):
            changes.append(f"modified: {rel} ({', '.join(what)})")
    if len(changes) > limit:
        return [*changes[:limit], f"… and {len(changes) - limit} more changes"]
    return changes
