"""Where bench finds its project files and keeps its own, when no flag says.

The work dir (`$BENCH_WORK`, else `./.bench`) holds engine state and set-up
corpora; corpora.toml, `engines/` and `protocol/` come from the checkout bench
runs from unless a flag names another.
"""

from __future__ import annotations

import contextlib
import difflib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .errors import SpecError, UsageError

DEFAULT_WORK = ".bench"
DEFAULT_ENGINES_FILE = "default-engines.txt"
#: `--engine defaults`: the default engine set, beside whatever else is given.
DEFAULTS = "defaults"
_LIST_SUFFIX = ".txt"


def default_work() -> Path:
    """$BENCH_WORK, else the checkout's `.bench` wherever bench is run from, else ./.bench.

    One work dir per checkout, so running from a subdirectory or elsewhere never sets
    the corpora up a second time.
    """
    if env := os.environ.get("BENCH_WORK"):
        return Path(env)
    home = checkout()
    return home / DEFAULT_WORK if home is not None else Path(DEFAULT_WORK)


def project_root() -> Path:
    """The source checkout bench runs from (holds corpora.toml, engines/, protocol/)."""
    return Path(__file__).resolve().parents[2]


def checkout() -> Path | None:
    """The checkout, when bench runs from one (an editable install); None for a wheel."""
    root = project_root()
    return root if (root / "corpora.toml").is_file() and (root / "engines").is_dir() else None


def find_spec(path: Path) -> Path:
    """An engine spec (or a list of them) as given, else relative to the checkout
    (`engines/grep.json` works from anywhere); SpecError naming where it looked, and the
    spec it most likely meant, when it is in neither place."""
    if path.exists():
        return path
    home = checkout() if not path.is_absolute() else None
    if home is not None and (home / path).exists():
        return home / path
    # Run from the checkout itself, both places are one: name it once.
    places = dict.fromkeys([str(path.absolute()), *([str(home / path)] if home else [])])
    looked = " and ".join(places)
    near = _nearest_spec(path, home)
    raise SpecError(f"{path}: no such engine spec (looked for {looked})"
                    + (f"; did you mean {near}?" if near else ""),
                    hint="a relative path is tried from the current directory, then from the "
                    "checkout, so `--engine engines/grep.json` works from anywhere in it; "
                    f"`--engine {DEFAULTS}` is the default set")


def _nearest_spec(path: Path, home: Path | None) -> str | None:
    """The spec or list file beside where `path` points whose name is nearest its name, as
    it would be typed; for a bare name (`grep`), the checkout's engines/ too, and `defaults`."""
    bare = path.parent == Path(".") and not path.suffix
    # Each folder looked in, and how a file there is typed (relative ones work from the
    # checkout as well, as find_spec finds them).
    folders = [(path.parent, path.parent)]
    if home is not None:
        folders.append((home / path.parent, path.parent))
        if bare:
            folders.append((home / "engines", Path("engines")))
    names: dict[str, str] = {DEFAULTS: DEFAULTS} if bare else {}
    for folder, typed in folders:
        try:
            found = sorted(folder.iterdir())
        except OSError:
            continue
        for file in found:
            if file.suffix in (".json", _LIST_SUFFIX) and file.is_file():
                names.setdefault(file.stem if bare else file.name, str(typed / file.name))
    close = difflib.get_close_matches(path.name, list(names), n=1, cutoff=0.6)
    return names[close[0]] if close else None


def is_engine_list(path: Path) -> bool:
    """`defaults`, or a .txt file: a list of specs, not one."""
    return str(path) == DEFAULTS or path.suffix == _LIST_SUFFIX


def engine_list(path: Path) -> list[Path]:
    """The specs `--engine` names: `defaults` is the default set, a .txt file a list of spec
    paths (relative to it, one a line, `#` comments, as engines/default-engines.txt), and
    anything else the one spec it is."""
    if str(path) == DEFAULTS:
        return default_engines()
    if path.suffix != _LIST_SUFFIX:
        return [path]
    listing = find_spec(path)
    try:
        text = listing.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise SpecError(f"{listing}: cannot read this list of engine specs: {reason}") from None
    lines = [ln.split("#", 1)[0].strip() for ln in text.splitlines()]
    specs = [listing.absolute().parent / ln for ln in lines if ln]
    if not specs:
        raise SpecError(f"{listing}: lists no engine spec",
                        hint="one spec path a line, relative to the list file; `#` starts a "
                        "comment (see engines/default-engines.txt)")
    nested = [s for s in specs if s.suffix == _LIST_SUFFIX]
    if nested:
        raise SpecError(f"{listing}: lists another list, {nested[0].name}; a list names spec "
                        "files (.json) only", hint="copy that list's lines into this one")
    return specs


def default_corpora_file() -> Path:
    local = Path("corpora.toml")
    return local if local.is_file() else project_root() / "corpora.toml"


def default_corpora_root(work: Path | None = None) -> Path:
    if env := os.environ.get("BENCH_CORPORA"):
        return Path(env)
    return (work or default_work()) / "corpora"


def default_engines() -> list[Path]:
    """The specs `bench compare` runs when no --engine is given."""
    listing = project_root() / "engines" / DEFAULT_ENGINES_FILE
    lines = [ln.split("#", 1)[0].strip() for ln in listing.read_text().splitlines()]
    return [listing.parent / ln for ln in lines if ln]


@dataclass(frozen=True)
class Where:
    """The three places a command works with, from its flags or the defaults above."""

    work: Path
    corpora_file: Path
    corpora_root: Path

    @classmethod
    def of(cls, args: object) -> Where:
        """From a parsed command line's --work, --corpora-file and --corpora-root."""
        work = getattr(args, "work", None) or default_work()
        return cls(work=work,
                   corpora_file=getattr(args, "corpora_file", None) or default_corpora_file(),
                   corpora_root=getattr(args, "corpora_root", None) or default_corpora_root(work))


@contextlib.contextmanager
def locked(path: Path, what: str, flag: str) -> Iterator[None]:
    """Hold an exclusive lock on `path` for the block; a second bench gets a clear error.

    flock locks die with their process, so a killed bench never leaves a stale lock. The
    file is removed when the block ends, however it ends, while the lock is still held:
    nobody else can hold it then, and one who opened the file before it went finds the
    path no longer names it (`_acquire`) and tries again.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _acquire(path, what, flag)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        os.close(fd)


def _acquire(path: Path, what: str, flag: str) -> int:
    """An open descriptor of `path` holding its flock; a holder elsewhere is a UsageError.

    A lock taken on a file its holder has since removed guards nothing (the next bench
    makes a new file at the path), so the lock counts only on the file the path still
    names.
    """
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise UsageError(
                f"{what} is in use by another bench (pid {holder}); two runs on it would "
                "overwrite each other's state",
                hint=f"wait for that run to finish, or give this one another {flag}") from None
        except BaseException:
            os.close(fd)
            raise
        if _names(path, fd):
            return fd
        os.close(fd)


def _names(path: Path, fd: int) -> bool:
    """Whether `path` is still the file open at `fd`."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)
