"""One object store per repository: every pinned commit of it fetched once, shared.

    <root>/.git-store/<sha256(url)[:16]>.git    a bare repository holding the pins' objects
    <root>/.git-store/<sha256(url)[:16]>.lock   held (flock) while a setup uses that store
    <root>/.git-store/<sha256(url)[:16]>.json   its URL, its size, each pinned tree's bytes

Pinning a commit adds its objects to the store: a shallow `--depth 1 <sha>` fetch
when the server allows one, so a second commit of a repository fetches only the
objects the first did not bring; else every branch and tag, once (a later pin
already there fetches nothing). Each pin is kept as `refs/pins/<sha>`, so
negotiation and gc both know it. The commit's tree is then streamed out with
`git archive` and written through `safewrite.Target` into a plain folder:
nothing is written through a link, no name may leave the folder, and symlinks
are not materialized at all (the candidate tree leaves them out anyway). The
archive's own header must name the pinned commit. `info/attributes` turns off
`export-ignore` and `export-subst`, so the folder holds every file of the commit
as `git checkout` would write it.

A store that is not a repository, or whose objects cannot be read (archive
fails, or a fetch fails and `git fsck` finds it broken), is removed and fetched
again, once, and `how` says so. Private mirrors redirect with git's own
`url.<base>.insteadOf`; the store is named by the URL corpora.toml gives.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from ...errors import CorpusError
from ..safewrite import Target, Unsafe

STORE_DIR = ".git-store"
# git reads these from the environment before any flag: a bench run from a git hook
# must not fetch into, or read from, the repository that ran it.
_GIT_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
            "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE")
_ATTRIBUTES = "* -export-ignore -export-subst\n"


class Broken(Exception):
    """The store cannot be read: it is rebuilt once."""


@dataclass(frozen=True)
class Pinned:
    """What pinning one commit did: how, the bytes it fetched and wrote, the store's size."""

    store: Path
    how: str
    fetched: int  # bytes the store grew by
    stored: int  # bytes of the files written (the commit's tree)
    store_bytes: int
    files: int
    skipped_links: int

    def record(self, root: Path, url: str, commit: str) -> dict[str, Any]:
        return {"store": self.store.relative_to(root).as_posix(), "url": url,
                "commit": commit, "bytes_fetched": self.fetched, "bytes_stored": self.stored,
                "store_bytes": self.store_bytes, "files": self.files,
                "symlinks_left_out": self.skipped_links}


def store_path(root: Path, url: str) -> Path:
    return root / STORE_DIR / f"{hashlib.sha256(url.encode()).hexdigest()[:16]}.git"


def dir_bytes(path: Path) -> int:
    """Bytes of the regular files under path (links not followed); 0 when it is missing."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            if not os.path.islink(os.path.join(folder, name)):
                total += st.st_size
    return total


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _last(stderr: str) -> str:
    """git's last word (its `fatal:` line), short enough for one line of a table."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return lines[-1][-300:] if lines else ""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def _git(store: Path, args: list[str], what: str,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", f"--git-dir={store}", *args], cwd=store.parent,
                          capture_output=True, text=True, env=_env())
    if check and proc.returncode != 0:
        raise CorpusError(f"{what}: git {' '.join(args)} failed: {proc.stderr.strip()[-500:]}")
    return proc


@contextlib.contextmanager
def locked(store: Path) -> Iterator[None]:
    """One setup at a time in a store; flock dies with its process, so none goes stale."""
    store.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(store.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _is_repo(store: Path, what: str) -> bool:
    proc = _git(store, ["rev-parse", "--is-bare-repository"], what, check=False)
    return proc.returncode == 0 and proc.stdout.strip() == "true"


def _init(store: Path, url: str, what: str) -> None:
    store.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{store.name}.", dir=store.parent))
    try:
        proc = subprocess.run(["git", "init", "-q", "--bare", "--template=", str(tmp)],
                              capture_output=True, text=True, env=_env())
        if proc.returncode != 0:
            raise CorpusError(f"{what}: git init of the store {store} failed: "
                              f"{proc.stderr.strip()[-500:]}")
        _git(tmp, ["config", "remote.origin.url", url], what)
        _git(tmp, ["config", "gc.autoDetach", "false"], what)
        (tmp / "info").mkdir(exist_ok=True)
        (tmp / "info" / "attributes").write_text(_ATTRIBUTES)
        os.replace(tmp, store)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _has(store: Path, commit: str, what: str) -> bool:
    proc = _git(store, ["rev-parse", "-q", "--verify", f"{commit}^{{commit}}"], what,
                check=False)
    return proc.returncode == 0 and proc.stdout.strip() == commit


def _healthy(store: Path, what: str) -> bool:
    if not _is_repo(store, what):
        return False
    return _git(store, ["fsck", "--connectivity-only", "--no-dangling", "--no-progress"],
                what, check=False).returncode == 0


def _fetch(store: Path, url: str, commit: str, what: str) -> str:
    """The commit's objects into the store; says how."""
    if _has(store, commit, what):
        return "already in the shared store"
    shallow = _git(store, ["fetch", "-q", "--no-tags", "--depth", "1", "origin", commit], what,
                   check=False)
    how = "shallow fetch of the pinned commit into the shared store"
    if shallow.returncode != 0:
        args = ["fetch", "-q", "--no-tags"]
        if (store / "shallow").is_file():
            args.append("--unshallow")
        full = _git(store, [*args, "origin", "+refs/heads/*:refs/remotes/origin/*",
                            "+refs/tags/*:refs/tags/*"], what, check=False)
        if full.returncode != 0:
            if not _healthy(store, what):
                raise Broken(f"a fetch failed and git fsck finds the store broken: "
                             f"{_last(full.stderr)}")
            raise CorpusError(
                f"{what}: cannot fetch {commit} from {url}: {full.stderr.strip()[-500:]}",
                hint="check `url` in corpora.toml and the network; a private mirror is "
                "reached through git's own `url.<base>.insteadOf`")
        how = "full fetch into the shared store (the server refused a fetch by commit)"
    if not _has(store, commit, what):
        raise CorpusError(
            f"{what}: commit {commit} is not in {url} (every branch and tag was fetched)",
            hint="check `commit` in corpora.toml: the full 40-hex id of a commit of that "
            "repository, reachable from a branch or tag")
    return how


def _member(name: str, what: str) -> str:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise CorpusError(f"{what}: the commit's tree names {name!r}, outside the tree; "
                          "refusing to write it", hint="pin another commit")
    return "/".join(p for p in path.parts if p not in ("", "."))


def _copy(tar: tarfile.TarFile, member: tarfile.TarInfo, fd: int) -> None:
    """One member's data into fd; a read error is the stream's (Broken), never the disk's."""
    with open(fd, "wb") as out:
        src = tar.extractfile(member)
        assert src is not None  # a regular member always has data
        while True:
            try:
                chunk = src.read(1 << 20)
            except (tarfile.TarError, EOFError) as exc:
                raise Broken(f"the archive stream broke at {member.name!r}: {exc}") from None
            if not chunk:
                return
            out.write(chunk)


def _write(tar: tarfile.TarFile, dest: Path, commit: str, what: str) -> tuple[int, int, int]:
    """Every file of the stream into dest; (bytes, files, symlinks left out)."""
    total = files = links = 0
    with Target(dest) as target:
        for member in tar:
            rel = _member(member.name, what)
            if not rel:
                continue
            try:
                if member.isdir():
                    target.mkdir(rel)
                elif member.isreg():
                    _copy(tar, member, target.create(rel, executable=bool(member.mode & 0o111)))
                    total += member.size
                    files += 1
                else:
                    links += member.issym()  # a link could lead an engine out of the tree
            except Unsafe as exc:
                raise CorpusError(f"{what}: {rel!r} in {commit}: {exc.reason}; refusing "
                                  "to write it", hint="pin another commit") from None
            except OSError as exc:
                raise CorpusError(f"{what}: cannot write {dest / rel}: {exc.strerror or exc}",
                                  hint="check the free space and permissions there") from None
    if tar.pax_headers.get("comment") != commit:
        raise CorpusError(f"{what}: git archive wrote commit "
                          f"{tar.pax_headers.get('comment')!r}, not the pinned {commit}")
    return total, files, links


def _archive(store: Path, commit: str, dest: Path, what: str) -> tuple[int, int, int]:
    """`git archive <commit>` into dest (a new folder); (bytes, files, links left out)."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(["git", f"--git-dir={store}", "archive", "--format=tar",
                                 commit], cwd=store.parent, stdout=subprocess.PIPE,
                                stderr=err, env=_env())
        stream: IO[bytes] | None = proc.stdout
        assert stream is not None
        try:
            with tarfile.open(fileobj=stream, mode="r|") as tar:
                written = _write(tar, dest, commit, what)
        except (tarfile.TarError, EOFError, Broken) as exc:
            proc.kill()
            proc.wait()
            err.seek(0)
            raise Broken(f"git archive failed: "
                         f"{_last(err.read().decode(errors='replace')) or exc}") from None
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            stream.close()
        if proc.wait() != 0:
            err.seek(0)
            raise Broken(f"git archive failed: {_last(err.read().decode(errors='replace'))}")
    return written


def pin(root: Path, url: str, commit: str, dest: Path, *, what: str) -> Pinned:
    """The commit's objects in the repository's store, its files in dest (replaced)."""
    if shutil.which("git") is None:
        raise CorpusError(f"{what}: git is not on PATH", hint="install git")
    store = store_path(root, url)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with locked(store):
        rebuilt = ""
        if store.exists() and not _is_repo(store, what):
            rebuilt = "it was not a git repository"
            shutil.rmtree(store)
        for attempt in (1, 2):
            before = dir_bytes(store)
            if not store.exists():
                _init(store, url, what)
            tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
            try:
                how = _fetch(store, url, commit, what)
                _git(store, ["update-ref", f"refs/pins/{commit}", commit], what)
                stored, files, links = _archive(store, commit, tmp, what)
            except Broken as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                if attempt == 2:
                    raise CorpusError(f"{what}: the shared store {store} is still broken after "
                                      f"a rebuild: {exc}",
                                      hint=f"remove {store} and run setup again") from None
                rebuilt = str(exc)
                shutil.rmtree(store)
                continue
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
            if dest.exists():
                shutil.rmtree(dest)
            os.replace(tmp, dest)
            break
        after = dir_bytes(store)
        _note(store, url, commit, stored, after, rebuilt=bool(rebuilt))
    if rebuilt:
        how = f"the shared store was broken ({rebuilt}), rebuilt; {how}"
    if links:
        how += f"; {links} symlink{'s' if links != 1 else ''} left out"
    return Pinned(store, how, max(after - before, 0), stored, after, files, links)


def _note(store: Path, url: str, commit: str, stored: int, store_bytes: int, *,
          rebuilt: bool) -> None:
    """The store's sidecar `<hash>.json`: its URL, size, and each pinned commit's tree bytes.

    Read by `bench import --max-tasks` to size later tasks of the repository (known()).
    """
    side = store.with_suffix(".json")
    trees: dict[str, int] = {}
    if not rebuilt:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            trees = {str(k): int(v) for k, v in json.loads(side.read_text())["trees"].items()}
    trees[commit] = stored
    tmp = side.with_name(f".{side.name}.tmp")
    tmp.write_text(json.dumps({"url": url, "store_bytes": store_bytes, "trees": trees},
                              indent=1, sort_keys=True) + "\n")
    os.replace(tmp, side)


@dataclass(frozen=True)
class Known:
    """A store already under the corpora root, from its sidecar."""

    url: str
    store_bytes: int
    trees: dict[str, int]  # pinned commit -> bytes of its files


def known(root: Path) -> dict[str, Known]:
    """Every store under root with a readable sidecar, by URL."""
    out: dict[str, Known] = {}
    for side in sorted((root / STORE_DIR).glob("*.json")):
        try:
            data = json.loads(side.read_text())
            url = str(data["url"])
            if store_path(root, url) != side.with_suffix(".git") or not side.with_suffix(
                    ".git").is_dir():
                continue
            out[url] = Known(url, int(data["store_bytes"]),
                             {str(k): int(v) for k, v in data["trees"].items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return out


@dataclass(frozen=True)
class StoreSummary:
    store: Path
    url: str
    bytes: int
    commits: int  # pinned commits the store holds
    corpora: list[str]  # the corpora of this setup that use it


def summarize(root: Path, used: dict[str, str]) -> list[StoreSummary]:
    """Each store the corpora in `used` (name -> url) share: its size and pinned commits."""
    by_store: dict[Path, tuple[str, list[str]]] = {}
    for name, url in used.items():
        by_store.setdefault(store_path(root, url), (url, []))[1].append(name)
    out = []
    for store, (url, names) in sorted(by_store.items()):
        if not store.is_dir():
            continue
        refs = _git(store, ["for-each-ref", "--format=%(refname)", "refs/pins/"], "git store",
                    check=False).stdout.split()
        out.append(StoreSummary(store, url, dir_bytes(store), len(refs), sorted(names)))
    return out
