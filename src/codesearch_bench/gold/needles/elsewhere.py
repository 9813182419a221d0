"""Nothing left to find: a needle's text repeated anywhere in the tree engines search.

Blanking a definition's doc is worth nothing if the same words stand in the
project's docs/*.rst, its README, a type stub, a changelog or a plain comment:
an engine then finds the needle by its words, not the code. Every file of the
variant tree is read (whatever its language, documentation files included)
and a needle is caught when RUN consecutive words of its query appear in one
of them. Words here are runs of letters and digits, lower-cased; RUN is six,
long enough that stock phrases ("the number of items in the") rarely reach
it, short enough to catch a sentence quoted with a word changed around it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

RUN = 6
_WORD = re.compile(rb"[a-z0-9]+")
_DOC_SUFFIXES = frozenset({".md", ".rst", ".txt", ".adoc", ".asciidoc", ".org", ".html",
                           ".htm", ".texi", ".tex", ".pod", ".rdoc", ".markdown"})
_DOC_NAMES = re.compile(r"(?i)^(readme|changelog|changes|history|news|authors|contributing|"
                        r"faq|todo|install|usage)\b")


def words(text: str) -> list[str]:
    return [w.decode() for w in _WORD.findall(text.lower().encode())]


def runs(text: str) -> set[tuple[str, ...]]:
    said = words(text)
    return {tuple(said[i:i + RUN]) for i in range(len(said) - RUN + 1)}


def is_documentation(rel: str) -> bool:
    """A file written for readers, not compilers: docs, README, changelog and the like."""
    path = Path(rel)
    return (path.suffix.lower() in _DOC_SUFFIXES or bool(_DOC_NAMES.match(path.name))
            or any(part.lower() in ("doc", "docs", "documentation") for part in path.parts[:-1]))


@dataclass
class Found:
    """Which queries were caught, and in what kind of file (for the track's record)."""

    where: dict[int, str] = field(default_factory=dict)  # query index -> first file caught in
    kinds: Counter[str] = field(default_factory=Counter)  # "documentation" / "code", by query


def find(queries: list[str], tree: Path, files: Iterable[str]) -> Found:
    """The queries with a RUN-word stretch in one of `files` (paths relative to `tree`)."""
    wanted: dict[tuple[str, ...], list[int]] = {}
    for i, query in enumerate(queries):
        for run in runs(query):
            wanted.setdefault(run, []).append(i)
    openers = {run[0] for run in wanted}
    found = Found()
    for rel in files:
        try:
            raw = (tree / rel).read_bytes()
        except OSError:
            continue
        said = [w.decode() for w in _WORD.findall(raw.lower())]
        hits: set[int] = set()
        for j in range(len(said) - RUN + 1):
            if said[j] in openers:
                hits.update(wanted.get(tuple(said[j:j + RUN]), ()))
        for i in hits:
            if i not in found.where:
                found.where[i] = rel
                found.kinds["documentation" if is_documentation(rel) else "code"] += 1
    return found
