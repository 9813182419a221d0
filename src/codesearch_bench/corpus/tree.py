"""The candidate tree: the one set of files every engine is given.

Built from a checkout, applying a corpus's subtrees and include/exclude globs;
symlinks are left out so no engine can be led outside it. Files are copied by
default: a `path` corpus's checkout is the user's own folder, and a hard link
would let an engine that writes the tree write the user's files. A downloaded
checkout is bench's, and setup may ask for hard links there (`link=True`);
the fingerprint then catches an engine writing through them. The manifest
records files, bytes, files per language, the size tier (computed, never
declared) and the tree's fingerprint.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import CorpusError
from . import fingerprint as fp
from . import generated
from .entry import Entry
from .globs import glob_to_regex
from .languages import language_for
from .layout import CorpusDir

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

SMALL, MEDIUM = 200, 2000
DEFAULT_EXCLUDE = [".git/**", "**/.git/**"]


@dataclass(frozen=True)
class Manifest:
    corpus: str
    pin: str
    files: int
    bytes: int
    languages: dict[str, int]
    tier: str
    subtrees: list[str]
    # None: a manifest written before fingerprints; recorded_fingerprint() adds it.
    fingerprint: fp.Fingerprint | None = None
    # A track's variant of the tree says how it was made from the corpus's (doc blanking).
    transform: dict[str, Any] | None = None
    # Files the include globs chose but a declared rule left out (minified, generated).
    excluded: dict[str, Any] | None = None
    # How the checkout was fetched and what it cost on disk (git: the shared store, bytes
    # fetched into it and stored in the checkout); None when the source records nothing.
    fetch: dict[str, Any] | None = None

    @classmethod
    def read(cls, path: Path) -> Manifest:
        hint = f"delete {path.parent} and run `bench setup` again"
        try:
            data = json.loads(path.read_text())
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            raw = data.pop("fingerprint", None)
            return cls(**data, fingerprint=None if raw is None else fp.Fingerprint.from_json(raw))
        except OSError as exc:
            raise CorpusError(f"{path}: cannot read the manifest: {exc.strerror}",
                              hint=hint) from None
        except (ValueError, TypeError) as exc:
            raise CorpusError(f"{path}: the manifest is malformed: {exc}", hint=hint) from None

    def write(self, path: Path) -> None:
        """Atomically; the fingerprint last, one line per path, so the rest stays readable."""
        data: dict[str, Any] = {k: getattr(self, k) for k in self.__dataclass_fields__
                                if k != "fingerprint"}
        text = json.dumps(data, indent=2)
        if self.fingerprint is not None:
            rows = ",\n".join(f"    {json.dumps(rel)}: {json.dumps(row)}"
                              for rel, row in self.fingerprint.rows().items())
            text = (f'{text[:-2]},\n  "fingerprint": {{"version": {fp.VERSION}, "entries": {{\n'
                    f"{rows}\n  }}}}\n}}")
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text + "\n")
        os.replace(tmp, path)


def recorded_fingerprint(dirs: CorpusDir) -> fp.Fingerprint:
    """The tree's fingerprint from setup; a manifest written before them gets one now, kept."""
    manifest = Manifest.read(dirs.manifest)
    if manifest.fingerprint is not None:
        return manifest.fingerprint
    taken = fp.take(dirs.tree)
    replace(manifest, fingerprint=taken).write(dirs.manifest)
    return taken


def tier(files: int) -> str:
    return "small" if files < SMALL else "medium" if files < MEDIUM else "large"


def selected_files(name: str, spec: Entry, checkout: Path) -> list[str]:
    include = [glob_to_regex(g) for g in spec.include]
    exclude = [glob_to_regex(g) for g in [*DEFAULT_EXCLUDE, *spec.exclude]]
    chosen: set[str] = set()
    for sub in spec.subtrees:
        start = (checkout / sub).resolve()
        if not start.is_dir() or not start.is_relative_to(checkout.resolve()):
            raise CorpusError(f"corpus {name!r}: subtree {sub!r} is not a folder of "
                              "the checkout", hint="check `subtrees` in corpora.toml")
        for folder, dirs, files in os.walk(start):
            dirs[:] = [d for d in dirs
                       if d != ".git" and not os.path.islink(os.path.join(folder, d))]
            for name in files:
                full = os.path.join(folder, name)
                if os.path.islink(full) or not os.path.isfile(full):
                    continue  # symlinks could lead an engine out of the tree
                rel = Path(full).relative_to(checkout.resolve()).as_posix()
                if any(p.match(rel) for p in include) and not any(p.match(rel) for p in exclude):
                    chosen.add(rel)
    return sorted(chosen)


def _copy(src: Path, dst: Path) -> None:
    """A copy of a regular file, never of what a link (or a FIFO swapped in) leads to."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | _CLOEXEC)
    with open(fd, "rb") as fin:
        st = os.fstat(fin.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{src} is no longer a regular file")
        with open(dst, "xb") as fout:
            shutil.copyfileobj(fin, fout, 1 << 20)
    os.chmod(dst, stat.S_IMODE(st.st_mode) & 0o777)  # no setuid, setgid or sticky bits
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def _place(src: Path, dst: Path, link: bool) -> None:
    if link:
        try:
            os.link(src, dst, follow_symlinks=False)
            return
        except OSError:  # another filesystem, or links not allowed
            pass
    _copy(src, dst)


def _remove(tree: Path) -> None:
    """The old tree, whatever an engine made of it: a link is unlinked, locked folders opened."""
    if tree.is_symlink() or (tree.exists() and not tree.is_dir()):
        tree.unlink()
        return
    if not tree.exists():
        return
    os.chmod(tree, 0o700)
    # Top-down, each folder is unlocked before the walk lists it; links are not followed.
    for folder, dirs, _ in os.walk(tree):
        for name in dirs:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
    shutil.rmtree(tree)


def build_tree(name: str, pin: str, spec: Entry, checkout: Path, dirs: CorpusDir, *,
               link: bool = False) -> Manifest:
    """The tree from checkout, copied; `link=True` hard-links (only for bench's own checkouts)."""
    files, excluded = generated.apply(checkout, selected_files(name, spec, checkout), spec)
    if not files:
        raise CorpusError(f"corpus {name!r}: subtrees/include/exclude select no files",
                          hint="the minified/generated rule left out "
                          f"{sum(excluded['counts'].values())}: see max_line_length and "
                          "exclude_generated" if excluded["counts"] else "")
    tmp = Path(tempfile.mkdtemp(prefix=".tree.", dir=dirs.base))
    try:
        total = 0
        langs: Counter[str] = Counter()
        for rel in files:
            src = checkout / rel
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                _place(src, dst, link)
            except OSError as exc:
                raise CorpusError(f"corpus {name!r}: cannot copy {src} into the tree: "
                                  f"{exc.strerror or exc}",
                                  hint="check that the file is readable") from None
            total += dst.stat().st_size
            lang = language_for(rel, h_as_cpp=spec.h_as_cpp)
            langs[lang or "other"] += 1
        try:
            _remove(dirs.tree)
        except OSError as exc:
            raise CorpusError(f"corpus {name!r}: cannot remove the old tree {dirs.tree}: "
                              f"{exc.strerror or exc}",
                              hint=f"remove {dirs.tree} by hand and run setup again") from None
        os.replace(tmp, dirs.tree)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    manifest = Manifest(corpus=name, pin=pin, files=len(files), bytes=total,
                        languages=dict(sorted(langs.items())), tier=tier(len(files)),
                        subtrees=list(spec.subtrees), fingerprint=fp.take(dirs.tree),
                        excluded=excluded)
    manifest.write(dirs.manifest)
    return manifest


def tree_files(tree: Path) -> list[str]:
    out = []
    for folder, _, files in os.walk(tree):
        for file in files:
            out.append(Path(folder, file).relative_to(tree).as_posix())
    return sorted(out)


def read_lines(root: Path, rel: str) -> list[str] | None:
    """The file's lines, or None when it is not a regular file inside root."""
    path = root / rel
    try:
        resolved = path.resolve()
        resolved.relative_to(root.resolve())
        if not resolved.is_file():
            return None
        return split_lines(resolved.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ValueError):
        return None


def split_lines(text: str) -> list[str]:
    """Lines as tree-sitter and editors number them: only \\n (and \\r\\n) end a line.

    str.splitlines() would also split on form feeds, \\x1c-\\x1e, \\x85 and
    \\u2028, shifting every later line number away from the gold spans.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class TreeText:
    """The tree's own text at a span, each file read once: what an engine's result shows.

    Token pricing (text_from_corpus) and probe's "text at span" both read here, so
    they can never disagree about which lines a span names.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[str] | None] = {}

    def lines(self, rel: str) -> list[str] | None:
        if rel not in self._lines:
            self._lines[rel] = read_lines(self.root, rel)
        return self._lines[rel]

    def at(self, rel: str, start: int | None, end: int | None) -> list[str] | None:
        """The lines start..end (1-based, inclusive); None when the file or span is missing."""
        lines = self.lines(rel)
        if lines is None or start is None or end is None:
            return None
        return lines[max(start, 1) - 1:end]
