"""A folder written without ever following a link.

Every path is walked from the folder's own descriptor one component at a time,
and a component that is a symlink stops the walk: nothing is created, opened or
linked through a link, whatever the links on disk say. A symlink member is made
as a link but never traversed; its target is resolved the way the kernel would,
against what is on disk so far, and refused if that leaves the folder. A later
member can change what an earlier link resolves to (`a -> c/../x`, then
`c -> .`), so every link is resolved again once everything is written
(`recheck`). unpack.py writes archives through this.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from types import TracebackType

# The kernel's own limit on symlinks followed in one lookup (Linux MAXSYMLINKS).
MAX_HOPS = 40
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC


class Unsafe(Exception):
    """Why a member cannot be written; `rel` names it when the caller could not know."""

    def __init__(self, reason: str, rel: str | None = None) -> None:
        super().__init__(reason)
        self.reason, self.rel = reason, rel


class Target:
    """The folder being filled; paths are posix, relative to it, already cleaned."""

    def __init__(self, root: Path) -> None:
        self.fd = os.open(root, _DIR)
        self.links: dict[str, str] = {}  # every symlink made: rel -> target
        # The last folder walked to, kept open: archives list a folder's members together.
        # Safe to reuse because nothing here removes or renames, and every creation is
        # exclusive, so a folder once walked is what a fresh walk would find.
        self._last: tuple[tuple[str, ...], int] | None = None

    def __enter__(self) -> Target:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._last is not None:
            os.close(self._last[1])
        os.close(self.fd)

    def _walk(self, parts: list[str], *, create: bool, verb: str) -> int:
        """A descriptor of the folder `parts` names, each component a real folder."""
        key = tuple(parts)
        if self._last is not None and self._last[0] == key:
            return os.dup(self._last[1])
        fd = self._walk_from_root(parts, create=create, verb=verb)
        if self._last is not None:
            os.close(self._last[1])
        self._last = (key, os.dup(fd))
        return fd

    def _walk_from_root(self, parts: list[str], *, create: bool, verb: str) -> int:
        fd = os.dup(self.fd)
        try:
            for i, part in enumerate(parts):
                where = "/".join(parts[:i + 1])
                try:
                    st = os.lstat(part, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise Unsafe(f"{verb}, which no earlier member of the archive "
                                     "made") from None
                    os.mkdir(part, 0o755, dir_fd=fd)
                    st = os.lstat(part, dir_fd=fd)
                if stat.S_ISLNK(st.st_mode):
                    raise Unsafe(f"{verb} through the symlink {where!r}")
                if not stat.S_ISDIR(st.st_mode):
                    raise Unsafe(f"{verb} below {where!r}, which is not a folder")
                inner = os.open(part, _DIR, dir_fd=fd)
                os.close(fd)
                fd = inner
            return fd
        except BaseException:
            os.close(fd)
            raise

    @staticmethod
    def _collision(fd: int, name: str, kind: str) -> Unsafe:
        st = os.lstat(name, dir_fd=fd)
        if stat.S_ISLNK(st.st_mode):
            return Unsafe(f"would replace the symlink an earlier member made (a {kind} here)")
        if stat.S_ISDIR(st.st_mode):
            return Unsafe(f"is a {kind}, but an earlier member made a folder of that name")
        if kind == "folder":
            return Unsafe("is a folder, but an earlier member made a file of that name")
        return Unsafe("appears twice in the archive (an earlier member has that name)")

    def mkdir(self, rel: str) -> None:
        *folder, name = rel.split("/")
        fd = self._walk(folder, create=True, verb="would be made")
        try:
            os.mkdir(name, 0o755, dir_fd=fd)
        except FileExistsError:
            st = os.lstat(name, dir_fd=fd)
            if not stat.S_ISDIR(st.st_mode):
                raise self._collision(fd, name, "folder") from None
        finally:
            os.close(fd)

    def create(self, rel: str, *, executable: bool) -> int:
        """A new regular file, open for writing (the caller closes it)."""
        *folder, name = rel.split("/")
        fd = self._walk(folder, create=True, verb="would be written")
        try:
            out = os.open(name, _NEW, 0o600, dir_fd=fd)
        except FileExistsError:
            raise self._collision(fd, name, "file") from None
        finally:
            os.close(fd)
        # Never the archive's own mode: no setuid, setgid or sticky bits, whatever the umask.
        os.fchmod(out, 0o755 if executable else 0o644)
        return out

    def symlink(self, rel: str, target: str) -> None:
        *folder, name = rel.split("/")
        self.resolve(folder, target)
        fd = self._walk(folder, create=True, verb="would be made")
        try:
            os.symlink(target, name, dir_fd=fd)
        except FileExistsError:
            raise self._collision(fd, name, "symlink") from None
        finally:
            os.close(fd)
        self.links[rel] = target

    def hardlink(self, rel: str, target: str) -> None:
        """A second name for an earlier regular file of the archive, never for anything else."""
        *tfolder, tname = target.split("/")
        tfd = self._walk(tfolder, create=False, verb=f"points to {target!r}")
        try:
            try:
                st = os.lstat(tname, dir_fd=tfd)
            except FileNotFoundError:
                raise Unsafe(f"points to {target!r}, which no earlier member of the archive "
                             "made") from None
            if stat.S_ISLNK(st.st_mode):
                raise Unsafe(f"points to {target!r}, a symlink; only regular files are linked")
            if not stat.S_ISREG(st.st_mode):
                raise Unsafe(f"points to {target!r}, which is not a regular file")
            *folder, name = rel.split("/")
            fd = self._walk(folder, create=True, verb="would be made")
            try:
                os.link(tname, name, src_dir_fd=tfd, dst_dir_fd=fd, follow_symlinks=False)
            except FileExistsError:
                raise self._collision(fd, name, "hard link") from None
            finally:
                os.close(fd)
        finally:
            os.close(tfd)

    def resolve(self, folder: list[str], target: str) -> list[str]:
        """Where target, read from `folder`, lands on disk as it is now; Unsafe if outside."""
        if not target:
            raise Unsafe("has an empty target")
        if target.startswith("/"):
            raise Unsafe("points to an absolute path")
        current = list(folder)
        pending = target.split("/")[::-1]
        hops = 0
        while pending:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if not current:
                    raise Unsafe("points outside the archive")
                current.pop()
                continue
            # Every component of `current` is a real folder, a missing name or a file, never
            # a link, so this lstat itself follows nothing.
            candidate = "/".join([*current, part])
            try:
                st = os.lstat(candidate, dir_fd=self.fd)
            except OSError:
                current.append(part)  # not there (yet): nothing to follow
                continue
            if not stat.S_ISLNK(st.st_mode):
                current.append(part)
                continue
            hops += 1
            if hops > MAX_HOPS:
                raise Unsafe(f"never resolves: a symlink loop (over {MAX_HOPS} links)")
            inner = os.readlink(candidate, dir_fd=self.fd)
            if inner.startswith("/"):
                raise Unsafe(f"points outside the archive, through {candidate!r}")
            pending.extend(inner.split("/")[::-1])
        return current

    def recheck(self) -> None:
        """Resolve every link again, now that all members exist."""
        for rel, target in self.links.items():
            try:
                self.resolve(rel.split("/")[:-1], target)
            except Unsafe as exc:
                raise Unsafe(f"{exc.reason}, once every member is unpacked", rel) from None
