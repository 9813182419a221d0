"""Grade a collapsed ranking against gold: which slot found which gold item first.

A file-level gold item is found by its file's slot; one with a span by a slot
holding a chunk that overlaps it. Each gold item is credited once, at the
first slot that finds it. The two `!!` conditions are decided here too, so
probe and compare raise them the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model import Hit, Slot, Span, overlaps


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


def grade(slots: list[Slot], gold: list[Span], *, spans: bool) -> Grade:
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
