"""One engine answer -> one graded outcome: the step compare and probe share.

`evaluate` takes what a search returned, the query's gold spans and the spec,
and does everything scoring needs in one order: normalize paths and lines,
collapse to one slot per file, grade against gold, score every metric, and
count the tokens shown. `bench compare` stores its outcome; `bench probe`
shows the same outcome with the steps in between, so the two never disagree.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..corpus.tree import TreeText
from ..engine.driver import SearchResult
from ..engine.spec import EngineSpec
from ..model import Slot, Span
from ..results.outcome import outcome
from ..results.schema import GoldOut, QueryOutcome, SlotOut
from . import content, metrics, tokens
from .grade import Grade, depth_limited, grade, lacks_spans
from .normalize import Normalized, collapse, normalize

KEEP_SLOTS = 20  # the slots stored per query: the largest default cutoff


@dataclass(slots=True, frozen=True)
class Evaluation:
    """The outcome, and the intermediate steps probe shows."""

    outcome: QueryOutcome
    normalized: Normalized | None = None
    slots: list[Slot] = field(default_factory=list)
    graded: Grade | None = None


def gold_models(gold: list[Span]) -> list[GoldOut]:
    """A query's gold as its outcome stores it; the same for every pass, so built once."""
    return [GoldOut(g.path, g.start, g.end, g.symbol, g.grade) for g in gold]


@dataclass(slots=True, frozen=True)
class _Asked:
    """What an outcome records of any answer, before it is graded."""

    id: str
    split: str | None
    tags: list[str]
    latency_s: float | None
    error: str | None
    raw_hits: int
    leftovers: int
    unsolicited: int
    gold: list[GoldOut]
    replaced_bytes: int
    dropped_records: int  # records of the answer the parser could not read


def evaluate(query_id: str, found: SearchResult, gold: list[Span], spec: EngineSpec, *,
             text: TreeText, per_file: int, cutoffs: Sequence[int],
             tree_files: int, gold_out: list[GoldOut] | None = None,
             split: str | None = None, tags: Sequence[str] = ()) -> Evaluation:
    """`gold_out`: `gold_models(gold)`, when the caller keeps it across passes."""
    asked = _Asked(query_id, split, list(tags), found.latency_s, found.error,
                   len(found.hits), found.leftovers, found.unsolicited,
                   gold_models(gold) if gold_out is None else gold_out,
                   found.parsed.replaced_bytes if found.parsed else 0,
                   _dropped(found))
    if spec.answer != "ranked":
        return Evaluation(_by_content(asked, found, gold, spec, text, cutoffs))
    chunk_entered = spec.spans and any(not g.file_level for g in gold)
    if found.error is not None:
        return Evaluation(_outcome(asked, chunk_entered=chunk_entered))
    line_zero = spec.line_base == 1 and any(h.start == 0 for h in found.hits)
    norm = normalize(found.hits, text.root, strip_prefix=spec.strip_prefix,
                     line_base=spec.line_base)
    slots = collapse(norm.hits, per_file)
    if not gold:
        return Evaluation(_outcome(asked, error="no resolved gold for this query",
                                   chunk_entered=chunk_entered, line_zero=line_zero,
                                   outside=norm.outside), norm, slots)
    graded = grade(slots, gold, spans=spec.spans)
    k_max = max(cutoffs)
    shown_at, before_gold = (_tokens(spec, text, slots, graded, cutoffs)
                             if spec.has_token_column else (None, None))
    outcome = _outcome(
        asked, chunk_entered=chunk_entered, line_zero=line_zero, outside=norm.outside,
        n_slots=len(slots),
        slots=[SlotOut(s.path, [(h.start, h.end) for h in s.chunks])
               for s in slots[:KEEP_SLOTS]],
        file_gains=list(graded.file_gains[:KEEP_SLOTS]),
        chunk_gains=list(graded.chunk_gains[:KEEP_SLOTS]) if graded.chunk_gains else (
            [] if graded.chunk_gains is not None else None),
        first_file_slot=graded.first_file_slot,
        first_chunk_slot=graded.first_chunk[0] if graded.first_chunk else None,
        depth_limited=depth_limited(len(found.hits), k_max * spec.candidates, len(slots),
                                    k_max, tree_files),
        no_spans=lacks_spans(found.hits, spec.spans),
        scores=scores(graded, cutoffs), tokens=shown_at, tokens_to_first_gold=before_gold)
    return Evaluation(outcome, norm, slots, graded)


def _dropped(found: SearchResult) -> int:
    """The records of the answer that could not be read. An answer unreadable as a whole
    (fatal) is the query's error instead: how many records it held is not known."""
    parsed = found.parsed
    return 0 if parsed is None or parsed.fatal else parsed.bad_records


def _outcome(asked: _Asked, *, error: str | None = None, chunk_entered: bool,
             line_zero: bool = False, outside: int = 0, n_slots: int = 0,
             slots: list[SlotOut] | None = None, file_gains: list[int] | None = None,
             chunk_gains: list[int] | None = None, first_file_slot: int | None = None,
             first_chunk_slot: int | None = None, depth_limited: bool = False,
             no_spans: bool = False, scores: dict[str, float] | None = None,
             tokens: dict[str, int] | None = None,
             tokens_to_first_gold: int | None = None) -> QueryOutcome:
    """A ranked answer's outcome: what was asked, and what grading found."""
    return outcome(
        id=asked.id, split=asked.split, tags=asked.tags, latency_s=asked.latency_s,
        error=asked.error if error is None else error, raw_hits=asked.raw_hits,
        leftovers=asked.leftovers, unsolicited=asked.unsolicited, gold=asked.gold,
        replaced_bytes=asked.replaced_bytes, dropped_records=asked.dropped_records,
        chunk_entered=chunk_entered,
        line_zero=line_zero, outside=outside, n_slots=n_slots, slots=slots,
        file_gains=file_gains, chunk_gains=chunk_gains, first_file_slot=first_file_slot,
        first_chunk_slot=first_chunk_slot, depth_limited=depth_limited, no_spans=no_spans,
        scores=scores, tokens=tokens, tokens_to_first_gold=tokens_to_first_gold)


def _by_content(asked: _Asked, found: SearchResult, gold: list[Span], spec: EngineSpec,
                text: TreeText, cutoffs: Sequence[int]) -> QueryOutcome:
    """A text answer: each item graded by whether it contains a gold span's text."""
    golds = content.gold_texts(gold, text)
    error, n_slots = asked.error, 0
    found_scores: dict[str, float] = {}
    shown: dict[str, int] | None = None
    if error is None:
        items = [h.text or "" for h in found.hits]
        if spec.answer == "blob":
            items = ["\n".join(items)] if items else []  # one answer, however it was split
        items = items[:content.MAX_ITEMS]
        if not gold:
            error = "no resolved gold for this query"
        else:
            if golds:
                found_gains = content.gains(items, golds, spec.content_threshold)
                found_scores = content.scores(found_gains, len(golds), cutoffs,
                                              blob=spec.answer == "blob")
            n_slots = len(items)
            if spec.has_token_column:
                counts = [tokens.count(item) for item in items]
                shown = {f"tokens@{k}": sum(counts[:k]) for k in cutoffs}
    return outcome(
        id=asked.id, split=asked.split, tags=asked.tags, latency_s=asked.latency_s,
        error=error, raw_hits=asked.raw_hits, leftovers=asked.leftovers,
        unsolicited=asked.unsolicited, gold=asked.gold, replaced_bytes=asked.replaced_bytes,
        dropped_records=asked.dropped_records,
        answer=spec.answer, chunk_entered=False, content_entered=bool(golds),
        n_slots=n_slots, scores=found_scores, tokens=shown)


def scores(graded: Grade, cutoffs: Sequence[int]) -> dict[str, float]:
    """file.* and chunk.* metrics; MRR and zero-miss look 20 slots deep whatever the cutoffs."""
    file = metrics.query_scores(graded.file_gains, graded.n_gold, cutoffs=cutoffs,
                                depth=metrics.MRR_DEPTH)
    zero_miss = file.pop("zero_miss")
    if graded.file_grades is not None and graded.ideal_grades is not None:
        # Graded qrels: nDCG gains the grade, as the dataset's own tables compute it.
        file[f"ndcg@{metrics.NDCG_CUTOFF}"] = metrics.graded_ndcg_at(
            graded.file_grades, graded.ideal_grades, metrics.NDCG_CUTOFF)
    out = dict(zip(_keys("file.", tuple(file)), file.values(), strict=True))
    if graded.chunk_gains is not None:
        chunk = metrics.query_scores(graded.chunk_gains, graded.n_gold_chunks,
                                     cutoffs=cutoffs, depth=metrics.MRR_DEPTH)
        del chunk["zero_miss"]  # zero-miss is about files, entered once
        out.update(zip(_keys("chunk.", tuple(chunk)), chunk.values(), strict=True))
    out["zero_miss"] = zero_miss
    return out


# One string per metric name for every outcome: built per query, the two dozen keys of
# each outcome's scores were its own copies (~1.5 KB a query, held for the statistics).
@functools.lru_cache(maxsize=256)
def _keys(prefix: str, names: tuple[str | int, ...]) -> tuple[str, ...]:
    return tuple(f"{prefix}{name}" for name in names)


def _tokens(spec: EngineSpec, text: TreeText, slots: list[Slot], graded: Grade,
            cutoffs: Sequence[int]) -> tuple[dict[str, int], int | None]:
    per_chunk: list[list[int]] = []
    count = tokens.counter()
    for slot in slots[:max(cutoffs)]:
        counts = []
        for hit in slot.chunks:
            if spec.text_from_corpus:
                shown = "\n".join(text.at(slot.path, hit.start, hit.end) or [])
            else:
                shown = hit.text or ""
            counts.append(count(shown))
        per_chunk.append(counts)
    # Tokens shown down to each slot, summed once.
    upto = list(itertools.accumulate((sum(c) for c in per_chunk), initial=0))
    shown_at = dict(zip(_keys("tokens@", tuple(cutoffs)),
                        (upto[min(k, len(per_chunk))] for k in cutoffs), strict=True))
    before = None
    if graded.first_chunk is not None and graded.first_chunk[0] <= len(per_chunk):
        slot_rank, chunk_index = graded.first_chunk
        before = upto[slot_rank - 1] + sum(per_chunk[slot_rank - 1][:chunk_index + 1])
    return shown_at, before
