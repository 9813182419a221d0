"""The candidate tree: the one set of files every engine is given.

Built from a checkout by hard links (a copy across filesystems), applying a
corpus's subtrees and include/exclude globs; symlinks are left out so no
engine can be led outside it. Its manifest records files, bytes, files per
language and the size tier, which is computed, never declared.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import CorpusError
from .entry import Entry
from .languages import language_for
from .layout import CorpusDir

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

    @classmethod
    def read(cls, path: Path) -> Manifest:
        return cls(**json.loads(path.read_text()))


def tier(files: int) -> str:
    return "small" if files < SMALL else "medium" if files < MEDIUM else "large"


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """`**` spans folders, `*` and `?` stay inside one; matched against posix paths."""
    i, out = 0, ""
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


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


def build_tree(name: str, pin: str, spec: Entry, checkout: Path, dirs: CorpusDir) -> Manifest:
    files = selected_files(name, spec, checkout)
    if not files:
        raise CorpusError(f"corpus {name!r}: subtrees/include/exclude select no files")
    tmp = Path(tempfile.mkdtemp(prefix=".tree.", dir=dirs.base))
    try:
        total = 0
        langs: Counter[str] = Counter()
        for rel in files:
            src = checkout / rel
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)
            except OSError:  # another filesystem, or links not allowed
                shutil.copy2(src, dst)
            total += dst.stat().st_size
            lang = language_for(rel, h_as_cpp=spec.h_as_cpp)
            langs[lang or "other"] += 1
        tree = dirs.tree
        if tree.exists():
            shutil.rmtree(tree)
        os.replace(tmp, tree)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    manifest = Manifest(corpus=name, pin=pin, files=len(files), bytes=total,
                        languages=dict(sorted(langs.items())), tier=tier(len(files)),
                        subtrees=list(spec.subtrees))
    dirs.manifest.write_text(json.dumps(asdict(manifest), indent=2) + "\n")
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
