"""Normalize an engine's hits to the candidate tree, then collapse per file.

Normalizing: drop `strip_prefix`, `./`, and an absolute prefix naming the
tree; shift zero-based lines to one-based. A path that still points outside
the tree is counted and dropped -- and never opened.

Collapsing: walk the hits in the engine's own order (never re-sorted by
score); the first hit of a file opens the next slot, later hits of that file
join it up to `per_file` chunks.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from .parse import Hit


@dataclass(frozen=True)
class Normalized:
    hits: list[Hit]
    outside: int = 0
    outside_examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class Slot:
    """One file's place in the collapsed ranking (`rank` is 1-based)."""

    path: str
    rank: int
    chunks: tuple[Hit, ...] = field(default_factory=tuple)


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
        start = hit.start + shift if hit.start is not None else None
        end = hit.end + shift if hit.end is not None else None
        # Direct construction: dataclasses.replace costs several times more per hit.
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


def lacks_spans(hits: list[Hit], spans: bool) -> bool:
    """The first `!!`: the spec promises line spans, yet no result carries one."""
    return spans and bool(hits) and all(h.start is None for h in hits)


def depth_limited(raw_hits: int, n: int, slots: int, k: int, tree_files: int = 0) -> bool:
    """The second `!!`: raw results reached n but filled fewer than k file slots.

    A tree with fewer files than k can never fill k slots: that is not depth.
    """
    wanted = min(k, tree_files) if tree_files else k
    return raw_hits >= n and slots < wanted


@dataclass(frozen=True)
class GoldItem:
    """One resolved gold item: a file, and a line span unless it is file-level."""

    path: str
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True)
class Grade:
    """Per-slot gains: how many gold items each slot found first.

    `chunk_gains` is None when chunk metrics are not entered: the engine has
    no spans, or no gold item of the query has a span.
    """

    file_gains: tuple[int, ...]
    chunk_gains: tuple[int, ...] | None
    n_gold: int
    n_gold_chunks: int
    first_file_slot: int | None
    first_chunk: tuple[int, int] | None  # (slot rank, chunk index) of the first gold chunk


def overlaps(hit: Hit, item: GoldItem) -> bool:
    if None in (hit.start, hit.end, item.start, item.end):
        return False
    return hit.start <= item.end and item.start <= hit.end  # type: ignore[operator]


def grade(slots: list[Slot], gold: list[GoldItem], *, spans: bool) -> Grade:
    """Credit each gold item once, at the first slot that finds it."""
    file_gains = [0] * len(slots)
    for item in gold:
        for i, slot in enumerate(slots):
            if slot.path == item.path:
                file_gains[i] += 1
                break
    first_file = next((i + 1 for i, g in enumerate(file_gains) if g), None)
    with_span = [g for g in gold if g.start is not None]
    if not spans or not with_span:
        return Grade(tuple(file_gains), None, len(gold), 0, first_file, None)
    chunk_gains = [0] * len(slots)
    first_chunk: tuple[int, int] | None = None
    for item in with_span:
        for i, slot in enumerate(slots):
            if slot.path != item.path:
                continue
            hit_index = next((c for c, h in enumerate(slot.chunks) if overlaps(h, item)), None)
            if hit_index is not None:
                chunk_gains[i] += 1
                if first_chunk is None or (i + 1, hit_index) < first_chunk:
                    first_chunk = (i + 1, hit_index)
                break
    return Grade(tuple(file_gains), tuple(chunk_gains), len(gold), len(with_span), first_file,
                 first_chunk)
