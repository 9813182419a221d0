"""An engine's state directory, and how bench knows the index in it is finished.

`<work>/state/<engine>/<corpus>` belongs to compare, `<work>/probe/<engine>/
<corpus>` to probe, so the step users are told to run first cannot warm the
index that compare then measures. A finished index leaves a marker naming the
spec hash and the corpus pin it was built from; any other marker (or none)
means the index is rebuilt.

An engine may do anything to its state dir, including replacing it (or a
folder bench made above it) with a symlink to the user's files. So nothing
here follows a link in the folders bench owns: every path below the work dir
is walked from a descriptor, component by component, with O_NOFOLLOW.
Clearing removes a link, never its target; the marker is never written
through a link; a state dir that is a link is never a finished index.

So a state path must never be resolve()d: resolving would follow the very
link an engine planted. state_dir() resolves the work dir (the user's, which
may be a link to another disk) and leaves bench's three folders as they are;
a path not shaped `<work>/state|probe/<engine>/<corpus>` is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Literal

from ..errors import EngineFailed

MARKER = ".bench-index.json"
Purpose = Literal["state", "probe"]
PURPOSES = ("state", "probe")
# state_dir() puts a state dir three folders below the work dir: <purpose>/<engine>/<corpus>.
# Those three are bench's and never followed; the work dir is the user's, and may
# itself be a link to another disk.
OWNED = 3
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
Foreign = Literal["remove", "refuse", "none"]


def state_dir(work: Path, purpose: Purpose, engine: str, corpus_key: str) -> Path:
    """The state dir: absolute, the work dir resolved. Never resolve() the result."""
    return work.resolve() / purpose / engine / corpus_key


def root_key(root: Path) -> str:
    """A directory name for an ad-hoc --root: readable and unique per path."""
    resolved = root.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    return f"{resolved.name or 'root'}-{digest}"


class _Foreign(Exception):
    """An owned component is not a real folder: a symlink or a file an engine put there."""

    def __init__(self, path: Path, mode: int, target: str) -> None:
        super().__init__(str(path))
        self.path, self.mode, self.target = path, mode, target

    def what(self) -> str:
        if stat.S_ISLNK(self.mode):
            return f"a symlink (to {self.target})"
        return "a file" if stat.S_ISREG(self.mode) else "something that is not a folder"


class NotAStateDir(Exception):
    """A path that state_dir() cannot have made: likely resolved through an engine's link."""


def _owned(state: Path) -> tuple[Path, list[str]]:
    """The work dir, and bench's three folders below it down to the state dir."""
    if len(state.parts) <= OWNED or state.parent.parent.name not in PURPOSES:
        raise NotAStateDir(str(state))
    return state.parents[OWNED - 1], list(state.parts[-OWNED:])


def _not_a_state_dir(state: Path, doing: str) -> EngineFailed:
    return EngineFailed(
        f"refusing to {doing} {state}: a state dir is <work>/state|probe/<engine>/<corpus>, "
        "and this path is not (was it resolved through a link an engine made?)",
        hint="pass the path state_dir() returns, unresolved")


def _walk(state: Path, parts: list[str], *, create: bool, foreign: Foreign) -> int | None:
    """A descriptor of the folder `parts` names below the work dir, or None.

    None: a component is missing (and create is false), or is foreign and was
    removed (`remove`) or is to be treated as absent (`none`); `refuse` raises.
    """
    anchor, owned = _owned(state)
    if create:
        anchor.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        for i, part in enumerate(parts):
            try:
                st = os.lstat(part, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                os.mkdir(part, 0o755, dir_fd=fd)
                st = os.lstat(part, dir_fd=fd)
            if not stat.S_ISDIR(st.st_mode):
                where = anchor.joinpath(*owned[:i + 1])
                target = os.readlink(part, dir_fd=fd) if stat.S_ISLNK(st.st_mode) else ""
                if foreign == "refuse":
                    raise _Foreign(where, st.st_mode, target)
                if foreign == "remove":
                    os.unlink(part, dir_fd=fd)  # the link itself; its target is not bench's
                os.close(fd)
                return None
            inner = os.open(part, _DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        return fd
    except BaseException:
        with contextlib.suppress(OSError):
            os.close(fd)
        raise


def _unlock(parent: int, name: str) -> None:
    """Give back the owner's rwx on a folder an engine locked, so it can be emptied."""
    st = os.lstat(name, dir_fd=parent)
    if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o700 != 0o700:
        os.chmod(name, stat.S_IMODE(st.st_mode) | 0o700, dir_fd=parent)


def _remove_tree(parent: int, name: str) -> None:
    """rm -rf parent/name: links are unlinked, never followed; no recursion, any depth."""
    _unlock(parent, name)
    stack = [(os.open(name, _DIR, dir_fd=parent), name, parent)]
    try:
        while stack:
            fd, folder, above = stack[-1]
            with os.scandir(fd) as entries:
                listed = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
            sub = None
            for entry, is_dir in listed:
                if is_dir:
                    sub = sub or entry
                else:
                    os.unlink(entry, dir_fd=fd)
            if sub is None:
                stack.pop()
                os.close(fd)
                os.rmdir(folder, dir_fd=above)
            else:
                _unlock(fd, sub)
                stack.append((os.open(sub, _DIR, dir_fd=fd), sub, fd))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _failed(state: Path, doing: str, exc: OSError) -> EngineFailed:
    where = f" at {exc.filename}" if exc.filename else ""
    return EngineFailed(f"could not {doing} the state dir {state}: {exc.strerror or exc}{where}",
                        hint=f"remove {state} by hand (it holds only an engine's index), then "
                        "run again")


def clear(state: Path) -> None:
    """Remove the state dir; a link at it, in it or above it (up to the work dir) is
    removed itself, and whatever it points to is left alone."""
    try:
        owned = _owned(state)[1]
    except NotAStateDir:
        raise _not_a_state_dir(state, "clear") from None
    try:
        parent = _walk(state, owned[:-1], create=False, foreign="remove")
        if parent is None:
            return
        try:
            st = os.lstat(state.name, dir_fd=parent)
            if stat.S_ISDIR(st.st_mode):
                _remove_tree(parent, state.name)
            else:
                os.unlink(state.name, dir_fd=parent)
        except FileNotFoundError:
            return
        finally:
            os.close(parent)
    except OSError as exc:
        raise _failed(state, "clear", exc) from None


def _state_fd(state: Path, *, create: bool, foreign: Foreign) -> int | None:
    return _walk(state, _owned(state)[1], create=create, foreign=foreign)


def prepare(state: Path) -> None:
    """Make the state dir and bench's folders above it as real folders, never through a
    link: one an engine left in their place is removed first (its target left alone)."""
    try:
        owned = _owned(state)[1]
    except NotAStateDir:
        raise _not_a_state_dir(state, "make") from None
    try:
        found = _walk(state, owned, create=False, foreign="remove")  # drops a planted link
        if found is not None:
            os.close(found)
            return
        fd = _walk(state, owned, create=True, foreign="refuse")
    except _Foreign as exc:  # only if something raced us
        raise EngineFailed(f"{exc.path} became {exc.what()} while bench made it") from None
    except OSError as exc:
        raise _failed(state, "make", exc) from None
    if fd is not None:
        os.close(fd)


def _marker(state: Path) -> dict[str, object]:
    try:
        fd = _state_fd(state, create=False, foreign="none")
    except (OSError, NotAStateDir):
        return {}
    if fd is None:
        return {}
    try:
        marker = os.open(MARKER, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC,
                         dir_fd=fd)
        with open(marker, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return {}
            data = json.loads(fh.read(1 << 20))
    except (OSError, ValueError):
        return {}
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else {}


def index_finished(state: Path, spec_sha256: str, corpus_pin: str) -> bool:
    """True only for a real state dir holding a marker for this spec and pin."""
    data = _marker(state)
    return data.get("spec_sha256") == spec_sha256 and data.get("corpus_pin") == corpus_pin


def index_counts(state: Path) -> tuple[int | None, int | None]:
    """The files/chunks an engine reported when it built this index."""
    data = _marker(state)
    files, chunks = data.get("files"), data.get("chunks")
    return (files if isinstance(files, int) else None,
            chunks if isinstance(chunks, int) else None)


def mark_finished(state: Path, spec_sha256: str, corpus_pin: str,
                  files: int | None = None, chunks: int | None = None) -> None:
    """Write the marker; an engine that replaced its state dir with a link fails instead."""
    try:
        fd = _state_fd(state, create=True, foreign="refuse")
    except NotAStateDir:
        raise _not_a_state_dir(state, "mark") from None
    except _Foreign as exc:
        raise EngineFailed(
            f"the engine replaced its state dir {state} (at {exc.path}) with {exc.what()}; "
            "bench never writes through a link, so the index is not recorded",
            hint="the next run removes the link, never its target; the engine must keep "
            "its index inside {{state}}") from None
    except OSError as exc:
        raise _failed(state, "mark", exc) from None
    assert fd is not None  # create=True makes every missing folder
    body = json.dumps({"spec_sha256": spec_sha256, "corpus_pin": corpus_pin,
                       "files": files, "chunks": chunks})
    try:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(MARKER, dir_fd=fd).st_mode):
                _remove_tree(fd, MARKER)
            else:
                os.unlink(MARKER, dir_fd=fd)  # a link the engine left goes, unfollowed
        out = os.open(MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _CLOEXEC,
                      0o644, dir_fd=fd)
        with open(out, "w") as fh:
            fh.write(body)
    except OSError as exc:
        raise _failed(state, "mark", exc) from None
    finally:
        os.close(fd)


def dir_bytes(path: Path) -> int:
    """Bytes of every file under a state dir, links not followed (the index's size on disk).

    A state dir that is a link (or below one) counts nothing: what it points to
    is not the engine's index.
    """
    try:
        fd = _state_fd(path, create=False, foreign="none")
    except (OSError, NotAStateDir):
        return 0
    if fd is None:
        return 0
    total = 0
    try:
        for _, _, files, folder in os.fwalk(".", dir_fd=fd):
            for name in files:
                with contextlib.suppress(OSError):
                    total += os.lstat(name, dir_fd=folder).st_size
    finally:
        os.close(fd)
    return total
