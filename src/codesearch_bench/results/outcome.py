"""A query's outcome from the harness's own values: every field named and typed.

The one place a QueryOutcome is made without validation (scoring/evaluate.py for
each answer, results/spool.py for its slim copy); a file read goes through
pydantic as usual. Every field is given, so every such outcome shares one fields
set: tens of thousands are held while a comparison runs, and a set of its field
names is ~2 KB. Nothing changes it -- pydantic only adds a name on assignment
(every name is in it), and model_copy copies the set before it updates.
"""

from __future__ import annotations

from .schema import GoldOut, QueryOutcome, SlotOut

_EVERY_FIELD = set(QueryOutcome.model_fields)


def outcome(*, id: str, latency_s: float | None = None, error: str | None = None,
            raw_hits: int = 0, outside: int = 0, slots: list[SlotOut] | None = None,
            n_slots: int = 0, file_gains: list[int] | None = None,
            chunk_gains: list[int] | None = None, first_file_slot: int | None = None,
            first_chunk_slot: int | None = None, tokens: dict[str, int] | None = None,
            tokens_to_first_gold: int | None = None, chunk_entered: bool = False,
            answer: str = "ranked", content_entered: bool = False,
            scores: dict[str, float] | None = None, replaced_bytes: int = 0,
            line_zero: bool = False, leftovers: int = 0, depth_limited: bool = False,
            no_spans: bool = False, split: str | None = None, tags: list[str] | None = None,
            gold: list[GoldOut] | None = None, unsolicited: int = 0,
            dropped_records: int = 0) -> QueryOutcome:
    """`QueryOutcome(...)` for values the harness made itself, unvalidated: the same
    model, the same defaults (tests/test_outcome.py), a fraction of the cost."""
    return QueryOutcome.model_construct(
        _EVERY_FIELD, id=id, latency_s=latency_s, error=error, raw_hits=raw_hits,
        outside=outside, slots=[] if slots is None else slots, n_slots=n_slots,
        file_gains=[] if file_gains is None else file_gains, chunk_gains=chunk_gains,
        first_file_slot=first_file_slot, first_chunk_slot=first_chunk_slot, tokens=tokens,
        tokens_to_first_gold=tokens_to_first_gold, chunk_entered=chunk_entered, answer=answer,
        content_entered=content_entered, scores={} if scores is None else scores,
        replaced_bytes=replaced_bytes, line_zero=line_zero, leftovers=leftovers,
        depth_limited=depth_limited, no_spans=no_spans, split=split,
        tags=[] if tags is None else tags, gold=[] if gold is None else gold,
        unsolicited=unsolicited, dropped_records=dropped_records)


def slim(full: QueryOutcome) -> QueryOutcome:
    """The outcome without its per-slot detail (slots, gold, gains): what a
    comparison's statistics read."""
    return outcome(
        id=full.id, latency_s=full.latency_s, error=full.error, raw_hits=full.raw_hits,
        outside=full.outside, n_slots=full.n_slots,
        chunk_gains=None if full.chunk_gains is None else [],
        first_file_slot=full.first_file_slot, first_chunk_slot=full.first_chunk_slot,
        tokens=full.tokens, tokens_to_first_gold=full.tokens_to_first_gold,
        chunk_entered=full.chunk_entered, answer=full.answer,
        content_entered=full.content_entered, scores=full.scores,
        replaced_bytes=full.replaced_bytes, line_zero=full.line_zero, leftovers=full.leftovers,
        depth_limited=full.depth_limited, no_spans=full.no_spans, split=full.split,
        tags=full.tags, unsolicited=full.unsolicited, dropped_records=full.dropped_records)
