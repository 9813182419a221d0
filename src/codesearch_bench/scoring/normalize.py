"""Normalize an engine's hits to the candidate tree, then collapse per file.

Normalizing: drop `strip_prefix`, `./`, and an absolute prefix naming the
tree; shift zero-based lines to one-based. A path that still points outside
the tree is counted and dropped -- and never opened.

Collapsing: walk the hits in the engine's own order (never re-sorted by
score); the first hit of a file opens the next slot, later hits of that file
join it up to `per_file` chunks.
"""

from __future__ import annotations

import functools
import posixpath
from dataclasses import dataclass
from pathlib import Path

from ..model import Hit, Slot


@dataclass(frozen=True)
class Normalized:
    hits: list[Hit]
    outside: int = 0
    outside_examples: tuple[str, ...] = ()


# Pure, and an engine names the same few hundred files answer after answer.
@functools.lru_cache(maxsize=1 << 16)
def normalize_path(raw: str, root: Path, strip_prefix: str = "") -> str | None:
    """The path relative to root in posix form, or None when it is outside the tree."""
    path = raw.strip().replace("\\", "/")
    if strip_prefix and path.startswith(strip_prefix):
        # "/build/src" and "/build/src/" strip alike: what is left is relative.
        path = path[len(strip_prefix):].lstrip("/")
    if path.startswith("/"):
        path = posixpath.normpath(path)  # "/root//a.py", "/root/x/../a.py"
        for base in {root.as_posix(), root.resolve().as_posix()}:
            base = base.rstrip("/") + "/"
            if path.startswith(base):
                path = path[len(base):]
                break
        else:
            return None
    while path.startswith("./"):
        path = path[2:]
    path = posixpath.normpath(path) if path else path
    if path in ("", ".") or path == ".." or path.startswith("../") or path.startswith("/"):
        return None
    return path


def normalize(hits: list[Hit], root: Path, *, strip_prefix: str = "", line_base: int = 1,
              ) -> Normalized:
    kept: list[Hit] = []
    outside: list[str] = []
    shift = 1 - line_base
    for hit in hits:
        path = normalize_path(hit.path, root, strip_prefix)
        if path is None:
            outside.append(hit.path)
            continue
        if not shift and path == hit.path:
            kept.append(hit)  # already the tree's own path and lines (hits are frozen)
            continue
        start = hit.start + shift if hit.start is not None else None
        end = hit.end + shift if hit.end is not None else None
        kept.append(Hit(path, start, end, hit.text, hit.score, hit.rank))
    return Normalized(kept, len(outside), tuple(outside[:5]))


def collapse(hits: list[Hit], per_file: int) -> list[Slot]:
    """One slot per file in first-appearance order, each holding <= per_file chunks."""
    order: list[str] = []
    chunks: dict[str, list[Hit]] = {}
    for hit in hits:
        if hit.path not in chunks:
            order.append(hit.path)
            chunks[hit.path] = [hit]
        elif len(chunks[hit.path]) < per_file:
            chunks[hit.path].append(hit)
    return [Slot(path, i + 1, tuple(chunks[path])) for i, path in enumerate(order)]
