"""Grade a collapsed ranking against gold: which slot found which relevant item first.

The relevant items of a query (protocol/PROTOCOL.md, "Relevant items and
trec_eval") are its distinct gold files at file granularity and its distinct
gold spans at chunk granularity. A file is found by its slot; a span by its
file's slot when a chunk there overlaps it. Each item is credited once, at the
first slot that finds it, however many gold symbols share the file or however
many chunks overlap the span. The two `!!` conditions are decided here too, so
probe and compare raise them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Hit, Slot, Span, overlaps_lines
from .metrics import MRR_DEPTH

FIRST_SLOT_DEPTH = MRR_DEPTH
"""`first_file_slot` and `first_chunk` look no deeper: the slots a result stores."""


def lacks_spans(hits: list[Hit], spans: bool) -> bool:
    """The first `!!`: the spec promises line spans, yet no result carries one."""
    return spans and bool(hits) and all(h.start is None for h in hits)


def depth_limited(raw_hits: int, n: int, slots: int, k: int, tree_files: int = 0) -> bool:
    """The second `!!`: raw results reached n but filled fewer than k file slots.

    A tree with fewer files than k can never fill k slots: that is not depth.
    """
    wanted = min(k, tree_files) if tree_files else k
    return raw_hits >= n and slots < wanted


def relevant_files(gold: list[Span]) -> list[str]:
    """The distinct gold files, in gold order: the relevant items at file granularity."""
    return list(dict.fromkeys(item.path for item in gold))


def relevant_spans(gold: list[Span]) -> list[tuple[str, int, int]]:
    """The distinct gold spans `(path, start, end)`, in gold order; file-level items add none."""
    return list(dict.fromkeys((g.path, g.start, g.end) for g in gold
                              if g.start is not None and g.end is not None))


@dataclass(frozen=True)
class Grade:
    """Per-slot gains: how many relevant items each slot found first.

    `n_gold` counts the relevant files, `n_gold_chunks` the relevant spans.
    `chunk_gains` is None when chunk metrics are not entered: the engine has
    no spans, or no gold item of the query has a span. `first_file_slot` and
    `first_chunk` only look at the first FIRST_SLOT_DEPTH slots.
    """

    file_gains: tuple[int, ...]
    chunk_gains: tuple[int, ...] | None
    n_gold: int
    n_gold_chunks: int
    first_file_slot: int | None
    first_chunk: tuple[int, int] | None  # (slot rank, chunk index) of the first gold chunk
    # Graded gold only (an imported dataset's qrels): per slot the grade of the gold file
    # it found (0: none), and every gold file's grade -- what graded nDCG needs.
    file_grades: tuple[int, ...] | None = None
    ideal_grades: tuple[int, ...] | None = None


def file_grades(gold: list[Span]) -> dict[str, int] | None:
    """Each gold file's grade (its highest), or None when the gold is not graded."""
    if all(g.grade is None for g in gold):
        return None
    out: dict[str, int] = {}
    for g in gold:
        out[g.path] = max(out.get(g.path, 0), 1 if g.grade is None else g.grade)
    return out


def grade(slots: list[Slot], gold: list[Span], *, spans: bool,
          depth: int = FIRST_SLOT_DEPTH) -> Grade:
    """Credit each relevant item once, at the first slot that finds it."""
    files = relevant_files(gold)
    where: dict[str, int] = {}
    for i, slot in enumerate(slots):
        where.setdefault(slot.path, i)  # collapsed slots name each file once; be sure
    file_gains = [0] * len(slots)
    first_file: int | None = None
    for path in files:
        found = where.get(path)
        if found is not None:
            file_gains[found] += 1
            if found < depth and (first_file is None or found + 1 < first_file):
                first_file = found + 1
    grades = file_grades(gold)
    graded = {}
    if grades is not None:
        graded = {"file_grades": tuple(grades[s.path] if gain else 0
                                       for s, gain in zip(slots, file_gains, strict=True)),
                  "ideal_grades": tuple(grades[p] for p in files)}
    with_span = relevant_spans(gold)
    if not spans or not with_span:
        return Grade(tuple(file_gains), None, len(files), 0, first_file, None, **graded)
    chunk_gains = [0] * len(slots)
    first_chunk: tuple[int, int] | None = None
    for path, start, end in with_span:
        at = where.get(path)
        if at is None:
            continue
        hit_index = next((c for c, h in enumerate(slots[at].chunks)
                          if overlaps_lines(h, start, end)), None)
        if hit_index is None:
            continue
        chunk_gains[at] += 1
        if at < depth and (first_chunk is None or (at + 1, hit_index) < first_chunk):
            first_chunk = (at + 1, hit_index)
    return Grade(tuple(file_gains), tuple(chunk_gains), len(files), len(with_span), first_file,
                 first_chunk, **graded)
